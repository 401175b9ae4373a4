package statement

import (
	"bufio"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// entryRecord is an entry as JSON and CSV show it: amounts as decimal
// strings at the currency's precision, the amount signed.
type entryRecord struct {
	TransactionID uuid.UUID `json:"transaction_id"`
	BookedAt      time.Time `json:"booked_at"`
	Amount        string    `json:"amount"`
	BalanceAfter  string    `json:"balance_after"`
	Type          string    `json:"type"`
	Description   string    `json:"description"`
	Counterparty  *string   `json:"counterparty"`
	Reference     *string   `json:"reference"`
}

func (st *Statement) record(e Entry) entryRecord {
	return entryRecord{TransactionID: e.TransactionID, BookedAt: e.BookedAt, Amount: st.amount(e.Amount), BalanceAfter: st.amount(e.BalanceAfter),
		Type: e.Type, Description: e.Description, Counterparty: e.Counterparty, Reference: e.Reference}
}

// jsonEncoder writes {currency, from, to, opening_balance, closing_balance,
// entries: [...]}, the entries one by one.
type jsonEncoder struct {
	w     *bufio.Writer
	first bool
}

func newJSON(w *bufio.Writer) *jsonEncoder { return &jsonEncoder{w: w, first: true} }

func (j *jsonEncoder) begin(st *Statement) error {
	head, err := json.Marshal(struct {
		Currency string `json:"currency"`
		From     string `json:"from"`
		To       string `json:"to"`
		Opening  string `json:"opening_balance"`
		Closing  string `json:"closing_balance"`
	}{st.Query.Currency, st.Query.From.Format(time.DateOnly), st.Query.To.Format(time.DateOnly), st.amount(st.Opening), st.amount(st.Closing)})
	if err != nil {
		return err
	}
	_, _ = j.w.Write(head[:len(head)-1]) // without its closing brace
	_, err = j.w.WriteString(`,"entries":[`)
	return err
}

func (j *jsonEncoder) entry(st *Statement, e Entry) error {
	b, err := json.Marshal(st.record(e))
	if err != nil {
		return err
	}
	if !j.first {
		_ = j.w.WriteByte(',')
	}
	j.first = false
	_, err = j.w.Write(b)
	return err
}

func (j *jsonEncoder) end(*Statement) error {
	_, err := j.w.WriteString("]}\n")
	return err
}
