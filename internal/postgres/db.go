// Package postgres implements the core services over PostgreSQL with pgx/v5 and the
// sqlc-generated queries in gen/dbq. Transactions and the translation of database errors
// into core errors live here and nowhere else.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/exaring/otelpgx"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/provider/coreapi/db"
	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// DB is the service's connection pool.
type DB struct {
	Pool *pgxpool.Pool

	// Direct is the pool of the work that needs a session of its own: the job queue (River's
	// LISTEN and its fetches) and the credential cache's LISTEN. It connects around a
	// connection pooler in transaction mode (DATABASE_DIRECT_URL); nil: Pool serves it too.
	Direct *pgxpool.Pool

	forgetters credentialForgetters // see credentialsChanged
	// standings caches entitlement standings beside the credentials (NewCredentialCache);
	// nil: every decision reads the database.
	standings atomic.Pointer[CredentialCache]

	// Jobs queues the background work that changes cause (internal/jobs); changes that
	// cause some fail without it.
	Jobs Jobs

	// Events renders the data of the webhook events the services publish (the transport
	// layer's converters, so that storage never declares the API's JSON); changes that
	// publish one fail without it.
	Events core.EventEncoder

	organizationTypes organizationTypes // see catalogueAudience

	// Renewals configure the wall-clock renewal run (BillDue): its concurrency, and how it
	// gives way to the API's requests.
	Renewals RenewalSettings
	// Requests tells the renewal run whether the API is busy, for it to give way
	// (renewalgiveway.go); nil: the run never gives way.
	Requests Busyness
	// RenewalPause is how the run pauses after each batch it takes while the API is busy;
	// nil: it sleeps for the duration. A run's batches run between its pauses, so the tests
	// count the pauses, and BenchmarkHotPathsDuringRenewal tells the requests a batch
	// overlapped from the others by wrapping sleep.
	RenewalPause func(context.Context, time.Duration)

	// renewStepByStep makes BillDue take every step in a transaction of its own, as before
	// renewal batches: the batch's tests compare the two (export_test.go).
	renewStepByStep bool

	// Quotas bound what each organization may hold (core.Quotas; zero limits are defaults).
	// Read at every check, so a test may change them between requests.
	Quotas core.Quotas
}

// PoolConfig is the pool configuration of dsn as the service uses it.
func PoolConfig(dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse DATABASE_URL: %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		// Fail fast when the database is down: requests answer 503 well within their timeout.
		cfg.ConnConfig.ConnectTimeout = 3 * time.Second
	}
	// google/uuid.UUID is a driver.Valuer, which pgx otherwise encodes by formatting it as
	// text, failing to send that as binary, building the error and parsing the text back:
	// about a tenth of the CPU of a simple read in the load benchmark.
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		registerUUID(conn.TypeMap())
		registerReservedText(conn.TypeMap())
		return settleBackendHeap(ctx, conn)
	}
	return cfg, nil
}

// settleBackendHeap has the new connection's backend allocate and free 1 MB once, so that
// its C library stops giving the heap back to the kernel after every statement.
//
// glibc's malloc returns the top of the heap to the kernel (brk) whenever more than its trim
// threshold (128 kB at first) lies free there, and serves allocations of its mmap threshold
// (128 kB at first) or more with mmap. When a block it mmapped is freed, it raises the mmap
// threshold to that block's size and the trim threshold to twice that (mallopt(3), "dynamic
// mmap threshold"). A backend that never freed such a block can fall into growing its heap
// during a statement and giving it back when the executor frees the statement's memory, every
// time: in BenchmarkTaxInvoiceStorage's backend that was 13 % of its CPU profile (brk, the
// page faults of the pages touched again, the TLB shootdowns of the pages given back), five
// page faults and 0.15-0.35 ms of the backend's CPU per invoice. repeat() makes the 1 MB block
// (mmapped; the planner folds the constant, and the block is freed with the query's memory):
// after it, the backend keeps up to 2 MB of freed heap for its next statements instead of
// trimming it, and serves allocations under 1 MB from the heap. docs/performance.md, issue
// 27's seventeenth session.
func settleBackendHeap(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, "SELECT length(repeat(' ', 1048576))", pgx.QueryExecModeSimpleProtocol)
	return err
}

// registerUUID makes pgx encode uuid.UUID and *uuid.UUID (sqlc's nullable uuid) natively.
// pgx-google-uuid covers the value; the pointer is a driver.Valuer too, which pgx's own
// pointer unwrapping leaves alone, so without the second plan every nullable id took the
// text detour above (an error built per parameter).
func registerUUID(m *pgtype.Map) {
	pgxuuid.Register(m)
	m.TryWrapEncodePlanFuncs = append([]pgtype.TryWrapEncodePlanFunc{tryWrapUUIDPointerEncodePlan}, m.TryWrapEncodePlanFuncs...)
}

func tryWrapUUIDPointerEncodePlan(value any) (pgtype.WrappedEncodePlanNextSetter, any, bool) {
	if _, ok := value.(*uuid.UUID); ok {
		return &uuidPointerEncodePlan{}, uuid.UUID{}, true
	}
	return nil, nil, false
}

// uuidPointerEncodePlan encodes nil as NULL and anything else as the uuid it points to.
type uuidPointerEncodePlan struct{ next pgtype.EncodePlan }

func (p *uuidPointerEncodePlan) SetNext(next pgtype.EncodePlan) { p.next = next }

func (p *uuidPointerEncodePlan) Encode(value any, buf []byte) ([]byte, error) {
	id := value.(*uuid.UUID)
	if id == nil {
		return nil, nil // NULL
	}
	return p.next.Encode(*id, buf)
}

// Open connects to dsn and checks the connection. options adjust the pool's configuration
// (WithTracing).
func Open(ctx context.Context, dsn string, options ...func(*pgxpool.Config)) (*DB, error) {
	cfg, err := PoolConfig(dsn)
	if err != nil {
		return nil, err
	}
	for _, o := range options {
		o(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	return &DB{Pool: pool}, nil
}

// OpenDirect connects Direct to dsn, the database itself rather than a pooler in front of it.
func (d *DB) OpenDirect(ctx context.Context, dsn string) error {
	direct, err := Open(ctx, dsn)
	if err != nil {
		return err
	}
	d.Direct = direct.Pool
	return nil
}

// SessionPool is the pool of session-bound work: Direct, or Pool when there is none.
func (d *DB) SessionPool() *pgxpool.Pool {
	if d.Direct != nil {
		return d.Direct
	}
	return d.Pool
}

// Close closes the pools.
func (d *DB) Close() {
	if d.Direct != nil {
		d.Direct.Close()
	}
	d.Pool.Close()
}

// Ping checks that the database answers; /readyz uses it.
func (d *DB) Ping(ctx context.Context) error { return d.Pool.Ping(ctx) }

// Migrate applies the embedded migrations, River's among them (see riverMigration). A
// PostgreSQL advisory lock serialises concurrent starts, so several processes may start at
// once against one database.
func Migrate(ctx context.Context, dsn string, logger *slog.Logger) error {
	// sql.Open rather than goose.OpenDBWithDriver, which sets goose's global dialect and so
	// races when several processes' worth of servers start in one test binary.
	sqlDB, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer sqlDB.Close()
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return err
	}
	migrations, err := fs.Sub(db.Migrations, "migrations")
	if err != nil {
		return err
	}
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations, goose.WithSessionLocker(locker), goose.WithGoMigrations(riverMigration(dsn, logger)))
	if err != nil {
		return err
	}
	results, err := provider.Up(ctx)
	for _, r := range results {
		logger.Info("migration applied", "version", r.Source.Version, "path", r.Source.Path, "duration", r.Duration)
	}
	if err != nil {
		return err
	}
	return createPartitionsAhead(ctx, dsn, logger)
}

// createPartitionsAhead creates the partitions of the time-partitioned tables that the
// migrations leave to the service (migration 00390), so a migrated database takes rows at
// once, before the maintenance job first runs.
func createPartitionsAhead(ctx context.Context, dsn string, logger *slog.Logger) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	created, err := CreatePartitions(ctx, conn, time.Now())
	for _, p := range created {
		logger.Info("partition created", "table", p.Table, "partition", p.Name, "from", p.From, "to", p.To)
	}
	return err
}

var _ = stdlib.GetDefaultDriver // registers the "pgx" database/sql driver goose uses

// WithTx runs fn in a transaction and commits when fn returns nil. The rollback runs on a
// context that ignores cancellation, so a client hanging up can't strand a transaction.
//
// fn's context carries the transaction: the other services fn calls join it, and the job
// inserts and webhook events of the change (enqueue, publish) are written in it.
//
// When ctx already carries a transaction (an idempotent request runs in one, see
// IdempotencyService), fn runs in a savepoint of it instead: its work commits with the
// outer transaction, or is undone alone when fn fails.
func (d *DB) WithTx(ctx context.Context, fn func(ctx context.Context, q *dbq.Queries) error) error {
	return d.withTxBeginning(ctx, nil, fn)
}

// withTxBeginning is WithTx whose transaction begins with the statements of first (nil: none),
// sent in the round trip of its BEGIN (or, in a savepoint, in one round trip after it); fn
// runs once their results are in.
func (d *DB) withTxBeginning(ctx context.Context, first *Pipeline, fn func(ctx context.Context, q *dbq.Queries) error) error {
	var tx pgx.Tx
	var err error
	var hooks *commitHooks // of the outermost transaction only
	switch outer, nested := ctx.Value(txKey{}).(pgx.Tx); {
	case nested:
		if tx, err = outer.Begin(ctx); err == nil && first != nil {
			if err = first.Send(ctx, tx); err != nil {
				_ = tx.Rollback(context.WithoutCancel(ctx))
			}
		}
	case first != nil:
		tx, err = first.Begin(ctx, d.Pool)
		ctx, hooks = withCommitHooks(ctx)
	default:
		tx, err = d.Pool.BeginTx(ctx, pgx.TxOptions{})
		ctx, hooks = withCommitHooks(ctx)
	}
	if err != nil {
		return translate(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it is a no-op
	if err := fn(withTx(ctx, tx), dbq.New(tx)); err != nil {
		return translate(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return translate(err)
	}
	hooks.run()
	return nil
}

// commitHooks is what is to run once a transaction has committed (afterCommit).
type commitHooks struct {
	mu  sync.Mutex
	fns []func()
}

type commitHooksKey struct{}

// withCommitHooks returns a context whose afterCommit work waits for hooks.run.
func withCommitHooks(ctx context.Context) (context.Context, *commitHooks) {
	h := &commitHooks{}
	return context.WithValue(ctx, commitHooksKey{}, h), h
}

// afterCommit runs fn once the outermost transaction of ctx has committed (never, if it
// rolls back), or at once when ctx carries none.
func afterCommit(ctx context.Context, fn func()) {
	if h, ok := ctx.Value(commitHooksKey{}).(*commitHooks); ok {
		h.mu.Lock()
		h.fns = append(h.fns, fn)
		h.mu.Unlock()
		return
	}
	fn()
}

// run runs the hooks, in order; a nil h has none.
func (h *commitHooks) run() {
	if h == nil {
		return
	}
	h.mu.Lock()
	fns := h.fns
	h.fns = nil
	h.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

type txKey struct{}

// withTx returns a context whose database work joins tx.
func withTx(ctx context.Context, tx pgx.Tx) context.Context {
	return context.WithValue(ctx, txKey{}, tx)
}

// inTx reports whether ctx carries a transaction that database work joins.
func inTx(ctx context.Context) bool {
	_, ok := ctx.Value(txKey{}).(pgx.Tx)
	return ok
}

// batcher sends pipelines outside an explicit transaction, or inside the transaction of ctx
// when there is one (as queries runs statements).
func (d *DB) batcher(ctx context.Context) Batcher {
	if tx, ok := ctx.Value(txKey{}).(pgx.Tx); ok {
		return tx
	}
	return d.Pool
}

// queries runs statements outside an explicit transaction, or inside the transaction of ctx
// when there is one.
func (d *DB) queries(ctx context.Context) *dbq.Queries {
	if tx, ok := ctx.Value(txKey{}).(pgx.Tx); ok {
		return dbq.New(tx)
	}
	return dbq.New(d.Pool)
}

// translate turns database errors into core errors. It is the only place that knows
// PostgreSQL error codes; anything it does not recognise stays an internal error.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var ce *core.Error
	if errors.As(err, &ce) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return core.Errorf(core.ENotFound, "The resource does not exist.")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return unavailable(err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505": // unique_violation
			return core.Errorf(core.EConflict, "The resource conflicts with an existing one.")
		case "23503": // foreign_key_violation: the referenced row (e.g. the organization) is gone
			return core.Errorf(core.ENotFound, "A resource the request refers to does not exist.")
		case "40001", "40P01": // serialization_failure, deadlock_detected
			return &core.Error{Code: core.EUnavailable, Message: "The request conflicted with a concurrent one; retry it.", Cause: err}
		case "57P01", "57P02", "57P03", "53300": // admin shutdown, crash shutdown, cannot connect now, too many connections
			return unavailable(err)
		case "22021", "22P05": // character_not_in_repertoire (NUL, invalid UTF-8), untranslatable_character
			// Input the gate lets through (a form field, say) that no text column can hold.
			return &core.Error{Code: core.EValidation, Message: "Text may not contain NUL characters or invalid UTF-8.", Cause: err}
		}
		return err
	}
	var netErr net.Error
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) || errors.As(err, &netErr) || pgconn.SafeToRetry(err) {
		return unavailable(err)
	}
	return err
}

// isUniqueViolation reports whether err is a violation of the unique constraint or index
// named constraint, for services that answer one such conflict more precisely than translate.
func isUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == constraint
}

// unavailable keeps the cause for the logs while the client sees core.EUnavailable.
func unavailable(err error) error {
	return &core.Error{Code: core.EUnavailable, Message: "The database is unavailable; retry later.", Cause: err}
}

// WithTracing makes every statement a span of tp (otelpgx), a child of the span of its
// context (the request's, the job's). Spans carry the statement's text, never its
// parameters, and are named after the sqlc query ("db CredentialGetBySecret"). Without it
// (tracing off) the pool has no tracer and statements cost nothing more.
func WithTracing(tp trace.TracerProvider) func(*pgxpool.Config) {
	return func(cfg *pgxpool.Config) {
		cfg.ConnConfig.Tracer = otelpgx.NewTracer(otelpgx.WithTracerProvider(tp),
			otelpgx.WithDisableConnectionDetailsInAttributes(), otelpgx.WithSpanNameFunc(statementName),
			otelpgx.WithTrimSQLInSpanName(), otelpgx.WithDisableQuerySpanNamePrefix())
	}
}

// statementName names a statement's span: the sqlc query name of its "-- name: X :kind"
// comment, or its first word (BEGIN, COMMIT, SELECT…).
func statementName(sql string) string {
	sql = strings.TrimSpace(sql)
	if rest, ok := strings.CutPrefix(sql, "-- name: "); ok {
		if name, _, ok := strings.Cut(rest, " "); ok {
			return "db " + name
		}
	}
	if words := strings.Fields(sql); len(words) > 0 {
		return "db " + strings.ToUpper(words[0])
	}
	return "db"
}
