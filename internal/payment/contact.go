// Package payment moves money out, and only when a person approves:
// payment contacts with checked bank details, quotes, payments executed from
// quotes (with Idempotency-Key replay), approvals bound to a signed
// challenge in the approving app, batches, and the rail that settles them.
package payment

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/bankdetails"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Rails.
const (
	RailFiat   = "fiat"
	RailCrypto = "crypto"
)

// Contact is someone the organization pays.
type Contact struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	Name           string
	Currency       string
	Rail           string
	Bank           bankdetails.Account
	CryptoAddress  *string
	Network        *string
	CreatedByID    uuid.UUID
	InsertedAt     time.Time
}

// ContactRequest is the body of createPaymentContact.
type ContactRequest struct {
	Name     string `json:"name"`
	Currency string `json:"currency"`
	Rail     string `json:"rail"`
	bankdetails.Account
	CryptoAddress *string `json:"crypto_address"`
	Network       *string `json:"network"`
}

func nonEmpty(s *string) bool { return s != nil && strings.TrimSpace(*s) != "" }

// Validate checks the body's fields, including the check digits of IBAN,
// BIC and ABA numbers and the form of crypto addresses per network.
func (r *ContactRequest) Validate() error {
	var f apierr.Fields
	f.Check(strings.TrimSpace(r.Name) != "" && len(r.Name) <= 140, "name", "is required (at most 140 characters).")
	f.Check(money.IsCurrency(r.Currency), "currency", "must be an ISO 4217 currency code in capitals.")
	switch r.Rail {
	case RailFiat:
		b := &r.Account
		b.Check(&f)
		f.Check(b.IBAN != nil || b.AccountNumber != nil, "iban", "an IBAN, or an account_number with its routing code, is required for a fiat contact.")
		if b.AccountNumber != nil && b.IBAN == nil {
			f.Check(b.ABACode != nil || b.SortCode != nil || b.BSBCode != nil || b.IFSCCode != nil || b.CNAPS != nil || b.BankCode != nil || b.SwiftCode != nil,
				"account_number", "needs a routing code: aba_code, sort_code, bsb_code, ifsc_code, cnaps, bank_code or swift_code.")
		}
		f.Check(r.CryptoAddress == nil && r.Network == nil, "crypto_address", "belongs to crypto contacts only.")
	case RailCrypto:
		f.Check(nonEmpty(r.Network), "network", "is required: one of "+strings.Join(bankdetails.Networks(), ", ")+".")
		f.Check(nonEmpty(r.CryptoAddress), "crypto_address", "is required.")
		if nonEmpty(r.Network) && nonEmpty(r.CryptoAddress) {
			if err := bankdetails.CheckCryptoAddress(*r.Network, *r.CryptoAddress); err != nil {
				f.Add("crypto_address", err.Error())
			}
		}
		f.Check(r.Account == (bankdetails.Account{}), "iban", "bank fields belong to fiat contacts only.")
	default:
		f.Add("rail", "must be fiat or crypto.")
	}
	return f.Err()
}

// contactDetails is how a contact's rail-specific fields are stored.
type contactDetails struct {
	bankdetails.Account
	CryptoAddress *string `json:"crypto_address,omitempty"`
	Network       *string `json:"network,omitempty"`
}

// CreateContact stores a contact and appends payment_contact.created on the
// contact's own stream, in one transaction.
func (s *Service) CreateContact(ctx context.Context, a actor.Actor, orgID uuid.UUID, r ContactRequest) (Contact, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Contact, error) { return AddContact(ctx, tx, a, orgID, r) })
}

// AddContact is CreateContact in the caller's transaction tx, for a
// feature that makes a contact as part of its own change (a bill's
// supplier). r must have passed Validate.
func AddContact(ctx context.Context, tx *db.Tx, a actor.Actor, orgID uuid.UUID, r ContactRequest) (Contact, error) {
	if _, err := organization.Check(ctx, tx, a, orgID, organization.Need{Role: organization.Member, Write: true}); err != nil {
		return Contact{}, err
	}
	c := Contact{ID: uuid.Must(uuid.NewV7()), OrganizationID: orgID, Name: strings.TrimSpace(r.Name), Currency: r.Currency, Rail: r.Rail,
		Bank: r.Account, CryptoAddress: r.CryptoAddress, Network: r.Network, CreatedByID: a.UserID, InsertedAt: tx.Now()}
	if c.Rail == RailFiat && c.Bank.AccountHolderName == nil {
		c.Bank.AccountHolderName = &c.Name
	}
	details, err := json.Marshal(contactDetails{Account: c.Bank, CryptoAddress: c.CryptoAddress, Network: c.Network})
	if err != nil {
		return Contact{}, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO payment_contacts (id, organization_id, name, currency, rail, details, created_by_id, inserted_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, c.ID, orgID, c.Name, c.Currency, c.Rail, string(details), a.UserID, tx.Now()); err != nil {
		return Contact{}, err
	}
	_, err = event.Append(ctx, tx, orgID, "payment_contact-"+c.ID.String(), c.ID.String(), "payment_contact.created",
		map[string]any{"payment_contact_id": c.ID, "organization_id": orgID, "name": c.Name, "currency": c.Currency, "rail": c.Rail})
	if err != nil {
		return Contact{}, err
	}
	return c, audit.Record(ctx, tx, orgID, audit.PaymentContactCreated, audit.To("payment_contact", c.ID))
}

const contactColumns = `id, organization_id, name, currency, rail, details, created_by_id, inserted_at`

func scanContact(row db.Scanner) (Contact, error) {
	var c Contact
	var details string
	err := row.Scan(&c.ID, &c.OrganizationID, &c.Name, &c.Currency, &c.Rail, &details, &c.CreatedByID, &c.InsertedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return c, apierr.NotFoundf("Payment contact")
	}
	if err != nil {
		return c, err
	}
	var d contactDetails
	if err := json.Unmarshal([]byte(details), &d); err != nil {
		return c, err
	}
	c.Bank, c.CryptoAddress, c.Network = d.Account, d.CryptoAddress, d.Network
	c.InsertedAt = c.InsertedAt.UTC()
	return c, nil
}

// GetContact returns a contact of an organization the actor belongs to.
func (s *Service) GetContact(ctx context.Context, a actor.Actor, id uuid.UUID) (Contact, error) {
	q := s.DB.Reader()
	c, err := scanContact(q.QueryRowContext(ctx, `SELECT `+contactColumns+` FROM payment_contacts WHERE id = $1`, id))
	if err != nil {
		return c, err
	}
	if _, err := organization.Check(ctx, q, a, c.OrganizationID, organization.Need{Role: organization.Member}); err != nil {
		return Contact{}, organization.Hide(err, apierr.NotFoundf("Payment contact"))
	}
	return c, nil
}

// ListContacts returns a page of the organization's contacts, newest first.
func (s *Service) ListContacts(ctx context.Context, a actor.Actor, orgID uuid.UUID, req page.Request) ([]Contact, error) {
	q := s.DB.Reader()
	if _, err := organization.Check(ctx, q, a, orgID, organization.Need{Role: organization.Member}); err != nil {
		return nil, err
	}
	return db.QueryAll(ctx, q, scanContact, `SELECT `+contactColumns+` FROM payment_contacts
		WHERE organization_id = $1 AND (id < $2 OR $2 IS NULL) ORDER BY id DESC LIMIT $3`, orgID, req.AfterUUID(), req.Limit+1)
}

// ContactPageKey positions a page after c.
func ContactPageKey(c Contact) page.Key { return page.Key{ID: c.ID.String()} }

// ContactOf returns contact id of orgID, or not_found (also when it is
// another organization's), for a feature that refers to contacts.
func ContactOf(ctx context.Context, q db.Reader, orgID, id uuid.UUID) (Contact, error) {
	c, err := contactOf(ctx, q, id)
	if err == nil && c.OrganizationID != orgID {
		err = apierr.NotFoundf("Payment contact")
	}
	return c, err
}

// contactOf reads a contact in q without authorization (callers authorize its organization).
func contactOf(ctx context.Context, q db.Reader, id uuid.UUID) (Contact, error) {
	return scanContact(q.QueryRowContext(ctx, `SELECT `+contactColumns+` FROM payment_contacts WHERE id = $1`, id))
}
