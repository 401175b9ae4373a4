package statement_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/statement"
)

var start = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// move books a feed row of minor units (signed: in when positive) for org
// in currency at the clock's time, with its entry, as the features do.
func move(t testing.TB, d *db.DB, org uuid.UUID, currency string, minor int64, description string) ledger.Transaction {
	t.Helper()
	ctx := context.Background()
	row, err := db.InTx(ctx, d, func(tx *db.Tx) (ledger.Transaction, error) {
		entry, err := ledger.Post(ctx, tx, ledger.Entry{OrganizationID: &org, Kind: "deposit", Description: description, Postings: []ledger.Posting{
			{Account: ledger.PlatformAccount(org, currency, ledger.World), Amount: -minor},
			{Account: ledger.OrgAccount(org, currency, ledger.Available), Amount: minor},
		}})
		if err != nil {
			return ledger.Transaction{}, err
		}
		typ, dir, amount := "deposit", "in", minor
		if minor < 0 {
			typ, dir, amount = "card_transaction", "out", -minor
		}
		return ledger.Record(ctx, tx, ledger.Transaction{OrganizationID: org, Type: typ, EntryID: &entry, Direction: dir, Amount: amount,
			Currency: currency, Description: description})
	})
	if err != nil {
		t.Fatal(err)
	}
	return row
}

type jsonStatement struct {
	Currency       string      `json:"currency"`
	From           string      `json:"from"`
	To             string      `json:"to"`
	OpeningBalance string      `json:"opening_balance"`
	ClosingBalance string      `json:"closing_balance"`
	Entries        []jsonEntry `json:"entries"`
}

type jsonEntry struct {
	TransactionID string  `json:"transaction_id"`
	BookedAt      string  `json:"booked_at"`
	Amount        string  `json:"amount"`
	BalanceAfter  string  `json:"balance_after"`
	Type          string  `json:"type"`
	Description   string  `json:"description"`
	Counterparty  *string `json:"counterparty"`
	Reference     *string `json:"reference"`
}

// write writes orgID's statement of q and returns the bytes.
func write(t testing.TB, d *db.DB, org uuid.UUID, q statement.Query) []byte {
	t.Helper()
	st, err := statement.Read(context.Background(), d.Reader(), org, q)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var b bytes.Buffer
	if _, err := st.WriteTo(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func readJSON(t testing.TB, d *db.DB, org uuid.UUID, currency, from, to string) jsonStatement {
	t.Helper()
	var s jsonStatement
	raw := write(t, d, org, statement.Query{Currency: currency, From: day(from), To: day(to), Format: statement.JSON})
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	return s
}

// history books rows before, inside and after March 2026 for org in EUR,
// and beside them rows of another currency and of another organization.
func history(t *testing.T, d *db.DB, clk *clock.Manual, org, other uuid.UUID) {
	t.Helper()
	steps := []struct {
		after time.Duration
		minor int64
	}{
		{0, 100000},                  // 2026-01-01: 1000.00
		{20 * 24 * time.Hour, -2500}, // 2026-01-21
		{40 * 24 * time.Hour, 5000},  // 2026-03-02
		{0, -1250},                   // same instant
		{12 * time.Hour, 700},        // 2026-03-02 21:00
		{28 * 24 * time.Hour, -300},  // 2026-03-30 21:00
		{2 * 24 * time.Hour, 99},     // 2026-04-01 21:00, after March
	}
	for i, s := range steps {
		clk.Advance(s.after)
		move(t, d, org, "EUR", s.minor, "row "+string(rune('a'+i)))
		move(t, d, org, "USD", 1000, "dollars")
		move(t, d, other, "EUR", 333, "someone else")
	}
}

func TestOpeningPlusEntriesIsClosing(t *testing.T) {
	fixture.Each(t, start, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		org := fixture.Organization(t, d, "Acme")
		other := fixture.Organization(t, d, "Other")
		history(t, d, clk, org.ID, other.ID)

		march := readJSON(t, d, org.ID, "EUR", "2026-03-01", "2026-03-31")
		if march.OpeningBalance != "975.00" || march.ClosingBalance != "1016.50" || march.Currency != "EUR" || march.From != "2026-03-01" || march.To != "2026-03-31" {
			t.Fatalf("march: %+v", march)
		}
		var got []string
		for _, e := range march.Entries {
			got = append(got, e.Amount+"→"+e.BalanceAfter)
		}
		if want := "50.00→1025.00 -12.50→1012.50 7.00→1019.50 -3.00→1016.50"; strings.Join(got, " ") != want {
			t.Fatalf("march entries %v, want %s", got, want)
		}
		// Rows of one instant are in booking order (their ids), the deposit first.
		if march.Entries[0].Description != "row c" || march.Entries[1].Description != "row d" {
			t.Fatalf("order: %+v", march.Entries)
		}

		// A range from before the first row to after the last: opening 0,
		// closing the ledger's balance.
		all := readJSON(t, d, org.ID, "EUR", "2025-12-31", "2026-12-31")
		bal, err := ledger.AvailableBalance(context.Background(), d.Reader(), org.ID, "EUR")
		if err != nil {
			t.Fatal(err)
		}
		if all.OpeningBalance != "0.00" || all.ClosingBalance != "1017.49" || bal != 101749 || len(all.Entries) != 7 {
			t.Fatalf("whole history: opening %s closing %s (ledger %d), %d entries", all.OpeningBalance, all.ClosingBalance, bal, len(all.Entries))
		}
		// A range without rows: opening = closing = the balance then.
		quiet := readJSON(t, d, org.ID, "EUR", "2026-02-01", "2026-02-28")
		if quiet.OpeningBalance != "975.00" || quiet.ClosingBalance != "975.00" || quiet.Entries == nil || len(quiet.Entries) != 0 {
			t.Fatalf("quiet february: %+v", quiet)
		}
		// A currency never held: zeros.
		none := readJSON(t, d, org.ID, "JPY", "2026-01-01", "2026-12-31")
		if none.OpeningBalance != "0" || none.ClosingBalance != "0" || len(none.Entries) != 0 {
			t.Fatalf("JPY: %+v", none)
		}
	})
}

func TestServiceAuthorizes(t *testing.T) {
	fixture.Each(t, start, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		org, member := fixture.Member(t, d, organization.Member)
		other := fixture.Organization(t, d, "Other")
		move(t, d, org.ID, "EUR", 1000, "in")
		svc := statement.Service{DB: d}
		q := statement.Query{Currency: "EUR", From: day("2026-01-01"), To: day("2026-01-01"), Format: statement.CSV}
		st, err := svc.Open(context.Background(), member, org.ID, q)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		if st.OrganizationName != "Acme" || st.Closing != 1000 || st.Filename() != "statement-EUR-2026-01-01-2026-01-01.csv" {
			t.Fatalf("%+v %s", st, st.Filename())
		}
		if _, err := svc.Open(context.Background(), member, other.ID, q); !apierr.Is(err, apierr.NotFound) {
			t.Fatalf("another organization's statement: %v", err)
		}
	})
}

// recorder is a writer that notes how many rows had been read when the
// first bytes reached it.
type recorder struct {
	rows        *int
	firstAtRows int
	writes      int
	bytes.Buffer
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.writes == 0 {
		r.firstAtRows = *r.rows
	}
	r.writes++
	return r.Buffer.Write(p)
}

func TestStreamsAsRowsAreRead(t *testing.T) {
	fixture.Each(t, start, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		org := fixture.Organization(t, d, "Acme")
		const n = 3000
		ctx := context.Background()
		// Many rows in one transaction: fast to book.
		if err := d.TxRetry(ctx, func(tx *db.Tx) error {
			for i := range n {
				entry, err := ledger.Post(ctx, tx, ledger.Entry{OrganizationID: &org.ID, Kind: "deposit", Description: "d", Postings: []ledger.Posting{
					{Account: ledger.PlatformAccount(org.ID, "EUR", ledger.World), Amount: -int64(i + 1)},
					{Account: ledger.OrgAccount(org.ID, "EUR", ledger.Available), Amount: int64(i + 1)},
				}})
				if err != nil {
					return err
				}
				if _, err := ledger.Record(ctx, tx, ledger.Transaction{OrganizationID: org.ID, Type: "deposit", EntryID: &entry, Direction: "in",
					Amount: int64(i + 1), Currency: "EUR", Description: "Deposit"}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, format := range statement.Formats {
			rows := 0
			defer statement.OnRow(func() { rows++ })()
			w := &recorder{rows: &rows}
			st, err := statement.Read(ctx, d.Reader(), org.ID, statement.Query{Currency: "EUR", From: day("2026-01-01"), To: day("2026-01-01"), Format: format})
			if err != nil {
				t.Fatal(err)
			}
			written, err := st.WriteTo(ctx, w)
			st.Close()
			if err != nil || written != n || rows != n {
				t.Fatalf("%s: wrote %d of %d rows (read %d): %v", format, written, n, rows, err)
			}
			// The first bytes went out long before the last row was read,
			// and the output came in many writes, not one at the end.
			if w.firstAtRows >= n/2 || w.writes < 4 {
				t.Fatalf("%s: first write after %d of %d rows, %d writes", format, w.firstAtRows, n, w.writes)
			}
		}
	})
}

func TestCSVIsTheJSONEntries(t *testing.T) {
	fixture.Each(t, start, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		org := fixture.Organization(t, d, "Acme")
		other := fixture.Organization(t, d, "Other")
		history(t, d, clk, org.ID, other.ID)
		move(t, d, org.ID, "EUR", 1, `Quote " and, comma
and newline`)
		q := statement.Query{Currency: "EUR", From: day("2026-01-01"), To: day("2026-12-31")}
		q.Format = statement.JSON
		var js jsonStatement
		if err := json.Unmarshal(write(t, d, org.ID, q), &js); err != nil {
			t.Fatal(err)
		}
		q.Format = statement.CSV
		raw := write(t, d, org.ID, q)
		if !bytes.Contains(raw, []byte("\r\n")) {
			t.Fatal("CSV lines end with CRLF (RFC 4180)")
		}
		records, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(records[0], ",") != strings.Join(statement.CSVHeader, ",") || len(records) != len(js.Entries)+1 {
			t.Fatalf("header %v, %d records for %d entries", records[0], len(records), len(js.Entries))
		}
		for i, r := range records[1:] {
			e := js.Entries[i]
			want := []string{e.TransactionID, e.BookedAt, e.Amount, e.BalanceAfter, e.Type, e.Description, deref(e.Counterparty), deref(e.Reference)}
			if strings.Join(r, "|") != strings.Join(want, "|") {
				t.Fatalf("row %d: %q, want %q", i, r, want)
			}
		}
	})
}

// A description a spreadsheet would run as a formula is written as text:
// with a leading apostrophe, in the CSV only.
func TestCSVTextIsNeverAFormula(t *testing.T) {
	fixture.Each(t, start, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		org := fixture.Organization(t, d, "Acme")
		formulas := []string{`=HYPERLINK("http://evil.test","pay")`, "+1+1", "-2+3", "@SUM(A1)", "\tindented"}
		move(t, d, org.ID, "EUR", 100, "funds")
		for _, f := range formulas {
			move(t, d, org.ID, "EUR", -1, f)
		}
		q := statement.Query{Currency: "EUR", From: day("2026-01-01"), To: day("2026-01-01"), Format: statement.CSV}
		records, err := csv.NewReader(bytes.NewReader(write(t, d, org.ID, q))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range formulas {
			if r := records[i+2]; r[5] != "'"+f || r[2] != "-0.01" {
				t.Fatalf("row %d: description %q amount %q, want %q and -0.01", i, r[5], r[2], "'"+f)
			}
		}
		q.Format = statement.JSON
		var js jsonStatement
		if err := json.Unmarshal(write(t, d, org.ID, q), &js); err != nil || js.Entries[1].Description != formulas[0] {
			t.Fatalf("JSON keeps the description as it is: %+v, %v", js.Entries, err)
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestOFXIsWellFormedWithTheClosingBalance(t *testing.T) {
	fixture.Each(t, start, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		org := fixture.Organization(t, d, "Acme & Sons <Ltd>")
		other := fixture.Organization(t, d, "Other")
		history(t, d, clk, org.ID, other.ID)
		raw := write(t, d, org.ID, statement.Query{Currency: "EUR", From: day("2026-03-01"), To: day("2026-03-31"), Format: statement.OFX})
		if !bytes.HasPrefix(raw, []byte(`<?xml version="1.0" encoding="UTF-8" standalone="no"?>`+"\n"+`<?OFX OFXHEADER="200" VERSION="220"`)) {
			t.Fatalf("OFX header:\n%s", raw)
		}
		var doc struct {
			XMLName xml.Name `xml:"OFX"`
			Stmt    struct {
				Curdef string `xml:"CURDEF"`
				Acct   struct {
					BankID string `xml:"BANKID"`
					AcctID string `xml:"ACCTID"`
				} `xml:"BANKACCTFROM"`
				List struct {
					Start string `xml:"DTSTART"`
					End   string `xml:"DTEND"`
					Trns  []struct {
						Type   string `xml:"TRNTYPE"`
						Posted string `xml:"DTPOSTED"`
						Amount string `xml:"TRNAMT"`
						FITID  string `xml:"FITID"`
						Memo   string `xml:"MEMO"`
					} `xml:"STMTTRN"`
				} `xml:"BANKTRANLIST"`
				Ledger struct {
					Amount string `xml:"BALAMT"`
					AsOf   string `xml:"DTASOF"`
				} `xml:"LEDGERBAL"`
			} `xml:"BANKMSGSRSV1>STMTTRNRS>STMTRS"`
		}
		if err := wellFormed(raw); err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, raw)
		}
		if err := xml.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		s := doc.Stmt
		if s.Curdef != "EUR" || s.Ledger.Amount != "1016.50" || s.Ledger.AsOf != "20260401000000.000[0:GMT]" || s.List.Start != "20260301000000.000[0:GMT]" ||
			len(s.List.Trns) != 4 || len(s.Acct.AcctID) != 22 || s.Acct.BankID != statement.OFXBankID {
			t.Fatalf("OFX statement: %+v", s)
		}
		if tr := s.List.Trns[1]; tr.Type != "POS" || tr.Amount != "-12.50" || tr.Memo != "row d" || tr.Posted != "20260302090000.000[0:GMT]" {
			t.Fatalf("second transaction: %+v", tr)
		}
	})
}

// wellFormed reads every token of an XML document.
func wellFormed(raw []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(raw))
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// xmllint finds xmllint: absent, the schema tests skip, except in CI
// (CI=true), where they fail.
func xmllint(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("xmllint is needed to validate camt.053 against its schema (Debian package libxml2-utils)")
		}
		t.Skip("xmllint not installed (Debian package libxml2-utils)")
	}
	return path
}

// validate checks doc against the ISO 20022 schema of camt.053.001.08 in testdata.
func validate(t *testing.T, lint string, doc []byte) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "statement.xml")
	if err := os.WriteFile(file, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(lint, "--noout", "--nonet", "--schema", filepath.Join("testdata", "camt.053.001.08.xsd"), file).CombinedOutput()
	if err != nil {
		t.Fatalf("camt.053 does not validate against the ISO 20022 schema: %v\n%s\n%s", err, out, doc)
	}
}

func TestCAMT053ValidatesAgainstTheISO20022Schema(t *testing.T) {
	lint := xmllint(t)
	fixture.Each(t, start, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		org := fixture.Organization(t, d, strings.Repeat("Very long name & <angle> ", 10))
		other := fixture.Organization(t, d, "Other")
		history(t, d, clk, org.ID, other.ID)
		move(t, d, org.ID, "EUR", -1, strings.Repeat("long description ", 60))
		for _, r := range [][2]string{{"2026-03-01", "2026-03-31"}, {"2026-02-01", "2026-02-28"}, {"2025-12-31", "2026-12-31"}} {
			raw := write(t, d, org.ID, statement.Query{Currency: "EUR", From: day(r[0]), To: day(r[1]), Format: statement.CAMT053})
			validate(t, lint, raw)
		}
		raw := write(t, d, org.ID, statement.Query{Currency: "EUR", From: day("2026-03-01"), To: day("2026-03-31"), Format: statement.CAMT053})
		var doc struct {
			Stmt struct {
				Bal []struct {
					Code string `xml:"Tp>CdOrPrtry>Cd"`
					Amt  string `xml:"Amt"`
					Ind  string `xml:"CdtDbtInd"`
					Day  string `xml:"Dt>Dt"`
				} `xml:"Bal"`
				Ntry []struct {
					Amt  string `xml:"Amt"`
					Ind  string `xml:"CdtDbtInd"`
					Book string `xml:"BookgDt>DtTm"`
				} `xml:"Ntry"`
			} `xml:"BkToCstmrStmt>Stmt"`
		}
		if err := xml.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		b := doc.Stmt.Bal
		if len(b) != 2 || b[0].Code != "OPBD" || b[0].Amt != "975.00" || b[0].Day != "2026-03-01" || b[1].Code != "CLBD" || b[1].Amt != "1016.50" || b[1].Ind != "CRDT" {
			t.Fatalf("balances: %+v", b)
		}
		if n := doc.Stmt.Ntry; len(n) != 4 || n[1].Amt != "12.50" || n[1].Ind != "DBIT" || n[0].Ind != "CRDT" || n[0].Book != "2026-03-02T09:00:00Z" {
			t.Fatalf("entries: %+v", n)
		}
	})
}

// TestRandomHistoriesReconcile books random movements at random times and
// checks random ranges: opening is the sum of the rows before the range,
// each balance_after the running sum, closing opening plus the entries.
func TestRandomHistoriesReconcile(t *testing.T) {
	fixture.Each(t, start, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		org := fixture.Organization(t, d, "Acme")
		rng := rand.New(rand.NewPCG(1, 2))
		type row struct {
			at    time.Time
			minor int64
		}
		var rows []row
		var balance int64
		for range 120 {
			clk.Advance(time.Duration(rng.IntN(72)) * time.Hour)
			minor := rng.Int64N(100000) + 1
			if balance > 0 && rng.IntN(2) == 0 {
				minor = -(rng.Int64N(balance) + 1)
			}
			balance += minor
			move(t, d, org.ID, "EUR", minor, "random")
			rows = append(rows, row{clk.Now(), minor})
		}
		last := rows[len(rows)-1].at
		for range 25 {
			from := start.AddDate(0, 0, rng.IntN(int(last.Sub(start).Hours()/24)+2)-1).Truncate(24 * time.Hour)
			to := from.AddDate(0, 0, rng.IntN(366))
			var opening, closing int64
			var inside []int64
			for _, r := range rows {
				switch {
				case r.at.Before(from):
					opening += r.minor
				case r.at.Before(to.AddDate(0, 0, 1)):
					inside = append(inside, r.minor)
				}
			}
			closing = opening
			for _, m := range inside {
				closing += m
			}
			st, err := statement.Read(context.Background(), d.Reader(), org.ID, statement.Query{Currency: "EUR", From: from, To: to, Format: statement.JSON})
			if err != nil {
				t.Fatal(err)
			}
			var out jsonStatement
			var b bytes.Buffer
			if _, err := st.WriteTo(context.Background(), &b); err != nil {
				t.Fatal(err)
			}
			st.Close()
			if err := json.Unmarshal(b.Bytes(), &out); err != nil {
				t.Fatal(err)
			}
			if st.Opening != opening || st.Closing != closing || len(out.Entries) != len(inside) {
				t.Fatalf("%s..%s: opening %d closing %d entries %d, want %d %d %d", from, to, st.Opening, st.Closing, len(out.Entries), opening, closing, len(inside))
			}
			if len(inside) > 0 && out.Entries[len(inside)-1].BalanceAfter != out.ClosingBalance {
				t.Fatalf("last balance_after %s, closing %s", out.Entries[len(inside)-1].BalanceAfter, out.ClosingBalance)
			}
		}
	})
}

func TestParseQuery(t *testing.T) {
	for _, c := range []struct {
		query  string
		fields string // the invalid fields, "" when valid
	}{
		{"currency=EUR&from=2026-01-01&to=2026-12-31", ""},
		{"currency=EUR&from=2024-01-01&to=2024-12-31&format=csv", ""}, // 366 days of a leap year
		{"currency=USDC&from=2026-01-01&to=2026-01-31&format=csv", ""},
		{"currency=JPY&from=2026-01-01&to=2026-01-01&format=camt053", ""},
		{"currency=EUR&from=2026-01-01&to=2027-01-02", "to"}, // 367 days
		{"currency=EUR&from=2026-01-02&to=2026-01-01", "to"},
		{"currency=EUR&from=2026-13-01&to=2026-12-31", "from"},
		{"currency=EUR&from=2026-01-01", "to"},
		{"from=2026-01-01&to=2026-01-02", "currency"},
		{"currency=eur&from=2026-01-01&to=2026-01-02", "currency"},
		{"currency=XXX&from=2026-01-01&to=2026-01-02", "currency"},
		{"currency=EUR&from=2026-01-01&to=2026-01-02&format=pdf", "format"},
		{"currency=USDC&from=2026-01-01&to=2026-01-02&format=ofx", "format"},
		{"currency=EUR&from=2026-01-01&to=2026-01-02&limit=5", "limit"},
		{"currency=EUR&currency=USD&from=2026-01-01&to=2026-01-02", "currency"},
	} {
		v, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		_, err = statement.ParseQuery(v)
		var fields []string
		if e, ok := apierr.As(err); ok {
			if e.Type != apierr.InvalidRequest {
				t.Fatalf("%s: %v", c.query, err)
			}
			for _, f := range e.Details.([]apierr.FieldError) {
				fields = append(fields, f.Field)
			}
		} else if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if strings.Join(fields, ",") != c.fields {
			t.Errorf("%s: invalid %v, want %q", c.query, fields, c.fields)
		}
	}
}
