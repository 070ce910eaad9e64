package postgres

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider/coreapi/gen/dbq"
)

// Pipeline sends sqlc statements that do not depend on each other's results in one round trip
// (a pgx batch: every statement in one write, their results in one read) instead of one each.
// PostgreSQL runs them in order, as if sent one by one, except that the client does not wait
// in between; in a transaction a failing statement aborts it, as it would have alone.
//
// A statement is queued as a function that makes it through the sqlc Queries it is given
// (Add). When the pipeline is sent (Send, Begin), that function runs twice: first with Queries
// that only record the statement into the batch, then, once the batch's results have arrived,
// with Queries that read its result; so it makes exactly one statement and keeps what it
// returns. What is decided on the results — and any statement that depends on them — comes
// after the pipeline is sent. The same queue can also run statement by statement (Run), for
// callers that hold only Queries; then each function runs once.
type Pipeline struct {
	runs []func(q *dbq.Queries) error
}

// errQueued is what a queued statement returns while it is only being recorded.
var errQueued = errors.New("postgres: the statement is queued in a pipeline; its result comes when the pipeline is sent")

// Add queues the one statement run makes (see Pipeline).
func (p *Pipeline) Add(run func(q *dbq.Queries) error) {
	p.runs = append(p.runs, run)
}

// record queues in b the statement of each queued function, in order.
func (p *Pipeline) record(b *pgx.Batch) {
	q := dbq.New(recorder{b})
	for _, run := range p.runs {
		queued := b.Len()
		_ = run(q) // errQueued
		if n := b.Len() - queued; n != 1 {
			panic(fmt.Sprintf("postgres: a pipelined function makes exactly one statement, not %d", n))
		}
	}
}

// Batcher sends batches: the pool, or a transaction.
type Batcher interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// Send sends the queued statements through db in one round trip (none when nothing is
// queued) and gives each queued function its result, in order. It returns the first error a
// function returns; the functions after it are not run.
func (p *Pipeline) Send(ctx context.Context, db Batcher) error {
	if len(p.runs) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	p.record(b)
	if c, ok := db.(interface{ Conn() *pgx.Conn }); ok { // a transaction: its connection is known
		reserveBatch(c.Conn(), b)
	}
	return p.read(db.SendBatch(ctx, b), 0)
}

// reserveBatch makes room in conn's write buffer for the messages of b before pgx encodes
// them there. pgx appends a batch's messages one after another into one buffer, which starts
// at 1 kB after every write; a statement whose bodies are large (a tax invoice's XML, request
// and result, 18 kB) would otherwise grow it by doubling and then by a quarter at each
// body, copying what came before every time: 33 kB allocated for 21 kB sent. Reserved, it
// is allocated once. The estimate errs on the large side; a short one only costs a growth.
func reserveBatch(conn *pgx.Conn, b *pgx.Batch) {
	n := 0
	for _, q := range b.QueuedQueries {
		n += batchMessageBytes(q.Arguments)
	}
	conn.PgConn().Frontend().Send(reservation(n))
}

// batchMessageBytes is at least what pgx writes for a prepared statement with args in a
// batch (Bind with the cached statement's name, Describe, Execute), a little more for the
// fixed-size values.
func batchMessageBytes(args []any) int {
	const statement = 128
	return statement + argumentsBytes(args)
}

// argumentBytes is at least what pgx writes for the argument a: its value and its length.
func argumentBytes(a any) int {
	const argument = 24 // a fixed-size value, or the length and format of any
	switch v := a.(type) {
	case string:
		return argument + len(v)
	case reservedText:
		return argument + len(v.text)
	case []byte:
		return argument + len(v)
	case *string:
		if v != nil {
			return argument + len(*v)
		}
	case [][]byte:
		return documentsBytes(v)
	case reservedDocuments:
		return documentsBytes(v.docs)
	case []string:
		n := arrayHeader + argument
		for _, s := range v {
			n += 4 + len(s)
		}
		return n
	}
	if v := reflect.ValueOf(a); v.Kind() == reflect.Slice {
		return arrayHeader + argument + v.Len()*argument // fixed-size elements: ids, numbers, times
	}
	return argument
}

// arrayHeader is the size of an array's header in the binary format (one dimension).
const arrayHeader = 20

// documentsBytes is what pgx writes for docs as a jsonb[] or bytea[] (each a length, jsonb's
// version byte, the document), and the argument's length and format.
func documentsBytes(docs [][]byte) int {
	n := arrayHeader + 24
	for _, d := range docs {
		n += 5 + len(d)
	}
	return n
}

// largeText is the size from which a text argument makes its statement's parameter buffer
// sized once (reserveParameters).
const largeText = 1024

// reserveParameters sizes the buffer pgx encodes a statement's arguments into once, at the
// first large text or array of documents among them, for it and every argument after it. pgx
// encodes a statement's arguments one after another into one buffer, reset to 256 bytes for
// each statement; large bodies (a tax invoice's XML, request and result) grew it to an exact
// fit for each new body and copied what came before: 25 kB allocated for the insert's 18 kB.
// An array of documents (a renewal batch's audit entries or webhook events, hundreds of kB)
// grew it by doubling, element by element: twice its size allocated. So a statement's large
// text goes before its other bodies (TaxInvoiceInsert's XML), and is queued as a
// reservedText, and a large array of documents as reservedDocuments. args is the statement's
// own slice; it is changed in place.
func reserveParameters(args []any) []any {
	for i, a := range args {
		switch v := a.(type) {
		case string:
			if len(v) >= largeText {
				args[i] = reservedText{text: v, room: argumentsBytes(args[i:])}
				return args
			}
		case [][]byte:
			if documentsBytes(v) >= largeText {
				args[i] = reservedDocuments{docs: v, room: argumentsBytes(args[i:])}
				return args
			}
		}
	}
	return args
}

// argumentsBytes is at least what pgx writes for args.
func argumentsBytes(args []any) int {
	n := 0
	for _, a := range args {
		n += argumentBytes(a)
	}
	return n
}

// reservedText is a text argument that makes room for room bytes in pgx's parameter buffer
// before it is encoded there (registerReservedText). It is a driver.Valuer of its text, so
// a type map without the plan, or a codec that does not leave it to wrap plans, encodes it as
// that text all the same.
type reservedText struct {
	text string
	room int
}

func (r reservedText) Value() (driver.Value, error) { return r.text, nil }

// registerReservedText makes m encode a reservedText as its text, and reservedDocuments as its
// documents, in a buffer grown first.
func registerReservedText(m *pgtype.Map) {
	m.TryWrapEncodePlanFuncs = append([]pgtype.TryWrapEncodePlanFunc{tryWrapReservedTextEncodePlan, tryWrapReservedDocumentsEncodePlan}, m.TryWrapEncodePlanFuncs...)
}

func tryWrapReservedTextEncodePlan(value any) (pgtype.WrappedEncodePlanNextSetter, any, bool) {
	if r, ok := value.(reservedText); ok {
		return &reservedTextEncodePlan{}, r.text, true
	}
	return nil, nil, false
}

// reservedDocuments is an array of documents (a jsonb[] argument) that makes room for room
// bytes in pgx's parameter buffer before it is encoded there, as reservedText does for a
// text. Only a type map with registerReservedText's plans can encode it.
type reservedDocuments struct {
	docs [][]byte
	room int
}

func tryWrapReservedDocumentsEncodePlan(value any) (pgtype.WrappedEncodePlanNextSetter, any, bool) {
	if _, ok := value.(reservedDocuments); ok {
		return &reservedDocumentsEncodePlan{}, [][]byte(nil), true
	}
	return nil, nil, false
}

type reservedDocumentsEncodePlan struct{ next pgtype.EncodePlan }

func (p *reservedDocumentsEncodePlan) SetNext(next pgtype.EncodePlan) { p.next = next }

func (p *reservedDocumentsEncodePlan) Encode(value any, buf []byte) ([]byte, error) {
	r := value.(reservedDocuments)
	return p.next.Encode(r.docs, slices.Grow(buf, r.room))
}

type reservedTextEncodePlan struct{ next pgtype.EncodePlan }

func (p *reservedTextEncodePlan) SetNext(next pgtype.EncodePlan) { p.next = next }

func (p *reservedTextEncodePlan) Encode(value any, buf []byte) ([]byte, error) {
	r := value.(reservedText)
	return p.next.Encode(r.text, slices.Grow(buf, r.room))
}

// reservation is a message of no bytes that leaves room for n more in the buffer it is
// encoded into: pgproto3.Frontend.Send appends it like any other.
type reservation int

func (n reservation) Encode(dst []byte) ([]byte, error) { return slices.Grow(dst, int(n)), nil }

func (reservation) Decode([]byte) error {
	return errors.New("postgres: a reservation is never received")
}

func (reservation) Frontend() {}

// Run makes the queued statements one by one through q, each function with its own result,
// stopping at the first error: the pipeline without the batch.
func (p *Pipeline) Run(q *dbq.Queries) error {
	for _, run := range p.runs {
		if err := run(q); err != nil {
			return err
		}
	}
	return nil
}

// Begin begins a transaction on a connection of pool with the queued statements sent in the
// same round trip as its BEGIN, gives each queued function its result and returns the
// transaction. On an error the transaction is rolled back.
func (p *Pipeline) Begin(ctx context.Context, pool *pgxpool.Pool) (pgx.Tx, error) {
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	p.record(b)
	br := pool.SendBatch(ctx, b)
	tx := br.Tx()
	if err := p.read(br, 1); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx)) // closed already when BEGIN itself failed
		return nil, err
	}
	return tx, nil
}

// read reads the results of a sent batch whose first skip statements are not queued
// functions' (Begin's BEGIN), then closes it.
func (p *Pipeline) read(br pgx.BatchResults, skip int) error {
	var err error
	for range skip {
		if _, err = br.Exec(); err != nil {
			break
		}
	}
	q := dbq.New(results{br})
	for i := 0; err == nil && i < len(p.runs); i++ {
		err = p.runs[i](q)
	}
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	return err
}

// recorder is the dbq.DBTX of a statement being queued: it queues the statement in its batch.
type recorder struct{ batch *pgx.Batch }

func (r recorder) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	r.batch.Queue(sql, reserveParameters(args)...)
	return pgconn.CommandTag{}, errQueued
}

func (r recorder) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	r.batch.Queue(sql, reserveParameters(args)...)
	return nil, errQueued
}

func (r recorder) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	r.batch.Queue(sql, reserveParameters(args)...)
	return queuedRow{}
}

func (recorder) CopyFrom(context.Context, pgx.Identifier, []string, pgx.CopyFromSource) (int64, error) {
	return 0, errors.New("postgres: COPY is not pipelined")
}

type queuedRow struct{}

func (queuedRow) Scan(...any) error { return errQueued }

// results is the dbq.DBTX of a queued statement reading its result: the next of the batch.
type results struct{ br pgx.BatchResults }

func (r results) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) { return r.br.Exec() }

func (r results) Query(context.Context, string, ...any) (pgx.Rows, error) { return r.br.Query() }

func (r results) QueryRow(context.Context, string, ...any) pgx.Row { return r.br.QueryRow() }

func (results) CopyFrom(context.Context, pgx.Identifier, []string, pgx.CopyFromSource) (int64, error) {
	return 0, errors.New("postgres: COPY is not pipelined")
}

// ignoreNoRows is err, except that no row is no error: for a queued statement whose caller
// decides on its missing row once the pipeline has been sent.
func ignoreNoRows(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	return err
}
