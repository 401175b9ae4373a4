package stepup

import (
	"context"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/platform/apierr"
)

// Gate is what a step-up guards. It decides whether the operation needs a
// step-up at all, which methods may answer it, and which open sudo window
// lets the operation through.
type Gate int

// Gates of sensitive operations.
const (
	// GateIdentity guards a sensitive change (an API key, say): the app,
	// the authenticator or email answer it, and any open window lets it through.
	GateIdentity Gate = iota
	// GateWithoutApp guards a change of the approving app's own key: the
	// app cannot vouch for itself, so only the authenticator or email answer
	// it, and only a window one of them opened lets it through.
	GateWithoutApp
	// GateAuthenticator guards replacing the authenticator: GateIdentity
	// while the person has a working one; setting up the first needs none.
	GateAuthenticator
)

// Require is the one step-up gate of every sensitive operation. It lets the
// actor's call through while the bearer session has an open sudo window
// that gate accepts (or when gate needs no step-up for this person);
// otherwise it mints a step-up offering the methods gate allows and answers
// step_up_required carrying the challenge. The mint commits on its own,
// since the gated call itself does not go ahead. While the person's step-up
// is locked after wrong codes, it answers rate_limited.
func (s *Service) Require(ctx context.Context, a actor.Actor, gate Gate) error {
	if gate == GateAuthenticator {
		u, err := identity.GetUser(ctx, s.DB.Reader(), a.UserID)
		if err != nil || !u.TOTPEnabled {
			return err
		}
		gate = GateIdentity
	}
	withoutApp := gate == GateWithoutApp
	open, err := s.windowOpen(ctx, a, withoutApp)
	if err != nil || open {
		return err
	}
	ch, err := s.Mint(ctx, a, Request{Purpose: "identity", Kind: KindStepUp, Binding: "none", WithoutApp: withoutApp})
	if err != nil {
		return err
	}
	msg := "Please confirm it is you: approve the request in the Strongroom app, entering the code shown here, or use another listed method."
	if withoutApp {
		msg = "Please confirm it is you with a code from your authenticator app, or ask for a code by email: the Strongroom app cannot confirm a change of its own key."
	}
	return &apierr.Error{Type: apierr.StepUpRequired, Message: msg, StepUp: ch}
}

// windowOpen reports whether the bearer session has an open identity sudo
// window; withoutApp counts only a window opened by a code.
func (s *Service) windowOpen(ctx context.Context, a actor.Actor, withoutApp bool) (bool, error) {
	opened := ""
	if withoutApp {
		opened = ` AND su.completed_method <> 'app'`
	}
	var open bool
	err := s.DB.Reader().QueryRowContext(ctx, `
		SELECT EXISTS (SELECT 1 FROM sudo_sessions ss JOIN step_up_authentications su ON su.sudo_session_id = ss.id
		               WHERE ss.session_id = $1 AND ss.purpose = 'identity' AND ss.status = 'active' AND ss.expires_at > $2`+opened+`)`,
		a.Session.ID, s.Clock.Now()).Scan(&open)
	return open, err
}

// For binds the guard to one gate, for a service whose sensitive
// operations all pass the same one (API keys).
func (s *Service) For(gate Gate) OneGate { return OneGate{guard: s, gate: gate} }

// OneGate is the guard bound to one gate (see For).
type OneGate struct {
	guard *Service
	gate  Gate
}

// Require is Service.Require at the bound gate.
func (g OneGate) Require(ctx context.Context, a actor.Actor) error {
	return g.guard.Require(ctx, a, g.gate)
}
