package httpapi

import (
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// The ledger's feed of transactions and the balances, as resources: what
// each operation's path names first, and the record of its answer.
var (
	transactions = resource[ledger.Transaction, transactionRecord]{at: organizationID, record: newTransactionRecord,
		pages: "transactions", key: ledger.FeedPageKey}
	balances = resource[[]ledger.Balance, list[balanceRecord]]{at: organizationID, record: newBalancesRecord}
	// transactionID is a transaction of the organization in the path.
	transactionID = param{"transaction_id", "Transaction"}
)

type effectRecord struct {
	Direction string `json:"direction"`
	Total     string `json:"total"`
	Currency  string `json:"currency"`
}

type transactionRecord struct {
	ID             uuid.UUID     `json:"id"`
	OrganizationID uuid.UUID     `json:"organization_id"`
	Type           string        `json:"type"`
	RecordedAt     time.Time     `json:"recorded_at"`
	Effect         *effectRecord `json:"effect"`
	Description    string        `json:"description"`
	PaymentID      *uuid.UUID    `json:"payment_id"`
}

func newTransactionRecord(t ledger.Transaction) transactionRecord {
	return transactionRecord{ID: t.ID, OrganizationID: t.OrganizationID, Type: t.Type, RecordedAt: t.RecordedAt, Description: t.Description, PaymentID: t.PaymentID,
		Effect: &effectRecord{Direction: t.Direction, Total: money.Amount{Minor: t.Amount, Currency: t.Currency}.String(), Currency: t.Currency}}
}

// feedFilter reads the feed's query filters: inclusive UTC calendar dates and types.
var feedFilter = &filter[ledger.FeedFilter]{read: readFeedFilter, params: []string{"date_start", "date_end", "type"}}

func readFeedFilter(r *http.Request) (ledger.FeedFilter, error) {
	q := r.URL.Query()
	var f ledger.FeedFilter
	var errs apierr.Fields
	for name, target := range map[string]**time.Time{"date_start": &f.From, "date_end": &f.To} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		d, err := time.Parse(time.DateOnly, v)
		if err != nil {
			errs.Add(name, "must be a calendar date YYYY-MM-DD.")
			continue
		}
		if name == "date_end" {
			d = d.AddDate(0, 0, 1) // inclusive: up to the start of the next day
		}
		*target = &d
	}
	for _, t := range q["type"] {
		if !slices.Contains(ledger.TransactionTypes, t) {
			errs.Add("type", "must be one of deposit, fiat_outgoing, crypto_outgoing, crypto_incoming, card_transaction, internal_transfer, fee, reversal.")
			break
		}
		f.Types = append(f.Types, t)
	}
	if f.From != nil && f.To != nil && !f.From.Before(*f.To) {
		errs.Add("date_end", "must not be before date_start.")
	}
	return f, errs.Err()
}

type balanceRecord struct {
	Currency  string `json:"currency"`
	Available string `json:"available"`
	Pending   string `json:"pending"`
}

func newBalancesRecord(bs []ledger.Balance) list[balanceRecord] {
	out := make([]balanceRecord, len(bs))
	for i, b := range bs {
		out[i] = balanceRecord{Currency: b.Currency, Available: money.Amount{Minor: b.Available, Currency: b.Currency}.String(),
			Pending: money.Amount{Minor: b.Pending, Currency: b.Currency}.String()}
	}
	return list[balanceRecord]{out}
}
