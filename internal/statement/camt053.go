package statement

import (
	"bufio"
	"encoding/xml"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// CAMT053Namespace is the namespace of ISO 20022 camt.053.001.08
// (BankToCustomerStatementV08).
const CAMT053Namespace = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"

// issuer names Strongroom where camt.053 asks who issued a proprietary
// code or identifier.
const issuer = "Strongroom"

// camtEncoder writes a camt.053.001.08 Document: a group header, one
// statement of the account with its opening (OPBD) and closing (CLBD)
// booked balances, then one Ntry per entry, each written as it comes.
type camtEncoder struct {
	w   *bufio.Writer
	enc *xml.Encoder
}

func newCAMT(w *bufio.Writer) *camtEncoder { return &camtEncoder{w: w, enc: xml.NewEncoder(w)} }

// The elements below follow the schema's sequences in order; optional
// elements are pointers or omitempty.

type camtAmount struct {
	Ccy   string `xml:"Ccy,attr"`
	Value string `xml:",chardata"`
}

type camtCode struct {
	Cd string `xml:"Cd"`
}

type camtDate struct {
	Dt   string `xml:"Dt,omitempty"`
	DtTm string `xml:"DtTm,omitempty"`
}

type camtBalance struct {
	XMLName   xml.Name   `xml:"Bal"`
	Tp        camtBalTp  `xml:"Tp"`
	Amt       camtAmount `xml:"Amt"`
	CdtDbtInd string     `xml:"CdtDbtInd"`
	Dt        camtDate   `xml:"Dt"`
}

type camtBalTp struct {
	CdOrPrtry camtCode `xml:"CdOrPrtry"`
}

type camtHeader struct {
	XMLName xml.Name `xml:"GrpHdr"`
	MsgID   string   `xml:"MsgId"`
	CreDtTm string   `xml:"CreDtTm"`
}

type camtAccount struct {
	XMLName xml.Name `xml:"Acct"`
	ID      struct {
		Othr struct {
			ID      string `xml:"Id"`
			SchmeNm struct {
				Prtry string `xml:"Prtry"`
			} `xml:"SchmeNm"`
			Issr string `xml:"Issr"`
		} `xml:"Othr"`
	} `xml:"Id"`
	Ccy string `xml:"Ccy"`
	Nm  string `xml:"Nm,omitempty"`
}

// compactID is a UUID as 32 hexadecimal digits: identifiers of camt.053
// hold at most 35 characters.
func compactID(id uuid.UUID) string { return strings.ReplaceAll(id.String(), "-", "") }

// text cuts s to at most n characters, as the schema's MaxNText types ask.
func text(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// creditDebit is a signed amount as camt.053 shows it: positive, with CRDT
// or DBIT.
func (st *Statement) creditDebit(minor int64) (camtAmount, string) {
	if minor < 0 {
		return camtAmount{Ccy: st.Query.Currency, Value: st.amount(-minor)}, "DBIT"
	}
	return camtAmount{Ccy: st.Query.Currency, Value: st.amount(minor)}, "CRDT"
}

func (c *camtEncoder) start(name string, attrs ...xml.Attr) error {
	return c.enc.EncodeToken(xml.StartElement{Name: xml.Name{Local: name}, Attr: attrs})
}

func (c *camtEncoder) begin(st *Statement) error {
	if _, err := c.w.WriteString(xml.Header); err != nil {
		return err
	}
	if err := c.start("Document", xml.Attr{Name: xml.Name{Local: "xmlns"}, Value: CAMT053Namespace}); err != nil {
		return err
	}
	if err := c.start("BkToCstmrStmt"); err != nil {
		return err
	}
	created := st.CreatedAt.Format(time.RFC3339)
	if err := c.enc.EncodeElement(camtHeader{MsgID: "SR" + compactID(uuid.Must(uuid.NewV7())), CreDtTm: created}, xml.StartElement{Name: xml.Name{Local: "GrpHdr"}}); err != nil {
		return err
	}
	if err := c.start("Stmt"); err != nil {
		return err
	}
	from, to := st.Query.From.Format(time.DateOnly), st.Query.To.Format(time.DateOnly)
	id := st.Query.Currency + "-" + strings.ReplaceAll(from, "-", "") + "-" + strings.ReplaceAll(to, "-", "")
	simple := []struct{ name, value string }{{"Id", id}, {"CreDtTm", created}}
	for _, e := range simple {
		if err := c.enc.EncodeElement(e.value, xml.StartElement{Name: xml.Name{Local: e.name}}); err != nil {
			return err
		}
	}
	period := struct {
		FrDtTm string `xml:"FrDtTm"`
		ToDtTm string `xml:"ToDtTm"`
	}{st.Query.From.Format(time.RFC3339), st.Query.end().Add(-time.Second).Format(time.RFC3339)}
	if err := c.enc.EncodeElement(period, xml.StartElement{Name: xml.Name{Local: "FrToDt"}}); err != nil {
		return err
	}
	var acct camtAccount
	acct.ID.Othr.ID = compactID(st.OrganizationID)
	acct.ID.Othr.SchmeNm.Prtry = "ORGANIZATION"
	acct.ID.Othr.Issr = issuer
	acct.Ccy = st.Query.Currency
	acct.Nm = text(st.OrganizationName, 70)
	if err := c.enc.Encode(acct); err != nil {
		return err
	}
	for _, b := range []struct {
		code  string
		minor int64
		day   string
	}{{"OPBD", st.Opening, from}, {"CLBD", st.Closing, to}} {
		amt, ind := st.creditDebit(b.minor)
		if err := c.enc.Encode(camtBalance{Tp: camtBalTp{CdOrPrtry: camtCode{Cd: b.code}}, Amt: amt, CdtDbtInd: ind, Dt: camtDate{Dt: b.day}}); err != nil {
			return err
		}
	}
	return nil
}

// entry writes one Ntry by hand, element by element in the schema's
// order: the entries are the bulk of a statement, and writing them
// without reflection is several times cheaper than encoding a struct.
func (c *camtEncoder) entry(st *Statement, e Entry) error {
	x := xmlWriter{c.w}
	ref := compactID(e.TransactionID)
	amt, ind := st.creditDebit(e.Amount)
	x.open("Ntry")
	x.text("NtryRef", ref)
	x.raw(`<Amt Ccy="` + amt.Ccy + `">` + amt.Value + `</Amt>`)
	x.text("CdtDbtInd", ind)
	if e.Type == "reversal" {
		x.text("RvslInd", "true")
	}
	x.raw("<Sts><Cd>BOOK</Cd></Sts><BookgDt>")
	x.text("DtTm", e.BookedAt.Format(time.RFC3339Nano))
	x.raw("</BookgDt><ValDt>")
	x.text("Dt", e.BookedAt.Format(time.DateOnly))
	x.raw("</ValDt>")
	x.text("AcctSvcrRef", ref)
	x.raw("<BkTxCd><Prtry>")
	x.text("Cd", text(e.Type, 35))
	x.raw("<Issr>" + issuer + "</Issr></Prtry></BkTxCd>")
	counterparty := e.Counterparty != nil && *e.Counterparty != ""
	reference := e.Reference != nil && *e.Reference != ""
	if counterparty || reference {
		x.raw("<NtryDtls><TxDtls><Refs>")
		x.text("AcctSvcrRef", ref)
		x.raw("</Refs>")
		if counterparty {
			// Money out went to the counterparty (the creditor); money
			// back (a reversal) came from the payment to them.
			role := "Cdtr"
			if ind == "CRDT" {
				role = "Dbtr"
			}
			x.raw("<RltdPties><" + role + "><Pty>")
			x.text("Nm", text(*e.Counterparty, 140))
			x.raw("</Pty></" + role + "></RltdPties>")
		}
		if reference {
			x.raw("<RmtInf>")
			x.text("Ustrd", text(*e.Reference, 140))
			x.raw("</RmtInf>")
		}
		x.raw("</TxDtls></NtryDtls>")
	}
	info := text(e.Description, 500)
	if info == "" {
		info = e.Type
	}
	x.text("AddtlNtryInf", info)
	x.close("Ntry")
	return x.err()
}

func (c *camtEncoder) end(*Statement) error {
	for _, name := range []string{"Stmt", "BkToCstmrStmt", "Document"} {
		if err := c.enc.EncodeToken(xml.EndElement{Name: xml.Name{Local: name}}); err != nil {
			return err
		}
	}
	if err := c.enc.Flush(); err != nil {
		return err
	}
	_, err := c.w.WriteString("\n")
	return err
}
