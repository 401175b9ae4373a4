package stepup

import (
	"cmp"
	"context"
	"errors"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
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
	return s.ask(ctx, a, withoutApp)
}

// ask mints a step-up for a gated call and answers step_up_required carrying it.
func (s *Service) ask(ctx context.Context, a actor.Actor, withoutApp bool) error {
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

// openWindows selects the open identity sudo windows of the bearer session
// ($1) at time $2; withoutApp keeps only those opened by a code.
func openWindows(withoutApp bool) string {
	opened := ""
	if withoutApp {
		opened = ` AND su.completed_method <> 'app'`
	}
	return `SELECT ss.id FROM sudo_sessions ss JOIN step_up_authentications su ON su.sudo_session_id = ss.id
		WHERE ss.session_id = $1 AND ss.purpose = 'identity' AND ss.status = 'active' AND ss.expires_at > $2` + opened
}

// windowOpen reports whether the bearer session has an open identity sudo
// window; withoutApp counts only a window opened by a code.
func (s *Service) windowOpen(ctx context.Context, a actor.Actor, withoutApp bool) (bool, error) {
	var open bool
	err := s.DB.Reader().QueryRowContext(ctx, `SELECT EXISTS (`+openWindows(withoutApp)+`)`, a.Session.ID, s.Clock.Now()).Scan(&open)
	return open, err
}

// errWindowSpent says the window Require found ended before the gated
// transaction could spend it (a concurrent call spent it, or it ran out).
var errWindowSpent = errors.New("stepup: the sudo window ended before it was spent")

// spendAttempts bounds how often Spend looks for a window again after
// losing one to a concurrent call, before it asks for a new step-up.
const spendAttempts = 3

// Spend runs op, in one transaction, behind gate as Require does, and
// spends the step-up that let it through: the sudo window op relied on
// ends in op's transaction, so that step-up serves this one operation and
// the next gated call asks again, even within the window's ten minutes.
// The window is ended by a conditional update, so of two concurrent calls
// relying on one window only one goes ahead; the other asks for a new
// step-up (step_up_required). op's changes and the window's end commit
// together or not at all.
func Spend[T any](ctx context.Context, s *Service, a actor.Actor, gate Gate, op func(tx *db.Tx) (T, error)) (T, error) {
	var zero T
	if gate == GateAuthenticator {
		// Spending needs a window that let the call through; replacing the
		// authenticator without one (the first) is not spent.
		return zero, errors.New("stepup: Spend does not take GateAuthenticator")
	}
	withoutApp := gate == GateWithoutApp
	// When several windows are open (rare: each asks for its own answer),
	// any one of them let the call through, and that one is spent.
	for range spendAttempts {
		if err := s.Require(ctx, a, gate); err != nil {
			return zero, err
		}
		out, err := db.InTx(ctx, s.DB, func(tx *db.Tx) (T, error) {
			res, err := tx.ExecContext(ctx, `
				UPDATE sudo_sessions SET status = 'expired', expires_at = $2, updated_at = $2
				WHERE id = (`+openWindows(withoutApp)+` LIMIT 1)
				  AND status = 'active' AND expires_at > $2`, a.Session.ID, tx.Now())
			if err != nil {
				return zero, err
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return zero, cmp.Or(err, errWindowSpent)
			}
			return op(tx)
		})
		if !errors.Is(err, errWindowSpent) {
			return out, err
		}
	}
	// Windows keep being spent under us: ask for a step-up of this call's own.
	return zero, s.ask(ctx, a, withoutApp)
}
