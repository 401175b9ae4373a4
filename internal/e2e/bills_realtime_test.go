package e2e_test

import (
	"testing"

	"github.com/strongroom/strongroom/internal/apitest"
)

// billEvent is the data of a bill.event_appended message.
type billEvent struct {
	BillID string     `json:"bill_id"`
	Event  string     `json:"event"`
	Bill   billRecord `json:"bill"`
}

func nextBillEvent(t *testing.T, st *apitest.Stream, org string) billEvent {
	t.Helper()
	m := st.Next(t, realtimeWait)
	expectMessage(t, m, "bill.event_appended", org)
	var e billEvent
	m.Decode(t, &e)
	return e
}

// A bill's extraction is told on the organization's realtime channel (spec
// §6): started when the bill is created, then completed with the fields
// read, or failed.
func TestBillExtractionIsToldOnTheRealtimeChannel(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "bill-realtime@acme.test", "")
	st := s.Events(t, realtimePath(p.org), p.web, nil)

	b := uploadCorpus(t, s, p.web, p.org, "cii-de-xrechnung.xml")
	started := nextBillEvent(t, st, p.org)
	if started.BillID != b.ID || started.Event != "extraction_started" || started.Bill.ID != b.ID {
		t.Fatalf("first message %+v, want extraction_started of bill %s", started, b.ID)
	}
	done := nextBillEvent(t, st, p.org)
	if done.BillID != b.ID || done.Event != "extraction_completed" || done.Bill.Status != "extracted" || done.Bill.BillNumber == nil {
		t.Fatalf("second message %+v, want extraction_completed with the fields read", done)
	}

	image := uploadBill(t, s, p.web, p.org, "file", "receipt.png", "image/png", pngOf(t, 40, 30))
	var failed billRecord
	image.ExpectStatus(t, 201).Decode(t, &failed)
	if e := nextBillEvent(t, st, p.org); e.Event != "extraction_started" || e.BillID != failed.ID {
		t.Fatalf("message %+v, want extraction_started of bill %s", e, failed.ID)
	}
	e := nextBillEvent(t, st, p.org)
	if e.Event != "extraction_failed" || e.BillID != failed.ID || e.Bill.ExtractionFailedAt == nil {
		t.Fatalf("message %+v, want extraction_failed with extraction_failed_at", e)
	}
}
