package e2e_test

import (
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// paymentsPage reads one page of the organization's payments (listPayments)
// with query q ("" or "?...").
func paymentsPage(t *testing.T, s *apitest.Server, token, org, q string) api.PaymentPage {
	t.Helper()
	var out api.PaymentPage
	s.Get(t, orgPath(org, "/payments"+q), token).ExpectStatus(t, http.StatusOK).Decode(t, &out)
	return out
}

func paymentID(p api.Payment) string { return p.Id.String() }

// TestPaymentsList lists an organization's payments in every status the
// sandbox reaches: newest first, each item the payment getPayment returns,
// paged by cursor with each payment once, filtered by status; any member
// reads it, nobody else; its query is strict.
func TestPaymentsList(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	addUser(t, s, p.org, "member@acme.test", "member", false)
	member := *signIn(t, s, map[string]any{"email": "member@acme.test", "password": password}).Token

	if got := paymentsPage(t, s, p.web, p.org, ""); len(got.Data) != 0 || got.HasMore || got.NextCursor != nil {
		t.Fatalf("no payments yet: %+v", got)
	}

	// One payment per status, created in this order (ids are UUIDv7, so
	// creation order is id order), and a second one awaiting approval made
	// by the member.
	var created []string
	byStatus := map[string][]string{}
	made := func(pay api.Payment, status string) {
		created = append(created, pay.Id.String())
		byStatus[status] = append(byStatus[status], pay.Id.String())
	}
	settled := func(outcome string) api.Payment {
		pay := p.pay(t, s, "10.00")
		p.approveInApp(t, s, pay.ApprovalRequestId.String())
		eventually(t, "the rail takes the payment", func() bool { return getPayment(t, s, p.web, pay.Id.String()).Status == "processing" })
		if outcome != "" {
			s.Post(t, "/api/v1/sandbox/payments/"+pay.Id.String()+"/settle", sbx, map[string]any{"outcome": outcome}).ExpectStatus(t, http.StatusOK)
		}
		return pay
	}
	made(settled("completed"), "completed")
	made(settled("failed"), "failed")
	made(settled(""), "processing")
	rejected := p.pay(t, s, "3.00")
	s.Post(t, "/api/v1/approvals/"+rejected.ApprovalRequestId.String()+"/reject", p.web, map[string]any{"reason": "Wrong supplier"}).ExpectStatus(t, http.StatusOK)
	made(rejected, "rejected")
	cancelled := p.pay(t, s, "4.00")
	s.Post(t, "/api/v1/payments/"+cancelled.Id.String()+"/cancel", p.web, nil).ExpectStatus(t, http.StatusOK)
	made(cancelled, "cancelled")
	made(p.pay(t, s, "5.00"), "awaiting_approval")
	var mine api.Payment
	s.Post(t, "/api/v1/payments/execute", member, executeBody(p.quote(t, s, "6.00").Id.String())).ExpectStatus(t, http.StatusCreated).Decode(t, &mine)
	made(mine, "awaiting_approval")
	newest := slices.Clone(created)
	slices.Reverse(newest)

	// Newest first, each item exactly what getPayment answers, for the owner
	// and for a member alike.
	for who, token := range map[string]string{"owner": p.web, "member": member} {
		all := paymentsPage(t, s, token, p.org, "?limit=100")
		expectIDs(t, who+": all payments", idsOf(all.Data, paymentID), newest...)
		if all.HasMore || all.NextCursor != nil {
			t.Fatalf("%s: one page holds them all: has_more %v, next_cursor %v", who, all.HasMore, str(all.NextCursor))
		}
		for _, x := range all.Data {
			if one := getPayment(t, s, token, x.Id.String()); !reflect.DeepEqual(one, x) {
				t.Fatalf("%s: the listed payment differs from getPayment:\nlist %+v\nget  %+v", who, x, one)
			}
		}
	}
	if got := paymentsPage(t, s, p.web, p.org, ""); len(got.Data) != len(created) {
		t.Fatalf("the default page holds %d payments, want %d", len(got.Data), len(created))
	}

	// Pages of two (and of one, filtered) give every payment once, in order.
	pageIDs := func(q string) ([]string, bool, *string) {
		pg := paymentsPage(t, s, p.web, p.org, q)
		return idsOf(pg.Data, paymentID), pg.HasMore, pg.NextCursor
	}
	expectIDs(t, "pages of two", walk(t, "?limit=2", pageIDs), newest...)
	awaiting := slices.Clone(byStatus["awaiting_approval"])
	slices.Reverse(awaiting)
	expectIDs(t, "pages of one awaiting approval", walk(t, "?status=awaiting_approval&limit=1", pageIDs), awaiting...)

	// The client's iterator walks the same pages.
	var viaClient []string
	for x, err := range p.client(t, s).Payments(t.Context(), p.org, &api.ListPaymentsParams{Limit: ptr(3)}) {
		if err != nil {
			t.Fatal(err)
		}
		viaClient = append(viaClient, x.Id.String())
	}
	expectIDs(t, "the client's iterator", viaClient, newest...)

	// The status filter: only that status's payments, newest first; none of
	// a status no payment has.
	for status, ids := range byStatus {
		want := slices.Clone(ids)
		slices.Reverse(want)
		got := paymentsPage(t, s, p.web, p.org, "?status="+status)
		expectIDs(t, "status "+status, idsOf(got.Data, paymentID), want...)
		for _, x := range got.Data {
			if string(x.Status) != status {
				t.Fatalf("status %s lists a payment %s", status, x.Status)
			}
		}
	}
	expectIDs(t, "status approved", idsOf(paymentsPage(t, s, p.web, p.org, "?status=approved").Data, paymentID))

	// A cursor is valid only with the status it was minted under.
	first := paymentsPage(t, s, p.web, p.org, "?limit=2")
	if first.NextCursor == nil {
		t.Fatal("no cursor after the first page of two")
	}
	s.Get(t, orgPath(p.org, "/payments?status=completed&limit=2&cursor="+*first.NextCursor), p.web).ExpectError(t, http.StatusBadRequest, "invalid_cursor")

	// The query is strict: a bad status, an unknown or repeated parameter,
	// a bad limit are 400 invalid_request naming the parameter.
	for q, field := range map[string]string{
		"?status=maybe":                   "status",
		"?status=":                        "status",
		"?status=Completed":               "status",
		"?state=completed":                "state",
		"?status=completed&status=failed": "status",
		"?limit=0":                        "limit",
		"?limit=101":                      "limit",
		"?limit=2&limit=3":                "limit",
	} {
		expectInvalidFields(t, s.Get(t, orgPath(p.org, "/payments"+q), p.web), field)
	}

	// Nobody else reads them: another organization's member gets not_found,
	// as for an organization that does not exist; no session, not_authenticated.
	eve := newPayer(t, s, "eve@evil.test", "")
	s.Get(t, orgPath(p.org, "/payments"), eve.web).ExpectError(t, http.StatusNotFound, "not_found")
	s.Get(t, orgPath(p.org, "/payments?status=completed"), eve.web).ExpectError(t, http.StatusNotFound, "not_found")
	s.Get(t, orgPath("0190f5c2-8a6e-7d3a-9b1e-2f4c6a8e0b12", "/payments"), p.web).ExpectError(t, http.StatusNotFound, "not_found")
	s.Get(t, orgPath(p.org, "/payments"), "").ExpectError(t, http.StatusUnauthorized, "not_authenticated")
	expectIDs(t, "eve's own payments", idsOf(paymentsPage(t, s, eve.web, eve.org, "").Data, paymentID))
}
