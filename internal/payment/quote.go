package payment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// QuoteLifetime is how long a quote can be executed.
const QuoteLifetime = 15 * time.Minute

// StatementDescriptionMax is the longest statement description, in characters.
const StatementDescriptionMax = 35

// Service runs payments. Every time it applies is its transaction's Now
// (db.Tx), read from the clock the database was opened with.
//
// A payment may pay a bill (its bill_id), which payment keeps as a
// reference only: requesting the bill when the payment is made, and
// releasing it when the payment ends, is the bill-payment flow's
// (internal/flow/billpay), which calls the operations here that take the
// caller's transaction. Asking a person to sign an approval is the
// approving flow's (internal/flow/approving).
type Service struct {
	DB    *db.DB
	Rates Rates
}

// Rates tells exchange rates: how many units of `to` one unit of `from` buys,
// as a decimal string. The sandbox's fixed table (internal/sandbox, Rates)
// is the one implementation so far; a live deployment would plug in a
// market-data provider.
type Rates interface {
	Rate(ctx context.Context, from, to string) (string, error)
}

// RailFee is what a rail charges, on top of the amount sent, in the source
// currency: BasisPoints of the amount, at least MinimumMinor (the minor units
// of one major unit at two decimals, scaled to the currency's precision).
type RailFee struct {
	Rail         string
	BasisPoints  int64
	MinimumMinor int64
}

var railFees = []RailFee{
	{Rail: RailFiat, BasisPoints: 25, MinimumMinor: 100},
	{Rail: RailCrypto, BasisPoints: 50, MinimumMinor: 100},
}

func feeFor(rail string, source money.Amount) (money.Amount, error) {
	for _, f := range railFees {
		if f.Rail != rail {
			continue
		}
		fee, err := money.MulRatio(source, f.BasisPoints, 10000)
		if err != nil {
			return money.Amount{}, err
		}
		digits, _ := money.Digits(source.Currency)
		// The minimum is one major unit scaled to the currency's precision (1.00 EUR, 1 JPY).
		min := f.MinimumMinor
		for d := 2; d > digits; d-- {
			min /= 10
		}
		for d := 2; d < digits; d++ {
			min *= 10
		}
		if fee.Minor < min {
			fee.Minor = min
		}
		return fee, nil
	}
	return money.Amount{}, fmt.Errorf("no fee for rail %s", rail)
}

// PayoutReason is a reason a fiat payment is made for.
type PayoutReason struct {
	Code  string
	Label string
}

// PayoutReasons are the valid payout_reason codes.
var PayoutReasons = []PayoutReason{
	{"PYR001", "Goods purchased"}, {"PYR002", "Services rendered"}, {"PYR003", "Salaries and wages"},
	{"PYR004", "Rent or lease"}, {"PYR005", "Taxes and duties"}, {"PYR006", "Utilities"},
	{"PYR007", "Loan repayment"}, {"PYR008", "Refund to a customer"}, {"PYR009", "Investment"},
	{"PYR010", "Transfer to own account"}, {"PYR011", "Professional fees"}, {"PYR012", "Other business expense"},
}

// Config is the payments configuration of an organization.
type Config struct {
	PayoutReasons                 []PayoutReason
	Rails                         []RailFee
	StatementDescriptionMaxLength int
}

// GetConfig returns the payments configuration to a member of orgID.
func (s *Service) GetConfig(ctx context.Context, a actor.Actor, orgID uuid.UUID) (Config, error) {
	if _, err := organization.Check(ctx, s.DB.Reader(), a, orgID, organization.Need{Role: organization.Member}); err != nil {
		return Config{}, err
	}
	return Config{PayoutReasons: PayoutReasons, Rails: railFees, StatementDescriptionMaxLength: StatementDescriptionMax}, nil
}

// Quote prices a payment; it lives 15 minutes and pays once.
type Quote struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	ContactID      uuid.UUID
	Rail           string
	Source         money.Amount
	Destination    money.Amount
	Fee            money.Amount
	Rate           string
	ExpiresAt      time.Time
	UsedAt         *time.Time
}

// PreflightRequest is the body of the payment preflight.
type PreflightRequest struct {
	OrganizationID string `json:"organization_id"`
	Rail           string `json:"rail"`
	ContactID      string `json:"payment_contact_id"`
	SourceCurrency string `json:"source_currency"`
	Amount         string `json:"amount"`
	AmountSide     string `json:"amount_side"`
}

// Validate checks the body's fields.
func (r PreflightRequest) Validate() error {
	var f apierr.Fields
	_, err := uuid.Parse(r.OrganizationID)
	f.Check(err == nil, "organization_id", "is required: a UUID.")
	_, err = uuid.Parse(r.ContactID)
	f.Check(err == nil, "payment_contact_id", "is required: a UUID.")
	f.Check(r.Rail == RailFiat || r.Rail == RailCrypto, "rail", "must be fiat or crypto.")
	f.Check(money.IsCurrency(r.SourceCurrency), "source_currency", "must be an ISO 4217 currency code in capitals.")
	f.Check(r.AmountSide == "send" || r.AmountSide == "receive", "amount_side", "must be send or receive.")
	f.Check(r.Amount != "", "amount", "is required: a decimal string such as \"100.00\".")
	return f.Err()
}

// Preflight quotes a payment to a contact: on the send side the amount is
// what leaves the balance (the fee comes on top); on the receive side it is
// what the contact receives.
func (s *Service) Preflight(ctx context.Context, a actor.Actor, r PreflightRequest) (Quote, error) {
	quote, err := s.price(ctx, s.DB.Reader(), a, r)
	if err != nil {
		return Quote{}, err
	}
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Quote, error) { return quote, s.store(ctx, tx, a, &quote) })
}

// QuoteIn is Preflight in the caller's transaction tx: for a flow that
// quotes a payment and executes it at once (ExecuteQuote, after LockQuote),
// so that both commit together or neither does.
func (s *Service) QuoteIn(ctx context.Context, tx *db.Tx, a actor.Actor, r PreflightRequest) (Quote, error) {
	if err := r.Validate(); err != nil {
		return Quote{}, err
	}
	quote, err := s.price(ctx, tx, a, r)
	if err != nil {
		return Quote{}, err
	}
	return quote, s.store(ctx, tx, a, &quote)
}

// store records quote, living QuoteLifetime from tx's Now, in tx.
func (s *Service) store(ctx context.Context, tx *db.Tx, a actor.Actor, quote *Quote) error {
	quote.ExpiresAt = tx.Now().Add(QuoteLifetime)
	_, err := tx.ExecContext(ctx, `INSERT INTO quotes (id, organization_id, payment_contact_id, rail, source_amount, source_currency,
		destination_amount, destination_currency, fee_amount, fee_currency, rate, created_by_id, expires_at, inserted_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		quote.ID, quote.OrganizationID, quote.ContactID, quote.Rail, quote.Source.Minor, quote.Source.Currency, quote.Destination.Minor,
		quote.Destination.Currency, quote.Fee.Minor, quote.Fee.Currency, quote.Rate, a.UserID, quote.ExpiresAt, tx.Now())
	return err
}

// price authorizes a and prices the payment r asks for, reading in q.
func (s *Service) price(ctx context.Context, q db.Reader, a actor.Actor, r PreflightRequest) (Quote, error) {
	orgID := uuid.MustParse(r.OrganizationID)
	// A quote is a record and the first step of moving money: a write.
	if _, err := organization.Check(ctx, q, a, orgID, organization.Need{Role: organization.Member, Write: true}); err != nil {
		return Quote{}, err
	}
	c, err := contactOf(ctx, q, uuid.MustParse(r.ContactID))
	if err != nil || c.OrganizationID != orgID {
		return Quote{}, apierr.NotFoundf("Payment contact")
	}
	if c.Rail != r.Rail {
		return Quote{}, apierr.InvalidField("rail", "must match the contact's rail ("+c.Rail+").")
	}
	amountCurrency := r.SourceCurrency
	if r.AmountSide == "receive" {
		amountCurrency = c.Currency
	}
	amount, err := money.Parse(r.Amount, amountCurrency)
	if err != nil || !amount.IsPositive() {
		msg := "must be a positive amount in " + amountCurrency + "."
		var pe *money.ParseError
		if errors.As(err, &pe) {
			msg = pe.Reason
		}
		return Quote{}, apierr.InvalidField("amount", msg)
	}
	rate, err := s.Rates.Rate(ctx, r.SourceCurrency, c.Currency)
	if err != nil {
		return Quote{}, apierr.InvalidField("source_currency", "cannot be converted to "+c.Currency+" here.")
	}
	quote := Quote{ID: uuid.Must(uuid.NewV7()), OrganizationID: orgID, ContactID: c.ID, Rail: c.Rail, Rate: rate}
	if r.AmountSide == "send" {
		quote.Source = amount
		quote.Destination, err = money.Convert(amount, c.Currency, rate)
	} else {
		quote.Destination = amount
		quote.Source, err = money.ConvertFor(amount, r.SourceCurrency, rate)
	}
	// The other side of the conversion must itself be an amount the API
	// accepts (at most 15 digits before the decimal point), so every stored
	// amount keeps the sums of payments, fees and balances within int64.
	if err != nil || !quote.Source.WithinLimit() || !quote.Destination.WithinLimit() {
		return Quote{}, apierr.InvalidField("amount", "is too large to quote: the other side of the conversion would exceed the largest amount (15 digits before the decimal point).")
	}
	if !quote.Destination.IsPositive() {
		return Quote{}, apierr.InvalidField("amount", "is too small: the recipient would receive nothing.")
	}
	if quote.Fee, err = feeFor(c.Rail, quote.Source); err != nil {
		return Quote{}, err
	}
	return quote, nil
}

func loadQuote(ctx context.Context, q db.Reader, id uuid.UUID, lock string) (Quote, error) {
	var x Quote
	err := q.QueryRowContext(ctx, `SELECT id, organization_id, payment_contact_id, rail, source_amount, source_currency,
		destination_amount, destination_currency, fee_amount, fee_currency, rate, expires_at, used_at FROM quotes WHERE id = $1`+lock, id).
		Scan(&x.ID, &x.OrganizationID, &x.ContactID, &x.Rail, &x.Source.Minor, &x.Source.Currency, &x.Destination.Minor, &x.Destination.Currency,
			&x.Fee.Minor, &x.Fee.Currency, &x.Rate, &x.ExpiresAt, &x.UsedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return x, apierr.NotFoundf("Quote")
	}
	x.ExpiresAt = x.ExpiresAt.UTC()
	return x, err
}
