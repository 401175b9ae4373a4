package e2e_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

var uuidPattern = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// feedRows reads the whole transactions feed of org (one page is enough here).
func feedRows(t *testing.T, s *apitest.Server, token, org string) []api.Transaction {
	t.Helper()
	feed := ok[*api.ListTransactionsResponse](t, 200)(s.Client(t, token).API().ListTransactionsWithResponse(t.Context(), uuidOf(t, org),
		&api.ListTransactionsParams{Limit: ptr(100)})).JSON200
	if feed.HasMore {
		t.Fatal("the feed has more than one page")
	}
	return feed.Data
}

func (p *payer) newContact(t *testing.T, s *apitest.Server, name, iban string) string {
	t.Helper()
	c := ok[*api.CreatePaymentContactResponse](t, 201)(p.client(t, s).API().CreatePaymentContactWithResponse(t.Context(), uuidOf(t, p.org), nil,
		api.PaymentContactCreation{Name: name, Currency: "EUR", Rail: api.RailFiat, Iban: &iban}))
	return c.JSON201.Id.String()
}

// TestFeedNamesTheCounterparty: every feed row a payment makes (the payment,
// its fee, the reversal of a failed one, the rows of a batch) names the
// recipient by its contact name and never shows an id (docs/api.md, Payments).
func TestFeedNamesTheCounterparty(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	p.contact = p.newContact(t, s, "Müller GmbH", "DE89370400440532013000")

	// One payment completes; another fails at the rail and is reversed.
	done := p.pay(t, s, "100.00")
	p.approveInApp(t, s, done.ApprovalRequestId.String())
	s.Post(t, "/api/v1/sandbox/payments/"+done.Id.String()+"/settle", sbx, map[string]any{"outcome": "completed"}).ExpectStatus(t, 200)
	failed := p.pay(t, s, "50.00")
	p.approveInApp(t, s, failed.ApprovalRequestId.String())
	s.Post(t, "/api/v1/sandbox/payments/"+failed.Id.String()+"/settle", sbx, map[string]any{"outcome": "failed"}).ExpectStatus(t, 200)

	// A batch pays two contacts; each row names its own.
	dupont := p.newContact(t, s, "Dupont SARL", "FR1420041010050500013M02606")
	q1 := p.quote(t, s, "10.00")
	p.contact = dupont
	q2 := p.quote(t, s, "20.00")
	var batch api.PaymentBatch
	s.Post(t, "/api/v1/payment-batches", p.web, map[string]any{"organization_id": p.org, "payments": []any{executeBody(q1.Id.String()), executeBody(q2.Id.String())}}).
		ExpectStatus(t, 201).Decode(t, &batch)
	p.approveInApp(t, s, batch.ApprovalRequestId.String())

	want := map[string]map[string]string{ // payment id → feed type → description
		done.Id.String(): {"fiat_outgoing": "Payment to Müller GmbH", "fee": "Fee for payment to Müller GmbH"},
		failed.Id.String(): {"fiat_outgoing": "Payment to Müller GmbH", "fee": "Fee for payment to Müller GmbH",
			"reversal": "Reversal of payment to Müller GmbH"},
		batch.Payments[0].Id.String(): {"fiat_outgoing": "Payment to Müller GmbH", "fee": "Fee for payment to Müller GmbH"},
		batch.Payments[1].Id.String(): {"fiat_outgoing": "Payment to Dupont SARL", "fee": "Fee for payment to Dupont SARL"},
	}
	seen := 0
	for _, row := range feedRows(t, s, p.web, p.org) {
		if uuidPattern.MatchString(row.Description) {
			t.Errorf("feed row %s (%s) shows an id: %q", row.Id.String(), row.Type, row.Description)
		}
		if strings.TrimSpace(row.Description) == "" {
			t.Errorf("feed row %s (%s) has no description", row.Id.String(), row.Type)
		}
		if row.PaymentId == nil {
			continue
		}
		descriptions, ok := want[row.PaymentId.String()]
		if !ok {
			t.Errorf("feed row %s names an unknown payment", row.Id.String())
			continue
		}
		if got, wanted := row.Description, descriptions[string(row.Type)]; got != wanted {
			t.Errorf("payment %s, %s row: description %q, want %q", row.PaymentId.String(), row.Type, got, wanted)
		}
		seen++
	}
	if seen != 9 {
		t.Errorf("saw %d payment rows in the feed, want 9 (2 per payment, and the reversal)", seen)
	}
}
