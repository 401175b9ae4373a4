package e2e_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

func execute(t *testing.T, s *apitest.Server, token string, body map[string]any, key string) *apitest.Response {
	t.Helper()
	req := apitest.Request{Method: "POST", Path: "/api/v1/payments/execute", Bearer: token, Body: body}
	if key != "" {
		req.Header = map[string]string{"Idempotency-Key": key}
	}
	return s.Do(t, req)
}

func paymentBillID(t *testing.T, r *apitest.Response) string {
	t.Helper()
	var p api.Payment
	r.Decode(t, &p)
	return str(p.BillId)
}

// TestPayBillLifecycle pays a bill: execute with bill_id moves it to
// payment_requested with the approval and payment; rejection, cancellation
// and a failed settlement each return it to extracted with both cleared; a
// completed payment keeps it payment_requested.
func TestPayBillLifecycle(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "10000.00")
	b := payableBill(t, s, p, "1234.56")

	// Rejected.
	q := billQuote(t, s, p, b.PaymentContactId.String(), "1234.56")
	r := s.Post(t, "/api/v1/payments/execute", p.web, billExecuteBody(q.Id.String(), b.Id.String())).ExpectStatus(t, 201)
	var pay api.Payment
	r.Decode(t, &pay)
	if paymentBillID(t, r) != b.Id.String() || pay.Status != "awaiting_approval" || pay.Delivered != moneyOf("1234.56", "EUR") {
		t.Fatalf("payment of the bill = %+v (%s)", pay, r.Body)
	}
	expectRequested(t, s, p.web, b.Id.String(), pay)
	s.Post(t, "/api/v1/approvals/"+pay.ApprovalRequestId.String()+"/reject", p.web, map[string]any{"reason": "Wrong amount"}).ExpectStatus(t, 200)
	expectReleased(t, s, p.web, b.Id.String())

	// Cancelled by its initiator.
	pay = payBill(t, s, p, b)
	expectRequested(t, s, p.web, b.Id.String(), pay)
	s.Post(t, "/api/v1/payments/"+pay.Id.String()+"/cancel", p.web, nil).ExpectStatus(t, 200)
	expectReleased(t, s, p.web, b.Id.String())

	// Approved, then failed by the rail.
	pay = payBill(t, s, p, b)
	p.approveInApp(t, s, pay.ApprovalRequestId.String())
	expectRequested(t, s, p.web, b.Id.String(), pay)
	s.Post(t, "/api/v1/sandbox/payments/"+pay.Id.String()+"/settle", sbx, map[string]any{"outcome": "failed"}).ExpectStatus(t, 200)
	expectReleased(t, s, p.web, b.Id.String())

	// Approved and completed: the bill stays payment_requested.
	pay = payBill(t, s, p, b)
	p.approveInApp(t, s, pay.ApprovalRequestId.String())
	s.Post(t, "/api/v1/sandbox/payments/"+pay.Id.String()+"/settle", sbx, map[string]any{"outcome": "completed"}).ExpectStatus(t, 200)
	expectRequested(t, s, p.web, b.Id.String(), pay)
	// Paid once: no second payment for it.
	q = billQuote(t, s, p, b.PaymentContactId.String(), "1234.56")
	s.Post(t, "/api/v1/payments/execute", p.web, billExecuteBody(q.Id.String(), b.Id.String())).ExpectError(t, 422, "bill_mismatch")
	debited := mustAtoi(t, strings.ReplaceAll(getPayment(t, s, p.web, pay.Id.String()).Debited.Amount, ".", ""))
	if av, _ := balance(t, s, p.web, p.org, "EUR"); av != fmtMinor(1_000_000-debited) {
		t.Fatalf("available %s, want %s (10000.00 less the one completed payment with its fee)", av, fmtMinor(1_000_000-debited))
	}
}

// TestPayBillMismatch: execute with bill_id refuses, with 422 bill_mismatch
// and nothing created, a bill that is not extracted, and a quote that does
// not pay the bill's contact exactly its amount in its currency.
func TestPayBillMismatch(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "10000.00")
	exec := func(q api.Quote, billID string) *apitest.Response {
		return s.Post(t, "/api/v1/payments/execute", p.web, billExecuteBody(q.Id.String(), billID))
	}
	b := payableBill(t, s, p, "100.00")
	contact := b.PaymentContactId.String()

	// Another contact than the bill's (p.contact has the same name and IBAN).
	other := billQuote(t, s, p, p.contact, "100.00")
	exec(other, b.Id.String()).ExpectError(t, 422, "bill_mismatch")
	// Another amount, either way.
	exec(billQuote(t, s, p, contact, "99.99"), b.Id.String()).ExpectError(t, 422, "bill_mismatch")
	exec(billQuote(t, s, p, contact, "100.01"), b.Id.String()).ExpectError(t, 422, "bill_mismatch")
	// What counts is the amount delivered, whichever side was quoted.
	var sent api.Quote
	s.Post(t, "/api/v1/payments/preflight", p.web, map[string]any{"organization_id": p.org, "rail": "fiat", "payment_contact_id": contact,
		"source_currency": "EUR", "amount": "100.00", "amount_side": "send"}).ExpectStatus(t, 201).Decode(t, &sent)
	if sent.Destination != moneyOf("100.00", "EUR") {
		t.Fatalf("send quote delivers %+v", sent.Destination)
	}
	// Another currency: the bill now says USD 100.00, its contact receives EUR.
	patchBillOK(t, s, p.web, b.Id.String(), map[string]any{"currency": "USD"})
	exec(billQuote(t, s, p, contact, "100.00"), b.Id.String()).ExpectError(t, 422, "bill_mismatch")
	patchBillOK(t, s, p.web, b.Id.String(), map[string]any{"currency": "EUR"})
	// No amount.
	patchBillOK(t, s, p.web, b.Id.String(), map[string]any{"amount": nil})
	exec(billQuote(t, s, p, contact, "100.00"), b.Id.String()).ExpectError(t, 422, "bill_mismatch")
	patchBillOK(t, s, p.web, b.Id.String(), map[string]any{"amount": "100.00"})
	// No payment contact.
	patchBillOK(t, s, p.web, b.Id.String(), map[string]any{"payment_contact_id": nil})
	exec(billQuote(t, s, p, contact, "100.00"), b.Id.String()).ExpectError(t, 422, "bill_mismatch")
	patchBillOK(t, s, p.web, b.Id.String(), map[string]any{"payment_contact_id": contact})
	// Cancelled.
	gone := payableBill(t, s, p, "100.00")
	s.Post(t, billPath(gone.Id.String(), "cancel"), p.web, nil).ExpectStatus(t, 200)
	exec(billQuote(t, s, p, gone.PaymentContactId.String(), "100.00"), gone.Id.String()).ExpectError(t, 422, "bill_mismatch")

	// Nothing was created by the refusals: no approval, and the quotes are unused.
	var approvals api.ApprovalPage
	s.Get(t, "/api/v1/organizations/"+p.org+"/approvals", p.web).ExpectStatus(t, 200).Decode(t, &approvals)
	if len(approvals.Data) != 0 {
		t.Fatalf("%d approvals after refusals", len(approvals.Data))
	}
	if got := getBill(t, s, p.web, b.Id.String()); got.Status != "extracted" || got.FiatOutgoingId != nil {
		t.Fatalf("bill after refusals = %+v", got)
	}
	s.Post(t, "/api/v1/payments/execute", p.web, executeBody(other.Id.String())).ExpectStatus(t, 201)
	// The matching quote pays it.
	var pay api.Payment
	exec(sent, b.Id.String()).ExpectStatus(t, 201).Decode(t, &pay)
	expectRequested(t, s, p.web, b.Id.String(), pay)
	// A payment is already requested for it.
	exec(billQuote(t, s, p, contact, "100.00"), b.Id.String()).ExpectError(t, 422, "bill_mismatch")
	// Unknown bills are not found; batches do not take bills.
	exec(billQuote(t, s, p, contact, "100.00"), "0190f5d0-0000-7000-8000-000000000000").ExpectError(t, 404, "not_found")
	expectInvalidField(t, s.Post(t, "/api/v1/payments/execute", p.web, billExecuteBody(billQuote(t, s, p, contact, "1.00").Id.String(), "nope")), "bill_id")
	expectInvalidField(t, s.Post(t, "/api/v1/payment-batches", p.web, map[string]any{"organization_id": p.org,
		"payments": []any{billExecuteBody(billQuote(t, s, p, contact, "100.00").Id.String(), b.Id.String())}}), "payments[0].bill_id")
}

// TestPayBillIdempotency: the Idempotency-Key is scoped to the bill.
func TestPayBillIdempotency(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "10000.00")
	b1, b2 := payableBill(t, s, p, "10.00"), payableBill(t, s, p, "10.00")
	q1, q2 := billQuote(t, s, p, b1.PaymentContactId.String(), "10.00"), billQuote(t, s, p, b2.PaymentContactId.String(), "10.00")
	// The same key on two bills makes two payments.
	first := execute(t, s, p.web, billExecuteBody(q1.Id.String(), b1.Id.String()), "invoice-42").ExpectStatus(t, 201)
	second := execute(t, s, p.web, billExecuteBody(q2.Id.String(), b2.Id.String()), "invoice-42").ExpectStatus(t, 201)
	var pay1, pay2 api.Payment
	first.Decode(t, &pay1)
	second.Decode(t, &pay2)
	if pay1.Id == pay2.Id || second.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("same key on two bills: %s and %s (replayed %q)", pay1.Id.String(), pay2.Id.String(), second.Header.Get("Idempotent-Replayed"))
	}
	expectRequested(t, s, p.web, b1.Id.String(), pay1)
	expectRequested(t, s, p.web, b2.Id.String(), pay2)
	// The same key and body on one bill replays the first answer.
	again := execute(t, s, p.web, billExecuteBody(q1.Id.String(), b1.Id.String()), "invoice-42").ExpectStatus(t, 201)
	if string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay differs:\n%s\n%s", first.Body, again.Body)
	}
	// The same key with another body on that bill is refused.
	other := billExecuteBody(q1.Id.String(), b1.Id.String())
	other["statement_description"] = "Another text"
	execute(t, s, p.web, other, "invoice-42").ExpectError(t, 422, "idempotency_key_reused")
	// An unknown bill is not found, even with a key already used.
	execute(t, s, p.web, billExecuteBody(q1.Id.String(), "0190f5d0-0000-7000-8000-000000000000"), "invoice-42").ExpectError(t, 404, "not_found")
	// The key on the organization's scope (no bill) is another key.
	execute(t, s, p.web, executeBody(billQuote(t, s, p, p.contact, "5.00").Id.String()), "invoice-42").ExpectStatus(t, 201)
	var approvals api.ApprovalPage
	s.Get(t, "/api/v1/organizations/"+p.org+"/approvals", p.web).ExpectStatus(t, 200).Decode(t, &approvals)
	if len(approvals.Data) != 3 {
		t.Fatalf("%d payments, want 3", len(approvals.Data))
	}
}

// TestPayBillConcurrently: of two executes for one bill at once, with two
// quotes, exactly one requests a payment.
func TestPayBillConcurrently(t *testing.T) {
	s := apitest.Start(t, "STRONGROOM_RATE_LIMIT_CREDENTIAL=off")
	p := newPayer(t, s, "ada@acme.test", "10000.00")
	for round := range 3 {
		b := payableBill(t, s, p, "25.00")
		quotes := []api.Quote{billQuote(t, s, p, b.PaymentContactId.String(), "25.00"), billQuote(t, s, p, b.PaymentContactId.String(), "25.00")}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var created []api.Payment
		mismatches := 0
		for _, q := range quotes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := s.Do(t, apitest.Request{Method: "POST", Path: "/api/v1/payments/execute", Bearer: p.web, Body: billExecuteBody(q.Id.String(), b.Id.String()), Header: oneShot})
				mu.Lock()
				defer mu.Unlock()
				switch r.Status {
				case 201:
					var pay api.Payment
					r.Decode(t, &pay)
					created = append(created, pay)
				case 422:
					r.ExpectError(t, 422, "bill_mismatch")
					mismatches++
				default:
					t.Errorf("round %d: %d %s", round, r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
		if len(created) != 1 || mismatches != 1 {
			t.Fatalf("round %d: %d payments and %d mismatches, want one of each", round, len(created), mismatches)
		}
		expectRequested(t, s, p.web, b.Id.String(), created[0])
	}
	var approvals api.ApprovalPage
	s.Get(t, "/api/v1/organizations/"+p.org+"/approvals", p.web).ExpectStatus(t, 200).Decode(t, &approvals)
	if len(approvals.Data) != 3 {
		t.Fatalf("%d approvals, want 3", len(approvals.Data))
	}
}

// TestBillsOfAnotherOrganization: every bill operation answers 404 for a
// bill or organization of someone else, and a paused organization's bills
// can be read but not created or changed.
func TestBillsOfAnotherOrganization(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	eve := newPayer(t, s, "eve@evil.test", "1000.00")
	b := payableBill(t, s, p, "10.00")
	pdf := corpusFile(t, "text-gb-invoice.pdf")
	mine := storedFile(t, s, p.web, p.org, "text-gb-invoice.pdf", pdf)

	s.Get(t, billPath(b.Id.String(), ""), eve.web).ExpectError(t, 404, "not_found")
	patchBill(t, s, eve.web, b.Id.String(), map[string]any{"bill_number": "X"}).ExpectError(t, 404, "not_found")
	s.Post(t, billPath(b.Id.String(), "cancel"), eve.web, nil).ExpectError(t, 404, "not_found")
	s.Post(t, billPath(b.Id.String(), "payment-contact"), eve.web, nil).ExpectError(t, 404, "not_found")
	s.Get(t, billsPath(p.org), eve.web).ExpectError(t, 404, "not_found")
	s.Post(t, billsPath(p.org), eve.web, map[string]any{"file_id": mine}).ExpectError(t, 404, "not_found")
	uploadBill(t, s, eve.web, p.org, "file", "a.pdf", "application/pdf", pdf).ExpectError(t, 404, "not_found")
	// Eve's quote with Ada's bill: the bill is not found in Eve's organization.
	s.Post(t, "/api/v1/payments/execute", eve.web, billExecuteBody(billQuote(t, s, eve, eve.contact, "10.00").Id.String(), b.Id.String())).ExpectError(t, 404, "not_found")
	// Eve's list does not show it.
	var list api.BillPage
	s.Get(t, billsPath(eve.org), eve.web).ExpectStatus(t, 200).Decode(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("eve sees %d bills", len(list.Data))
	}
	if got := getBill(t, s, p.web, b.Id.String()); got.Status != "extracted" || str(got.BillNumber) != "RE-2026-0117" {
		t.Fatalf("bill after eve's attempts = %+v", got)
	}

	// Paused: reads work, writes answer organization_unavailable.
	q := billQuote(t, s, p, b.PaymentContactId.String(), "10.00")
	setOrgStatus(t, s, p.org, "paused")
	getBill(t, s, p.web, b.Id.String())
	s.Get(t, billsPath(p.org), p.web).ExpectStatus(t, 200)
	expectUnavailable(t, s.Post(t, billsPath(p.org), p.web, map[string]any{"file_id": mine}))
	expectUnavailable(t, uploadBill(t, s, p.web, p.org, "file", "a.pdf", "application/pdf", pdf))
	expectUnavailable(t, patchBill(t, s, p.web, b.Id.String(), map[string]any{"bill_number": "X"}))
	expectUnavailable(t, s.Post(t, billPath(b.Id.String(), "cancel"), p.web, nil))
	expectUnavailable(t, s.Post(t, billPath(b.Id.String(), "payment-contact"), p.web, nil))
	expectUnavailable(t, s.Post(t, "/api/v1/payments/execute", p.web, billExecuteBody(q.Id.String(), b.Id.String())))
	setOrgStatus(t, s, p.org, "active")
	if got := getBill(t, s, p.web, b.Id.String()); got.Status != "extracted" || str(got.BillNumber) != "RE-2026-0117" {
		t.Fatalf("bill after the pause = %+v", got)
	}
	var pay api.Payment
	s.Post(t, "/api/v1/payments/execute", p.web, billExecuteBody(q.Id.String(), b.Id.String())).ExpectStatus(t, 201).Decode(t, &pay)
	expectRequested(t, s, p.web, b.Id.String(), pay)
	createBill(t, s, p.web, p.org, mine)
	// Banned: even reads are refused.
	setOrgStatus(t, s, p.org, "banned")
	expectUnavailable(t, s.Get(t, billPath(b.Id.String(), ""), p.web))
	expectUnavailable(t, s.Get(t, billsPath(p.org), p.web))
}

// TestACreditNoteIsNeverPaid: a credit note is read as a bill with
// document_type credit_note and its amount positive; paying it answers 422
// bill_not_payable and creates nothing, whatever the quote.
func TestACreditNoteIsNeverPaid(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "10000.00")
	if b := payableBill(t, s, p, "10.00"); b.DocumentType != api.BillDocumentTypeInvoice {
		t.Fatalf("a bill of a person's own is %q, want invoice", b.DocumentType)
	}

	note := extracted(t, s, p.web, uploadCorpus(t, s, p.web, p.org, "cii-it-creditnote.xml").Id.String())
	if note.DocumentType != api.BillDocumentTypeCreditNote || str(note.Amount) != "610.00" || str(note.Currency) != "EUR" {
		t.Fatalf("credit note read as %s %s %s, want credit_note 610.00 EUR", note.DocumentType, str(note.Amount), str(note.Currency))
	}
	var withContact api.Bill
	s.Post(t, billPath(note.Id.String(), "payment-contact"), p.web, nil).ExpectStatus(t, 200).Decode(t, &withContact)
	q := billQuote(t, s, p, withContact.PaymentContactId.String(), "610.00")
	s.Post(t, "/api/v1/payments/execute", p.web, billExecuteBody(q.Id.String(), note.Id.String())).ExpectError(t, 422, "bill_not_payable")
	// Nothing was created: the bill is as it was and the quote is still unused.
	after := getBill(t, s, p.web, note.Id.String())
	if after.Status != "extracted" || after.ApprovalRequestId != nil || after.FiatOutgoingId != nil || after.DocumentType != api.BillDocumentTypeCreditNote {
		t.Fatalf("after the refused payment: %+v", after)
	}
	s.Post(t, "/api/v1/payments/execute", p.web, executeBody(q.Id.String())).ExpectStatus(t, 201)
	// Editing the amount does not make it payable.
	patchBillOK(t, s, p.web, note.Id.String(), map[string]any{"amount": "10.00"})
	q = billQuote(t, s, p, withContact.PaymentContactId.String(), "10.00")
	s.Post(t, "/api/v1/payments/execute", p.web, billExecuteBody(q.Id.String(), note.Id.String())).ExpectError(t, 422, "bill_not_payable")
}
