package e2e_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// TestKillDuringApprovalsLeavesNothingHalfDone kills the server process
// (SIGKILL) while the app approves a stream of payments, restarts it on the
// same database, and checks that every payment is either fully approved
// (funds moved, feed row, approval recorded) or untouched, and that the
// ledger balances.
func TestKillDuringApprovalsLeavesNothingHalfDone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the server binary")
	}
	first := apitest.StartProcess(t, "STRONGROOM_RATE_LIMIT_CREDENTIAL=off", "STRONGROOM_LOG_LEVEL=warn")
	p := newPayer(t, first.Server, "ada@acme.test", "1000.00")
	const n = 30
	type approval struct {
		payment, approvalID, matchCode string
	}
	var pending []approval
	for range n {
		pay := p.pay(t, first.Server, "10.00")
		up := expectStepUp(t, first.Post(t, "/api/v1/approvals/"+pay.ApprovalRequestId.String()+"/approve", p.web, nil))
		pending = append(pending, approval{pay.Id.String(), pay.ApprovalRequestId.String(), *up.MatchCode})
	}
	challenges := map[string]api.Challenge{}
	var page api.ChallengePage
	first.Get(t, "/api/v1/me/challenges?limit=100", p.app).ExpectStatus(t, 200).Decode(t, &page)
	for _, c := range page.Data {
		challenges[c.ApprovalId.String()] = c
	}

	// Approve everything at once from the app, and kill the server mid-stream.
	hc := &http.Client{Timeout: 5 * time.Second}
	var wg sync.WaitGroup
	for _, a := range pending {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := challenges[a.approvalID]
			body, _ := json.Marshal(map[string]any{"match_code": a.matchCode, "signature": p.sign(t, c)})
			req, _ := http.NewRequest("POST", first.URL+"/api/v1/me/challenges/"+c.Id.String()+"/approve", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+p.app)
			req.Header.Set("Content-Type", "application/json")
			if resp, err := hc.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	time.Sleep(time.Duration(20+rand.IntN(230)) * time.Millisecond)
	first.Kill()
	wg.Wait()

	second := apitest.StartProcess(t, "STRONGROOM_DATABASE="+first.DSN, "STRONGROOM_LOG_LEVEL=warn")
	approved := 0
	for _, a := range pending {
		pay := getPayment(t, second.Server, p.web, a.payment)
		switch pay.Status {
		case "awaiting_approval":
			if pay.TransactionId != nil {
				t.Errorf("payment %s waits for approval but has a feed row", pay.Id.String())
			}
		case "approved", "processing":
			approved++
			if pay.TransactionId == nil {
				t.Errorf("payment %s is %s without its feed row", pay.Id.String(), pay.Status)
			}
		default:
			t.Errorf("payment %s is %s", pay.Id.String(), pay.Status)
		}
	}
	var list api.ApprovalPage
	second.Get(t, "/api/v1/organizations/"+p.org+"/approvals?status=approved&limit=100", p.web).ExpectStatus(t, 200).Decode(t, &list)
	if len(list.Data) != approved {
		t.Errorf("%d approvals recorded but %d payments approved", len(list.Data), approved)
	}
	av, pe := balance(t, second.Server, p.web, p.org, "EUR")
	wantAv, wantPe := fmtMinor(100000-1100*approved), fmtMinor(1000*approved)
	if av != wantAv || pe != wantPe {
		t.Errorf("after the crash: available %s pending %s, want %s and %s for %d approved payments", av, pe, wantAv, wantPe, approved)
	}
	t.Logf("%d of %d approvals were recorded before the kill", approved, n)
}

func fmtMinor(minor int) string { return money.Amount{Minor: int64(minor), Currency: "EUR"}.String() }
