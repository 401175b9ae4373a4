// Package expense holds expenses (docs/api.md, Expenses): what a
// member spent for the organization, described by its editable fields,
// backed by the transactions bound to it, and moved through submission to
// approval and payment by the organization's owners and admins. An
// approved card purchase files one for its cardholder at once.
package expense

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// Statuses of an expense.
const (
	Draft     = "draft"
	Pending   = "pending"
	Working   = "working"
	Submitted = "submitted"
	Approved  = "approved"
	Rejected  = "rejected"
	Paid      = "paid"
)

// Statuses lists every status, for validating filters.
var Statuses = []string{Draft, Pending, Working, Submitted, Approved, Rejected, Paid}

// Categories lists every category an expense may have.
var Categories = []string{"accommodation", "atm_withdrawal", "finance", "logistics", "marketing", "meals", "miscellaneous",
	"office", "professional", "retail", "technology", "transport", "utilities"}

// Expense is an expense as the API shows it.
type Expense struct {
	ID              uuid.UUID
	OrganizationID  uuid.UUID
	Status          string
	Category        *string
	Description     *string
	Bill            *money.Amount
	Local           *money.Amount
	BusinessName    *string
	BusinessTaxID   *string
	ReceiptNumber   *string
	TransactionDate *string // YYYY-MM-DD
	RejectionReason *string
	CreatedBy       Person
	Bindings        []Binding
	Receipts        []Receipt
	// Totals are computed from the bindings and the amounts (see totals).
	TotalsBill  []money.Amount
	TotalsLocal []money.Amount
	InsertedAt  time.Time
}

// Person is who created an expense.
type Person struct {
	ID        uuid.UUID
	FirstName *string
	LastName  *string
}

// Binding is a transaction bound to an expense.
type Binding struct {
	ID         uuid.UUID
	ExpenseID  uuid.UUID
	TargetID   uuid.UUID
	TargetType string
	// TransactionID is the target's row in the transactions feed; nil while
	// it has none (a payment not yet approved).
	TransactionID *uuid.UUID
	// Total is what the target counts for in totals.bill: a card purchase
	// or payment positive, a card refund negative.
	Total money.Amount
}

// Receipt is a stored file attached to an expense, with signed paths to
// its bytes and, for an image, its thumbnail.
type Receipt struct {
	ID           uuid.UUID
	ExpenseID    uuid.UUID
	FileID       uuid.UUID
	FileName     string
	FileSize     int64
	MimeType     string
	URL          string
	ThumbnailURL *string
}

// Target types of a binding: the kinds of transaction an expense can bind.
const (
	CardTransaction  = "card_transaction"
	FiatOutgoing     = "fiat_outgoing"
	CryptoOutgoing   = "crypto_outgoing"
	InternalTransfer = "internal_transfer"
)

// TargetTypes lists every target type of a binding.
var TargetTypes = []string{CardTransaction, FiatOutgoing, CryptoOutgoing, InternalTransfer}

// editable reports whether an expense in status may still be changed.
func editable(status string) bool {
	return status == Draft || status == Pending || status == Working || status == Rejected
}

// moves lists the statuses each move starts from and where it leads
// (docs/api.md, Expenses); any other move is a conflict.
var moves = map[string]struct {
	from []string
	to   string
}{
	"submit":    {[]string{Draft, Pending, Working, Rejected}, Submitted},
	"approve":   {[]string{Submitted}, Approved},
	"reject":    {[]string{Submitted}, Rejected},
	"mark-paid": {[]string{Approved}, Paid},
}

// next is where move takes an expense in status from, or a conflict.
func next(move, status string) (string, error) {
	m, ok := moves[move]
	if !ok || !slices.Contains(m.from, status) {
		return "", apierr.Newf(apierr.Conflict, "An expense that is %s cannot be moved this way.", status)
	}
	return m.to, nil
}

// errIncomplete answers a submission that lacks what approvers need.
func errIncomplete(missing []string) error {
	return apierr.New(apierr.ExpenseIncomplete, "The expense cannot be submitted yet: it needs "+strings.Join(missing, ", ")+".")
}

// missing lists what e lacks to be submitted; receipts counts its receipts.
func missing(e Expense, receipts int) []string {
	var out []string
	if e.Category == nil {
		out = append(out, "a category")
	}
	if e.TransactionDate == nil {
		out = append(out, "a transaction date")
	}
	if len(e.Bindings) == 0 && receipts == 0 {
		out = append(out, "a bound transaction or a receipt")
	}
	return out
}

// totals computes totals.bill and totals.local: per currency the sum of the
// bindings' totals, or the bill amount when nothing is bound; the local
// amount when set. Sorted by currency. Sums are checked: an overflow is
// money.ErrOverflow, never a wrapped number.
func totals(bindings []Binding, bill, local *money.Amount) (billTotals, localTotals []money.Amount, err error) {
	billTotals, localTotals = []money.Amount{}, []money.Amount{}
	if len(bindings) == 0 && bill != nil {
		billTotals = append(billTotals, *bill)
	}
	for _, b := range bindings {
		i := slices.IndexFunc(billTotals, func(a money.Amount) bool { return a.Currency == b.Total.Currency })
		if i < 0 {
			billTotals = append(billTotals, b.Total)
			continue
		}
		if billTotals[i], err = billTotals[i].Add(b.Total); err != nil {
			return nil, nil, err
		}
	}
	slices.SortFunc(billTotals, func(a, b money.Amount) int { return strings.Compare(a.Currency, b.Currency) })
	if local != nil {
		localTotals = append(localTotals, *local)
	}
	return billTotals, localTotals, nil
}

// Text is a nullable string field of a request that tells whether it was
// sent: absent (Set false), null (Set, Value nil) or a string.
type Text struct {
	Set   bool
	Value *string
}

// UnmarshalJSON records the field as sent: null or a string.
func (t *Text) UnmarshalJSON(b []byte) error {
	t.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		t.Value = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err // a *json.UnmarshalTypeError: the decoder names the field
	}
	t.Value = &s
	return nil
}

// Fields are the editable fields of an expense, as a create
// or change request sends them.
type Fields struct {
	Category        Text `json:"category"`
	Description     Text `json:"description"`
	BillAmount      Text `json:"bill_amount"`
	BillCurrency    Text `json:"bill_currency"`
	LocalAmount     Text `json:"local_amount"`
	LocalCurrency   Text `json:"local_currency"`
	BusinessName    Text `json:"business_name"`
	BusinessTaxID   Text `json:"business_tax_id"`
	ReceiptNumber   Text `json:"receipt_number"`
	TransactionDate Text `json:"transaction_date"`
}

// Lengths of the free-text fields, in characters.
const (
	MaxDescription   = 1000
	MaxBusinessName  = 200
	MaxBusinessTaxID = 50
	MaxReceiptNumber = 100
	MaxSearch        = 100
)

// Validate checks each field sent: a known category, text within its
// length without control characters (description may hold line breaks and
// tabs) nor leading or trailing spaces, a calendar date, and each amount
// with its currency: both sent, both null or both an amount at the
// currency's precision.
func (r Fields) Validate() error {
	var f apierr.Fields
	if v := r.Category.Value; v != nil {
		f.Check(slices.Contains(Categories, *v), "category", "must be one of "+strings.Join(Categories, ", ")+".")
	}
	checkText(&f, "description", r.Description, MaxDescription, true)
	checkText(&f, "business_name", r.BusinessName, MaxBusinessName, false)
	checkText(&f, "business_tax_id", r.BusinessTaxID, MaxBusinessTaxID, false)
	checkText(&f, "receipt_number", r.ReceiptNumber, MaxReceiptNumber, false)
	if v := r.TransactionDate.Value; v != nil {
		_, ok := ParseDate(*v)
		f.Check(ok, "transaction_date", "must be a calendar date YYYY-MM-DD.")
	}
	checkMoney(&f, "bill", r.BillAmount, r.BillCurrency)
	checkMoney(&f, "local", r.LocalAmount, r.LocalCurrency)
	return f.Err()
}

// empty reports whether no field was sent.
func (r Fields) empty() bool {
	for _, t := range []Text{r.Category, r.Description, r.BillAmount, r.BillCurrency, r.LocalAmount, r.LocalCurrency,
		r.BusinessName, r.BusinessTaxID, r.ReceiptNumber, r.TransactionDate} {
		if t.Set {
			return false
		}
	}
	return true
}

// checkText requires a sent string to be 1 to max characters without
// leading or trailing spaces nor control characters (multiline allows line
// breaks and tabs inside).
func checkText(f *apierr.Fields, field string, t Text, max int, multiline bool) {
	if t.Value == nil {
		return
	}
	v := *t.Value
	n := utf8.RuneCountInString(v)
	f.Check(n >= 1 && n <= max && v == strings.TrimSpace(v), field,
		"must be 1 to "+strconv.Itoa(max)+" characters, without leading or trailing spaces.")
	f.Check(!hasControl(v, multiline), field, "must not hold control characters.")
}

// hasControl reports whether s holds a control character other than, when
// multiline, a line break or tab.
func hasControl(s string, multiline bool) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\r' || r == '\t'))
	})
}

// checkMoney checks an amount and its currency, named prefix_amount and
// prefix_currency: sent together, both null or a valid amount.
func checkMoney(f *apierr.Fields, prefix string, amount, currency Text) {
	a, c := prefix+"_amount", prefix+"_currency"
	switch {
	case amount.Set != currency.Set:
		missing, other := a, c
		if amount.Set {
			missing, other = c, a
		}
		f.Add(missing, "must be sent together with "+other+" (both values, or both null).")
	case (amount.Value == nil) != (currency.Value == nil):
		f.Add(a, "and "+c+" must both be null or both be set.")
	case amount.Value != nil:
		f.Check(money.IsCurrency(*currency.Value), c, "must be an ISO 4217 currency code.")
		if money.IsCurrency(*currency.Value) {
			v, err := money.Parse(*amount.Value, *currency.Value)
			f.Check(err == nil && v.IsPositive(), a, "must be a positive amount with the currency's decimals and at most 15 digits before the point.")
		}
	}
}

// ParseDate reads a calendar date YYYY-MM-DD.
func ParseDate(s string) (time.Time, bool) {
	d, err := time.Parse(time.DateOnly, s)
	return d, err == nil && d.Format(time.DateOnly) == s
}

// searchSeparator joins the searched fields in search_text; validation
// keeps it out of every field and of the search itself.
const searchSeparator = "\x1f"

// searchText is what search matches for e: business name, description and
// receipt number, lowercased.
func searchText(e Expense) string {
	var parts []string
	for _, p := range []*string{e.BusinessName, e.Description, e.ReceiptNumber} {
		if p != nil {
			parts = append(parts, strings.ToLower(*p))
		}
	}
	return strings.Join(parts, searchSeparator)
}

// likePattern is the LIKE pattern (escape character \) that finds s
// anywhere: its wildcards and escape character match only themselves.
func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(strings.ToLower(s)) + "%"
}

// apply sets the fields r sent on e.
func (r Fields) apply(e *Expense) {
	set := func(t Text, dst **string) {
		if t.Set {
			*dst = t.Value
		}
	}
	set(r.Category, &e.Category)
	set(r.Description, &e.Description)
	set(r.BusinessName, &e.BusinessName)
	set(r.BusinessTaxID, &e.BusinessTaxID)
	set(r.ReceiptNumber, &e.ReceiptNumber)
	set(r.TransactionDate, &e.TransactionDate)
	amount := func(amount, currency Text, dst **money.Amount) {
		switch {
		case !amount.Set:
		case amount.Value == nil:
			*dst = nil
		default:
			a, _ := money.Parse(*amount.Value, *currency.Value) // validated
			*dst = &a
		}
	}
	amount(r.BillAmount, r.BillCurrency, &e.Bill)
	amount(r.LocalAmount, r.LocalCurrency, &e.Local)
}
