package e2e_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

func init() {
	// The statement's files are checked as strings against the document.
	openapi3filter.RegisterBodyDecoder("application/xml", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/x-ofx", openapi3filter.PlainBodyDecoder)
}

type statementBody struct {
	Currency       string `json:"currency"`
	OpeningBalance string `json:"opening_balance"`
	ClosingBalance string `json:"closing_balance"`
	Entries        []struct {
		TransactionID string  `json:"transaction_id"`
		Amount        string  `json:"amount"`
		BalanceAfter  string  `json:"balance_after"`
		Type          string  `json:"type"`
		Counterparty  *string `json:"counterparty"`
		Reference     *string `json:"reference"`
	} `json:"entries"`
}

func TestStatementsInEveryFormat(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPayer(t, s, "stmt@acme.test", "1000.00")
	deposit(t, s, p.org, "EUR", "50.00")
	pay := p.pay(t, s, "100.00")
	p.approveInApp(t, s, pay.ApprovalRequestId.String())
	today := day(now(t, s))
	path := orgPath(p.org, "/statements?currency=EUR&from="+today+"&to="+today)

	var js statementBody
	r := s.Get(t, path, p.web).ExpectStatus(t, 200)
	r.Decode(t, &js)
	if !strings.HasPrefix(r.Header.Get("Content-Disposition"), "attachment") || js.OpeningBalance != "0.00" || len(js.Entries) != 4 {
		t.Fatalf("json statement: %s %+v", r.Header.Get("Content-Disposition"), js)
	}
	bal, _ := balance(t, s, p.web, p.org, "EUR")
	if js.ClosingBalance != bal || js.Entries[3].BalanceAfter != bal {
		t.Fatalf("closing %s, last balance_after %s, ledger %s", js.ClosingBalance, js.Entries[3].BalanceAfter, bal)
	}
	debit := js.Entries[2]
	if debit.Type != "fiat_outgoing" || debit.Amount != "-100.00" || debit.Counterparty == nil || debit.Reference == nil || *debit.Reference != "Invoice 2026-118" {
		t.Fatalf("payment entry: %+v", debit)
	}

	r = s.Get(t, path+"&format=csv", p.web).ExpectStatus(t, 200)
	records, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
	if err != nil || len(records) != 5 || records[3][0] != debit.TransactionID || records[3][2] != "-100.00" || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("csv: %v %q", err, records)
	}

	r = s.Get(t, path+"&format=camt053", p.web).ExpectStatus(t, 200)
	var camt struct {
		Bal []struct {
			Code string `xml:"Tp>CdOrPrtry>Cd"`
			Amt  string `xml:"Amt"`
		} `xml:"BkToCstmrStmt>Stmt>Bal"`
		Ntry []struct {
			Ind string `xml:"CdtDbtInd"`
		} `xml:"BkToCstmrStmt>Stmt>Ntry"`
	}
	if err := xml.Unmarshal(r.Body, &camt); err != nil || len(camt.Bal) != 2 || camt.Bal[1].Code != "CLBD" || camt.Bal[1].Amt != bal || len(camt.Ntry) != 4 || camt.Ntry[2].Ind != "DBIT" {
		t.Fatalf("camt053: %v %+v", err, camt)
	}

	r = s.Get(t, path+"&format=ofx", p.web).ExpectStatus(t, 200)
	var ofx struct {
		Bal string `xml:"BANKMSGSRSV1>STMTTRNRS>STMTRS>LEDGERBAL>BALAMT"`
	}
	if err := xml.Unmarshal(r.Body, &ofx); err != nil || ofx.Bal != bal || r.Header.Get("Content-Type") != "application/x-ofx" {
		t.Fatalf("ofx: %v %+v", err, ofx)
	}

	// Strict query.
	expectInvalidField(t, s.Get(t, orgPath(p.org, "/statements?currency=EUR&from="+today+"&to=2020-01-01"), p.web), "to")
	expectInvalidField(t, s.Get(t, path+"&format=pdf", p.web), "format")

	// Another organization's statement is not found.
	other := newPerson(t, s, "other@globex.test")
	s.Get(t, path, other.web).ExpectError(t, 404, "not_found")

	// A key needs transactions:read.
	without := createKey(t, s, p.person, p.org, keyOf("Dashboard", "member", "balances:read"))
	s.Get(t, path, without.Secret).ExpectError(t, 403, "api_scope_missing")
	with := createKey(t, s, p.person, p.org, keyOf("Accounting", "member", "transactions:read"))
	var byKey statementBody
	s.Get(t, path, with.Secret).ExpectStatus(t, 200).Decode(t, &byKey)
	if byKey.ClosingBalance != bal {
		t.Fatalf("by key: %+v", byKey)
	}
	// The client helper writes the same statement.
	var buf bytes.Buffer
	f := api.GetStatementParamsFormatJson
	if _, err := s.Client(t, with.Secret).Statement(t.Context(), p.org, &api.GetStatementParams{Currency: "EUR", From: dateOf(t, today), To: dateOf(t, today), Format: &f}, &buf); err != nil {
		t.Fatal(err)
	}
	var viaClient statementBody
	if err := json.Unmarshal(buf.Bytes(), &viaClient); err != nil || viaClient.ClosingBalance != bal || len(viaClient.Entries) != 4 {
		t.Fatalf("client: %v %+v", err, viaClient)
	}
}

// dateOf is a YYYY-MM-DD date as the generated client takes it.
func dateOf(t *testing.T, s string) openapi_types.Date {
	t.Helper()
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatal(err)
	}
	return openapi_types.Date{Time: d}
}
