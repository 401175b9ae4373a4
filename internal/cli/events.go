package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/platform/webhooksend"
)

// eventTime reads --since or --until: an RFC 3339 time, or a date
// YYYY-MM-DD (UTC) meaning its start (since) or the start of the next day
// (until: the whole day is included).
func eventTime(flagName, s string, until bool) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return &t, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return nil, usagef("--%s must be a time (2026-11-25T09:30:00Z) or a date (YYYY-MM-DD), not %q", flagName, s)
	}
	if until {
		t = t.AddDate(0, 0, 1)
	}
	return &t, nil
}

// eventRow is an event as a row: its id, type, time and the id of the
// record it is about (from its data).
func eventRow(ev api.Event) []string {
	var m struct {
		ID         string    `json:"id"`
		Type       string    `json:"type"`
		OccurredAt time.Time `json:"occurred_at"`
		Data       struct {
			ID     string `json:"id"`
			BillID string `json:"bill_id"`
		} `json:"data"`
	}
	if raw, err := json.Marshal(ev); err == nil {
		_ = json.Unmarshal(raw, &m)
	}
	if m.Data.ID == "" {
		m.Data.ID = m.Data.BillID
	}
	return []string{m.ID, m.Type, when(m.OccurredAt), orDash(m.Data.ID)}
}

func eventsList(e *env, args []string) error {
	fs := e.flags("events list", "events list [--type T]… [--since TIME] [--until TIME] [--max N] [--org ORG] [-o json]")
	var types listFlag
	fs.Var(&types, "type", "only events of this `type` (payment.updated) or prefix (payment.*); repeat or comma-separate")
	since := fs.String("since", "", "only events that occurred at or after this `time` (RFC 3339, or a date YYYY-MM-DD)")
	until := fs.String("until", "", "only events that occurred before this `time` (RFC 3339), or on or before this date")
	maxRows := fs.Int("max", 0, "stop after `n` events (default: all of the last 30 days)")
	pageSize := fs.Int("page-size", 100, "events fetched per request, 1 to 100")
	e.common(fs, true)
	if _, err := e.parse(fs, args); err != nil {
		return err
	}
	params := api.ListEventsParams{Limit: pageSize}
	var err error
	if params.OccurredFrom, err = eventTime("since", *since, false); err != nil {
		return err
	}
	if params.OccurredTo, err = eventTime("until", *until, true); err != nil {
		return err
	}
	if len(types) > 0 {
		tt := []string(types)
		params.Type = &tt
	}
	org, err := e.orgID()
	if err != nil {
		return err
	}
	all := []api.Event{}
	var rows [][]string
	for ev, err := range e.c.Events(e.ctx, org, &params) {
		if err != nil {
			return err
		}
		all = append(all, ev)
		rows = append(rows, eventRow(ev))
		if *maxRows > 0 && len(all) >= *maxRows {
			break
		}
	}
	if e.jsonOut() {
		return e.printJSON(all)
	}
	return e.table([]string{"ID", "TYPE", "OCCURRED", "RECORD"}, rows)
}

// eventFilter matches event types against --events: exact types, prefixes
// (payment.*) or * for every type.
type eventFilter []string

func (f eventFilter) matches(typ string) bool {
	if len(f) == 0 {
		return true
	}
	for _, p := range f {
		if p == "*" || p == typ {
			return true
		}
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(typ, prefix) {
			return true
		}
	}
	return false
}

// cmdListen follows the organization's realtime channel and forwards each
// event to a URL, signed exactly as a webhook delivery is (Standard Webhooks
// 1.0), as `stripe listen` does for a developer's local endpoint.
func cmdListen(e *env, args []string) error {
	fs := e.flags("listen", "listen --forward-to URL [--events T,…] [--secret whsec_…] [--org ORG]")
	forwardTo := fs.String("forward-to", "", "POST each event to this `URL` (http or https; a local address is fine)")
	var types listFlag
	fs.Var(&types, "events", "forward only events of these `types` (payment.updated, payment.*, …; comma-separate or repeat)")
	secretText := fs.String("secret", "", "sign with this `secret` (whsec_…) instead of a new one made for this run")
	e.common(fs, true)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *forwardTo == "" {
		return usageHelpf("listen needs --forward-to URL")
	}
	if u, err := url.Parse(*forwardTo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--forward-to must be an http or https URL, not %q", *forwardTo)
	}
	var secret webhooksend.Secret
	if *secretText != "" {
		if secret, err = webhooksend.ParseSecret(*secretText); err != nil {
			return usagef("--secret: %v", err)
		}
	} else if secret, err = webhooksend.NewSecret(); err != nil {
		return err
	}
	org, err := e.orgID()
	if err != nil {
		return err
	}
	// The stream lasts: its client has no overall timeout.
	transport := http.DefaultTransport
	if e.opts.HTTP != nil && e.opts.HTTP.Transport != nil {
		transport = e.opts.HTTP.Transport
	}
	stream, err := e.newClient(client.WithToken(e.c.Token()), client.WithHTTP(&http.Client{Transport: transport}))
	if err != nil {
		return err
	}
	sender := webhooksend.New(webhooksend.Options{})
	defer sender.Close()
	fmt.Fprintf(e.out, "Forwarding the events of organization %s to %s\nSigning secret: %s\n", org, *forwardTo, secret.Reveal())
	filter := eventFilter(types)
	connected := client.OnConnect(func() { fmt.Fprintln(e.out, "Connected; waiting for events (Ctrl-C to stop)") })
	for m, err := range stream.Follow(e.ctx, org, "", connected) {
		if err != nil {
			return err
		}
		if !filter.matches(m.Type) {
			continue
		}
		res := sender.Send(e.ctx, *forwardTo, webhooksend.Message{ID: m.ID, Body: m.Raw, Secrets: []webhooksend.Secret{secret}})
		outcome := fmt.Sprint(res.Status)
		if !res.Succeeded() {
			outcome = res.ErrorText()
		}
		fmt.Fprintf(e.out, "%s  %-24s %s  → %s\n", time.Now().UTC().Format("15:04:05"), m.Type, m.ID, outcome)
	}
	return nil
}
