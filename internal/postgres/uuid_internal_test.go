package postgres

import (
	"bytes"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// Ids, nullable or not, are encoded as binary uuids directly: no text detour with an error
// built and thrown away (23 allocations for a pointer before), only the boxing of the 16
// bytes into an interface on the way (at most twice).
func TestUUIDEncoding(t *testing.T) {
	m := pgtype.NewMap()
	registerUUID(m)
	id := uuid.Must(uuid.NewV7())
	var none *uuid.UUID
	for name, value := range map[string]any{"value": id, "pointer": &id, "nil pointer": none} {
		got, err := m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, value, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := id[:]
		if name == "nil pointer" {
			want = nil
		}
		if !bytes.Equal(got, want) || (want == nil) != (got == nil) {
			t.Errorf("%s: encoded %x, want %x", name, got, want)
		}
		buf := make([]byte, 0, 64)
		if allocs := testing.AllocsPerRun(100, func() { _, _ = m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, value, buf[:0]) }); allocs > 2 {
			t.Errorf("%s: %v allocations per encoding", name, allocs)
		}
	}
}
