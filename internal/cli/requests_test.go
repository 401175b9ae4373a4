package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// A program's payment requests: listed, one accepted (the payment is made
// and approved on the phone), one declined.
func TestRequestsAcceptWaitsForThePhone(t *testing.T) {
	h := newHarness(t)
	o := h.newOrg("ada@acme.test")
	h.s.Post(t, "/api/v1/sandbox/users/"+o.userID+"/approving-app", sbx, nil).ExpectStatus(t, 201)
	h.deposit(o, "EUR", "1000.00")
	h.login(o)
	var contact struct {
		ID string `json:"id"`
	}
	h.s.Post(t, "/api/v1/organizations/"+o.id+"/payment-contacts", h.token(), map[string]any{
		"name": "Müller Maschinenbau GmbH", "currency": "EUR", "rail": "fiat", "iban": "DE89 3704 0044 0532 0130 00", "swift_code": "COBADEFFXXX",
	}).ExpectStatus(t, 201).Decode(t, &contact)
	request := func(amount string) string {
		var r api.PaymentRequest
		h.s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/payment-requests", sbx, map[string]any{"payment_contact_id": contact.ID,
			"amount": amount, "currency": "EUR", "reference": "PO 2026-0417", "reason": "PYR001", "external_id": "po-" + amount}).ExpectStatus(t, 201).Decode(t, &r)
		return r.Id.String()
	}
	first, second := request("120.00"), request("80.00")

	out := h.ok("", "requests", "list")
	if !strings.Contains(out, "120.00 EUR") || !strings.Contains(out, "80.00 EUR") || !strings.Contains(out, "Müller Maschinenbau GmbH") {
		t.Fatalf("requests list:\n%s", out)
	}
	listed := decodeJSON[[]api.PaymentRequest](t, h.ok("", "requests", "list", "--external-id", "po-80.00", "-o", "json"))
	if len(listed) != 1 || listed[0].Id.String() != second {
		t.Fatalf("--external-id: %+v", listed)
	}

	// Asked and answered no: nothing accepted.
	if r := h.fails(ExitError, "n\n", "requests", "accept", first); !strings.Contains(r.stderr, "Pay? [y/N]") {
		t.Fatalf("declined at the prompt: %+v", r)
	}
	errw := &apitest.Buffer{}
	running := h.start("", errw, "requests", "accept", first, "--yes")
	h.approveOnPhone(errw)
	r := <-running
	if r.code != 0 || !strings.Contains(r.stdout, "Payment request "+first+": accepted") || !strings.Contains(r.stdout, ": approved.") {
		t.Fatalf("requests accept: %+v", r)
	}
	accepted := decodeJSON[[]api.PaymentRequest](t, h.ok("", "requests", "list", "--status", "accepted", "-o", "json"))
	if len(accepted) != 1 || accepted[0].PaymentId == nil {
		t.Fatalf("accepted: %+v", accepted)
	}

	h.fails(ExitUsage, "", "requests", "decline", second)
	r = h.run("", "requests", "decline", second, "--reason", "Paid by card already.")
	if r.code != 0 || r.stdout != fmt.Sprintf("Payment request %s: declined.\n", second) {
		t.Fatalf("requests decline: %+v", r)
	}
	h.fails(ExitRefused, "", "requests", "decline", second, "--reason", "again")
}
