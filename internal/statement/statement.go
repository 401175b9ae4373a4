// Package statement renders an organization's account statement in one
// currency over a range of UTC days: the available balance at the start
// (opening), every feed row booked in the range with the balance after it,
// and the balance at the end (closing), as JSON, CSV, ISO 20022
// camt.053.001.08 or OFX 2.2 (docs/api.md, Statements). Opening plus the
// entries is closing, always: all three are read from one snapshot of the
// ledger. A statement streams: rows are read with a cursor and written as
// they come, so a year of a busy account never sits in memory.
package statement

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// Scope is the API-key scope that reads statements.
const Scope = "transactions:read"

// MaxDays is the longest range a statement covers, both ends included.
const MaxDays = 366

// Formats.
const (
	JSON    = "json"
	CSV     = "csv"
	CAMT053 = "camt053"
	OFX     = "ofx"
)

// Formats lists the formats a statement is written in.
var Formats = []string{JSON, CSV, CAMT053, OFX}

// Query is what a statement covers: one currency, the UTC days From to To
// (both included, each at midnight UTC) and the format it is written in.
type Query struct {
	Currency string
	From, To time.Time
	Format   string
}

// params are the query parameters a statement reads.
var params = []string{"currency", "from", "to", "format"}

// ParseQuery reads a statement's query parameters strictly: only its own,
// each at most once; currency, from and to required; dates YYYY-MM-DD, from
// not after to, at most MaxDays days; format one of Formats (json when left
// out). camt053 and ofx carry ISO 4217 currencies only, not stablecoins.
func ParseQuery(v url.Values) (Query, error) {
	var errs apierr.Fields
	errs.CheckQuery(v, params, "use currency, from, to and format.")
	q := Query{Currency: v.Get("currency"), Format: v.Get("format")}
	if q.Format == "" {
		q.Format = JSON
	}
	switch {
	case q.Currency == "":
		errs.Add("currency", "is required: a currency code such as EUR, or a stablecoin such as USDC.")
	case !money.IsCurrency(q.Currency) && !money.IsCoin(q.Currency):
		errs.Add("currency", "must be a supported currency code such as EUR, or a stablecoin such as USDC.")
	case money.IsCoin(q.Currency) && (q.Format == CAMT053 || q.Format == OFX):
		errs.Add("format", "camt053 and ofx carry ISO 4217 currencies only; use json or csv for a stablecoin.")
	}
	if !slices.Contains(Formats, q.Format) {
		errs.Add("format", "must be one of json, csv, camt053, ofx.")
	}
	dates := true
	for _, d := range []struct {
		name   string
		target *time.Time
	}{{"from", &q.From}, {"to", &q.To}} {
		s := v.Get(d.name)
		if s == "" {
			errs.Add(d.name, "is required: a calendar date YYYY-MM-DD (UTC).")
			dates = false
			continue
		}
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			errs.Add(d.name, "must be a calendar date YYYY-MM-DD (UTC).")
			dates = false
			continue
		}
		*d.target = t
	}
	if dates {
		switch {
		case q.To.Before(q.From):
			errs.Add("to", "must not be before from.")
		case q.Days() > MaxDays:
			errs.Add("to", fmt.Sprintf("must be at most %d days from from, both included.", MaxDays))
		}
	}
	return q, errs.Err()
}

// Days is how many days q covers, both ends included.
func (q Query) Days() int { return int(q.To.Sub(q.From)/(24*time.Hour)) + 1 }

// end is the instant the range ends: midnight at the start of the day after To.
func (q Query) end() time.Time { return q.To.AddDate(0, 0, 1) }

// Entry is one row of a statement: a feed row with the balance after it.
type Entry struct {
	TransactionID uuid.UUID
	BookedAt      time.Time
	Amount        int64 // signed minor units: what the row added to the balance
	BalanceAfter  int64
	Type          string
	Description   string
	Counterparty  *string
	Reference     *string
	PaymentID     *uuid.UUID
}

// Party is who a row's payment paid and the reference it carried.
type Party struct {
	Counterparty string
	Reference    *string
}

// Parties finds the party of each payment among ids (rows that name a
// payment). A use case that knows payments supplies it; without it the
// entries name no counterparty.
type Parties func(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]Party, error)

// Service opens statements for members of an organization and for its API
// keys holding Scope.
type Service struct {
	DB *db.DB
}

// Statement is an open statement: its header is known, its entries are
// read as it is written. Close it when done.
type Statement struct {
	Query            Query
	OrganizationID   uuid.UUID
	OrganizationName string
	Opening, Closing int64
	// CreatedAt is when it was read (the service clock).
	CreatedAt time.Time
	// Parties names the counterparty and reference of rows that name a
	// payment; nil leaves them out.
	Parties Parties

	cursor *ledger.StatementCursor
}

// Open authorizes a, then reads the statement's balances and starts
// reading its rows. Another organization's statement is not found; a key
// without Scope is api_scope_missing.
func (s *Service) Open(ctx context.Context, a actor.Actor, orgID uuid.UUID, q Query) (*Statement, error) {
	r := s.DB.Reader()
	if _, err := organization.Check(ctx, r, a, orgID, organization.Need{Scope: Scope}); err != nil {
		return nil, err
	}
	org, err := organization.Get(ctx, r, orgID)
	if err != nil {
		return nil, err
	}
	return open(ctx, r, orgID, org.Name, q)
}

func open(ctx context.Context, r db.Reader, orgID uuid.UUID, name string, q Query) (*Statement, error) {
	c, err := ledger.OpenStatement(ctx, r, orgID, q.Currency, q.From, q.end())
	if err != nil {
		return nil, err
	}
	return &Statement{Query: q, OrganizationID: orgID, OrganizationName: name, Opening: c.Opening, Closing: c.Closing,
		CreatedAt: r.Now().UTC(), cursor: c}, nil
}

// Read opens the statement of orgID without authorizing anyone: for
// checks over the whole book (tests reconcile every organization's
// statements with the ledger) and benchmarks.
func Read(ctx context.Context, r db.Reader, orgID uuid.UUID, q Query) (*Statement, error) {
	return open(ctx, r, orgID, "", q)
}

// Close releases the statement's rows.
func (st *Statement) Close() error { return st.cursor.Close() }

// ContentType is the media type of the statement's format.
func (st *Statement) ContentType() string { return ContentType(st.Query.Format) }

// ContentType is the media type of format.
func ContentType(format string) string {
	switch format {
	case CSV:
		return "text/csv; charset=utf-8"
	case CAMT053:
		return "application/xml"
	case OFX:
		return "application/x-ofx"
	}
	return "application/json"
}

// Filename is the name the statement's file is offered under:
// statement-EUR-2026-01-01-2026-12-31.csv.
func (st *Statement) Filename() string {
	ext := map[string]string{JSON: "json", CSV: "csv", CAMT053: "xml", OFX: "ofx"}[st.Query.Format]
	return fmt.Sprintf("statement-%s-%s-%s.%s", st.Query.Currency, st.Query.From.Format(time.DateOnly), st.Query.To.Format(time.DateOnly), ext)
}

// batch is how many rows are read before their payments' parties are
// looked up and they are written: what a statement holds in memory.
const batch = 256

// onRow, when set (tests), is called after each row is read from the cursor.
var onRow func()

// encoder writes one format: the header, each entry, the end.
type encoder interface {
	begin(st *Statement) error
	entry(st *Statement, e Entry) error
	end(st *Statement) error
}

// WriteTo writes the statement to w in its format as its rows are read,
// and returns how many entries it wrote. A failure after the first bytes
// leaves w holding a truncated statement: the caller must not present it
// as whole (an HTTP handler aborts the response).
func (st *Statement) WriteTo(ctx context.Context, w io.Writer) (int, error) {
	bw := bufio.NewWriterSize(w, 32<<10)
	var enc encoder
	switch st.Query.Format {
	case CSV:
		enc = newCSV(bw)
	case CAMT053:
		enc = newCAMT(bw)
	case OFX:
		enc = newOFX(bw)
	default:
		enc = newJSON(bw)
	}
	if err := enc.begin(st); err != nil {
		return 0, err
	}
	balance, n := st.Opening, 0
	rows := make([]ledger.Transaction, 0, batch)
	flush := func() error {
		parties, err := st.parties(ctx, rows)
		if err != nil {
			return err
		}
		for _, t := range rows {
			balance += t.Signed() // within int64: every prefix sum is a balance the ledger held
			e := Entry{TransactionID: t.ID, BookedAt: t.RecordedAt, Amount: t.Signed(), BalanceAfter: balance, Type: t.Type,
				Description: t.Description, PaymentID: t.PaymentID}
			if t.PaymentID != nil {
				if p, ok := parties[*t.PaymentID]; ok {
					e.Counterparty, e.Reference = &p.Counterparty, p.Reference
				}
			}
			if err := enc.entry(st, e); err != nil {
				return err
			}
			n++
		}
		rows = rows[:0]
		return nil
	}
	for st.cursor.Next() {
		rows = append(rows, st.cursor.Transaction())
		if onRow != nil {
			onRow()
		}
		if len(rows) == batch {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := st.cursor.Err(); err != nil {
		return n, err
	}
	if err := flush(); err != nil {
		return n, err
	}
	if balance != st.Closing {
		// One snapshot gave the sums and the rows; a difference is a defect.
		return n, fmt.Errorf("statement: entries end at %d but the closing balance is %d", balance, st.Closing)
	}
	if err := enc.end(st); err != nil {
		return n, err
	}
	return n, bw.Flush()
}

func (st *Statement) parties(ctx context.Context, rows []ledger.Transaction) (map[uuid.UUID]Party, error) {
	if st.Parties == nil {
		return nil, nil
	}
	var ids []uuid.UUID
	for _, t := range rows {
		if t.PaymentID != nil && !slices.Contains(ids, *t.PaymentID) {
			ids = append(ids, *t.PaymentID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return st.Parties(ctx, ids)
}

// amount formats minor units of the statement's currency at its precision.
func (st *Statement) amount(minor int64) string {
	return money.Amount{Minor: minor, Currency: st.Query.Currency}.String()
}
