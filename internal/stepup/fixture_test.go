package stepup_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/pquerna/otp/totp"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/flow/approving"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/outbox"
	"github.com/strongroom/strongroom/internal/platform/page"
	"github.com/strongroom/strongroom/internal/sandbox"
	"github.com/strongroom/strongroom/internal/stepup"
)

// start is when every test's manual clock begins.
var start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// env is one test's database, manual clock and services. The database
// reads its transactions' time from the manual clock, so advancing it
// reaches every rule.
type env struct {
	d    *db.DB
	clk  *clock.Manual
	keys *keyring.Keyring
	ids  *identity.Service
	svc  *stepup.Service
}

// eachEnv runs test on every engine (dbtest.Engines), each time on a new
// migrated database.
func eachEnv(t *testing.T, test func(t *testing.T, e *env)) {
	t.Helper()
	for _, engine := range dbtest.Engines() {
		t.Run(engine.Name, func(t *testing.T) {
			clk := clock.NewManual(start)
			d := dbtest.Open(t, engine.Migrated(t), db.WithClock(clk))
			keys := fixture.Keys(t)
			ids := &identity.Service{DB: d, Clock: clk, Keys: keys, Outbox: &outbox.Outbox{DB: d, Keys: keys}}
			test(t, &env{d: d, clk: clk, keys: keys, ids: ids, svc: &stepup.Service{DB: d, Clock: clk, Keys: keys, Identity: ids}})
		})
	}
}

// person is a signed-in user (on the web) as step-up sees them.
type person struct {
	*env
	actor actor.Actor
	// secret is the authenticator's seed; empty without one.
	secret string
}

// traits says what a person has set up.
type traits struct {
	totp bool // an authenticator
	app  bool // an approving app (the sandbox's)
	// phone signs in from the iOS app instead of the web.
	phone bool
}

const password = "long enough"

// person creates a user and signs them in on the web; with an
// authenticator, sign-in is completed with a code from it.
func (e *env) person(t *testing.T, email string, tr traits) *person {
	t.Helper()
	ctx := context.Background()
	var secret string
	if err := e.d.Tx(ctx, func(tx *db.Tx) error {
		_, auth, err := identity.CreateUser(ctx, tx, e.keys, identity.NewUser{Email: email, Password: password, WithTOTP: tr.totp})
		if auth != nil {
			secret = auth.Secret
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	in := identity.SignInRequest{Email: email, Password: password}
	if tr.phone {
		ios := actor.PlatformIOS
		in.Platform = &ios
	}
	res, err := e.ids.SignIn(ctx, in)
	if err == nil && res.ChallengeToken != nil && tr.totp {
		res, err = e.ids.MFA(ctx, identity.MFARequest{ChallengeToken: *res.ChallengeToken, Code: totpCode(t, secret, e.clk.Now())})
	}
	if err != nil || res.Token == nil {
		t.Fatalf("sign in: %+v %v", res, err)
	}
	a, err := e.ids.Authenticate(ctx, *res.Token)
	if err != nil {
		t.Fatal(err)
	}
	if tr.app {
		if _, err := e.app().Register(ctx, a.UserID); err != nil {
			t.Fatal(err)
		}
	}
	return &person{env: e, actor: a, secret: secret}
}

func totpCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCode(secret, at)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// gated makes a call behind gate and returns the step-up it asks for.
func (p *person) gated(t *testing.T, gate stepup.Gate) stepup.StepUpChallenge {
	t.Helper()
	err := p.svc.Require(context.Background(), p.actor, gate)
	e, ok := apierr.As(err)
	if !ok || e.Type != apierr.StepUpRequired {
		t.Fatalf("gated call: %v, want step_up_required", err)
	}
	return e.StepUp.(stepup.StepUpChallenge)
}

// stepUp starts a step-up with a gated call and asks for an emailed code.
func (p *person) stepUp(t *testing.T) (stepup.StepUpChallenge, string) {
	t.Helper()
	up := p.gated(t, stepup.GateIdentity)
	return up, p.emailedCode(t, up)
}

// emailedCode asks for the emailed code of up and reads it from the outbox.
func (p *person) emailedCode(t *testing.T, up stepup.StepUpChallenge) string {
	t.Helper()
	ctx := context.Background()
	if _, err := p.svc.RequestFallback(ctx, p.actor, stepup.FallbackRequest{StepUpAuthenticationID: up.StepUpAuthenticationID.String(), Method: "email"}); err != nil {
		t.Fatal(err)
	}
	msgs, err := p.ids.Outbox.List(ctx, p.d.Reader(), outbox.Filter{UserID: &p.actor.UserID, Kind: outbox.StepUpEmailCode}, page.Request{Limit: 1})
	if err != nil || len(msgs) == 0 {
		t.Fatalf("emailed code: %v %v", msgs, err)
	}
	return *msgs[0].Code
}

func (p *person) complete(up stepup.StepUpChallenge, code string) error {
	_, err := p.svc.Complete(context.Background(), p.actor, stepup.CompleteRequest{SudoSessionID: up.ID.String(), Method: "email", Code: code})
	return err
}

// status polls the sudo session of up.
func (p *person) status(t *testing.T, up stepup.StepUpChallenge) stepup.Status {
	t.Helper()
	st, err := p.svc.GetStatus(context.Background(), p.actor, up.ID)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// inbox lists the person's pending challenges.
func (p *person) inbox(t *testing.T) []stepup.Challenge {
	t.Helper()
	cs, err := p.svc.Inbox(context.Background(), p.actor, page.Request{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// challengeOf returns the app challenge of up, from the inbox.
func (p *person) challengeOf(t *testing.T, up stepup.StepUpChallenge) stepup.Challenge {
	t.Helper()
	for _, c := range p.inbox(t) {
		if c.StepUpAuthenticationID != nil && *c.StepUpAuthenticationID == up.StepUpAuthenticationID {
			return c
		}
	}
	t.Fatalf("no challenge of step-up %s in the inbox", up.ID)
	return stepup.Challenge{}
}

// app is the sandbox's approving app, answering through the approving flow.
func (e *env) app() *sandbox.ApprovingApp {
	return &sandbox.ApprovingApp{DB: e.d, Keys: e.keys, Approving: &approving.Service{DB: e.d, StepUp: e.svc}}
}

// approve answers challenge id with the person's sandbox app and matchCode.
func (p *person) approve(id uuid.UUID, matchCode string) (stepup.Challenge, error) {
	return p.app().Approve(context.Background(), id, sandbox.ApproveRequest{MatchCode: &matchCode})
}

// alerts counts the security alerts userID was sent whose subject contains about.
func (e *env) alerts(t *testing.T, userID uuid.UUID, about string) int {
	t.Helper()
	msgs, err := outbox.List(context.Background(), e.d.Reader(), outbox.Filter{UserID: &userID, Kind: outbox.SecurityAlert}, page.Request{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range msgs {
		if strings.Contains(m.Subject, about) {
			n++
		}
	}
	return n
}
