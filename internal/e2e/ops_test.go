package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/app"
)

// `strongroom backup` copies the SQLite database while the server keeps
// serving payments: the copy opens (migrations find nothing to do), its
// ledger balances, and it holds every payment, and every approval, that
// was committed before the backup began.
func TestOpsBackupWhileServingPayments(t *testing.T) {
	t.Parallel()
	if os.Getenv(apitest.E2EDatabaseEnv) == "postgres" {
		t.Skip("strongroom backup copies SQLite; PostgreSQL is backed up with pg_dump")
	}
	dsn := apitest.NewDatabase(t)
	s := apitest.Start(t, "STRONGROOM_DATABASE="+dsn, "STRONGROOM_RATE_LIMIT_CREDENTIAL=off")
	var payers []*payer
	for i := range 3 {
		payers = append(payers, newPayer(t, s, fmt.Sprintf("backup%d@acme.test", i), "100.00"))
	}

	// committed holds each payment's status as its last answered call left
	// it: a call that answered has committed.
	var mu sync.Mutex
	committed := map[string]string{}
	record := func(id, status string) {
		mu.Lock()
		defer mu.Unlock()
		committed[id] = status
	}
	stop := make(chan struct{})
	warm := make(chan struct{}, len(payers))  // a payer has approved two payments
	after := make(chan struct{}, len(payers)) // a payer made a payment after the backup
	backedUp := make(chan struct{})
	var wg sync.WaitGroup
	for _, p := range payers {
		wg.Go(func() {
			for round := 0; ; round++ {
				select {
				case <-stop:
					return
				default:
				}
				deposit(t, s, p.org, "EUR", "3.00")
				pay := p.pay(t, s, "2.00")
				record(pay.Id.String(), "awaiting_approval")
				p.approveInApp(t, s, pay.ApprovalRequestId.String())
				record(pay.Id.String(), "approved")
				if round == 1 {
					warm <- struct{}{}
				}
				select {
				case <-backedUp:
					select {
					case after <- struct{}{}:
					default:
					}
				default:
				}
			}
		})
	}
	for range payers {
		<-warm
	}

	mu.Lock()
	before := maps.Clone(committed)
	mu.Unlock()
	copyPath := filepath.Join(t.TempDir(), "backup.db")
	var out, errw bytes.Buffer
	err := app.Run(context.Background(), []string{"backup", copyPath}, func(k string) string {
		return map[string]string{"STRONGROOM_DATABASE": dsn}[k]
	}, &out, &errw)
	close(backedUp)
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, errw.String())
	}
	// The server went on serving: each payer pays again after the backup.
	for range payers {
		<-after
	}
	close(stop)
	wg.Wait()
	if t.Failed() {
		return
	}

	copyDSN := "sqlite:" + copyPath
	copied := apitest.OpenDatabase(t, copyDSN)
	if err := copied.Ready(t.Context()); err != nil {
		t.Fatalf("the copy is not ready: %v", err)
	}
	apitest.CheckLedger(t, copyDSN)
	for id, status := range before {
		var got string
		if err := copied.Reader().QueryRowContext(t.Context(), `SELECT status FROM payments WHERE id = $1`, id).Scan(&got); err != nil {
			t.Errorf("payment %s (%s before the backup) is not in the copy: %v", id, status, err)
			continue
		}
		if status == "approved" && got == "awaiting_approval" {
			t.Errorf("payment %s was approved before the backup; the copy has it awaiting approval", id)
		}
	}
	if len(before) < 2*len(payers) {
		t.Fatalf("only %d payments before the backup", len(before))
	}
	t.Logf("%d payments committed before the backup, %d in all; %s", len(before), len(committed), strings.TrimSpace(out.String()))
}

// A STRONGROOM_* variable that is no setting (a typo) is named in a warning
// at start, with the setting it is likely meant to be, and its value (a
// secret, perhaps) is not logged.
func TestOpsUnknownVariableWarnedAtStart(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, "STRONGROOM_SECERT=do-not-log-this-value-0123456789abcdef", "STRONGROOM_FAVOURITE_COLOUR=blue")
	warned := map[string]string{}
	for _, line := range strings.Split(s.Logs.String(), "\n") {
		var entry struct {
			Level, Variable string
			DidYouMean      string `json:"did_you_mean"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Level == "WARN" && entry.Variable != "" {
			warned[entry.Variable] = entry.DidYouMean
		}
	}
	want := map[string]string{"STRONGROOM_SECERT": "STRONGROOM_SECRET", "STRONGROOM_FAVOURITE_COLOUR": ""}
	if !maps.Equal(warned, want) {
		t.Errorf("warned of %v, want %v", warned, want)
	}
	if strings.Contains(s.Logs.String(), "do-not-log-this-value") {
		t.Error("the log holds the unknown variable's value")
	}
}
