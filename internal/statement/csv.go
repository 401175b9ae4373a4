package statement

import (
	"bufio"
	"encoding/csv"
	"strings"
	"time"
)

// CSVHeader is the header row of a CSV statement: the columns of a JSON
// statement's entries.
var CSVHeader = []string{"transaction_id", "booked_at", "amount", "balance_after", "type", "description", "counterparty", "reference"}

// csvEncoder writes RFC 4180 CSV (CRLF line ends): the header row, then
// one row per entry. An absent counterparty or reference is an empty field.
// The text columns (description, counterparty, reference) come from people
// outside the organization (a payee's name, an invoice's reference), and a
// spreadsheet opening the file would run one starting with = + - @ as a
// formula: such a value gets a leading apostrophe, which spreadsheets show
// as text. Amounts are never quoted so, and keep their minus sign.
type csvEncoder struct {
	w   *csv.Writer
	buf *bufio.Writer
}

func newCSV(w *bufio.Writer) *csvEncoder {
	c := csv.NewWriter(w)
	c.UseCRLF = true
	return &csvEncoder{w: c, buf: w}
}

func (c *csvEncoder) begin(*Statement) error { return c.w.Write(CSVHeader) }

func (c *csvEncoder) entry(st *Statement, e Entry) error {
	r := st.record(e)
	return c.w.Write([]string{r.TransactionID.String(), r.BookedAt.Format(time.RFC3339Nano), r.Amount, r.BalanceAfter, r.Type,
		asText(r.Description), asText(deref(r.Counterparty)), asText(deref(r.Reference))})
}

// asText keeps a spreadsheet from reading s as a formula.
func asText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func (c *csvEncoder) end(*Statement) error {
	c.w.Flush()
	return c.w.Error()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
