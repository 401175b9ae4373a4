package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/strongroom/strongroom/client/api"
)

// sandboxAppName is the device the sandbox approving app registers
// (POST /api/v1/sandbox/users/{user_id}/approving-app): only a test server
// makes one, so a person holding it is in the sandbox.
const sandboxAppName = "Sandbox approving app"

// waitForPhone shows what the person must do on their phone: the match
// code, the challenge's id and deadline and, in the sandbox, the command
// that answers it; then it waits until the step-up is no longer pending,
// showing the time waited on stderr (in place on a terminal, a line every
// ten seconds or so otherwise). The client then reads the outcome again.
func (e *env) waitForPhone(ctx context.Context, ch *api.StepUpChallenge) error {
	code := "?"
	if ch.MatchCode != nil {
		code = *ch.MatchCode
	}
	e.progress("This needs your confirmation: waiting for approval on your phone (match code %s)…", code)
	found := e.findChallenge(ctx, ch)
	deadline := ch.ExpiresAt
	if deadline == nil && found != nil {
		deadline = found.ExpiresAt
	}
	if found != nil {
		e.progress("Challenge %s; it expires at %s.", found.Id, whenSeconds(deadline))
	} else if deadline != nil {
		e.progress("It expires at %s.", whenSeconds(deadline))
	}
	if e.sandboxed(ctx) {
		switch {
		case e.approvalID != "":
			e.progress("In the sandbox, approve it from another terminal: strongroom sandbox approve %s --match-code %s", e.approvalID, code)
		case found != nil:
			e.progress("In the sandbox, approve it from another terminal: strongroom sandbox approve --challenge %s --match-code %s", found.Id, code)
		}
	}

	poll := e.opts.Poll
	if poll <= 0 {
		poll = 2 * time.Second
	}
	tty := isTerminal(e.errw)
	every := e.opts.ProgressEvery
	if every <= 0 {
		every = 10 * time.Second
		if tty {
			every = time.Second
		}
	}
	start := time.Now()
	lastShown := start
	shown := false
	defer func() {
		if tty && shown {
			fmt.Fprintln(e.errw) // leave the updated line
		}
	}()
	for {
		st, err := e.c.StepUpStatus(ctx, ch.Id.String())
		if err != nil {
			return err
		}
		if st.Status != api.StepUpStatusStatusPending {
			return nil
		}
		for waited := time.Duration(0); waited < poll; {
			step := min(poll-waited, every)
			if err := sleepCtx(ctx, step); err != nil {
				return err
			}
			waited += step
			if now := time.Now(); now.Sub(lastShown) >= every {
				lastShown = now
				shown = true
				e.showWaiting(tty, now.Sub(start), deadline)
			}
		}
	}
}

// showWaiting prints how long the phone has been waited for.
func (e *env) showWaiting(tty bool, waited time.Duration, deadline *time.Time) {
	line := fmt.Sprintf("Waiting for your phone: %s elapsed", elapsed(waited))
	if deadline != nil {
		line += fmt.Sprintf("; the challenge expires at %s", whenSeconds(deadline))
	}
	if tty {
		fmt.Fprintf(e.errw, "\r\x1b[K%s", line) // rewritten in place
		return
	}
	fmt.Fprintln(e.errw, line)
}

// elapsed is a duration as minutes and seconds: 1:05.
func elapsed(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// whenSeconds is a deadline to the second, UTC.
func whenSeconds(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// findChallenge finds, among the person's pending challenges, the one of
// this step-up: the payment approval's (by e.approvalID) or the step-up's
// (by its step-up authentication). Best effort: nil when not found.
func (e *env) findChallenge(ctx context.Context, ch *api.StepUpChallenge) *api.Challenge {
	if e.c == nil {
		return nil
	}
	n := 0
	for c, err := range e.c.Challenges(ctx, nil) {
		if err != nil || n > 500 {
			return nil
		}
		n++
		if e.approvalID != "" && c.ApprovalId != nil && c.ApprovalId.String() == e.approvalID {
			return &c
		}
		if c.StepUpAuthenticationId != nil && *c.StepUpAuthenticationId == ch.StepUpAuthenticationId {
			return &c
		}
	}
	return nil
}

// sandboxed reports whether the command speaks to a test server: the
// sandbox token is set, or the person holds the sandbox approving app.
func (e *env) sandboxed(ctx context.Context) bool {
	if e.getenv("STRONGROOM_SANDBOX_TOKEN") != "" {
		return true
	}
	if e.c == nil {
		return false
	}
	n := 0
	for d, err := range e.c.Devices(ctx, nil) {
		if err != nil || n > 500 {
			return false
		}
		n++
		if d.Name != nil && *d.Name == sandboxAppName {
			return true
		}
	}
	return false
}
