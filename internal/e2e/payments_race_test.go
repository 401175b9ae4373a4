package e2e_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// raced is one payment whose cancel or rejection (on the web) and approval
// (in the app) are sent at the same moment, with what each call answered.
type raced struct {
	pay           api.Payment
	challenge     api.Challenge
	matchCode     string
	undo          string // "cancel" or "reject"
	web, approval *apitest.Response
}

// undone is the status of a payment, and of its approval, after undo.
var undone = map[string]string{"cancel": "cancelled", "reject": "rejected"}

// outcome names an answer: the status and, for an error, its type.
func outcome(t *testing.T, r *apitest.Response) string {
	t.Helper()
	if r.Status < 300 {
		return fmt.Sprint(r.Status)
	}
	var e apitest.ErrorBody
	r.Decode(t, &e)
	return fmt.Sprintf("%d %s", r.Status, e.Error.Type)
}

// errorLines are the lines of a server's log at level ERROR.
func errorLines(log string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, `"level":"ERROR"`) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A payment cancelled (or its approval rejected) on the web while its
// approver approves it in the app ends one way or the other, never both and
// never in a server error: on PostgreSQL both transactions lock the payment
// and its approval, and cancel took them in the opposite order (a deadlock,
// answered 500). Each round releases the calls for several payments together.
func TestCancelAndApprovalInTheAppAtOnce(t *testing.T) {
	s := apitest.Start(t, "STRONGROOM_RATE_LIMIT_CREDENTIAL=off")
	p := newPayer(t, s, "ada@acme.test", "10000.00")
	const rounds, perRound = 8, 4
	began, retried := time.Now(), db.Retried()
	var all []*raced
	answers := map[string]int{}
	for round := range rounds {
		var batch []*raced
		for i := range perRound {
			pay := p.pay(t, s, "10.00")
			up := expectStepUp(t, s.Post(t, "/api/v1/approvals/"+pay.ApprovalRequestId.String()+"/approve", p.web, nil))
			x := &raced{pay: pay, matchCode: *up.MatchCode, undo: "cancel"}
			if i == perRound-1 {
				x.undo = "reject"
			}
			batch = append(batch, x)
		}
		for _, c := range inbox(t, s, p.app) {
			for _, x := range batch {
				if c.ApprovalId != nil && *c.ApprovalId == *x.pay.ApprovalRequestId {
					x.challenge = c
				}
			}
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for _, x := range batch {
			if x.challenge.Id == uuid.Nil {
				t.Fatalf("round %d: no challenge in the app for payment %s", round, x.pay.Id)
			}
			body := map[string]any{"signature": p.sign(t, x.challenge), "match_code": x.matchCode}
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				if x.undo == "cancel" {
					x.web = s.Post(t, "/api/v1/payments/"+x.pay.Id.String()+"/cancel", p.web, nil)
				} else {
					x.web = s.Post(t, "/api/v1/approvals/"+x.pay.ApprovalRequestId.String()+"/reject", p.web, map[string]any{"reason": "Paid twice"})
				}
			}()
			go func() {
				defer wg.Done()
				<-start
				x.approval = s.Post(t, "/api/v1/me/challenges/"+x.challenge.Id.String()+"/approve", p.app, body)
			}()
		}
		close(start)
		wg.Wait()
		for _, x := range batch {
			w, a := outcome(t, x.web), outcome(t, x.approval)
			answers[x.undo+" "+w+", approve "+a]++
			if x.web.Status >= 500 || x.approval.Status >= 500 {
				t.Fatalf("round %d: %s answered %s, the app's approval %s:\n%s\n%s\nserver errors:\n%s",
					round, x.undo, w, a, x.web.Body, x.approval.Body, errorLines(s.Logs.String()))
			}
		}
		all = append(all, batch...)
	}
	t.Logf("answers: %v (%v)", answers, time.Since(began))
	// The service runs a transaction PostgreSQL aborted as a deadlock once
	// more before answering; here none should have needed it.
	if n := db.Retried() - retried; n != 0 {
		t.Errorf("%d transactions were run again after a deadlock or serialization failure: the lock order does not hold", n)
	}

	// Each payment ended one way, and its answers say which.
	var page api.ApprovalPage
	s.Get(t, "/api/v1/organizations/"+p.org+"/approvals?limit=100", p.web).ExpectStatus(t, 200).Decode(t, &page)
	approvals := map[uuid.UUID]api.Approval{}
	for _, x := range page.Data {
		approvals[x.Id] = x
	}
	if len(approvals) != len(all) {
		t.Fatalf("%d approvals listed, want %d", len(approvals), len(all))
	}
	var approvedDebited, approvedSent int64
	for _, x := range all {
		w, a := outcome(t, x.web), outcome(t, x.approval)
		pay := getPayment(t, s, p.web, x.pay.Id.String())
		approval := approvals[*x.pay.ApprovalRequestId]
		switch {
		case w == "200" && a == "409 conflict":
			if string(pay.Status) != undone[x.undo] || string(approval.Status) != undone[x.undo] || pay.TransactionId != nil {
				t.Errorf("payment %s, %s first, is %s (approval %s, feed row %v)", pay.Id, undone[x.undo], pay.Status, approval.Status, pay.TransactionId)
			}
		case w == "409 conflict" && a == "200":
			var ch api.Challenge
			x.approval.Decode(t, &ch)
			if pay.Status != "approved" && pay.Status != "processing" || approval.Status != "approved" || pay.TransactionId == nil || ch.Status != "consumed" {
				t.Errorf("payment %s approved first is %s (approval %s, feed row %v, challenge %s)", pay.Id, pay.Status, approval.Status, pay.TransactionId, ch.Status)
			}
			approvedDebited += minor(t, pay.Debited)
			approvedSent += minor(t, pay.Delivered)
		default:
			t.Errorf("payment %s: %s answered %s and the app's approval %s; want exactly one to succeed and the other a conflict", pay.Id, x.undo, w, a)
		}
	}
	// The money moved for the approved payments alone.
	av, pe := balance(t, s, p.web, p.org, "EUR")
	if minor(t, moneyOf(av, "EUR")) != 10000_00-approvedDebited || minor(t, moneyOf(pe, "EUR")) != approvedSent {
		t.Fatalf("available %s, pending %s; the approved payments took %d and hold %d (minor units)", av, pe, approvedDebited, approvedSent)
	}
}
