package e2e_test

import (
	"testing"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// nextBillEvent is the next message, a bill.event_appended one.
func nextBillEvent(t *testing.T, st *apitest.Stream, org string) api.BillEventAppendedMessage {
	t.Helper()
	m := st.Next(t, realtimeWait)
	expectMessage(t, m, "bill.event_appended", org)
	var e api.BillEventAppendedMessage
	decodeMessage(t, m, &e)
	return e
}

// A bill's extraction is told on the organization's realtime channel
// (docs/api.md, Realtime): started when the bill is created, then completed
// with the fields read, or failed.
func TestBillExtractionIsToldOnTheRealtimeChannel(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPayer(t, s, "bill-realtime@acme.test", "")
	st := freshEvents(t, s, p.org, p.web)

	b := uploadCorpus(t, s, p.web, p.org, "cii-de-xrechnung.xml")
	started := nextBillEvent(t, st, p.org)
	if started.Data.BillId != b.Id || started.Data.Event != "extraction_started" || started.Data.Bill.Id != b.Id {
		t.Fatalf("first message %+v, want extraction_started of bill %s", started, b.Id.String())
	}
	done := nextBillEvent(t, st, p.org)
	if done.Data.BillId != b.Id || done.Data.Event != "extraction_completed" || done.Data.Bill.Status != "extracted" || done.Data.Bill.BillNumber == nil {
		t.Fatalf("second message %+v, want extraction_completed with the fields read", done)
	}

	image := uploadBill(t, s, p.web, p.org, "file", "receipt.png", "image/png", pngOf(t, 40, 30))
	var failed api.Bill
	image.ExpectStatus(t, 201).Decode(t, &failed)
	if e := nextBillEvent(t, st, p.org); e.Data.Event != "extraction_started" || e.Data.BillId != failed.Id {
		t.Fatalf("message %+v, want extraction_started of bill %s", e, failed.Id.String())
	}
	e := nextBillEvent(t, st, p.org)
	if e.Data.Event != "extraction_failed" || e.Data.BillId != failed.Id || e.Data.Bill.ExtractionFailedAt == nil {
		t.Fatalf("message %+v, want extraction_failed with extraction_failed_at", e)
	}
}
