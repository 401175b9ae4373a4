package httpapi

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
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

// cards finds the card in the path and answers it, noting its
// organization for the access log.
var cards = object[card.Card, cardRecord]{name: "card_id", kind: "Card", org: func(c card.Card) uuid.UUID { return c.OrganizationID }, record: newCardRecord}

// cardID reads the card in the path.
func cardID(r *http.Request) (uuid.UUID, error) { return pathID(r, cards.name, cards.kind) }

func (s *server) listCards(w http.ResponseWriter, r *http.Request) error {
	org, err := orgID(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var f card.ListFilter
	if v := q.Get("status"); v != "" {
		if !slices.Contains(card.Statuses, v) {
			return apierr.InvalidField("status", "must be active, inactive, expired or revoked.")
		}
		f.Status = &v
	}
	if v := q.Get("user_id"); v != "" {
		id, err := uuid.Parse(v)
		if err != nil {
			return apierr.InvalidField("user_id", "must be a user id.")
		}
		f.UserID = &id
	}
	if v := q.Get("frozen"); v != "" {
		if v != "true" && v != "false" {
			return apierr.InvalidField("frozen", "must be true or false.")
		}
		frozen := v == "true"
		f.Frozen = &frozen
	}
	pages := s.pages("cards")
	req, err := pages.Parse(q, "status", "user_id", "frozen")
	if err != nil {
		return err
	}
	cs, err := s.Cards.List(r.Context(), actorOf(r), org, f, req)
	return renderPage(w, pages, req, card.PageKey, newCardRecord, cs, err)
}

// cardHandler is the handler of an operation on the card in the path
// that answers with the card.
func cardHandler(op func(r *http.Request, id uuid.UUID) (card.Card, error)) handlerFunc {
	return cards.handler(op)
}

// cardAction is cardHandler for a person's operation without a body.
func cardAction(act func(context.Context, actor.Actor, uuid.UUID) (card.Card, error)) handlerFunc {
	return cards.action(act)
}

// cardChange is cardHandler for a person's operation with a JSON body.
func cardChange[Req any](change func(context.Context, actor.Actor, uuid.UUID, Req) (card.Card, error)) handlerFunc {
	return changing(cards, change)
}

func (s *server) setCardPIN(w http.ResponseWriter, r *http.Request) error {
	id, err := cardID(r)
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

func (s *server) provisionWallet(w http.ResponseWriter, r *http.Request) error {
	id, err := cardID(r)
	if err != nil {
		return err
	}
	// Every field is optional, so the body may be left out.
	var req card.WalletRequest
	if err := decodeOptional(r, &req); err != nil {
		return err
	}
	p, err := s.Confirming.ProvisionWallet(r.Context(), actorOf(r), id, req)
	return render(w, http.StatusOK, newWalletProvisionRecord, p, err)
}

// Sandbox: the issuing network's side.

func (s *server) sandboxIssueCard(w http.ResponseWriter, r *http.Request) error {
	return onPath(w, r, "organization_id", "Organization", http.StatusCreated, s.Cards.Issue, newCardRecord)
}

func (s *server) sandboxSetCardStatus(r *http.Request, id uuid.UUID) (card.Card, error) {
	var req card.StatusRequest
	if err := decode(r, &req); err != nil {
		return card.Card{}, err
	}
	return s.Cards.SetStatus(r.Context(), id, req)
}

// shipmentRecord is what the sandbox answers when it ships a physical card:
// the card and the activation code the card's letter would carry.
type shipmentRecord struct {
	Card           cardRecord `json:"card"`
	ActivationCode string     `json:"activation_code"`
}

var shipments = object[card.Shipment, shipmentRecord]{name: "card_id", kind: "Card",
	org: func(s card.Shipment) uuid.UUID { return s.Card.OrganizationID },
	record: func(s card.Shipment) shipmentRecord {
		return shipmentRecord{Card: newCardRecord(s.Card), ActivationCode: s.ActivationCode}
	}}

func (s *server) sandboxShipCard(r *http.Request, id uuid.UUID) (card.Shipment, error) {
	if err := noBody(r); err != nil {
		return card.Shipment{}, err
	}
	return s.Cards.Ship(r.Context(), id)
}

func (s *server) sandboxWalletProviderKey(w http.ResponseWriter, r *http.Request) error {
	network := r.URL.Query().Get("network")
	if !slices.Contains(card.Networks, network) {
		return apierr.InvalidField("network", "must be visa or mastercard.")
	}
	k, err := s.SandboxIssuer.ProviderPrivateKey(r.Context(), network)
	return render(w, http.StatusOK, func(k jose.JSONWebKey) jose.JSONWebKey { return k }, k, err)
}

type authorizationRecord struct {
	Approved      bool               `json:"approved"`
	DeclineReason *string            `json:"decline_reason"`
	Transaction   *transactionRecord `json:"transaction"`
}

func newAuthorizationRecord(d card.Decision) authorizationRecord {
	out := authorizationRecord{Approved: d.Approved, DeclineReason: d.DeclineReason}
	if d.Transaction != nil {
		t := newTransactionRecord(*d.Transaction)
		out.Transaction = &t
	}
	return out
}

func (s *server) sandboxAuthorizeCard(w http.ResponseWriter, r *http.Request) error {
	return onPath(w, r, "card_id", "Card", http.StatusOK, s.CardSpend.Authorize, newAuthorizationRecord)
}
