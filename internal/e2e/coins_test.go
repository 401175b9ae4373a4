package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// assetAmount is an amount with its currency or coin, as insights, balances
// and the feed show them.
type assetAmount struct {
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
}

func showAssets(as []assetAmount) string {
	var out []string
	for _, a := range as {
		out = append(out, a.Amount+" "+a.Currency)
	}
	return strings.Join(out, ", ")
}

// TestCoinAmountsInEveryRecord: once an organization holds stablecoins from
// crypto deposits, every record that can carry a coin amount still answers
// 200 with a body the document describes (each response is validated
// against it), the coin amounts at 6 decimals. Insights used to answer 200
// with an empty body: its money objects refused to encode a coin.
func TestCoinAmountsInEveryRecord(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "coins.test")
	deposit(t, s, o.id, "USD", "250")
	usdc := cryptoDeposit(t, s, o.id, "USDC", "100")
	cryptoDeposit(t, s, o.id, "EURC", "5.5")
	contact := createBillingContact(t, s, o.owner.token, o.id, "Initech")
	inv := simpleInvoice(t, s, o.owner.token, o.id, contact.Id.String(), "USD", "40.00", "2025-06-01")
	movedInvoice(t, s, o.owner.token, o.id, inv.Id.String(), "send", "sent")
	allocate(t, s, o.owner.token, o.id, inv.Id.String(), usdc.Id.String(), "15.00").ExpectStatus(t, http.StatusCreated)

	const want = "5.500000 EURC, 250.00 USD, 100.000000 USDC"
	for _, query := range []string{"preset=current_month", "group_by=day&preset=last_30_days", "group_by=year&preset=current_year"} {
		var r struct {
			Periods []struct {
				Incoming []assetAmount `json:"incoming"`
			} `json:"periods"`
			Summary struct {
				Incoming []assetAmount `json:"incoming"`
				Net      []assetAmount `json:"net"`
			} `json:"summary"`
			TransactionCount int `json:"transaction_count"`
		}
		s.Get(t, insightsPath(o.id, query), o.owner.token).ExpectStatus(t, http.StatusOK).Decode(t, &r)
		if got := showAssets(r.Summary.Incoming); got != want {
			t.Errorf("insights %q: incoming %s, want %s", query, got, want)
		}
		if got := showAssets(r.Summary.Net); got != want {
			t.Errorf("insights %q: net %s, want %s", query, got, want)
		}
		if r.TransactionCount != 3 || len(r.Periods) == 0 || showAssets(r.Periods[len(r.Periods)-1].Incoming) != want {
			t.Errorf("insights %q: %d rows, periods %+v", query, r.TransactionCount, r.Periods)
		}
	}

	// The other records that hold coin amounts.
	if avail, _ := balance(t, s, o.owner.token, o.id, "USDC"); avail != "100.000000" {
		t.Errorf("USDC balance %s, want 100.000000", avail)
	}
	var feed api.TransactionPage
	s.Get(t, orgPath(o.id, "/transactions"), o.owner.token).ExpectStatus(t, http.StatusOK).Decode(t, &feed)
	coins := 0
	for _, row := range feed.Data {
		s.Get(t, orgPath(o.id, "/transactions/"+row.Id.String()), o.owner.token).ExpectStatus(t, http.StatusOK)
		if row.Effect != nil && (row.Effect.Currency == "USDC" || row.Effect.Currency == "EURC") {
			coins++
		}
	}
	if coins != 2 {
		t.Errorf("feed shows %d coin rows, want 2: %+v", coins, feed.Data)
	}
	s.Get(t, orgPath(o.id, "/crypto-incoming"), o.owner.token).ExpectStatus(t, http.StatusOK)
	s.Get(t, orgPath(o.id, "/invoices"), o.owner.token).ExpectStatus(t, http.StatusOK)
	s.Get(t, orgPath(o.id, "/invoices/"+inv.Id.String()), o.owner.token).ExpectStatus(t, http.StatusOK)
	s.Get(t, orgPath(o.id, "/billing-contacts/"+contact.Id.String()+"/allocations"), o.owner.token).ExpectStatus(t, http.StatusOK)
	s.Get(t, orgPath(o.id, "/payments/config"), o.owner.token).ExpectStatus(t, http.StatusOK)
	s.Get(t, orgPath(o.id, "/multi-currency-accounts"), o.owner.token).ExpectStatus(t, http.StatusOK)
	s.Get(t, "/api/v1/me", o.owner.token).ExpectStatus(t, http.StatusOK)
}
