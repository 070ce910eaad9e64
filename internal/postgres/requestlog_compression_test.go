package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/postgres"
)

// TestRequestLogBodiesCompressWithLZ4: the logged bodies of every partition of
// request_log_bodies, those migration made and one maintenance makes later, are compressed
// with lz4 (00540), not the default pglz.
func TestRequestLogBodiesCompressWithLZ4(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := openDB(t)
	if _, _, err := d.MaintainPartitions(ctx, time.Now().Add(40*24*time.Hour), postgres.DefaultRetention); err != nil {
		t.Fatal(err)
	}
	rows, err := d.Pool.Query(ctx, `
		SELECT c.relname, a.attname, a.attcompression::text
		FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname IN ('request_body', 'response_body')
		WHERE i.inhparent = 'request_log_bodies'::regclass`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	columns := 0
	for rows.Next() {
		var partition, column, compression string
		if err := rows.Scan(&partition, &column, &compression); err != nil {
			t.Fatal(err)
		}
		columns++
		if compression != "l" {
			t.Errorf("%s.%s is compressed with %q, want lz4 (l)", partition, column, compression)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if columns < 2*8 { // a week of days ahead, and the day 40 days on
		t.Errorf("%d body columns in the partitions, want those of at least 8 partitions", columns)
	}
}
