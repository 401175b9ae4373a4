package statement

import (
	"bufio"
	"io"
	"testing"
	"time"

	"github.com/google/uuid"
)

// BenchmarkEncoders times the formats alone (no database): 100,000
// entries of a payment each.
func BenchmarkEncoders(b *testing.B) {
	name, ref := "Globex GmbH", "Invoice 2026-118"
	st := &Statement{Query: Query{Currency: "EUR", From: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)},
		OrganizationID: uuid.Must(uuid.NewV7()), OrganizationName: "Acme", CreatedAt: time.Now()}
	e := Entry{TransactionID: uuid.Must(uuid.NewV7()), BookedAt: time.Now(), Amount: -12345, BalanceAfter: 1000000, Type: "fiat_outgoing",
		Description: "Payment to Globex GmbH", Counterparty: &name, Reference: &ref}
	for _, f := range Formats {
		b.Run(f, func(b *testing.B) {
			for b.Loop() {
				w := bufio.NewWriterSize(io.Discard, 32<<10)
				var enc encoder
				switch f {
				case CSV:
					enc = newCSV(w)
				case CAMT053:
					enc = newCAMT(w)
				case OFX:
					enc = newOFX(w)
				default:
					enc = newJSON(w)
				}
				_ = enc.begin(st)
				for range 100_000 {
					_ = enc.entry(st, e)
				}
				_ = enc.end(st)
			}
		})
	}
}
