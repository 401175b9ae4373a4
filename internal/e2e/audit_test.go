package e2e_test

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// auditEntries reads the organization's whole audit log as token sees it
// (oldest first), with query (url-encoded, without limit) narrowing it.
func auditEntries(t *testing.T, s *apitest.Server, token, org, query string) []api.AuditEntry {
	t.Helper()
	var all []api.AuditEntry
	path := orgPath(org, "/audit-log?limit=100")
	if query != "" {
		path += "&" + query
	}
	next := path
	for i := 0; ; i++ {
		if i == 50 {
			t.Fatal("the audit log does not end")
		}
		var page api.AuditEntryPage
		s.Get(t, next, token).ExpectStatus(t, http.StatusOK).Decode(t, &page)
		all = append(all, page.Data...)
		if !page.HasMore {
			break
		}
		next = path + "&cursor=" + url.QueryEscape(*page.NextCursor)
	}
	slices.Reverse(all)
	return all
}

// auditFind returns the entries of action on target id (any target when id
// is "").
func auditFind(entries []api.AuditEntry, action, id string) []api.AuditEntry {
	var out []api.AuditEntry
	for _, e := range entries {
		if e.Action == action && (id == "" || e.Target.Id == id) {
			out = append(out, e)
		}
	}
	return out
}

// auditOne fails t unless exactly one entry records action on target (typ,
// id) by actor (kind, id) through the request requestID, and returns it.
func auditOne(t *testing.T, entries []api.AuditEntry, action, typ, id, actorKind, actorID, requestID string) api.AuditEntry {
	t.Helper()
	got := auditFind(entries, action, id)
	if len(got) != 1 {
		t.Fatalf("%d entries %s on %s %s, want 1; log: %+v", len(got), action, typ, id, entries)
	}
	e := got[0]
	if e.Target.Type != typ || string(e.Actor.Kind) != actorKind || (actorID != "" && (e.Actor.Id == nil || e.Actor.Id.String() != actorID)) ||
		(actorID == "" && e.Actor.Id != nil) || e.Actor.Name == "" {
		t.Fatalf("%s entry = %+v, want target %s and actor %s %s", action, e, typ, actorKind, actorID)
	}
	if e.RequestId == nil || (requestID != "" && *e.RequestId != requestID) || e.ClientAddress == nil || *e.ClientAddress != "127.0.0.1" {
		t.Fatalf("%s entry request %v from %v, want %q from 127.0.0.1", action, str(e.RequestId), str(e.ClientAddress), requestID)
	}
	return e
}

var auditHash = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Sign-ins, a key, a webhook endpoint made with the key, a payment executed
// and approved each leave their entry, naming who, what, the request (its
// X-Request-Id) and the client's address; a refused operation leaves none.
func TestAuditLogRecordsEachChangeWithItsRequest(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@audit.test", "1000.00")

	// The API key: its creation carries the request id the client chose.
	keyReq := apitest.Request{Method: http.MethodPost, Path: orgPath(p.org, "/api-keys"),
		Body: keyOf("ERP", "admin", "webhooks:manage"), Header: map[string]string{"X-Request-Id": "audit-key-create"}}
	var key api.ApiKeyWithSecret
	gatedCall(t, s, p.person, keyReq).ExpectStatus(t, http.StatusCreated).Decode(t, &key)

	// The webhook endpoint, made by the key: the id the server minted.
	hook := s.Post(t, hooksPath(p.org, ""), key.Secret, map[string]any{"url": "http://127.0.0.1:9/hook", "event_types": []string{"payment.updated"}}).
		ExpectStatus(t, http.StatusCreated)
	var ep api.WebhookEndpointWithSecret
	hook.Decode(t, &ep)

	// The payment, executed then approved in the app.
	exec := s.Post(t, "/api/v1/payments/execute", p.web, executeBody(p.quote(t, s, "100.00").Id.String())).ExpectStatus(t, http.StatusCreated)
	var pay api.Payment
	exec.Decode(t, &pay)
	p.approveInApp(t, s, pay.ApprovalRequestId.String())

	// A refused change records nothing: the quote is spent.
	s.Post(t, "/api/v1/payments/execute", p.web, executeBody(pay.QuoteId.String())).ExpectError(t, http.StatusUnprocessableEntity, "quote_already_used")
	// The rail (the sandbox here) settles it; the app's session ends.
	s.Post(t, "/api/v1/sandbox/payments/"+pay.Id.String()+"/settle", sbx, map[string]any{"outcome": "completed"}).ExpectStatus(t, http.StatusOK)
	s.Post(t, "/api/v1/auth/sign-out", p.app, nil).ExpectStatus(t, http.StatusOK)

	log := auditEntries(t, s, p.web, p.org, "")
	auditOne(t, log, "payment.settled", "payment", pay.Id.String(), "sandbox", "", "")
	auditOne(t, log, "approving_app.registered", "approval_credential", "", "user", p.userID, "")
	auditOne(t, log, "session.ended", "session", "", "user", p.userID, "")
	auditOne(t, log, "api_key.created", "api_key", key.ApiKey.Id.String(), "user", p.userID, "audit-key-create")
	e := auditOne(t, log, "webhook_endpoint.created", "webhook_endpoint", ep.WebhookEndpoint.Id.String(), "api_key", key.ApiKey.Id.String(), hook.Header.Get("X-Request-Id"))
	if e.Actor.Name != "ERP" {
		t.Fatalf("the key is named %q, want ERP", e.Actor.Name)
	}
	e = auditOne(t, log, "payment.executed", "payment", pay.Id.String(), "user", p.userID, exec.Header.Get("X-Request-Id"))
	if e.Actor.Name != "Ada" {
		t.Fatalf("the person is named %q, want Ada", e.Actor.Name)
	}
	auditOne(t, log, "approval.approved", "approval", pay.ApprovalRequestId.String(), "user", p.userID, "")
	if n := len(auditFind(log, "payment.executed", "")); n != 1 {
		t.Fatalf("%d payment.executed entries, want 1 (the refused retry records nothing)", n)
	}
	// The web and app sign-ins, and the step-ups they answered.
	if n := len(auditFind(log, "session.created", "")); n != 2 {
		t.Fatalf("%d session.created entries, want 2", n)
	}
	for _, e := range auditFind(log, "session.created", "") {
		auditOne(t, []api.AuditEntry{e}, "session.created", "session", e.Target.Id, "user", p.userID, "")
	}
	if len(auditFind(log, "step_up.verified", "")) < 2 {
		t.Fatalf("step-ups missing from the log: %+v", log)
	}
	// The sandbox made the organization and the deposit.
	auditOne(t, log, "organization.created", "organization", p.org, "sandbox", "", "")
	auditOne(t, log, "deposit.created", "transaction", "", "sandbox", "", "")
	for i, e := range log {
		if !auditHash.MatchString(e.Hash) || (i > 0 && e.OccurredAt.Before(log[i-1].OccurredAt)) {
			t.Fatalf("entry %d = %+v", i, e)
		}
	}
}

// The list's filters, its strict query, and who may read it.
func TestAuditLogFiltersAndAccess(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@filters.test", "500.00")
	key := createKey(t, s, p.person, p.org, keyOf("Reporting", "admin", "balances:read"))
	today := day(now(t, s)) // every entry so far is on or before it
	later := day(advance(t, s, 48*time.Hour))
	bobID, bobSecret := addUser(t, s, p.org, "bob@filters.test", "member", true)
	bob := signInFully(t, s, "bob@filters.test", bobSecret)
	p.signInAgain(t, s) // the sessions ended while the clock moved

	all := auditEntries(t, s, p.web, p.org, "")
	byAda := auditEntries(t, s, p.web, p.org, "actor_id="+p.userID)
	if len(byAda) == 0 || len(byAda) >= len(all) {
		t.Fatalf("%d of %d entries by Ada", len(byAda), len(all))
	}
	for _, e := range byAda {
		if e.Actor.Id == nil || e.Actor.Id.String() != p.userID {
			t.Fatalf("actor_id filter let through %+v", e)
		}
	}
	keys := auditEntries(t, s, p.web, p.org, "action=api_key.created")
	if len(keys) != 1 || keys[0].Target.Id != key.ApiKey.Id.String() {
		t.Fatalf("action filter: %+v", keys)
	}
	// Dates are whole days, inclusive: the member came two days later.
	upToToday := auditEntries(t, s, p.web, p.org, "to="+today)
	fromLater := auditEntries(t, s, p.web, p.org, "from="+later)
	if len(upToToday)+len(fromLater) != len(all) || len(fromLater) == 0 {
		t.Fatalf("%d entries up to %s and %d on %s, of %d", len(upToToday), today, len(fromLater), later, len(all))
	}
	for _, e := range fromLater {
		if day(e.OccurredAt) < later {
			t.Fatalf("from/to let through %+v", e)
		}
	}
	bobs := auditEntries(t, s, p.web, p.org, "from="+later+"&action=session.created&actor_id="+bobID)
	auditOne(t, bobs, "session.created", "session", "", "user", bobID, "")
	// Two entries a page, walked to the end, are the same entries.
	var ids []string
	next := orgPath(p.org, "/audit-log?limit=2")
	for range 100 {
		var page api.AuditEntryPage
		s.Get(t, next, p.web).ExpectStatus(t, http.StatusOK).Decode(t, &page)
		for _, e := range page.Data {
			ids = append(ids, e.Id.String())
		}
		if !page.HasMore {
			break
		}
		next = orgPath(p.org, "/audit-log?limit=2&cursor="+url.QueryEscape(*page.NextCursor))
	}
	if len(ids) != len(all) || ids[0] != all[len(all)-1].Id.String() {
		t.Fatalf("paging read %d entries, want %d newest first", len(ids), len(all))
	}

	path := orgPath(p.org, "/audit-log")
	expectInvalidField(t, s.Get(t, path+"?actor=x", p.web), "actor")
	expectInvalidField(t, s.Get(t, path+"?action=payment.teleported", p.web), "action")
	expectInvalidField(t, s.Get(t, path+"?actor_id=ada", p.web), "actor_id")
	expectInvalidField(t, s.Get(t, path+"?from=2026-02-30", p.web), "from")
	expectInvalidField(t, s.Get(t, path+"?from="+later+"&to="+today, p.web), "to")
	expectInvalidField(t, s.Get(t, path+"?action=card.frozen&action=card.unfrozen", p.web), "action")

	s.Get(t, path, bob).ExpectError(t, http.StatusForbidden, "forbidden")
	s.Get(t, path, key.Secret).ExpectError(t, http.StatusForbidden, "api_key_not_permitted")
	other := newPayer(t, s, "eve@other.test", "")
	s.Get(t, path, other.web).ExpectError(t, http.StatusNotFound, "not_found")
	s.Get(t, orgPath(other.org, "/audit-log"), p.web).ExpectError(t, http.StatusNotFound, "not_found")
}

// Each kind of change a person, a key or the sandbox makes leaves its entry
// on its record, by who made it.
func TestAuditLogRecordsEveryKindOfChange(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	r := newRequester(t, s, "ada@kinds.test", "1000.00")
	org, ada, program := r.org, r.userID, r.keyID

	// API keys: rotated, revoked.
	spare := createKey(t, s, r.person, org, keyOf("Spare", "member", "balances:read"))
	spareID := spare.ApiKey.Id.String()
	gatedCall(t, s, r.person, apitest.Request{Method: http.MethodPost, Path: keyPath(org, spareID, "rotate")}).ExpectStatus(t, http.StatusOK)
	s.Post(t, keyPath(org, spareID, "revoke"), r.web, nil).ExpectStatus(t, http.StatusOK)

	// Webhook endpoints: created, updated, secret rotated, deleted.
	hookID := createHook(t, s, r.person, org, map[string]any{"url": "http://127.0.0.1:9/hook", "event_types": []string{"*"}}).WebhookEndpoint.Id.String()
	hookPatch(t, s, hooksPath(org, "/"+hookID), r.web, map[string]any{"description": "ERP"}).ExpectStatus(t, http.StatusOK)
	gatedCall(t, s, r.person, apitest.Request{Method: http.MethodPost, Path: hooksPath(org, "/"+hookID+"/rotate-secret")}).ExpectStatus(t, http.StatusOK)
	hookDelete(t, s, hooksPath(org, "/"+hookID), r.web).ExpectStatus(t, http.StatusOK)

	// Payment requests: made by the program, declined by Ada; made and
	// cancelled by the program.
	declined, err := r.program.CreatePaymentRequest(t.Context(), org, requestBody(t, r.contact, "10.00", ""), "")
	if err != nil {
		t.Fatal(err)
	}
	s.Post(t, requestsPath(org, "/"+declined.Id.String()+"/decline"), r.web, map[string]any{"reason": "Not ours"}).ExpectStatus(t, http.StatusOK)
	cancelled, err := r.program.CreatePaymentRequest(t.Context(), org, requestBody(t, r.contact, "11.00", ""), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.program.CancelPaymentRequest(t.Context(), org, cancelled.Id.String()); err != nil {
		t.Fatal(err)
	}

	// Payments: one cancelled, one rejected.
	withdrawn := r.pay(t, s, "20.00")
	s.Post(t, "/api/v1/payments/"+withdrawn.Id.String()+"/cancel", r.web, nil).ExpectStatus(t, http.StatusOK)
	refused := r.pay(t, s, "30.00")
	s.Post(t, "/api/v1/approvals/"+refused.ApprovalRequestId.String()+"/reject", r.web, map[string]any{"reason": "Wrong supplier"}).ExpectStatus(t, http.StatusOK)

	// Cards: issued by the sandbox, limited, frozen and unfrozen by Ada.
	card := cardFor(t, s, org, ada, 500).Id.String()
	patchCard(t, s, r.web, card, map[string]any{"monthly_limit": 800}).ExpectStatus(t, http.StatusOK)
	cardAction(t, s, r.web, card, "freeze")
	cardAction(t, s, r.web, card, "unfreeze")

	// The organization's status, moved by the sandbox.
	for _, status := range []string{"paused", "active"} {
		s.Post(t, "/api/v1/sandbox/organizations/"+org+"/status", sbx, map[string]any{"status": status}).ExpectStatus(t, http.StatusOK)
	}

	log := auditEntries(t, s, r.web, org, "")
	for _, want := range []struct{ action, typ, id, kind, actor string }{
		{"api_key.created", "api_key", program, "user", ada},
		{"api_key.rotated", "api_key", spareID, "user", ada},
		{"api_key.revoked", "api_key", spareID, "user", ada},
		{"webhook_endpoint.created", "webhook_endpoint", hookID, "user", ada},
		{"webhook_endpoint.updated", "webhook_endpoint", hookID, "user", ada},
		{"webhook_endpoint.secret_rotated", "webhook_endpoint", hookID, "user", ada},
		{"webhook_endpoint.deleted", "webhook_endpoint", hookID, "user", ada},
		{"payment_contact.created", "payment_contact", r.contact, "user", ada},
		{"payment_request.created", "payment_request", declined.Id.String(), "api_key", program},
		{"payment_request.declined", "payment_request", declined.Id.String(), "user", ada},
		{"payment_request.cancelled", "payment_request", cancelled.Id.String(), "api_key", program},
		{"payment.executed", "payment", withdrawn.Id.String(), "user", ada},
		{"payment.cancelled", "payment", withdrawn.Id.String(), "user", ada},
		{"approval.rejected", "approval", refused.ApprovalRequestId.String(), "user", ada},
		{"card.issued", "card", card, "sandbox", ""},
		{"card.updated", "card", card, "user", ada},
		{"card.frozen", "card", card, "user", ada},
		{"card.unfrozen", "card", card, "user", ada},
	} {
		auditOne(t, log, want.action, want.typ, want.id, want.kind, want.actor, "")
	}
	if n := len(auditFind(log, "organization.status_changed", org)); n != 2 {
		t.Fatalf("%d organization.status_changed entries, want 2", n)
	}
}
