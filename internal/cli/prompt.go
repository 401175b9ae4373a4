package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"golang.org/x/term"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
)

// readLine prompts on stderr and reads one line of stdin, without its end.
func (e *env) readLine(prompt string) (string, error) {
	fmt.Fprint(e.errw, prompt)
	line, err := e.in.ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		if errors.Is(err, io.EOF) {
			return "", usagef("no answer on stdin to %q", strings.TrimSpace(prompt))
		}
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// readSecret prompts on stderr and reads a line without echo when stdin is
// a terminal; otherwise a plain line.
func (e *env) readSecret(prompt string) (string, error) {
	if f := e.stdinFile(); f != nil && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(e.errw, prompt)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(e.errw)
		if err != nil {
			return "", err
		}
		return string(b), nil
	}
	return e.readLine(prompt)
}

// confirm asks a yes/no question; only y or yes is yes.
func (e *env) confirm(question string) (bool, error) {
	answer, err := e.readLine(question + " [y/N] ")
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			return false, nil // no answer is no
		}
		return false, err
	}
	a := strings.ToLower(strings.TrimSpace(answer))
	return a == "y" || a == "yes", nil
}

// confirmUnless asks question unless the person already said yes (--yes)
// and answers errNotConfirmed when they do not confirm.
func (e *env) confirmUnless(yes bool, question string) error {
	if yes {
		return nil
	}
	ok, err := e.confirm(question)
	if err != nil {
		return err
	}
	if !ok {
		return errNotConfirmed
	}
	return nil
}

// progress prints a progress line of something that waits, on stderr.
func (e *env) progress(format string, a ...any) {
	fmt.Fprintf(e.errw, format+"\n", a...)
}

// stepUp walks the person through a step-up challenge: the match code to
// enter on their phone (then the client waits for the phone), or a code of
// their authenticator app or sent by email, read from stdin.
func (e *env) stepUp(ctx context.Context, ch *api.StepUpChallenge) (client.StepUpAnswer, error) {
	offered := func(m string) bool { return slices.Contains(ch.Methods, api.StepUpMethod(m)) }
	method := e.method
	if method == "" {
		switch {
		case offered(client.StepUpApp):
			method = client.StepUpApp
		case offered(client.StepUpTOTP):
			method = client.StepUpTOTP
		default:
			method = client.StepUpEmail
		}
	}
	if !offered(method) {
		var names []string
		for _, m := range ch.Methods {
			names = append(names, string(m))
		}
		return client.StepUpAnswer{}, usagef("this step-up cannot be answered with %s; it offers %s", method, strings.Join(names, ", "))
	}
	switch method {
	case client.StepUpApp:
		// Waited for here, to show the time waited; the client reads the
		// outcome once more.
		return client.StepUpAnswer{Method: client.StepUpApp}, e.waitForPhone(ctx, ch)
	case client.StepUpTOTP:
		e.progress("This needs your confirmation.")
		code, err := e.readLine("Authenticator code: ")
		return client.StepUpAnswer{Method: client.StepUpTOTP, Code: strings.TrimSpace(code)}, err
	default:
		if err := e.c.RequestStepUpEmail(ctx, ch); err != nil {
			return client.StepUpAnswer{}, err
		}
		e.progress("This needs your confirmation: a code was sent to you by email.")
		code, err := e.readLine("Code from the email: ")
		return client.StepUpAnswer{Method: client.StepUpEmail, Code: strings.TrimSpace(code)}, err
	}
}
