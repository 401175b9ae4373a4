package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
)

func TestWebhooksCommands(t *testing.T) {
	h := newHarness(t)
	o := h.newOrg("ada@acme.test")
	h.login(o)

	// Creating asks for a step-up, answered here with an authenticator code.
	r := h.run(h.code(o)+"\n", "webhooks", "create", "--url", "http://127.0.0.1:9/hook", "--event", "payment.updated,card.updated", "--step-up", "totp")
	if r.code != 0 || !strings.Contains(r.stdout, "whsec_") {
		t.Fatalf("webhooks create: %+v", r)
	}
	endpoints := decodeJSON[[]api.WebhookEndpoint](t, h.ok("", "webhooks", "list", "-o", "json"))
	if len(endpoints) != 1 || strings.Join(endpoints[0].EventTypes, ",") != "card.updated,payment.updated" {
		t.Fatalf("webhooks list: %+v", endpoints)
	}
	id := endpoints[0].Id.String()
	if out := h.ok("", "webhooks", "get", id); !strings.Contains(out, "http://127.0.0.1:9/hook") || !strings.Contains(out, "enabled") {
		t.Fatalf("webhooks get: %s", out)
	}
	// Disabling needs no step-up.
	if out := h.ok("", "webhooks", "update", id, "--disable"); !strings.Contains(out, "disabled") {
		t.Fatalf("webhooks update --disable: %s", out)
	}
	if out := h.ok("", "webhooks", "deliveries", id); !strings.Contains(out, "ATTEMPT") {
		t.Fatalf("webhooks deliveries: %s", out)
	}
	h.advance(11 * time.Minute)
	r = h.run(h.code(o)+"\n", "webhooks", "rotate-secret", id, "--step-up", "totp")
	if r.code != 0 || !strings.Contains(r.stdout, "whsec_") || !strings.Contains(r.stderr, "24 hours") {
		t.Fatalf("webhooks rotate-secret: %+v", r)
	}
	h.fails(ExitNotFound, "", "webhooks", "retry", id, "0190f5cc-3d4e-7f50-8a1b-2c3d4e5f6a7b")
	h.ok("", "webhooks", "delete", id)
	h.fails(ExitNotFound, "", "webhooks", "get", id)
	h.fails(ExitUsage, "", "webhooks", "create")
}
