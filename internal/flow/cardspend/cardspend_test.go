package cardspend_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/card"
	"github.com/strongroom/strongroom/internal/expense"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/flow/cardspend"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
	"github.com/strongroom/strongroom/internal/sandbox"
)

var testDay = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// env is an organization with US dollars to spend, its owner, and the
// services the flow calls.
type env struct {
	d        *db.DB
	flow     *cardspend.Service
	cards    *card.Service
	expenses *expense.Service
	org      organization.Organization
	owner    actor.Actor
}

func eachEnv(t *testing.T, test func(t *testing.T, e *env)) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		keys := fixture.Keys(t)
		cards := &card.Service{DB: d, Keys: keys, Issuer: sandbox.Issuer{DB: d, Keys: keys}, Rates: sandbox.Rates{}}
		expenses := &expense.Service{DB: d}
		org, owner := fixture.Member(t, d, organization.Owner)
		e := &env{d: d, flow: &cardspend.Service{DB: d, Cards: cards, Expenses: expenses}, cards: cards, expenses: expenses, org: org, owner: owner}
		e.fund(t, 1_000_00)
		test(t, e)
	})
}

// fund deposits cents into the organization's available US dollars.
func (e *env) fund(t *testing.T, cents int64) {
	t.Helper()
	org := e.org.ID
	_, err := db.InTx(context.Background(), e.d, func(tx *db.Tx) (uuid.UUID, error) {
		return ledger.Post(context.Background(), tx, ledger.Entry{OrganizationID: &org, Kind: "deposit", Description: "test",
			Postings: []ledger.Posting{
				{Account: ledger.PlatformAccount(org, "USD", ledger.World), Amount: -cents},
				{Account: ledger.OrgAccount(org, "USD", ledger.Available), Amount: cents},
			}})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// issue issues a card with a limit of 500 US dollars, held by holder or,
// when nil, by the organization.
func (e *env) issue(t *testing.T, holder *uuid.UUID) card.Card {
	t.Helper()
	limit := int64(500)
	r := card.IssueRequest{MonthlyLimit: &limit}
	if holder != nil {
		id := holder.String()
		r.UserID = &id
	}
	c, err := e.cards.Issue(context.Background(), e.org.ID, r)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// expenses lists every expense of the organization, as its owner sees them.
func (e *env) list(t *testing.T) []expense.Expense {
	t.Helper()
	es, err := e.expenses.List(context.Background(), e.owner, e.org.ID, expense.ListFilter{}, page.Request{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func request(amount, currency string, kind string) card.AuthorizationRequest {
	r := card.AuthorizationRequest{Amount: amount, Currency: currency, Merchant: "Corner Shop", Channel: "online"}
	if kind != "" {
		r.Kind = &kind
	}
	return r
}

func (e *env) authorize(t *testing.T, id uuid.UUID, r card.AuthorizationRequest) card.Decision {
	t.Helper()
	d, err := e.flow.Authorize(context.Background(), id, r)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestPurchaseFilesTheHoldersExpense: an approved purchase of a held card
// is the cardholder's pending expense, bound to the purchase's feed row,
// with what the merchant charged as its bill.
func TestPurchaseFilesTheHoldersExpense(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c := e.issue(t, &e.owner.UserID)
		d := e.authorize(t, c.ID, request("12.50", "EUR", ""))
		if !d.Approved || d.Transaction == nil {
			t.Fatalf("decision %+v, want approved with a feed row", d)
		}
		es := e.list(t)
		if len(es) != 1 {
			t.Fatalf("%d expenses, want the purchase's one", len(es))
		}
		x := es[0]
		if x.Status != expense.Pending || x.CreatedBy.ID != e.owner.UserID || x.BusinessName == nil || *x.BusinessName != "Corner Shop" {
			t.Errorf("expense %+v, want pending, by the cardholder, at Corner Shop", x)
		}
		if want := (money.Amount{Minor: 1250, Currency: "EUR"}); x.Bill == nil || *x.Bill != want {
			t.Errorf("bill %v, want what the merchant charged, %v", x.Bill, want)
		}
		if x.TransactionDate == nil || *x.TransactionDate != "2026-11-22" {
			t.Errorf("transaction date %v, want the day of the purchase", x.TransactionDate)
		}
		if len(x.Bindings) != 1 {
			t.Fatalf("bindings %+v, want the purchase's feed row", x.Bindings)
		}
		b := x.Bindings[0]
		row := *d.Transaction
		if b.TargetType != expense.CardTransaction || b.TargetID != row.ID || b.TransactionID == nil || *b.TransactionID != row.ID ||
			b.Total != (money.Amount{Minor: row.Amount, Currency: "USD"}) {
			t.Errorf("binding %+v, want the feed row %s counting %d US cents", b, row.ID, row.Amount)
		}
	})
}

// TestRefundsDeclinesAndOrganizationCardsFileNone: a refund, a declined
// request and a purchase of a card without a cardholder file no expense.
func TestRefundsDeclinesAndOrganizationCardsFileNone(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		held := e.issue(t, &e.owner.UserID)
		e.authorize(t, held.ID, request("40.00", "USD", ""))
		if n := len(e.list(t)); n != 1 {
			t.Fatalf("%d expenses after one purchase, want 1", n)
		}
		if d := e.authorize(t, held.ID, request("15.00", "USD", "refund")); !d.Approved {
			t.Fatalf("refund %+v, want approved", d)
		}
		if d := e.authorize(t, held.ID, request("600.00", "USD", "")); d.Approved || *d.DeclineReason != card.DeclineLimitExceeded {
			t.Fatalf("purchase over the limit %+v, want limit_exceeded", d)
		}
		if _, err := e.cards.Freeze(context.Background(), e.owner, held.ID); err != nil {
			t.Fatal(err)
		}
		if d := e.authorize(t, held.ID, request("1.00", "USD", "")); d.Approved || *d.DeclineReason != card.DeclineFrozen {
			t.Fatalf("purchase of a frozen card %+v, want card_frozen", d)
		}
		org := e.issue(t, nil)
		if d := e.authorize(t, org.ID, request("5.00", "USD", "")); !d.Approved {
			t.Fatalf("purchase of an organization card %+v, want approved", d)
		}
		if n := len(e.list(t)); n != 1 {
			t.Errorf("%d expenses, want only the first purchase's", n)
		}
	})
}

// TestExpenseAndPurchaseCommitTogether: when the expense cannot be filed,
// the purchase is not made either (one transaction): no money moves, no
// spending counts, no feed row appears.
func TestExpenseAndPurchaseCommitTogether(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c := e.issue(t, &e.owner.UserID)
		refuseExpenses(t, e.d)
		if _, err := e.flow.Authorize(context.Background(), c.ID, request("20.00", "USD", "")); err == nil {
			t.Fatal("the purchase was approved though its expense could not be filed")
		}
		got, err := e.cards.Get(context.Background(), e.owner, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.SpentThisMonth != 0 {
			t.Errorf("spent %d cents this month, want nothing counted", got.SpentThisMonth)
		}
		rows, err := ledger.List(context.Background(), e.d.Reader(), e.org.ID, ledger.FeedFilter{Types: []string{"card_transaction"}}, page.Request{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 0 {
			t.Errorf("feed rows %+v, want none", rows)
		}
	})
}

// refuseExpenses makes the database refuse every new expense.
func refuseExpenses(t *testing.T, d *db.DB) {
	t.Helper()
	ddl := []string{`CREATE TRIGGER refuse_expenses BEFORE INSERT ON expenses BEGIN SELECT RAISE(ABORT, 'refused'); END`}
	if d.Dialect() == db.Postgres {
		ddl = []string{
			`CREATE FUNCTION refuse_expense() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`,
			`CREATE TRIGGER refuse_expenses BEFORE INSERT ON expenses FOR EACH ROW EXECUTE FUNCTION refuse_expense()`,
		}
	}
	_, err := db.InTx(context.Background(), d, func(tx *db.Tx) (struct{}, error) {
		for _, q := range ddl {
			if _, err := tx.ExecContext(context.Background(), q); err != nil {
				return struct{}{}, err
			}
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
