package httpapi

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/card"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/money"
)

type cardUserRecord struct {
	ID        uuid.UUID `json:"id"`
	Email     string    `json:"email"`
	FirstName *string   `json:"first_name"`
	LastName  *string   `json:"last_name"`
}

type cardLimitRecord struct {
	Currency       string `json:"currency"`
	MonthlyLimit   int64  `json:"monthly_limit"`
	Period         string `json:"period"`
	SpentThisMonth string `json:"spent_this_month"`
	Utilization    string `json:"utilization"`
}

type cardPhysicalRecord struct {
	Replacement bool   `json:"replacement"`
	State       string `json:"state"`
}

type cardRecord struct {
	ID               uuid.UUID          `json:"id"`
	OrganizationID   uuid.UUID          `json:"organization_id"`
	UserID           *uuid.UUID         `json:"user_id"`
	User             *cardUserRecord    `json:"user"`
	CardHolderName   *string            `json:"card_holder_name"`
	CardProvider     string             `json:"card_provider"`
	Status           string             `json:"status"`
	Frozen           bool               `json:"frozen"`
	AllowPhysical    bool               `json:"allow_physical"`
	LastFour         string             `json:"last_four"`
	Limit            cardLimitRecord    `json:"limit"`
	Physical         cardPhysicalRecord `json:"physical"`
	AvailableActions []string           `json:"available_actions"`
	CreatedAt        time.Time          `json:"created_at"`
	UpdatedAt        time.Time          `json:"updated_at"`
}

func newCardRecord(c card.Card) cardRecord {
	out := cardRecord{ID: c.ID, OrganizationID: c.OrganizationID, UserID: c.UserID, CardHolderName: c.CardHolderName,
		CardProvider: c.Provider, Status: c.Status, Frozen: c.Frozen, AllowPhysical: c.AllowPhysical, LastFour: c.LastFour,
		Limit: cardLimitRecord{Currency: card.LimitCurrency, MonthlyLimit: c.MonthlyLimit, Period: "monthly",
			SpentThisMonth: money.Amount{Minor: c.SpentThisMonth, Currency: card.LimitCurrency}.String(),
			Utilization:    strconv.FormatInt(c.Utilization(), 10)},
		Physical:         cardPhysicalRecord{Replacement: c.Physical.Replacement, State: c.Physical.State},
		AvailableActions: c.AvailableActions, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if h := c.Holder; h != nil {
		out.User = &cardUserRecord{ID: h.ID, Email: h.Email, FirstName: h.FirstName, LastName: h.LastName}
	}
	return out
}

func (c cardRecord) organization() uuid.UUID { return c.OrganizationID }

// The card feature's resources: what each operation's path names first,
// and the record of its answer.
var (
	cards   = resource[card.Card, cardRecord]{at: cardID, record: newCardRecord, pages: "cards", key: card.PageKey}
	wallets = resource[card.WalletProvision, walletProvisionRecord]{at: cardID, record: newWalletProvisionRecord}
	cardID  = param{"card_id", "Card"}
)

// cardFilter reads the list's filters: status, holder and frozen.
var cardFilter = &filter[card.ListFilter]{read: readCardFilter, params: []string{"status", "user_id", "frozen"}}

func readCardFilter(r *http.Request) (card.ListFilter, error) {
	q := r.URL.Query()
	var f card.ListFilter
	if v := q.Get("status"); v != "" {
		if !slices.Contains(card.Statuses, v) {
			return f, apierr.InvalidField("status", "must be active, inactive, expired or revoked.")
		}
		f.Status = &v
	}
	if v := q.Get("user_id"); v != "" {
		id, err := uuid.Parse(v)
		if err != nil {
			return f, apierr.InvalidField("user_id", "must be a user id.")
		}
		f.UserID = &id
	}
	if v := q.Get("frozen"); v != "" {
		if v != "true" && v != "false" {
			return f, apierr.InvalidField("frozen", "must be true or false.")
		}
		frozen := v == "true"
		f.Frozen = &frozen
	}
	return f, nil
}

// setCardPIN is written out: it answers 204 without a body.
func (s *server) setCardPIN(w http.ResponseWriter, r *http.Request) error {
	id, err := cardID.id(r)
	if err != nil {
		return err
	}
	var req card.PINRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if err := s.Confirming.SetCardPIN(r.Context(), actorOf(r), id, req); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type walletAddressRecord struct {
	AddressLine1 *string `json:"address_line1"`
	AddressLine2 *string `json:"address_line2"`
	City         *string `json:"city"`
	CountryCode  *string `json:"country_code"`
	Name         *string `json:"name"`
	Phone        *string `json:"phone"`
	PostalCode   *string `json:"postal_code"`
	State        *string `json:"state"`
}

type walletProvisionRecord struct {
	Address              walletAddressRecord `json:"address"`
	DisplayName          *string             `json:"display_name"`
	LastFour             *string             `json:"last_four"`
	Network              string              `json:"network"`
	OpaquePaymentCard    string              `json:"opaque_payment_card"`
	TokenServiceProvider string              `json:"token_service_provider"`
}

func newWalletProvisionRecord(p card.WalletProvision) walletProvisionRecord {
	a := p.Address
	return walletProvisionRecord{
		Address: walletAddressRecord{AddressLine1: a.Line1, AddressLine2: a.Line2, City: a.City, CountryCode: a.CountryCode,
			Name: a.Name, Phone: a.Phone, PostalCode: a.PostalCode, State: a.State},
		DisplayName: p.DisplayName, LastFour: p.LastFour, Network: p.Network, OpaquePaymentCard: p.OpaquePaymentCard,
		TokenServiceProvider: p.TokenServiceProvider}
}
