package stepup_test

import (
	"context"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/stepup"
)

// stepUpTables names the tables step-up owns, as they appear in its statements.
var stepUpTables = regexp.MustCompile(`\b(sudo_sessions|step_up_authentications|assurance_challenges|approval_credentials|step_up_lockouts|step_up_code_failures)\b`)

// stepUpStatements records, until stop, the statements run on step-up's
// tables (audit and the outbox are left out: they are not step-up's).
func stepUpStatements(t *testing.T) (stop func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	end := db.ObserveQueries(func(query string, _ []any) {
		if stepUpTables.MatchString(query) {
			mu.Lock()
			seen = append(seen, strings.Join(strings.Fields(query), " "))
			mu.Unlock()
		}
	})
	t.Cleanup(end)
	return func() []string {
		end()
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// Every statement is a round trip to PostgreSQL: minting a payment
// approval's challenge reads what it depends on (the app, a lockout) and
// writes its three rows in one statement (SQLite, with no round trips,
// reads, then writes the rows one by one). A statement coming back fails
// here.
func TestStepUpStatementsPerPaymentApprovalMint(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		p := e.person(t, "ada@acme.test", traits{app: true})
		want := 4
		if e.d.Dialect() == db.Postgres {
			want = 1
		}

		stop := stepUpStatements(t)
		summary := "Pay 10.00 EUR to Bob"
		_, err := p.svc.Mint(ctx, p.actor, stepup.Request{Purpose: "payment_approval", Kind: stepup.KindPaymentApproval,
			Binding: "tx_signed", ApprovalID: ptr(uuid.Must(uuid.NewV7())), ActionSummary: &summary})
		if err != nil {
			t.Fatal(err)
		}
		if got := stop(); len(got) != want {
			t.Fatalf("minting ran %d statements on step-up's tables, want %d:\n%s", len(got), want, strings.Join(got, "\n"))
		}
		if cs := p.inbox(t); len(cs) != 1 || cs[0].Kind != stepup.KindPaymentApproval {
			t.Fatalf("inbox %+v, want the payment approval", cs)
		}
	})
}

// The answer in the app reads its challenge once, locked with its step-up
// and with the device's key, and settles it in one statement on
// PostgreSQL; what it answers is the challenge as it now stands.
func TestStepUpStatementsPerAppAnswer(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		p := e.person(t, "ada@acme.test", traits{app: true})
		up := p.gated(t, stepup.GateIdentity)
		c := p.challengeOf(t, up)

		stop := stepUpStatements(t)
		got, err := p.approve(c.ID, *up.MatchCode)
		if err != nil {
			t.Fatal(err)
		}
		// The sandbox app's own read of the challenge to sign it, then the
		// answer's.
		want := 5
		if e.d.Dialect() == db.Postgres {
			want = 3
		}
		if statements := stop(); len(statements) != want {
			t.Fatalf("answering ran %d statements on step-up's tables, want %d:\n%s", len(statements), want, strings.Join(statements, "\n"))
		}
		c.Status = stepup.ChallengeSatisfied
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("answer %+v, want %+v", got, c)
		}
		if !p.status(t, up).Active || len(p.inbox(t)) != 0 {
			t.Fatal("the answer did not open the window and take the challenge out of the inbox")
		}
	})
}
