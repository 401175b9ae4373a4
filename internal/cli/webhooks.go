package cli

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/strongroom/strongroom/client/api"
)

var webhookHeader = []string{"ID", "URL", "EVENTS", "STATE", "CREATED"}

func webhookRow(w api.WebhookEndpoint) []string {
	state := "enabled"
	if w.Disabled {
		state = "disabled"
		if w.DisabledReason != nil {
			state += ": " + *w.DisabledReason
		}
	}
	return []string{w.Id.String(), w.Url, strings.Join(w.EventTypes, ","), state, when(w.CreatedAt)}
}

var deliveryHeader = []string{"ID", "EVENT", "TYPE", "ATTEMPT", "STATUS", "RESPONSE", "ATTEMPTED", "NEXT"}

func deliveryRow(d api.WebhookDelivery) []string {
	response := "-"
	if d.ResponseStatus != nil {
		response = strconv.Itoa(*d.ResponseStatus)
	} else if d.Error != nil {
		response = *d.Error
	}
	return []string{d.Id.String(), d.EventId.String(), d.EventType, strconv.Itoa(d.Attempt), string(d.Status), response,
		whenPtr(d.AttemptedAt), whenPtr(d.NextAttemptAt)}
}

func (e *env) printWebhook(w *api.WebhookEndpoint) error {
	if e.jsonOut() {
		return e.printJSON(w)
	}
	return e.table(webhookHeader, [][]string{webhookRow(*w)})
}

// printWebhookSecret prints an endpoint with its signing secret, shown this once.
func (e *env) printWebhookSecret(w *api.WebhookEndpointWithSecret) error {
	if e.jsonOut() {
		return e.printJSON(w)
	}
	if err := e.table(webhookHeader, [][]string{webhookRow(w.WebhookEndpoint)}); err != nil {
		return err
	}
	_, err := fmt.Fprintf(e.out, "\nSigning secret (shown this once; keep it secret):\n%s\n", w.Secret)
	return err
}

// eventTypes is the event types of --event flags: every event when none.
func eventTypes(flags listFlag) api.WebhookEventTypes {
	if len(flags) == 0 {
		return api.WebhookEventTypes{"*"}
	}
	return api.WebhookEventTypes(flags)
}

func webhooksCreate(e *env, args []string) error {
	fs := e.flags("webhooks create", "webhooks create --url URL [--event TYPE]… [--description D] [--org ORG] [-o json]")
	url := fs.String("url", "", "the `URL` deliveries are sent to")
	description := fs.String("description", "", "a `note` for people")
	var events listFlag
	fs.Var(&events, "event", "an event `type` to receive (repeat or comma-separate; default: every event)")
	e.common(fs, true)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *url == "" {
		return usageHelpf("webhooks create needs --url")
	}
	org, err := e.orgID()
	if err != nil {
		return err
	}
	req := api.WebhookEndpointCreation{Url: *url, EventTypes: eventTypes(events)}
	if *description != "" {
		req.Description = description
	}
	w, err := e.c.CreateWebhookEndpoint(e.ctx, org, req)
	if err != nil {
		return err
	}
	return e.printWebhookSecret(w)
}

func webhooksList(e *env, args []string) error {
	fs := e.flags("webhooks list", "webhooks list [--org ORG] [-o json]")
	e.common(fs, true)
	org, err := e.parseForOrg(fs, args)
	if err != nil {
		return err
	}
	return printList(e, e.c.WebhookEndpoints(e.ctx, org), webhookHeader, webhookRow)
}

// webhookArgs parses "webhooks SUB ID…" with n ids and no flags of its own.
func webhookArgs(e *env, sub, what string, n int, args []string) (string, []string, error) {
	fs := e.flags("webhooks "+sub, "webhooks "+sub+" "+what+" [--org ORG] [-o json]")
	e.common(fs, true)
	pos, err := e.parse(fs, args)
	if err != nil {
		return "", nil, err
	}
	if len(pos) != n {
		return "", nil, usageHelpf("webhooks %s takes %s", sub, what)
	}
	org, err := e.orgID()
	return org, pos, err
}

func webhooksGet(e *env, args []string) error {
	org, ids, err := webhookArgs(e, "get", "ID", 1, args)
	if err != nil {
		return err
	}
	w, err := e.c.WebhookEndpoint(e.ctx, org, ids[0])
	if err != nil {
		return err
	}
	return e.printWebhook(w)
}

func webhooksUpdate(e *env, args []string) error {
	fs := e.flags("webhooks update", "webhooks update ID [--url URL] [--event TYPE]… [--description D] [--enable|--disable] [--org ORG] [-o json]")
	url := fs.String("url", "", "a new `URL` (asks for a step-up)")
	description := fs.String("description", "", "a new `note`")
	enable := fs.Bool("enable", false, "start deliveries again")
	disable := fs.Bool("disable", false, "stop deliveries")
	var events listFlag
	fs.Var(&events, "event", "the event `type`s to receive instead (repeat or comma-separate; * for every event)")
	e.common(fs, true)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageHelpf("webhooks update takes one endpoint id")
	}
	if *enable && *disable {
		return usageHelpf("webhooks update takes --enable or --disable, not both")
	}
	var req api.WebhookEndpointUpdate
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "url":
			req.Url = url
		case "description":
			req.Description = description
		case "event":
			t := api.WebhookEventTypes(events)
			req.EventTypes = &t
		case "enable":
			off := false
			req.Disabled = &off
		case "disable":
			on := true
			req.Disabled = &on
		}
	})
	if req.Url == nil && req.Description == nil && req.EventTypes == nil && req.Disabled == nil {
		return usageHelpf("webhooks update needs --url, --event, --description, --enable or --disable")
	}
	org, err := e.orgID()
	if err != nil {
		return err
	}
	w, err := e.c.UpdateWebhookEndpoint(e.ctx, org, pos[0], req)
	if err != nil {
		return err
	}
	return e.printWebhook(w)
}

func webhooksDelete(e *env, args []string) error {
	org, ids, err := webhookArgs(e, "delete", "ID", 1, args)
	if err != nil {
		return err
	}
	w, err := e.c.DeleteWebhookEndpoint(e.ctx, org, ids[0])
	if err != nil {
		return err
	}
	return e.printWebhook(w)
}

func webhooksRotate(e *env, args []string) error {
	org, ids, err := webhookArgs(e, "rotate-secret", "ID", 1, args)
	if err != nil {
		return err
	}
	w, err := e.c.RotateWebhookSecret(e.ctx, org, ids[0])
	if err != nil {
		return err
	}
	if !e.jsonOut() {
		fmt.Fprintln(e.errw, "The previous secret keeps signing beside the new one for 24 hours.")
	}
	return e.printWebhookSecret(w)
}

func webhooksDeliveries(e *env, args []string) error {
	org, ids, err := webhookArgs(e, "deliveries", "ID", 1, args)
	if err != nil {
		return err
	}
	return printList(e, e.c.WebhookDeliveries(e.ctx, org, ids[0]), deliveryHeader, deliveryRow)
}

func webhooksRetry(e *env, args []string) error {
	org, ids, err := webhookArgs(e, "retry", "ID DELIVERY", 2, args)
	if err != nil {
		return err
	}
	d, err := e.c.RetryWebhookDelivery(e.ctx, org, ids[0], ids[1])
	if err != nil {
		return err
	}
	if e.jsonOut() {
		return e.printJSON(d)
	}
	return e.table(deliveryHeader, [][]string{deliveryRow(*d)})
}
