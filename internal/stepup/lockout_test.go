package stepup_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/stepup"
)

// wrong enters n wrong codes, on as many step-ups as it takes (four each, so none ends).
func (p *person) wrong(t *testing.T, n int) {
	t.Helper()
	for n > 0 {
		up, code := p.stepUp(t)
		for i := 0; i < 4 && n > 0; i, n = i+1, n-1 {
			bad := "000000"
			if code == bad {
				bad = "111111"
			}
			if err := p.complete(up, bad); !apierr.Is(err, apierr.InvalidCode) {
				t.Fatalf("wrong code: %v, want invalid_code", err)
			}
		}
	}
}

func (p *person) right(t *testing.T) {
	t.Helper()
	up, code := p.stepUp(t)
	if err := p.complete(up, code); err != nil {
		t.Fatalf("right code: %v", err)
	}
	if _, err := p.svc.Exit(context.Background(), p.actor, up.ID); err != nil {
		t.Fatal(err)
	}
}

func TestWrongCodesLockStepUpPerPerson(t *testing.T) {
	tests := []struct {
		name string
		do   func(t *testing.T, p *person)
		// retryAfter is the Retry-After of a gated call afterwards (0: not locked).
		retryAfter int
	}{
		{"nine wrong codes do not lock", func(t *testing.T, p *person) { p.wrong(t, 9) }, 0},
		{"ten wrong codes lock for fifteen minutes", func(t *testing.T, p *person) { p.wrong(t, 10) }, 900},
		{"the lockout counts down", func(t *testing.T, p *person) {
			p.wrong(t, 10)
			p.clk.Advance(14*time.Minute + 30*time.Second)
		}, 30},
		{"the lockout ends after fifteen minutes", func(t *testing.T, p *person) {
			p.wrong(t, 10)
			p.clk.Advance(15 * time.Minute)
		}, 0},
		{"a right code does not reset the count", func(t *testing.T, p *person) {
			p.wrong(t, 5)
			p.right(t)
			p.wrong(t, 5)
		}, 900},
		{"wrong codes older than a day do not count", func(t *testing.T, p *person) {
			p.wrong(t, 5)
			p.clk.Advance(24*time.Hour + time.Second)
			p.wrong(t, 5)
		}, 0},
		{"a wrong code within the day after a lockout locks again", func(t *testing.T, p *person) {
			p.wrong(t, 10)
			p.clk.Advance(15 * time.Minute)
			p.wrong(t, 1)
		}, 900},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eachEnv(t, func(t *testing.T, env *env) {
				p := env.person(t, "ada@acme.test", traits{})
				tc.do(t, p)
				err := p.svc.Require(context.Background(), p.actor, stepup.GateIdentity)
				e, _ := apierr.As(err)
				switch {
				case tc.retryAfter == 0 && (e == nil || e.Type != apierr.StepUpRequired):
					t.Fatalf("gated call: %v, want step_up_required", err)
				case tc.retryAfter > 0 && (e == nil || e.Type != apierr.RateLimited || e.RetryAfterSeconds != tc.retryAfter):
					t.Fatalf("gated call: %v (retry after %d), want rate_limited after %d s", err, e.RetryAfterSeconds, tc.retryAfter)
				}
			})
		})
	}
}

func TestLockoutRefusesEvenTheRightCodeAndAlertsOnce(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		p := e.person(t, "ada@acme.test", traits{})
		up, code := p.stepUp(t)
		p.wrong(t, 10)
		if err := p.complete(up, code); !apierr.Is(err, apierr.RateLimited) {
			t.Fatalf("right code while locked: %v, want rate_limited", err)
		}
		p.clk.Advance(15 * time.Minute)
		p.wrong(t, 1) // locks again within the day: no second alert
		if n := e.alerts(t, p.actor.UserID, "Security alert"); n != 1 {
			t.Fatalf("%d security alerts, want one", n)
		}
	})
}

// TestConcurrentWrongCodesAreCountedOneAtATime answers many step-ups of one
// person at once, as several servers would: exactly ten wrong codes are
// judged, every other answer meets the lockout.
func TestConcurrentWrongCodesAreCountedOneAtATime(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		p := e.person(t, "ada@acme.test", traits{})
		var ups []stepup.StepUpChallenge
		for range 8 {
			up, _ := p.stepUp(t)
			ups = append(ups, up)
		}
		results := make(chan error, 4*len(ups))
		var wg sync.WaitGroup
		for _, up := range ups {
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					results <- p.complete(up, "000000")
				}()
			}
		}
		wg.Wait()
		close(results)
		counts := map[apierr.Type]int{}
		for err := range results {
			e, ok := apierr.As(err)
			if !ok {
				t.Fatalf("answer: %v", err)
			}
			counts[e.Type]++
		}
		if counts[apierr.InvalidCode] != 10 || counts[apierr.RateLimited] != 22 {
			t.Fatalf("answers = %v, want 10 invalid_code and 22 rate_limited", counts)
		}
	})
}

// A payment approval's challenge is minted in the statement that reads the
// lockout (on PostgreSQL): while step-up is locked nothing is minted, and
// from the lockout's last instant on it is again.
func TestLockoutRefusesPaymentApprovals(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		p := e.person(t, "ada@acme.test", traits{app: true})
		p.wrong(t, 10)
		summary := "Pay 10.00 EUR to Bob"
		mint := func() error {
			_, err := p.svc.Mint(context.Background(), p.actor, stepup.Request{Purpose: "payment_approval", Kind: stepup.KindPaymentApproval,
				Binding: "tx_signed", ApprovalID: ptr(uuid.Must(uuid.NewV7())), ActionSummary: &summary})
			return err
		}
		p.clk.Advance(15*time.Minute - time.Microsecond)
		pending := len(p.inbox(t))
		err := mint()
		if e, ok := apierr.As(err); !ok || e.Type != apierr.RateLimited || e.RetryAfterSeconds != 1 {
			t.Fatalf("payment approval while locked: %v, want rate_limited", err)
		}
		if n := len(p.inbox(t)); n != pending {
			t.Fatalf("%d challenges in the inbox after a refused mint, want %d", n, pending)
		}
		p.clk.Advance(time.Microsecond)
		if err := mint(); err != nil {
			t.Fatalf("payment approval once the lockout ended: %v", err)
		}
		if n := len(p.inbox(t)); n != pending+1 {
			t.Fatalf("%d challenges in the inbox, want the new one too (%d)", n, pending+1)
		}
	})
}
