package postgres

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// copyBufferLimit is the largest buffer a bufferedCopy keeps between calls.
const copyBufferLimit = 1 << 20

// bufferedCopy is the dbq.DBTX of a batch writer: sqlc's :copyfrom queries name the table,
// the columns and the rows, and it sends them with COPY ... FROM STDIN BINARY from one
// buffer it keeps from call to call. pgx's own CopyFrom builds its send buffer anew on every
// call, growing it from 1 KiB by appending, which leaves about five times the batch in
// garbage: for request logs a tenth of all the API allocated per request
// (docs/performance.md, 8.). Everything else goes to the pool. A bufferedCopy serves one
// goroutine (its batcher's writer).
type bufferedCopy struct {
	*pgxpool.Pool
	buf []byte
}

// CopyFrom implements dbq.DBTX, as pgx's binary COPY does.
func (c *bufferedCopy) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, rows pgx.CopyFromSource) (int64, error) {
	conn, err := c.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	quoted := make([]string, len(columns))
	for i, column := range columns {
		quoted[i] = pgx.Identifier{column}.Sanitize()
	}
	list := strings.Join(quoted, ", ")
	// The columns' types, as pgx learns them: a description prepared once per connection.
	describe := "SELECT " + list + " FROM " + table.Sanitize()
	sd, err := conn.Conn().Prepare(ctx, describe, describe)
	if err != nil {
		return 0, fmt.Errorf("describing %s: %w", table.Sanitize(), err)
	}
	types := conn.Conn().TypeMap()

	buf := append(c.buf[:0], "PGCOPY\n\377\r\n\x00"...)
	buf = binary.BigEndian.AppendUint32(buf, 0) // flags
	buf = binary.BigEndian.AppendUint32(buf, 0) // header extension length
	for rows.Next() {
		values, err := rows.Values()
		if err != nil {
			return 0, err
		}
		if len(values) != len(columns) {
			return 0, fmt.Errorf("copying into %s: %d values for %d columns", table.Sanitize(), len(values), len(columns))
		}
		buf = binary.BigEndian.AppendUint16(buf, uint16(len(values)))
		for i, v := range values {
			at := len(buf)
			buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32) // -1, NULL, unless a value follows
			encoded, err := types.Encode(sd.Fields[i].DataTypeOID, pgtype.BinaryFormatCode, v, buf)
			if err != nil {
				return 0, fmt.Errorf("copying %s.%s: %w", table.Sanitize(), columns[i], err)
			}
			if encoded != nil {
				buf = encoded
				binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
			}
		}
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	buf = binary.BigEndian.AppendUint16(buf, math.MaxUint16) // the trailer, -1
	if cap(buf) <= copyBufferLimit {
		c.buf = buf
	}
	tag, err := conn.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(buf),
		"COPY "+table.Sanitize()+" ("+list+") FROM STDIN BINARY")
	return tag.RowsAffected(), err
}
