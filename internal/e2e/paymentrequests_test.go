package e2e_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// requestsPath is a path of org's payment requests ("" for the list).
func requestsPath(org, rest string) string { return orgPath(org, "/payment-requests"+rest) }

// requestBody asks for amount EUR to contact, as a program would.
func requestBody(t *testing.T, contact, amount, externalID string) api.PaymentRequestCreation {
	body := api.PaymentRequestCreation{PaymentContactId: uuidOf(t, contact), Amount: amount, Currency: "EUR",
		Reference: ptr("PO 2026-0417"), Reason: ptr("PYR001")}
	if externalID != "" {
		body.ExternalId = &externalID
	}
	return body
}

// requester is an organization's owner (signed in on the web and in the
// app, with a funded EUR balance and a supplier) and a program's API key
// holding the payment request scopes.
type requester struct {
	*payer
	program *client.Client
	keyID   string
}

func newRequester(t *testing.T, s *apitest.Server, email, amount string) *requester {
	t.Helper()
	p := newPayer(t, s, email, amount)
	k := createKey(t, s, p.person, p.org, keyOf("ERP", "member", "payment_requests:read", "payment_requests:write", "events:read"))
	return &requester{payer: p, program: s.Client(t, k.Secret), keyID: k.ApiKey.Id.String()}
}

// paymentRequestsUpdated reads the stream's messages until n of them are
// payment_request.updated ones of request id, and returns those.
func paymentRequestsUpdated(t *testing.T, st *apitest.Stream, org, id string, n int) []api.PaymentRequest {
	t.Helper()
	var out []api.PaymentRequest
	for len(out) < n {
		m := st.Next(t, realtimeWait)
		if m.Type != "payment_request.updated" {
			continue
		}
		expectMessage(t, m, "payment_request.updated", org)
		var msg api.PaymentRequestUpdatedMessage
		decodeMessage(t, m, &msg)
		if msg.Data.Id.String() == id {
			out = append(out, msg.Data)
		}
	}
	return out
}

// A program proposes a payment, a person accepts it (the payment is made
// in their name), approves it with the sandbox approving app, the rail
// settles it: the request shows payment_status completed, and each of its
// changes was told as payment_request.updated (docs/api.md, Payment requests).
func TestPaymentRequestAcceptedApprovedAndSettled(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	o := newRequester(t, s, "requests-owner@acme.test", "5000.00")
	st := freshEvents(t, s, o.org, o.web)
	adminID, adminSecret := addUser(t, s, o.org, "requests-admin@acme.test", "admin", true)
	admin := signInFully(t, s, "requests-admin@acme.test", adminSecret)
	s.Post(t, "/api/v1/sandbox/users/"+adminID+"/approving-app", sbx, nil).ExpectStatus(t, http.StatusCreated)

	// The program proposes; a retry under the same key replays.
	body := requestBody(t, o.contact, "1250.00", "erp-po-0417")
	pr, err := o.program.CreatePaymentRequest(t.Context(), o.org, body, "po-0417")
	if err != nil {
		t.Fatal(err)
	}
	if pr.Status != api.PaymentRequestStatusPending || pr.RequestedBy.Kind != api.PaymentRequestRequesterKindApiKey || pr.RequestedBy.Id.String() != o.keyID ||
		pr.RequestedBy.Name != "ERP" || pr.PaymentContact.Id.String() != o.contact || pr.Amount != "1250.00" || pr.PaymentId != nil || pr.PaymentStatus != nil ||
		!pr.ExpiresAt.Equal(pr.CreatedAt.Add(30*24*time.Hour)) {
		t.Fatalf("created %+v", pr)
	}
	replay := s.Do(t, apitest.Request{Method: "POST", Path: requestsPath(o.org, ""), Bearer: o.program.Token(), Body: body,
		Header: map[string]string{"Idempotency-Key": "po-0417"}})
	var again api.PaymentRequest
	replay.ExpectStatus(t, http.StatusCreated).Decode(t, &again)
	if again.Id != pr.Id || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay answered %s (replayed %q), want %s", again.Id, replay.Header.Get("Idempotent-Replayed"), pr.Id)
	}
	id := pr.Id.String()

	// A person accepts: the payment is theirs, awaiting approval.
	var accepted api.PaymentRequest
	s.Post(t, requestsPath(o.org, "/"+id+"/accept"), admin, nil).ExpectStatus(t, http.StatusOK).Decode(t, &accepted)
	if accepted.Status != api.PaymentRequestStatusAccepted || accepted.PaymentId == nil || str(accepted.PaymentStatus) != "awaiting_approval" ||
		accepted.DecidedById.String() != adminID {
		t.Fatalf("accepted %+v", accepted)
	}
	pay := getPayment(t, s, admin, accepted.PaymentId.String())
	if pay.CreatedById.String() != adminID || pay.Delivered != moneyOf("1250.00", "EUR") || str(pay.StatementDescription) != "PO 2026-0417" {
		t.Fatalf("payment %+v", pay)
	}
	s.Post(t, requestsPath(o.org, "/"+id+"/accept"), admin, nil).ExpectError(t, http.StatusConflict, "conflict")
	s.Post(t, requestsPath(o.org, "/"+id+"/cancel"), o.program.Token(), nil).ExpectError(t, http.StatusConflict, "conflict")

	// The phone approves (the sandbox's approving app), the rail takes it and settles it.
	up := expectStepUp(t, s.Post(t, "/api/v1/approvals/"+pay.ApprovalRequestId.String()+"/approve", admin, nil))
	cs := inbox(t, s, admin)
	if len(cs) != 1 || cs[0].ApprovalId == nil || *cs[0].ApprovalId != *pay.ApprovalRequestId {
		t.Fatalf("inbox %+v", cs)
	}
	s.Post(t, "/api/v1/sandbox/challenges/"+cs[0].Id.String()+"/approve", sbx, map[string]any{"match_code": *up.MatchCode}).ExpectStatus(t, http.StatusOK)
	eventually(t, "the rail takes the payment", func() bool { return getPayment(t, s, admin, pay.Id.String()).Status == "processing" })
	s.Post(t, "/api/v1/sandbox/payments/"+pay.Id.String()+"/settle", sbx, map[string]any{"outcome": "completed"}).ExpectStatus(t, http.StatusOK)

	eventually(t, "the request follows its payment", func() bool {
		got, err := o.program.PaymentRequest(t.Context(), o.org, id)
		if err != nil {
			t.Fatal(err)
		}
		return got.Status == api.PaymentRequestStatusAccepted && str(got.PaymentStatus) == "completed"
	})

	// Every change was told: made, accepted, approved, processing, completed.
	seen := paymentRequestsUpdated(t, st, o.org, id, 5)
	if last := seen[4]; str(last.PaymentStatus) != "completed" || last.Status != api.PaymentRequestStatusAccepted {
		t.Fatalf("last message %+v", last)
	}
	// The program, which holds no session, reads the same five from the
	// events list with its key (each as the request is now).
	told := listedEvents(t, s, o.program.Token(), o.org, "type=payment_request.updated")
	if ids := dataIDs(t, told); len(ids) != 5 || slices.ContainsFunc(ids, func(got string) bool { return got != id }) {
		t.Fatalf("the program's events: %v, want five of request %s", ids, id)
	}
	listed := collectRequests(t, o.program, o.org, &api.ListPaymentRequestsParams{ExternalId: ptr("erp-po-0417")})
	if len(listed) != 1 || listed[0].Id != pr.Id {
		t.Fatalf("listed by external_id: %d requests", len(listed))
	}
	if n := len(collectRequests(t, o.program, o.org, &api.ListPaymentRequestsParams{Status: ptr(api.PaymentRequestStatusPending)})); n != 0 {
		t.Fatalf("%d pending requests, want none", n)
	}
}

func collectRequests(t *testing.T, c *client.Client, org string, params *api.ListPaymentRequestsParams) []api.PaymentRequest {
	t.Helper()
	var out []api.PaymentRequest
	for r, err := range c.PaymentRequests(t.Context(), org, params) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// A request is its organization's; keys act within their scopes and never
// answer requests; a person declines, the requester cancels.
func TestPaymentRequestsKeepToTheirOrganizationAndScopes(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	o := newRequester(t, s, "requests-a@acme.test", "")
	other := newRequester(t, s, "requests-b@globex.test", "")
	pr, err := o.program.CreatePaymentRequest(t.Context(), o.org, requestBody(t, o.contact, "10.00", ""), "")
	if err != nil {
		t.Fatal(err)
	}
	id := pr.Id.String()

	// Another organization's request is not found, by its key, its people or through its path.
	for _, bearer := range []string{other.program.Token(), other.web} {
		s.Get(t, requestsPath(o.org, "/"+id), bearer).ExpectError(t, http.StatusNotFound, "not_found")
		s.Get(t, requestsPath(other.org, "/"+id), bearer).ExpectError(t, http.StatusNotFound, "not_found")
		s.Post(t, requestsPath(other.org, "/"+id+"/cancel"), bearer, nil).ExpectError(t, http.StatusNotFound, "not_found")
	}
	s.Post(t, requestsPath(other.org, "/"+id+"/accept"), other.web, nil).ExpectError(t, http.StatusNotFound, "not_found")
	s.Post(t, requestsPath(other.org, "/"+id+"/decline"), other.web, map[string]any{"reason": "no"}).ExpectError(t, http.StatusNotFound, "not_found")
	// Nor can a request name another organization's contact.
	s.Post(t, requestsPath(o.org, ""), o.program.Token(), requestBody(t, other.contact, "10.00", "")).ExpectError(t, http.StatusNotFound, "not_found")

	// Keys act within their scopes.
	balances := balancesKey(t, s, o.person, o.org)
	reader := createKey(t, s, o.person, o.org, keyOf("Reader", "member", "payment_requests:read"))
	s.Get(t, requestsPath(o.org, ""), balances.Secret).ExpectError(t, http.StatusForbidden, "api_scope_missing")
	s.Get(t, requestsPath(o.org, "/"+id), balances.Secret).ExpectError(t, http.StatusForbidden, "api_scope_missing")
	s.Get(t, requestsPath(o.org, "/"+id), reader.Secret).ExpectStatus(t, http.StatusOK)
	s.Post(t, requestsPath(o.org, ""), reader.Secret, requestBody(t, o.contact, "10.00", "")).ExpectError(t, http.StatusForbidden, "api_scope_missing")
	s.Post(t, requestsPath(o.org, "/"+id+"/cancel"), reader.Secret, nil).ExpectError(t, http.StatusForbidden, "api_scope_missing")
	// A key never answers a request, whatever its scopes.
	s.Post(t, requestsPath(o.org, "/"+id+"/accept"), o.program.Token(), nil).ExpectError(t, http.StatusForbidden, "api_key_not_permitted")
	s.Post(t, requestsPath(o.org, "/"+id+"/decline"), o.program.Token(), map[string]any{"reason": "no"}).ExpectError(t, http.StatusForbidden, "api_key_not_permitted")
	// Only the requester cancels.
	s.Post(t, requestsPath(o.org, "/"+id+"/cancel"), o.web, nil).ExpectError(t, http.StatusForbidden, "forbidden")

	expectInvalidField(t, s.Post(t, requestsPath(o.org, "/"+id+"/decline"), o.web, map[string]any{"reason": ""}), "reason")
	var declined api.PaymentRequest
	s.Post(t, requestsPath(o.org, "/"+id+"/decline"), o.web, map[string]any{"reason": "Paid by card already."}).ExpectStatus(t, http.StatusOK).Decode(t, &declined)
	if declined.Status != api.PaymentRequestStatusDeclined || str(declined.DeclineReason) != "Paid by card already." || declined.DecidedById.String() != o.userID {
		t.Fatalf("declined %+v", declined)
	}
	s.Post(t, requestsPath(o.org, "/"+id+"/cancel"), o.program.Token(), nil).ExpectError(t, http.StatusConflict, "conflict")

	mine, err := o.program.CreatePaymentRequest(t.Context(), o.org, requestBody(t, o.contact, "20.00", ""), "")
	if err != nil {
		t.Fatal(err)
	}
	cancelled, err := o.program.CancelPaymentRequest(t.Context(), o.org, mine.Id.String())
	if err != nil || cancelled.Status != api.PaymentRequestStatusCancelled {
		t.Fatalf("the program cancels its own: %+v, %v", cancelled, err)
	}
	expectInvalidFields(t, s.Post(t, requestsPath(o.org, ""), o.program.Token(), map[string]any{"payment_contact_id": o.contact, "amount": "1.001", "currency": "EUR"}),
		"amount")
	// A bank transfer's payment needs a reason and a reference: the request says so at once.
	expectInvalidFields(t, s.Post(t, requestsPath(o.org, ""), o.program.Token(), map[string]any{"payment_contact_id": o.contact, "amount": "1.00", "currency": "EUR"}),
		"reason", "reference")
}

// An unanswered request expires 30 days after it was made, on the
// service's clock.
func TestPaymentRequestExpiresAfterThirtyDays(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	o := newRequester(t, s, "requests-expiry@acme.test", "")
	var pr api.PaymentRequest
	s.Post(t, "/api/v1/sandbox/organizations/"+o.org+"/payment-requests", sbx, requestBody(t, o.contact, "10.00", "")).
		ExpectStatus(t, http.StatusCreated).Decode(t, &pr)
	if pr.RequestedBy.Kind != api.PaymentRequestRequesterKindApiKey || pr.RequestedBy.Id != nil || pr.Status != api.PaymentRequestStatusPending {
		t.Fatalf("sandbox request %+v", pr)
	}
	id := pr.Id.String()
	advanceTo(t, s, pr.ExpiresAt.Add(-time.Second))
	time.Sleep(1500 * time.Millisecond) // a job runner's poll
	if got, err := o.program.PaymentRequest(t.Context(), o.org, id); err != nil || got.Status != api.PaymentRequestStatusPending {
		t.Fatalf("a second before expiry: %+v, %v", got, err)
	}
	advance(t, s, time.Second)
	eventually(t, "the request expires", func() bool {
		got, err := o.program.PaymentRequest(t.Context(), o.org, id)
		if err != nil {
			t.Fatal(err)
		}
		return got.Status == api.PaymentRequestStatusExpired
	})
	o.signInAgain(t, s)
	s.Post(t, requestsPath(o.org, "/"+id+"/accept"), o.web, nil).ExpectError(t, http.StatusConflict, "conflict")
}
