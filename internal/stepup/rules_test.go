package stepup_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/stepup"
)

func TestMethodsOffered(t *testing.T) {
	tests := []struct {
		name   string
		traits traits
		gate   stepup.Gate
		want   []string // nil: the gate lets the call through
	}{
		{"email always", traits{}, stepup.GateIdentity, []string{"email"}},
		{"the authenticator with one", traits{totp: true}, stepup.GateIdentity, []string{"totp", "email"}},
		{"the app with a credential", traits{app: true}, stepup.GateIdentity, []string{"app", "email"}},
		{"the app first", traits{totp: true, app: true}, stepup.GateIdentity, []string{"app", "totp", "email"}},
		{"never the app without app", traits{totp: true, app: true}, stepup.GateWithoutApp, []string{"totp", "email"}},
		{"without app and without an authenticator: email", traits{app: true}, stepup.GateWithoutApp, []string{"email"}},
		{"replacing a working authenticator", traits{totp: true, app: true}, stepup.GateAuthenticator, []string{"app", "totp", "email"}},
		{"setting up the first authenticator needs none", traits{app: true}, stepup.GateAuthenticator, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eachEnv(t, func(t *testing.T, e *env) {
				p := e.person(t, "ada@acme.test", tc.traits)
				if tc.want == nil {
					if err := p.svc.Require(context.Background(), p.actor, tc.gate); err != nil {
						t.Fatalf("gated call: %v, want it let through", err)
					}
					return
				}
				up := p.gated(t, tc.gate)
				if !slices.Equal(up.Methods, tc.want) || up.Delivery != tc.want[0] {
					t.Fatalf("methods %v (delivery %s), want %v", up.Methods, up.Delivery, tc.want)
				}
				inInbox := len(p.inbox(t)) == 1
				if inInbox != slices.Contains(tc.want, "app") {
					t.Fatalf("challenge in the app inbox: %v, want it there exactly when the app is offered", inInbox)
				}
			})
		})
	}
}

func TestPaymentApprovalIsAnsweredInTheAppAlone(t *testing.T) {
	tests := []struct {
		name    string
		traits  traits
		want    []string
		wantErr apierr.Type
	}{
		{"app only", traits{totp: true, app: true}, []string{"app"}, ""},
		{"no app, no approval", traits{totp: true}, nil, apierr.ApprovalCredentialRequired},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eachEnv(t, func(t *testing.T, e *env) {
				p := e.person(t, "ada@acme.test", tc.traits)
				summary := "Pay 10.00 EUR to Bob"
				up, err := p.svc.Mint(context.Background(), p.actor, stepup.Request{Purpose: "payment_approval", Kind: stepup.KindPaymentApproval,
					Binding: "tx_signed", ApprovalID: ptr(uuid.Must(uuid.NewV7())), ActionSummary: &summary})
				if tc.wantErr != "" {
					if !apierr.Is(err, tc.wantErr) {
						t.Fatalf("mint: %v, want %s", err, tc.wantErr)
					}
					return
				}
				if err != nil || !slices.Equal(up.Methods, tc.want) || up.WebAuthn != nil {
					t.Fatalf("mint: %+v %v, want methods %v and no passkey assertion", up, err, tc.want)
				}
				cs := p.inbox(t)
				if len(cs) != 1 || cs[0].Kind != stepup.KindPaymentApproval || cs[0].RequiredLevel != "l3" || cs[0].StepUpAuthenticationID != nil {
					t.Fatalf("inbox %+v, want one l3 payment approval pointing at its approval alone", cs)
				}
			})
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestChallengeAndWindowLifetimes(t *testing.T) {
	tests := []struct {
		name string
		// answered opens the window (emailed code) before the clock moves.
		answered bool
		advance  time.Duration
		want     string
		// stillInInbox: the challenge is still waiting in the app.
		stillInInbox bool
	}{
		{"a challenge lives just under five minutes", false, stepup.ChallengeLifetime - time.Second, stepup.StatusPending, true},
		{"a challenge expires after five minutes", false, stepup.ChallengeLifetime, stepup.StatusExpired, false},
		{"a window lasts just under ten minutes", true, stepup.WindowLifetime - time.Second, stepup.StatusActive, false},
		{"a window closes after ten minutes", true, stepup.WindowLifetime, stepup.StatusExpired, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eachEnv(t, func(t *testing.T, e *env) {
				p := e.person(t, "ada@acme.test", traits{app: true})
				up := p.gated(t, stepup.GateIdentity)
				if tc.answered {
					if err := p.complete(up, p.emailedCode(t, up)); err != nil {
						t.Fatal(err)
					}
				}
				p.clk.Advance(tc.advance)
				st := p.status(t, up)
				if st.Status != tc.want || st.Active != (tc.want == stepup.StatusActive) {
					t.Fatalf("status %+v, want %s", st, tc.want)
				}
				if got := len(p.inbox(t)) == 1; got != tc.stillInInbox {
					t.Fatalf("challenge in the inbox: %v, want %v", got, tc.stillInInbox)
				}
				err := p.svc.Require(context.Background(), p.actor, stepup.GateIdentity)
				if open := err == nil; open != (tc.want == stepup.StatusActive) {
					t.Fatalf("gated call: %v, want it through exactly while the window is open", err)
				}
			})
		})
	}
}

func TestMatchCodeFailuresDeclineOnTheThird(t *testing.T) {
	tests := []struct {
		wrong int
		want  string
	}{
		{1, stepup.StatusPending},
		{2, stepup.StatusPending},
		{3, stepup.StatusDeclined},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d wrong", tc.wrong), func(t *testing.T) {
			eachEnv(t, func(t *testing.T, e *env) {
				p := e.person(t, "ada@acme.test", traits{app: true})
				up := p.gated(t, stepup.GateIdentity)
				c := p.challengeOf(t, up)
				wrong := "000"
				if *up.MatchCode == wrong {
					wrong = "111"
				}
				for range tc.wrong {
					if _, err := p.approve(c.ID, wrong); !apierr.Is(err, apierr.MatchCodeMismatch) {
						t.Fatalf("wrong match code: %v, want match_code_mismatch", err)
					}
				}
				if st := p.status(t, up); st.Status != tc.want {
					t.Fatalf("step-up %+v, want %s", st, tc.want)
				}
				got, err := p.approve(c.ID, *up.MatchCode)
				if tc.want == stepup.StatusDeclined {
					if !apierr.Is(err, apierr.Conflict) {
						t.Fatalf("right code after the decline: %v, want conflict", err)
					}
					return
				}
				if err != nil || got.Status != stepup.ChallengeSatisfied || !p.status(t, up).Active {
					t.Fatalf("right code: %+v %v, want the challenge satisfied and the window open", got, err)
				}
			})
		})
	}
}

const declineAlert = "repeated declined"

func TestRepeatedDeclinesAlertThePersonAndTheirCoOwners(t *testing.T) {
	tests := []struct {
		name string
		// declines are made an hour apart after gap.
		first, second int
		gap           time.Duration
		want          int // alerts each recipient gets
	}{
		{"two declines: none", 2, 0, 0, 0},
		{"three declines in a day: one", 3, 0, 0, 1},
		{"more declines within the day: still one", 3, 2, time.Hour, 1},
		{"three more after the day: another", 3, 3, stepup.DeclineAlertWindow, 2},
		{"declines spread over more than a day: none", 2, 1, stepup.DeclineAlertWindow, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eachEnv(t, func(t *testing.T, e *env) {
				p := e.person(t, "ada@acme.test", traits{app: true})
				owner, other := e.member(t, p.actor.UserID)
				decline := func(n int) {
					for range n {
						c := p.challengeOf(t, p.gated(t, stepup.GateIdentity))
						got, err := p.svc.Decline(context.Background(), p.actor, c.ID)
						if err != nil || got.Status != stepup.StatusDeclined {
							t.Fatalf("decline: %+v %v", got, err)
						}
						p.clk.Advance(time.Minute)
					}
				}
				decline(tc.first)
				p.clk.Advance(tc.gap)
				decline(tc.second)
				for who, id := range map[string]uuid.UUID{"the person": p.actor.UserID, "an owner": owner} {
					if n := e.alerts(t, id, declineAlert); n != tc.want {
						t.Errorf("%s got %d alerts, want %d", who, n, tc.want)
					}
				}
				if n := e.alerts(t, other, declineAlert); n != 0 {
					t.Errorf("an admin got %d alerts, want none", n)
				}
			})
		})
	}
}

// member makes userID a member of an organization with an owner and an
// admin, and returns those two.
func (e *env) member(t *testing.T, userID uuid.UUID) (owner, admin uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	if err := e.d.Tx(ctx, func(tx *db.Tx) error {
		org, err := organization.Create(ctx, tx, "Acme", organization.EntityReady, false)
		if err != nil {
			return err
		}
		if err := organization.AddMember(ctx, tx, org.ID, userID, organization.Member); err != nil {
			return err
		}
		for _, m := range []struct {
			email string
			role  organization.Role
			id    *uuid.UUID
		}{{"olga@acme.test", organization.Owner, &owner}, {"adam@acme.test", organization.Admin, &admin}} {
			u, _, err := identity.CreateUser(ctx, tx, e.keys, tx.Now(), identity.NewUser{Email: m.email, Password: password})
			if err != nil {
				return err
			}
			*m.id = u.ID
			if err := organization.AddMember(ctx, tx, org.ID, u.ID, m.role); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return owner, admin
}

func TestExit(t *testing.T) {
	tests := []struct {
		name     string
		answered bool
		// exitedBefore: exit twice; the second answers the first's end.
		exitedBefore bool
	}{
		{"an open window", true, false},
		{"a step-up still waiting", false, false},
		{"an ended window again", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eachEnv(t, func(t *testing.T, e *env) {
				ctx := context.Background()
				p := e.person(t, "ada@acme.test", traits{app: true})
				up := p.gated(t, stepup.GateIdentity)
				if tc.answered {
					if err := p.complete(up, p.emailedCode(t, up)); err != nil {
						t.Fatal(err)
					}
				}
				ended := p.clk.Now()
				if tc.exitedBefore {
					if _, err := p.svc.Exit(ctx, p.actor, up.ID); err != nil {
						t.Fatal(err)
					}
					p.clk.Advance(time.Minute)
				}
				out, err := p.svc.Exit(ctx, p.actor, up.ID)
				if err != nil || out.Active || out.ID != up.ID || !out.ExpiresAt.Equal(ended) {
					t.Fatalf("exit: %+v %v, want ended at %s", out, err, ended)
				}
				if st := p.status(t, up); st.Status != stepup.StatusExpired || st.Active {
					t.Fatalf("after exit: %+v", st)
				}
				if len(p.inbox(t)) != 0 {
					t.Fatal("the challenge stays in the app inbox after exit")
				}
				p.gated(t, stepup.GateIdentity) // asks again
			})
		})
	}
}
