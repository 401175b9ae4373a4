package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/onboarding"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
)

const (
	history   = 2 * 365 * 24 * time.Hour
	maxAmount = 500_000 // minor units: payments are 10.00 to 5,000.00
)

var currencies = []string{"EUR", "USD"}

type org struct {
	id       uuid.UUID
	users    []uuid.UUID
	sessions []uuid.UUID // a session of each user, for their step-ups
	contact  uuid.UUID
	cards    []uuid.UUID
	payments int
	// ledger accounts by currency
	available, pending map[string]uuid.UUID
}

type daySum struct{ incoming, outgoing, payments, rows int64 }

type dayKey struct {
	org      uuid.UUID
	day, cur string
}

type spendKey struct {
	card  uuid.UUID
	month string
}

type generator struct {
	cfg  Config
	keys *keyring.Keyring
	logf func(string, ...any)
	b    *bulk

	orgs     []*org
	world    map[string]uuid.UUID
	balances map[uuid.UUID]int64
	days     map[dayKey]*daySum
	spend    map[spendKey]int64
}

// rnd returns a random int in [0, n).
func rnd(n int) int {
	v, _ := rand.Int(rand.Reader, big.NewInt(int64(n)))
	return int(v.Int64())
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (g *generator) run(ctx context.Context, d *db.DB) (Heavy, error) {
	cfg := g.cfg
	g.world, g.balances, g.days, g.spend = map[string]uuid.UUID{}, map[uuid.UUID]int64{}, map[dayKey]*daySum{}, map[spendKey]int64{}
	begin := cfg.Now.Add(-history)

	// The heavy organization's owner goes through the real code, which
	// hashes the password and seals the authenticator secret; every other
	// user reuses the stored hash and sealed secret.
	heavy := Heavy{OwnerEmail: "heavy@seed.test", OwnerPassword: cfg.Password, Secret: cfg.Secret}
	var hash, sealed string
	err := d.Tx(ctx, func(tx *db.Tx) error {
		o, err := organization.Create(ctx, tx, "Heavy History Ltd", organization.EntityReady, false)
		if err != nil {
			return err
		}
		if err := onboarding.Register(ctx, tx, o.ID, false); err != nil {
			return err
		}
		u, auth, err := identity.CreateUser(ctx, tx, g.keys, begin, identity.NewUser{Email: heavy.OwnerEmail, Password: cfg.Password,
			FirstName: ptr("Hedda"), LastName: ptr("Heavy"), WithTOTP: true})
		if err != nil {
			return err
		}
		if err := organization.AddMember(ctx, tx, o.ID, u.ID, organization.Owner); err != nil {
			return err
		}
		heavy.OrganizationID, heavy.TOTPSecret = o.ID.String(), auth.Secret
		g.orgs = append(g.orgs, &org{id: o.ID, users: []uuid.UUID{u.ID}})
		return tx.QueryRowContext(ctx, `SELECT password_hash, totp_secret FROM users WHERE id = $1`, u.ID).Scan(&hash, &sealed)
	})
	if err != nil {
		return Heavy{}, err
	}

	b, err := openBulk(ctx, cfg.Database, d.Dialect(), 200_000)
	if err != nil {
		return Heavy{}, err
	}
	g.b = b
	defer b.conn.Close()
	// Organizations, their members, devices and sessions.
	for i := 1; i < cfg.Orgs; i++ {
		t := begin.Add(time.Duration(i) * time.Minute)
		o := &org{id: idAt(t)}
		g.orgs = append(g.orgs, o)
		if err := b.add("organizations", "id, name, status, entity_status, requires_totp, inserted_at, updated_at",
			o.id, fmt.Sprintf("Seeded Company %d", i), "active", "ready", false, t, t); err != nil {
			return Heavy{}, err
		}
		if err := b.add("subscription_acknowledgements", "organization_id, required", o.id, false); err != nil {
			return Heavy{}, err
		}
	}
	for i := 1; i < cfg.Users; i++ {
		o := g.orgs[i%cfg.Orgs]
		t := begin.Add(time.Duration(i) * time.Second)
		id := idAt(t)
		email := fmt.Sprintf("user%d@seed.test", i)
		if err := b.add("users", "id, email, email_normalized, password_hash, first_name, last_name, totp_secret, totp_enabled, inserted_at, updated_at",
			id, email, email, hash, "Seeded", fmt.Sprintf("User %d", i), sealed, true, t, t); err != nil {
			return Heavy{}, err
		}
		role := "member"
		if len(o.users) == 0 {
			role = "owner"
		} else if len(o.users) == 1 {
			role = "admin"
		}
		if err := b.add("memberships", "organization_id, user_id, role, inserted_at", o.id, id, role, t); err != nil {
			return Heavy{}, err
		}
		o.users = append(o.users, id)
	}
	// Each user signed in on the web and in the app, many times over the history.
	sessionsPerUser := max(5, cfg.Rows/20/cfg.Users)
	for _, o := range g.orgs {
		for _, u := range o.users {
			var first uuid.UUID
			for p, platform := range []string{"web", "ios"} {
				t := begin.Add(time.Duration(p) * time.Hour)
				device := idAt(t)
				if err := b.add("devices", "id, user_id, name, platform, inserted_at, last_seen_at", device, u, platform+" device", platform, t, cfg.Now.Add(-time.Hour)); err != nil {
					return Heavy{}, err
				}
				for s := range sessionsPerUser / 2 {
					st := begin.Add(time.Duration(s) * history / time.Duration(sessionsPerUser/2+1))
					id := idAt(st)
					if first == uuid.Nil {
						first = id
					}
					if err := b.add("sessions", "id, token_hash, user_id, device_id, inserted_at, expires_at, idle_expires_at, ended_at",
						id, randomHex(32), u, device, st, st.Add(30*24*time.Hour), st.Add(12*time.Hour), nullTime(s%2 == 0, st.Add(time.Hour))); err != nil {
						return Heavy{}, err
					}
				}
			}
			o.sessions = append(o.sessions, first)
		}
	}

	// Ledger accounts: each organization's, and the world's on the other side.
	for _, cur := range currencies {
		g.world[cur] = idAt(begin)
		if err := b.add("ledger_accounts", "id, organization_id, currency, kind, balance, inserted_at", g.world[cur], nil, cur, "world", 0, begin); err != nil {
			return Heavy{}, err
		}
	}
	for _, o := range g.orgs {
		o.available, o.pending = map[string]uuid.UUID{}, map[string]uuid.UUID{}
		for _, cur := range currencies {
			o.available[cur], o.pending[cur] = idAt(begin), idAt(begin)
			for kind, id := range map[string]uuid.UUID{"available": o.available[cur], "pending": o.pending[cur]} {
				if err := b.add("ledger_accounts", "id, organization_id, currency, kind, balance, inserted_at", id, o.id, cur, kind, 0, begin); err != nil {
					return Heavy{}, err
				}
			}
		}
		o.contact = idAt(begin)
		if err := b.add("payment_contacts", "id, organization_id, name, currency, rail, details, created_by_id, inserted_at",
			o.contact, o.id, "Müller Maschinenbau GmbH", "EUR", "fiat", `{"iban":"DE89370400440532013000","swift_code":"COBADEFFXXX"}`, o.users[0], begin); err != nil {
			return Heavy{}, err
		}
	}
	// The heavy organization carries a tenth of the payments; the others share the rest.
	for k := range cfg.Rows {
		o, _ := g.payer(k)
		o.payments++
	}
	heavy.Payments = g.orgs[0].payments
	cardAuths := cfg.Rows / 5
	// Money first: a deposit in each currency covering everything paid later.
	for _, o := range g.orgs {
		amounts := map[string]int64{"EUR": int64(o.payments)*maxAmount + 100_000_000, "USD": int64(cardAuths/cfg.Orgs+1)*10_000 + 100_000_000}
		for _, cur := range currencies {
			if err := g.move(o, "deposit", "in", amounts[cur], cur, "Deposit", uuid.Nil, begin.Add(time.Hour)); err != nil {
				return Heavy{}, err
			}
		}
	}
	g.logf("organizations, users, sessions and deposits buffered")

	if err := g.payments(begin); err != nil {
		return Heavy{}, err
	}
	if err := g.cards(begin, cardAuths); err != nil {
		return Heavy{}, err
	}
	if err := g.paperwork(begin); err != nil {
		return Heavy{}, err
	}
	// What was kept in memory: card spending, day sums, balances.
	for k, v := range g.spend {
		if err := b.add("card_spend", "card_id, month, spent", k.card, k.month, v); err != nil {
			return Heavy{}, err
		}
	}
	for k, v := range g.days {
		if err := b.add("transaction_day_sums", "organization_id, day, currency, incoming, outgoing, payments, row_count",
			k.org, k.day, k.cur, v.incoming, v.outgoing, v.payments, v.rows); err != nil {
			return Heavy{}, err
		}
	}
	if err := b.flush(); err != nil {
		return Heavy{}, err
	}
	// The balances are the sums of the postings written.
	if b.tx == nil {
		if err := b.begin(); err != nil {
			return Heavy{}, err
		}
	}
	for id, bal := range g.balances {
		if _, err := b.tx.ExecContext(ctx, `UPDATE ledger_accounts SET balance = $2 WHERE id = $1`, id, bal); err != nil {
			return Heavy{}, err
		}
	}
	if err := b.close(); err != nil {
		return Heavy{}, err
	}
	for _, t := range order {
		g.logf("%-30s %9d rows", t, b.Total[t])
	}
	return heavy, nil
}

func ptr[T any](v T) *T { return &v }

func nullTime(ok bool, t time.Time) any {
	if !ok {
		return nil
	}
	return t
}

// move writes one movement of money: a journal entry whose postings
// balance (the organization's available account against the world's) and
// its feed row, counted in the day's sums. It returns the feed row's id.
func (g *generator) move(o *org, typ, direction string, amount int64, cur, description string, paymentID uuid.UUID, t time.Time) error {
	_, _, err := g.moveIDs(o, typ, direction, amount, cur, description, paymentID, t)
	return err
}

func (g *generator) moveIDs(o *org, typ, direction string, amount int64, cur, description string, paymentID uuid.UUID, t time.Time) (entry, feed uuid.UUID, err error) {
	b := g.b
	entry, feed = idAt(t), idAt(t)
	signed := amount
	if direction == "out" {
		signed = -amount
	}
	if err = b.add("journal_entries", "id, organization_id, kind, description, reverses_entry_id, inserted_at", entry, o.id, typ, description, nil, t); err != nil {
		return
	}
	if err = b.add("postings", "id, entry_id, account_id, amount, currency", idAt(t), entry, o.available[cur], signed, cur); err != nil {
		return
	}
	if err = b.add("postings", "id, entry_id, account_id, amount, currency", idAt(t), entry, g.world[cur], -signed, cur); err != nil {
		return
	}
	g.balances[o.available[cur]] += signed
	g.balances[g.world[cur]] -= signed
	var pay any
	if paymentID != uuid.Nil {
		pay = paymentID
	}
	if err = b.add("transactions", "id, organization_id, type, entry_id, direction, amount, currency, description, payment_id, recorded_at",
		feed, o.id, typ, entry, direction, amount, cur, description, pay, t); err != nil {
		return
	}
	k := dayKey{o.id, t.UTC().Format("2006-01-02"), cur}
	s := g.days[k]
	if s == nil {
		s = &daySum{}
		g.days[k] = s
	}
	switch typ {
	case "deposit":
		s.incoming += amount
	case "fiat_outgoing":
		s.outgoing += amount
	case "card_transaction":
		s.payments += amount
	}
	s.rows++
	return
}
