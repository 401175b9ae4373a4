package card

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// This file is the issuing network's side of cards: issuing one, its
// status and shipping as the issuer reports them, and the authorizations
// merchants ask for. The sandbox helpers drive them (docs/api.md, The sandbox).

// IssueRequest describes a card to issue.
type IssueRequest struct {
	UserID         *string `json:"user_id"`
	MonthlyLimit   *int64  `json:"monthly_limit"`
	CardHolderName *string `json:"card_holder_name"`
	CardProvider   *string `json:"card_provider"`
	AllowPhysical  *bool   `json:"allow_physical"`
}

// Validate checks the fields.
func (r IssueRequest) Validate() error {
	var f apierr.Fields
	if r.UserID != nil {
		_, err := uuid.Parse(*r.UserID)
		f.Check(err == nil, "user_id", "must be the id of a member of the organization.")
	}
	f.Check(r.MonthlyLimit != nil && *r.MonthlyLimit >= 0 && *r.MonthlyLimit <= MaxMonthlyLimit, "monthly_limit",
		"is required: a whole number of US dollars from 0 to 1000000.")
	if r.CardHolderName != nil {
		checkName(&f, *r.CardHolderName)
	}
	if r.CardProvider != nil {
		f.Check(*r.CardProvider == Visa || *r.CardProvider == Mastercard, "card_provider", "must be visa_issuer or mastercard_issuer.")
	}
	return f.Err()
}

// Issue issues a card of orgID: active, no physical card, not frozen. A
// cardholder must be a member; the holder name defaults to their name.
func (s *Service) Issue(ctx context.Context, orgID uuid.UUID, r IssueRequest) (Card, error) {
	provider := Visa
	if r.CardProvider != nil {
		provider = *r.CardProvider
	}
	pan, err := s.Issuer.NewCardNumber(ctx, provider)
	if err != nil {
		return Card{}, err
	}
	sealed, err := s.Keys.Seal(panPurpose, []byte(pan))
	if err != nil {
		return Card{}, err
	}
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Card, error) {
		status, err := organization.StatusOf(ctx, tx, orgID, "")
		if err != nil {
			return Card{}, err
		}
		if !status.Allows(true) {
			return Card{}, organization.ErrUnavailable
		}
		c := stored{Card: Card{ID: uuid.Must(uuid.NewV7()), OrganizationID: orgID, CardHolderName: r.CardHolderName, Provider: provider,
			Status: Active, AllowPhysical: r.AllowPhysical == nil || *r.AllowPhysical, Physical: Physical{State: PhysicalNone},
			LastFour: pan[len(pan)-4:], MonthlyLimit: *r.MonthlyLimit, CreatedAt: tx.Now()},
			panSealed: sealed, expiryMonth: int(tx.Now().UTC().Month()), expiryYear: tx.Now().UTC().Year() + 3}
		if r.UserID != nil {
			userID := uuid.MustParse(*r.UserID)
			if _, err := organization.Check(ctx, tx, actor.Actor{UserID: userID}, orgID, organization.Need{}); err != nil {
				return Card{}, apierr.InvalidField("user_id", "must be the id of a member of the organization.")
			}
			c.UserID = &userID
			if c.CardHolderName == nil {
				u, err := identity.GetUser(ctx, tx, userID)
				if err != nil {
					return Card{}, err
				}
				c.CardHolderName = fullName(u)
			}
		}
		if err := insertCard(ctx, tx, c); err != nil {
			return Card{}, err
		}
		if err := audit.Record(ctx, tx, c.OrganizationID, audit.CardIssued, audit.To("card", c.ID)); err != nil {
			return Card{}, err
		}
		return s.issuerView(ctx, tx, c.ID)
	})
}

// fullName is "first last" of u, or nil when u has neither.
func fullName(u identity.User) *string {
	var parts []string
	for _, p := range []*string{u.FirstName, u.LastName} {
		if p != nil && strings.TrimSpace(*p) != "" {
			parts = append(parts, strings.TrimSpace(*p))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	name := strings.Join(parts, " ")
	if utf8.RuneCountInString(name) > 100 {
		name = string([]rune(name)[:100])
	}
	return &name
}

// issuerView appends card.updated for card id and returns it as its holder
// would see it (an organization card as an admin would): the sandbox's view.
func (s *Service) issuerView(ctx context.Context, tx *db.Tx, id uuid.UUID) (Card, error) {
	c, err := s.updated(ctx, tx, id)
	if err != nil {
		return Card{}, err
	}
	return withHolder(ctx, tx, c.view(viewer{role: organization.Admin, holder: c.UserID != nil}))
}

// issuerChange applies fn to card id, locked, as the issuer: no person's
// access applies.
func (s *Service) issuerChange(ctx context.Context, id uuid.UUID, action string, fn func(tx *db.Tx, c stored) error) (Card, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Card, error) {
		c, err := loadCard(ctx, tx, id, tx.ForUpdate())
		if err != nil {
			return Card{}, err
		}
		if err := fn(tx, c); err != nil {
			return Card{}, err
		}
		view, err := s.issuerView(ctx, tx, id)
		if err != nil {
			return Card{}, err
		}
		return view, audit.Record(ctx, tx, c.OrganizationID, action, audit.To("card", id))
	})
}

// StatusRequest sets a card's status as the issuer reports it.
type StatusRequest struct {
	Status string `json:"status"`
}

// Validate checks the status.
func (r StatusRequest) Validate() error {
	if !validStatus(r.Status) {
		return apierr.InvalidField("status", "must be active, inactive, expired or revoked.")
	}
	return nil
}

// SetStatus records the card's status.
func (s *Service) SetStatus(ctx context.Context, id uuid.UUID, r StatusRequest) (Card, error) {
	return s.issuerChange(ctx, id, audit.CardStatusChanged, func(tx *db.Tx, _ stored) error {
		return update(ctx, tx, id, `status = $2`, r.Status)
	})
}

// Shipment is a physical card sent by the sandbox: the card and the
// activation code its letter carries.
type Shipment struct {
	Card           Card
	ActivationCode string
}

var errNotShippable = apierr.New(apierr.Conflict, "There is no ordered physical card waiting to be shipped.")

// Ship records that the ordered physical card was sent with its letter and
// returns the letter's activation code, since the sandbox has no letters; the
// card stays awaiting activation until the cardholder enters that code. Once
// shipped, nothing but the code's keyed hash remains. A card ordered before
// activation codes existed gets its code now.
func (s *Service) Ship(ctx context.Context, id uuid.UUID) (Shipment, error) {
	letters, ok := s.Issuer.(LetterKeeper)
	if !ok {
		return Shipment{}, errNoNetwork
	}
	var code string
	c, err := s.issuerChange(ctx, id, audit.CardShipped, func(tx *db.Tx, c stored) error {
		if c.Physical.State != PhysicalAwaitingActivation || c.Physical.Shipped {
			return errNotShippable
		}
		var err error
		if code, err = letters.TakeActivationLetter(ctx, tx, id); err != nil {
			return err
		}
		if code == "" {
			code = identity.RandomDigits(ActivationCodeDigits)
			return update(ctx, tx, id, `activation_code_hash = $2, shipped_at = $3`, s.activationHash(id, code))
		}
		return update(ctx, tx, id, `shipped_at = $2`)
	})
	if err != nil {
		return Shipment{}, err
	}
	return Shipment{Card: c, ActivationCode: code}, nil
}

// Authorization kinds and channels a merchant's request may name.
var (
	AuthorizationKinds = []string{"purchase", "refund"}
	Channels           = []string{"online", "terminal", "atm", "wallet"}
)

// Decline reasons, in the order they are checked (docs/api.md, Cards). An
// organization that is not active moves no money at all, so it comes first.
const (
	DeclineOrganizationUnavailable = "organization_unavailable"
	DeclineInactive                = "card_inactive"
	DeclineFrozen                  = "card_frozen"
	DeclinePhysicalNotActive       = "physical_card_not_active"
	DeclineLimitExceeded           = "limit_exceeded"
	DeclineRefundExceedsPurchases  = "refund_exceeds_purchases"
	DeclineInsufficientFunds       = "insufficient_funds"
)

// AuthorizationRequest is a merchant's request to charge or refund a card.
type AuthorizationRequest struct {
	Amount   string  `json:"amount"`
	Currency string  `json:"currency"`
	Merchant string  `json:"merchant"`
	Channel  string  `json:"channel"`
	Kind     *string `json:"kind"`
}

// Validate checks the fields; the currency's rate is checked by Authorize.
func (r AuthorizationRequest) Validate() error {
	var f apierr.Fields
	a, err := money.Parse(r.Amount, r.Currency)
	f.Check(err == nil && a.IsPositive(), "amount", "must be a positive amount with the currency's decimals and at most 15 digits before the point.")
	f.Check(money.IsCurrency(r.Currency), "currency", "must be an ISO 4217 currency code.")
	checkText(&f, "merchant", r.Merchant, 1, 100)
	f.Check(slices.Contains(Channels, r.Channel), "channel", "must be online, terminal, atm or wallet.")
	if r.Kind != nil {
		f.Check(slices.Contains(AuthorizationKinds, *r.Kind), "kind", "must be purchase or refund.")
	}
	return f.Err()
}

func (r AuthorizationRequest) refund() bool { return r.Kind != nil && *r.Kind == "refund" }

// Decision is the answer to an authorization: approved with the feed row
// it added, or declined with its reason. Purchase is set for an approved
// purchase of a card that has a cardholder: what the purchase files as the
// cardholder's expense (internal/flow/cardspend does, in the same
// transaction).
type Decision struct {
	Approved      bool
	DeclineReason *string
	Transaction   *ledger.Transaction
	Purchase      *Purchase
}

// Purchase is an approved purchase of a held card: whose organization and
// cardholder, its feed row (in US dollars), what the merchant charged and
// the merchant's name.
type Purchase struct {
	OrganizationID uuid.UUID
	HolderID       uuid.UUID
	Transaction    ledger.Transaction
	Bill           money.Amount
	Merchant       string
}

// Total is what the purchase's feed row counts, in its currency.
func (p Purchase) Total() money.Amount {
	return money.Amount{Minor: p.Transaction.Amount, Currency: p.Transaction.Currency}
}

// Priced is a merchant's request for a card, its amount converted to US
// dollars, ready for Decide.
type Priced struct {
	cardID uuid.UUID
	r      AuthorizationRequest
	amount money.Amount
	usd    money.Amount
}

// Price converts the amount of a validated request for card id to US
// dollars, which the card's limit counts, before any transaction begins;
// invalid_request when the currency has no rate or the amount does not
// convert.
func (s *Service) Price(ctx context.Context, id uuid.UUID, r AuthorizationRequest) (Priced, error) {
	amount, _ := money.Parse(r.Amount, r.Currency) // validated
	rate, err := s.Rates.Rate(ctx, r.Currency, LimitCurrency)
	if err != nil {
		return Priced{}, apierr.InvalidField("currency", "has no exchange rate to US dollars in the sandbox.")
	}
	usd, err := money.Convert(amount, LimitCurrency, rate)
	if err != nil || !usd.IsPositive() {
		return Priced{}, apierr.InvalidField("amount", "is too small or too large to convert to US dollars.")
	}
	return Priced{cardID: id, r: r, amount: amount, usd: usd}, nil
}

// Decide decides a priced request in tx, checking the reasons to decline in
// the order of the Decline constants (the first that holds answers). An
// approved purchase debits the organization's US-dollar balance through
// the ledger and adds to the month's spending; a refund, never more than
// what is left of the month's purchases, credits it and lowers the
// spending; either adds a card_transaction row to the feed. A declined
// request moves nothing. The card's row is locked, so concurrent
// authorizations of one card are decided one after another against the
// limit; the ledger refuses a balance below zero across cards.
func (s *Service) Decide(ctx context.Context, tx *db.Tx, p Priced) (Decision, error) {
	id, r, usd := p.cardID, p.r, p.usd
	c, err := loadCard(ctx, tx, id, tx.ForUpdate())
	if err != nil {
		return Decision{}, err
	}
	// Shared: a ban waits for this authorization, and this one for a ban.
	status, err := organization.StatusOf(ctx, tx, c.OrganizationID, tx.ForShare())
	if err != nil {
		return Decision{}, err
	}
	auth := authorization{ID: uuid.Must(uuid.NewV7()), CardID: id, Organization: c.OrganizationID, Kind: "purchase",
		Channel: r.Channel, Merchant: r.Merchant, Amount: p.amount.Minor, Currency: p.amount.Currency, USDAmount: usd.Minor}
	if r.refund() {
		auth.Kind = "refund"
	}
	reason := s.decline(c, status, r, usd.Minor)
	var out Decision
	if reason == "" {
		out.Transaction, err = s.move(ctx, tx, c, r, usd)
		switch {
		case apierr.Is(err, apierr.InsufficientFunds):
			reason = DeclineInsufficientFunds
		case err != nil:
			return Decision{}, err
		}
	}
	if reason != "" {
		auth.DeclineReason = &reason
		out = Decision{DeclineReason: &reason}
	} else {
		auth.Approved, auth.TransactionID, out.Approved = true, &out.Transaction.ID, true
	}
	if err := insertAuthorization(ctx, tx, auth); err != nil {
		return Decision{}, err
	}
	if !out.Approved {
		return out, nil
	}
	if _, err := s.updated(ctx, tx, id); err != nil {
		return Decision{}, err
	}
	// A held card's purchase is its cardholder's expense (docs/api.md, Expenses);
	// refunds and organization cards file none.
	if !r.refund() && c.UserID != nil {
		out.Purchase = &Purchase{OrganizationID: c.OrganizationID, HolderID: *c.UserID, Transaction: *out.Transaction,
			Bill: p.amount, Merchant: r.Merchant}
	}
	return out, nil
}

// decline is the first reason, in the order of the Decline constants, to refuse r on c; ""
// when none holds apart from funds, which only the ledger can tell.
func (s *Service) decline(c stored, status organization.Status, r AuthorizationRequest, usdCents int64) string {
	switch {
	case status != organization.Active:
		return DeclineOrganizationUnavailable
	case c.Status != Active:
		return DeclineInactive
	case c.Frozen:
		return DeclineFrozen
	case (r.Channel == "terminal" || r.Channel == "atm") && c.Physical.State != PhysicalActive:
		return DeclinePhysicalNotActive
	case !r.refund() && usdCents > c.MonthlyLimit*100-c.SpentThisMonth:
		return DeclineLimitExceeded
	// Refunds in a month never add up to more than the card's purchases that
	// month, so no refund creates money: SpentThisMonth is what is left of
	// them (locked with the card, so concurrent refunds cannot both fit).
	case r.refund() && usdCents > c.SpentThisMonth:
		return DeclineRefundExceedsPurchases
	}
	return ""
}

// move posts the money of an approved authorization, counts it against the
// month's spending and adds the feed row. Funds short: insufficient_funds,
// with nothing posted (the savepoint is rolled back).
func (s *Service) move(ctx context.Context, tx *db.Tx, c stored, r AuthorizationRequest, usd money.Amount) (*ledger.Transaction, error) {
	org := c.OrganizationID
	cents, direction, description := usd.Minor, "out", "Card payment to "+r.Merchant
	if r.refund() {
		cents, direction, description = -usd.Minor, "in", "Card refund from "+r.Merchant
	}
	var entry uuid.UUID
	err := tx.Savepoint(ctx, func() error {
		var err error
		entry, err = ledger.Post(ctx, tx, ledger.Entry{OrganizationID: &org, Kind: "card", Description: description,
			Postings: []ledger.Posting{
				{Account: ledger.OrgAccount(org, LimitCurrency, ledger.Available), Amount: -cents},
				{Account: ledger.PlatformAccount(org, LimitCurrency, ledger.World), Amount: cents},
			}})
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := addSpend(ctx, tx, c.ID, cents); err != nil {
		return nil, err
	}
	t, err := ledger.Record(ctx, tx, ledger.Transaction{OrganizationID: org, Type: "card_transaction", EntryID: &entry,
		Direction: direction, Amount: usd.Minor, Currency: LimitCurrency, Description: description})
	if err != nil {
		return nil, fmt.Errorf("card: feed row: %w", err)
	}
	return &t, nil
}
