package e2e_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

func TestCryptoDepositsAndAllocations(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "alloc.test")
	c := createBillingContact(t, s, o.owner.token, o.id, "Initech")

	s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/crypto-deposits", sbx, map[string]any{"coin": "BTC", "amount": "1"}).ExpectError(t, http.StatusBadRequest, "invalid_request")
	s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/crypto-deposits", sbx, map[string]any{"coin": "USDC", "amount": "1.0000001"}).ExpectError(t, http.StatusBadRequest, "invalid_request")
	dep := cryptoDeposit(t, s, o.id, "USDC", "100")
	if dep.Amount != "100.000000" || dep.Unallocated != "100.000000" || dep.Coin.Symbol != "USDC" || dep.TxRef != nil {
		t.Fatalf("deposit: %+v", dep)
	}
	eurc := cryptoDeposit(t, s, o.id, "EURC", "5.5")

	// The balance and the feed show the coins.
	if avail, _ := balance(t, s, o.owner.token, o.id, "USDC"); avail != "100.000000" {
		t.Fatalf("USDC balance %s", avail)
	}
	var feed api.TransactionPage
	s.Get(t, orgPath(o.id, "/transactions?type=crypto_incoming"), o.owner.token).ExpectStatus(t, 200).Decode(t, &feed)
	if len(feed.Data) != 2 || feed.Data[1].Effect.Total != "100.000000" || feed.Data[1].Effect.Currency != "USDC" {
		t.Fatalf("feed: %+v", feed.Data)
	}

	inv := simpleInvoice(t, s, o.owner.token, o.id, c.Id.String(), "USD", "50.00", "2025-06-01")
	allocate(t, s, o.owner.token, o.id, inv.Id.String(), dep.Id.String(), "10.00").ExpectError(t, http.StatusConflict, "conflict") // a draft
	movedInvoice(t, s, o.owner.token, o.id, inv.Id.String(), "send", "sent")
	allocate(t, s, o.alice.token, o.id, inv.Id.String(), dep.Id.String(), "10.00").ExpectError(t, http.StatusForbidden, "forbidden")
	allocate(t, s, o.owner.token, o.id, inv.Id.String(), eurc.Id.String(), "1.00").ExpectError(t, http.StatusUnprocessableEntity, "currency_mismatch")
	allocate(t, s, o.owner.token, o.id, inv.Id.String(), dep.Id.String(), "50.01").ExpectError(t, http.StatusUnprocessableEntity, "allocation_exceeds")
	allocate(t, s, o.owner.token, o.id, inv.Id.String(), dep.Id.String(), "1.001").ExpectError(t, http.StatusBadRequest, "invalid_request")
	allocate(t, s, o.owner.token, o.id, inv.Id.String(), dep.Id.String(), "0").ExpectError(t, http.StatusBadRequest, "invalid_request")

	var first, second api.BillingAllocation
	allocate(t, s, o.admin.token, o.id, inv.Id.String(), dep.Id.String(), "20.00").ExpectStatus(t, http.StatusCreated).Decode(t, &first)
	if first.Credit != "20.00" || first.BillingContactId != c.Id || first.UserId.String() != o.admin.id || first.CryptoIncoming.Amount != "100.000000" {
		t.Fatalf("allocation: %+v", first)
	}
	if got := getInvoice(t, s, o.owner.token, o.id, inv.Id.String()); got.State != "sent" || got.AcceptedAmount != nil {
		t.Fatalf("partly allocated invoice: %+v", got)
	}
	allocate(t, s, o.owner.token, o.id, inv.Id.String(), dep.Id.String(), "30.00").ExpectStatus(t, http.StatusCreated).Decode(t, &second)
	paid := getInvoice(t, s, o.owner.token, o.id, inv.Id.String())
	if paid.State != "paid" || paid.AcceptedAmount == nil || *paid.AcceptedAmount != "50.00" || paid.CompletedAt == nil {
		t.Fatalf("covered invoice: %+v", paid)
	}
	expectNext(t, paid, "sent")
	allocate(t, s, o.owner.token, o.id, inv.Id.String(), dep.Id.String(), "1.00").ExpectError(t, http.StatusConflict, "conflict") // paid

	// 50 left on the deposit: a second invoice cannot take 60 of it.
	big := simpleInvoice(t, s, o.owner.token, o.id, c.Id.String(), "USD", "80.00", "2025-06-02")
	movedInvoice(t, s, o.owner.token, o.id, big.Id.String(), "send", "sent")
	allocate(t, s, o.owner.token, o.id, big.Id.String(), dep.Id.String(), "50.01").ExpectError(t, http.StatusUnprocessableEntity, "allocation_exceeds")
	var deposits api.CryptoIncomingPage
	s.Get(t, orgPath(o.id, "/crypto-incoming"), o.bob.token).ExpectStatus(t, 200).Decode(t, &deposits)
	if len(deposits.Data) != 2 || deposits.Data[1].Id != dep.Id || deposits.Data[1].Unallocated != "50.000000" || deposits.Data[0].Unallocated != "5.500000" {
		t.Fatalf("deposits: %+v", deposits.Data)
	}

	// Deallocate: owners and admins; each allocation gets its reversal.
	invoiceMove(t, s, o.alice.token, o.id, inv.Id.String(), "deallocate").ExpectError(t, http.StatusForbidden, "forbidden")
	back := movedInvoice(t, s, o.owner.token, o.id, inv.Id.String(), "deallocate", "sent")
	if back.AcceptedAmount != nil || back.CompletedAt != nil {
		t.Fatalf("deallocated invoice keeps accepted_amount or completed_at: %+v", back)
	}
	invoiceMove(t, s, o.owner.token, o.id, inv.Id.String(), "deallocate").ExpectError(t, http.StatusConflict, "conflict")
	var ledger api.BillingAllocationPage
	s.Get(t, orgPath(o.id, "/billing-contacts/"+c.Id.String()+"/allocations?limit=3"), o.bob.token).ExpectStatus(t, 200).Decode(t, &ledger)
	if len(ledger.Data) != 3 || !ledger.HasMore {
		t.Fatalf("ledger page: %+v", ledger)
	}
	rev := map[string]string{}
	for _, a := range ledger.Data[:2] {
		if a.ReversesAllocationId == nil || a.CryptoIncomingId != dep.Id {
			t.Fatalf("not a reversal: %+v", a)
		}
		rev[a.ReversesAllocationId.String()] = a.Credit
	}
	if rev[first.Id.String()] != "-20.00" || rev[second.Id.String()] != "-30.00" {
		t.Fatalf("reversals: %v", rev)
	}
	s.Get(t, orgPath(o.id, "/crypto-incoming"), o.bob.token).ExpectStatus(t, 200).Decode(t, &deposits)
	if deposits.Data[1].Unallocated != "100.000000" {
		t.Fatalf("unallocated after deallocation: %s", deposits.Data[1].Unallocated)
	}
	// The money is free again: the whole deposit can pay the second invoice, partly.
	allocate(t, s, o.owner.token, o.id, big.Id.String(), dep.Id.String(), "80.00").ExpectStatus(t, http.StatusCreated)
	if got := getInvoice(t, s, o.owner.token, o.id, big.Id.String()); got.State != "paid" || *got.AcceptedAmount != "80.00" {
		t.Fatalf("second invoice: %+v", got)
	}

	// Another organization can neither see nor use any of it.
	other := newCardOwner(t, s, "other-alloc.test")
	oc := createBillingContact(t, s, other.owner.token, other.id, "Umbrella")
	oinv := simpleInvoice(t, s, other.owner.token, other.id, oc.Id.String(), "USD", "5.00", "2025-06-01")
	movedInvoice(t, s, other.owner.token, other.id, oinv.Id.String(), "send", "sent")
	allocate(t, s, other.owner.token, other.id, oinv.Id.String(), dep.Id.String(), "1.00").ExpectError(t, http.StatusNotFound, "not_found")
	allocate(t, s, other.owner.token, o.id, inv.Id.String(), dep.Id.String(), "1.00").ExpectError(t, http.StatusNotFound, "not_found")
	s.Get(t, orgPath(o.id, "/crypto-incoming"), other.owner.token).ExpectError(t, http.StatusNotFound, "not_found")
	s.Get(t, orgPath(other.id, "/billing-contacts/"+c.Id.String()+"/allocations"), other.owner.token).ExpectError(t, http.StatusNotFound, "not_found")
}

func expectNext(t *testing.T, inv api.BillingInvoice, want ...string) {
	t.Helper()
	expectIDs(t, "next_valid_states of "+string(inv.State), states(inv), want...)
}

func TestConcurrentAllocationsNeverExceedADeposit(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "race.test")
	c := createBillingContact(t, s, o.owner.token, o.id, "Initech")
	for round := 0; round < 3; round++ {
		dep := cryptoDeposit(t, s, o.id, "USDT", "100")
		var invoices []string
		for i := 0; i < 2; i++ {
			inv := simpleInvoice(t, s, o.owner.token, o.id, c.Id.String(), "USD", "60.00", "2025-07-01")
			movedInvoice(t, s, o.owner.token, o.id, inv.Id.String(), "send", "sent")
			invoices = append(invoices, inv.Id.String())
		}
		statuses := make([]int, 2)
		var wg sync.WaitGroup
		for i, id := range invoices {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := s.Post(t, orgPath(o.id, "/invoices/"+id+"/allocations"), o.owner.token, map[string]any{"crypto_incoming_id": dep.Id.String(), "credit": "60.00"})
				statuses[i] = r.Status
			}()
		}
		wg.Wait()
		created, refused := 0, 0
		for _, st := range statuses {
			switch st {
			case http.StatusCreated:
				created++
			case http.StatusUnprocessableEntity:
				refused++
			}
		}
		if created != 1 || refused != 1 {
			t.Fatalf("round %d: statuses %v, want one 201 and one 422", round, statuses)
		}
		var deposits api.CryptoIncomingPage
		s.Get(t, orgPath(o.id, "/crypto-incoming?limit=1"), o.owner.token).ExpectStatus(t, 200).Decode(t, &deposits)
		if deposits.Data[0].Id != dep.Id || deposits.Data[0].Unallocated != "40.000000" {
			t.Fatalf("round %d: deposit %+v", round, deposits.Data[0])
		}
	}
}
