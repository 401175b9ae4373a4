// Package invoicing holds billing invoices (docs/api.md, Invoicing): the
// organization's customers as billing contacts, invoices
// with their line items and the moves between their states, crypto deposits
// credited to the organization's balance in a coin, and the allocation of
// deposits to sent invoices, which marks an invoice paid once covered.
package invoicing

import (
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// States of an invoice, in the order the API lists them.
const (
	Draft            = "draft"
	AwaitingApproval = "awaiting_approval"
	Sent             = "sent"
	Finalized        = "finalized"
	Paid             = "paid"
)

// States lists every state, for validating filters.
var States = []string{Draft, AwaitingApproval, Sent, Finalized, Paid}

// Move is one transition an invoice operation makes.
type Move struct {
	Name string
	From string
	To   string
	// Role is the lowest role that may make the move.
	Role organization.Role
}

// Moves lists every move. A move asked of an invoice in another state than
// From answers conflict. Paying is not among them: an invoice becomes paid
// when its allocations cover it.
var Moves = []Move{
	{"submit", Draft, AwaitingApproval, organization.Member},
	{"approve", AwaitingApproval, Sent, organization.Admin},
	{"return", AwaitingApproval, Draft, organization.Admin},
	{"send", Draft, Sent, organization.Admin},
	{"finalize", Sent, Finalized, organization.Admin},
	{"deallocate", Paid, Sent, organization.Admin},
}

func moveNamed(name string) Move {
	i := slices.IndexFunc(Moves, func(m Move) bool { return m.Name == name })
	if i < 0 {
		panic("invoicing: unknown move " + name)
	}
	return Moves[i]
}

// NextValidStates lists the states the moves can take an invoice in state
// to now, for an owner, in the order of States.
func NextValidStates(state string) []string {
	out := []string{}
	for _, s := range States {
		if slices.ContainsFunc(Moves, func(m Move) bool { return m.From == state && m.To == s }) {
			out = append(out, s)
		}
	}
	return out
}

// Overdue reports whether an invoice in state, due on dueDate (YYYY-MM-DD),
// is overdue at now: sent and due before today's UTC calendar date.
func Overdue(state, dueDate string, now time.Time) bool {
	return state == Sent && dueDate < now.UTC().Format(time.DateOnly)
}

// Contact is a billing contact: a customer an organization invoices.
type Contact struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	CompanyName    string
	Address        *string
	// Emails is nil when none were given.
	Emails      []string
	PhoneNumber *string
	TaxID       *string
	// DeletedAt is set once the contact is deleted: it leaves the list but
	// stays readable and embedded in its invoices.
	DeletedAt  *time.Time
	InsertedAt time.Time
	UpdatedAt  time.Time
}

// LineItem is one line of an invoice. Price is the unit price, which may be
// finer than the currency (money.UnitPrice); Total is minor units of the
// invoice's currency; Quantity and TaxPercentage are decimal strings.
type LineItem struct {
	Description   string
	Price         money.UnitPrice
	Quantity      string
	TaxPercentage string
	Total         int64
}

// Person is a user as an invoice shows them.
type Person struct {
	ID        uuid.UUID
	FirstName *string
	LastName  *string
}

// Invoice is a billing invoice as read now.
type Invoice struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	State          string
	// NextValidStates are the states the moves can reach now (for an owner).
	NextValidStates []string
	Currency        string
	// DueAmount is the sum of the line totals, in minor units.
	DueAmount int64
	// Allocated is the sum of the allocations not reversed.
	Allocated int64
	// AcceptedAmount is set while the invoice is paid: its allocations' sum.
	AcceptedAmount *int64
	IssueDate      string
	DueDate        string
	// IsOverdue is computed when read, from the service clock (Overdue).
	IsOverdue               bool
	ApprovalRequestID       *uuid.UUID
	ApprovalRequesterID     *uuid.UUID
	ApprovalRequester       *Person
	Contact                 Contact
	Comments                *string
	InternalDescription     *string
	InternalReferenceNumber *string
	CompletedAt             *time.Time
	CreatedByID             *uuid.UUID
	CreatedBy               *Person
	LineItems               []LineItem
	InsertedAt              time.Time
	UpdatedAt               time.Time
}

// Coin deposits: each coin pays invoices in one currency, one coin per unit.
var coinCurrency = map[string]string{"USDC": "USD", "USDT": "USD", "EURC": "EUR"}

// CoinPays reports whether a deposit in coin may pay an invoice in currency.
func CoinPays(coin, currency string) bool { return coinCurrency[coin] == currency }

// coinUnits is how many of coin's minor units (millionths) make one minor
// unit of currency, whose digits are at most money.CoinDigits.
func coinUnits(currency string) int64 {
	digits, _ := money.Digits(currency)
	n := int64(1)
	for i := digits; i < money.CoinDigits; i++ {
		n *= 10
	}
	return n
}

// CryptoIncoming is a crypto deposit: money received in a coin, credited to
// the organization's balance, which allocations assign to invoices.
type CryptoIncoming struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	Coin           string
	// Amount and Unallocated are millionths of the coin.
	Amount        int64
	Unallocated   int64
	TxRef         *string
	TransactionID uuid.UUID
	InsertedAt    time.Time
}

// Allocation is one entry of a billing contact's allocation ledger: part of
// a deposit assigned to an invoice, or (negative Credit) the reversal of one.
type Allocation struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	ContactID      uuid.UUID
	InvoiceID      uuid.UUID
	// Credit is in minor units of Currency, the invoice's currency.
	Credit    int64
	Currency  string
	Deposit   CryptoIncoming
	Notes     string
	UserID    uuid.UUID
	Reverses  *uuid.UUID
	CreatedAt time.Time
}

// Decimal forms of line-item quantities and tax percentages.
var (
	quantityPattern = regexp.MustCompile(`^[0-9]{1,9}(\.[0-9]{1,6})?$`)
	taxPattern      = regexp.MustCompile(`^[0-9]{1,3}(\.[0-9]{1,4})?$`)
)

// ErrTotalTooLarge is returned by LineTotal when a total is beyond the
// largest amount of the currency (money.Max).
var ErrTotalTooLarge = fmt.Errorf("invoicing: line total out of range")

// LineTotal is price × quantity × (1 + taxPercentage/100), computed exactly
// and rounded once, half up, to currency's minor units: a unit price finer
// than the currency (0.0125 USD) is never rounded on its own, so 1000 units
// at 0.0125 USD are 12.50 USD, not 10.00. quantity and taxPercentage must be
// plain non-negative decimals (checked by the request's validation). It
// returns ErrTotalTooLarge when the total is beyond money.Max(currency).
func LineTotal(price money.UnitPrice, quantity, taxPercentage, currency string) (int64, error) {
	q, ok1 := new(big.Rat).SetString(quantity)
	t, ok2 := new(big.Rat).SetString(taxPercentage)
	if !ok1 || !ok2 || price.Minor < 0 || price.Fraction < 0 || q.Sign() < 0 || t.Sign() < 0 {
		return 0, fmt.Errorf("invoicing: line total of %s × %q × %q%%", price, quantity, taxPercentage)
	}
	// x = price × q × (100 + t) / 100 = num / den, both non-negative.
	x := price.Rat()
	x.Mul(x, q)
	x.Mul(x, new(big.Rat).Add(big.NewRat(100, 1), t))
	x.Quo(x, big.NewRat(100, 1))
	// Half up: floor((2·num + den) / (2·den)).
	num := new(big.Int).Lsh(x.Num(), 1)
	num.Add(num, x.Denom())
	den := new(big.Int).Lsh(x.Denom(), 1)
	total := num.Quo(num, den)
	max, ok := money.Max(currency)
	if !ok || !total.IsInt64() || total.Int64() > max.Minor {
		return 0, ErrTotalTooLarge
	}
	return total.Int64(), nil
}

// Sum adds the line totals in currency; ErrTotalTooLarge when the sum is
// beyond money.Max(currency).
func Sum(items []LineItem, currency string) (int64, error) {
	sum := money.Amount{Currency: currency}
	for _, it := range items {
		var err error
		if sum, err = sum.Add(money.Amount{Minor: it.Total, Currency: currency}); err != nil || !sum.WithinLimit() {
			return 0, ErrTotalTooLarge
		}
	}
	return sum.Minor, nil
}
