package stepup_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"sync"
	"testing"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/stepup"
)

// register asks to register a new app key for the person's device.
func (p *person) register(label string) (stepup.Credential, error) {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	return p.svc.RegisterCredential(context.Background(), p.actor, stepup.CredentialRequest{PublicKey: base64.RawURLEncoding.EncodeToString(pub), Label: label})
}

// stepUpOf expects err to ask for a step-up and returns it.
func stepUpOf(t *testing.T, err error) stepup.StepUpChallenge {
	t.Helper()
	e, ok := apierr.As(err)
	if !ok || e.Type != apierr.StepUpRequired {
		t.Fatalf("%v, want step_up_required", err)
	}
	return e.StepUp.(stepup.StepUpChallenge)
}

func TestRegisteringACredentialSpendsItsStepUp(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		p := e.person(t, "ada@acme.test", traits{phone: true})
		_, err := p.register("iPhone")
		up := stepUpOf(t, err)
		if err := p.complete(up, p.emailedCode(t, up)); err != nil {
			t.Fatal(err)
		}
		if _, err := p.register("iPhone"); err != nil {
			t.Fatalf("register within the window: %v", err)
		}
		if st := p.status(t, up); st.Active || st.Status != stepup.StatusExpired || !st.ExpiresAt.Equal(p.clk.Now()) {
			t.Fatalf("the step-up after registering: %+v, want its window ended now", st)
		}
		// Within what would have been the window, a second key and any other
		// gated call ask again.
		_, err = p.register("Another key")
		again := stepUpOf(t, err)
		if again.ID == up.ID {
			t.Fatal("the second registration was offered the spent step-up")
		}
		p.gated(t, stepup.GateIdentity)
	})
}

func TestOneStepUpRegistersOneCredentialUnderConcurrency(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		p := e.person(t, "ada@acme.test", traits{phone: true})
		_, err := p.register("iPhone")
		up := stepUpOf(t, err)
		if err := p.complete(up, p.emailedCode(t, up)); err != nil {
			t.Fatal(err)
		}
		const calls = 4
		errs := make([]error, calls)
		var wg sync.WaitGroup
		for i := range calls {
			wg.Go(func() { _, errs[i] = p.register("iPhone") })
		}
		wg.Wait()
		registered := 0
		for _, err := range errs {
			if err == nil {
				registered++
				continue
			}
			stepUpOf(t, err)
		}
		if registered != 1 {
			t.Fatalf("%d registrations went through on one step-up, want 1 (errors %v)", registered, errs)
		}
	})
}
