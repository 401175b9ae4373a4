package statement

import (
	"bufio"
	"encoding/base64"
	"encoding/xml"
	"time"
)

// ofxHeader opens an OFX 2.2 file: the XML declaration and the OFX
// processing instruction that names the version.
const ofxHeader = `<?xml version="1.0" encoding="UTF-8" standalone="no"?>` + "\n" +
	`<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE" OLDFILEUID="NONE" NEWFILEUID="NONE"?>` + "\n"

// OFXBankID is the BANKID of the account in an OFX statement (at most 9 characters).
const OFXBankID = "STRONGRM"

// ofxEncoder writes an OFX 2.2 bank statement response (STMTRS): the
// account, a BANKTRANLIST with one STMTTRN per entry, and the closing
// balance as LEDGERBAL.
type ofxEncoder struct {
	w   *bufio.Writer
	enc *xml.Encoder
}

func newOFX(w *bufio.Writer) *ofxEncoder { return &ofxEncoder{w: w, enc: xml.NewEncoder(w)} }

// ofxTime formats an instant as OFX does: YYYYMMDDHHMMSS.XXX[0:GMT].
func ofxTime(t time.Time) string { return t.UTC().Format("20060102150405.000") + "[0:GMT]" }

// OFXAccountID is the ACCTID of an organization's account: its id in
// base64url, 22 characters (OFX allows at most 22).
func OFXAccountID(st *Statement) string {
	return base64.RawURLEncoding.EncodeToString(st.OrganizationID[:])
}

type ofxStatus struct {
	Code     int    `xml:"CODE"`
	Severity string `xml:"SEVERITY"`
}

// ofxType is the OFX TRNTYPE of an entry.
func ofxType(e Entry) string {
	switch {
	case e.Type == "fee":
		return "FEE"
	case e.Type == "deposit":
		return "DEP"
	case e.Type == "card_transaction":
		return "POS"
	case e.Amount < 0:
		return "DEBIT"
	}
	return "CREDIT"
}

func (o *ofxEncoder) open(names ...string) error {
	for _, n := range names {
		if err := o.enc.EncodeToken(xml.StartElement{Name: xml.Name{Local: n}}); err != nil {
			return err
		}
	}
	return nil
}

func (o *ofxEncoder) close(names ...string) error {
	for _, n := range names {
		if err := o.enc.EncodeToken(xml.EndElement{Name: xml.Name{Local: n}}); err != nil {
			return err
		}
	}
	return nil
}

func (o *ofxEncoder) element(name string, v any) error {
	return o.enc.EncodeElement(v, xml.StartElement{Name: xml.Name{Local: name}})
}

func (o *ofxEncoder) begin(st *Statement) error {
	if _, err := o.w.WriteString(ofxHeader); err != nil {
		return err
	}
	ok := ofxStatus{Code: 0, Severity: "INFO"}
	signOn := struct {
		Status   ofxStatus `xml:"STATUS"`
		DtServer string    `xml:"DTSERVER"`
		Language string    `xml:"LANGUAGE"`
	}{ok, ofxTime(st.CreatedAt), "ENG"}
	account := struct {
		BankID   string `xml:"BANKID"`
		AcctID   string `xml:"ACCTID"`
		AcctType string `xml:"ACCTTYPE"`
	}{OFXBankID, OFXAccountID(st), "CHECKING"}
	steps := []func() error{
		func() error { return o.open("OFX", "SIGNONMSGSRSV1") },
		func() error { return o.element("SONRS", signOn) },
		func() error { return o.close("SIGNONMSGSRSV1") },
		func() error { return o.open("BANKMSGSRSV1", "STMTTRNRS") },
		func() error { return o.element("TRNUID", compactID(st.OrganizationID)) },
		func() error { return o.element("STATUS", ok) },
		func() error { return o.open("STMTRS") },
		func() error { return o.element("CURDEF", st.Query.Currency) },
		func() error { return o.element("BANKACCTFROM", account) },
		func() error { return o.open("BANKTRANLIST") },
		func() error { return o.element("DTSTART", ofxTime(st.Query.From)) },
		func() error { return o.element("DTEND", ofxTime(st.Query.end())) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// entry writes one STMTTRN by hand (see camtEncoder.entry).
func (o *ofxEncoder) entry(st *Statement, e Entry) error {
	x := xmlWriter{o.w}
	x.open("STMTTRN")
	x.text("TRNTYPE", ofxType(e))
	x.text("DTPOSTED", ofxTime(e.BookedAt))
	x.text("TRNAMT", st.amount(e.Amount))
	x.text("FITID", e.TransactionID.String())
	if e.Counterparty != nil && *e.Counterparty != "" {
		x.text("NAME", text(*e.Counterparty, 32))
	}
	if e.Description != "" {
		x.text("MEMO", text(e.Description, 255))
	}
	x.close("STMTTRN")
	return x.err()
}

func (o *ofxEncoder) end(st *Statement) error {
	ledger := struct {
		BalAmt string `xml:"BALAMT"`
		DtAsOf string `xml:"DTASOF"`
	}{st.amount(st.Closing), ofxTime(st.Query.end())}
	if err := o.close("BANKTRANLIST"); err != nil {
		return err
	}
	if err := o.element("LEDGERBAL", ledger); err != nil {
		return err
	}
	if err := o.close("STMTRS", "STMTTRNRS", "BANKMSGSRSV1", "OFX"); err != nil {
		return err
	}
	if err := o.enc.Flush(); err != nil {
		return err
	}
	_, err := o.w.WriteString("\n")
	return err
}
