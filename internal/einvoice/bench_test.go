package einvoice_test

import (
	"testing"
	"time"

	"github.com/provider/coreapi/internal/einvoice"
)

// BenchmarkInvoice times the work of one simplified invoice apart from the database: the
// computation of amounts and rules (Prepare), then the UBL XML, its canonical hash, the
// sandbox stamp and the QR code (Generate).
func BenchmarkInvoice(b *testing.B) {
	key, err := einvoice.NewSandboxKey("0193b5e2-4a1c-7d2e-8f30-5a6b7c8d9e01", certificatesIssuedAt)
	if err != nil {
		b.Fatal(err)
	}
	req := sampleRequest()
	id := einvoice.Identity{
		Number: "SINV-000001", UUID: "6f0b8a3e-2c1d-4e5f-9a8b-7c6d5e4f3a2b", ICV: 1, PIH: einvoice.FirstPIH,
		IssuedAt: time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC),
	}
	b.Run("Prepare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := einvoice.Prepare(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Generate", func(b *testing.B) {
		d, err := einvoice.Prepare(req)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Generate(id, key); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// certificatesIssuedAt is when the tests' keys and certificates are made: before the fixed
// signing times of their documents (1 March 2025), which must lie within the certificates'
// validity (SBX-CERT-06).
var certificatesIssuedAt = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
