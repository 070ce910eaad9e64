package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The append-only tables are partitioned by ranges of their UUIDv7 id, that is by the time
// each row was written (migration 00390, docs/design.md "Partitions and retention"). The
// service keeps them itself, on a plain PostgreSQL: CreatePartitions makes the partitions of
// the periods ahead, DropExpiredPartitions drops each partition whose newest possible row is
// older than its table's retention. Nothing else deletes from these tables.

// partitionedTable is one table partitioned by time: by day or by month (UTC).
type partitionedTable struct {
	name    string
	monthly bool
	// dependents are the tables partitioned by this one's id (a foreign key to it, in this
	// order: each references the one before), whose partitions have the same bounds and are
	// created and dropped with this one's; keptWhile is a condition on the period's ids ($1,
	// $2: its bounds) that keeps its partitions past retention while it holds.
	dependents []string
	keptWhile  string
}

var partitionedTables = []partitionedTable{
	{name: "request_logs"},
	{name: "request_log_bodies"}, // kept with request_logs: the same id key and retention
	{name: "audit_events", monthly: true},
	{name: "growth_events", monthly: true},
	// Deliveries and their attempts are partitioned by their event's id (migration 00460): a
	// day's events go with their deliveries and attempts, never while a delivery is pending.
	{name: "webhook_events", dependents: []string{"webhook_deliveries", "webhook_delivery_attempts"},
		keptWhile: "EXISTS (SELECT 1 FROM webhook_deliveries WHERE status = 'pending' AND event_id >= $1 AND event_id < $2)"},
	{name: "usage_events", monthly: true},
}

// Partitions are created this far ahead of now: a week of daily partitions, two months of
// monthly ones. Rows are written at the time of their id, so a partition is needed only once
// its period begins; the margin lets the service go without maintenance that long.
const (
	dailyPartitionsAhead   = 7 * 24 * time.Hour
	monthlyPartitionsAhead = 62 * 24 * time.Hour
)

// partitionLockTimeout bounds how long creating or dropping a partition waits for the lock
// it needs on its table: a long query on the table fails the maintenance run, which the next
// run repeats, instead of queueing every writer behind the waiting DDL.
const partitionLockTimeout = "5s"

// Retention is how long the rows of each partitioned table are kept. A partition is dropped
// once its whole period is past retention, so rows live up to one period (a day, a month)
// longer.
type Retention struct {
	RequestLogs   time.Duration
	AuditEvents   time.Duration
	GrowthEvents  time.Duration
	WebhookEvents time.Duration // with their deliveries and attempts
	UsageEvents   time.Duration
}

// DefaultRetention keeps request logs and webhook events 30 days, audit events 400 days,
// growth events 13 months (396 days) and usage events 400 days: MinUsageEventRetention.
var DefaultRetention = Retention{
	RequestLogs:   30 * 24 * time.Hour,
	AuditEvents:   400 * 24 * time.Hour,
	GrowthEvents:  396 * 24 * time.Hour,
	WebhookEvents: MinWebhookEventRetention,
	UsageEvents:   MinUsageEventRetention,
}

// MinWebhookEventRetention is the least retention of webhook events: 30 days, far beyond a
// delivery's longest schedule (webhook.Policy: 12 attempts over about a day, at most 11 × 8 h
// when every answer asks for the longest Retry-After), so a period is past retention long
// after its deliveries' first schedules ended. A delivery queued again by hand (resend,
// recover) may still be pending then: its period's partitions wait for it (keptWhile).
const MinWebhookEventRetention = 30 * 24 * time.Hour

// MinUsageEventRetention is the least retention of usage events: 400 days. Usage is read to
// rate a billing period once it has ended (the longest is a year), to retry that invoice
// through dunning, and by spend controls and their history (the current month, and the
// months a client asks for): a year and a month keeps a yearly period rated a month late.
const MinUsageEventRetention = 400 * 24 * time.Hour

// OrDefault is r with DefaultRetention's value for each zero field.
func (r Retention) OrDefault() Retention {
	orDefault := func(v, def time.Duration) time.Duration {
		if v == 0 {
			return def
		}
		return v
	}
	return Retention{
		RequestLogs:   orDefault(r.RequestLogs, DefaultRetention.RequestLogs),
		AuditEvents:   orDefault(r.AuditEvents, DefaultRetention.AuditEvents),
		GrowthEvents:  orDefault(r.GrowthEvents, DefaultRetention.GrowthEvents),
		WebhookEvents: orDefault(r.WebhookEvents, DefaultRetention.WebhookEvents),
		UsageEvents:   orDefault(r.UsageEvents, DefaultRetention.UsageEvents),
	}
}

func (r Retention) of(table string) time.Duration {
	switch table {
	case "request_logs", "request_log_bodies":
		return r.RequestLogs
	case "audit_events":
		return r.AuditEvents
	case "webhook_events":
		return r.WebhookEvents
	case "usage_events":
		return r.UsageEvents
	default:
		return r.GrowthEvents
	}
}

// Partition is one partition of a partitioned table: it holds the rows written in [From, To).
// From is zero for the table's first partition (MINVALUE: every row stored before the table
// was partitioned).
type Partition struct {
	Table    string
	Name     string
	From, To time.Time
}

func (t partitionedTable) periodStart(at time.Time) time.Time {
	at = at.UTC()
	if t.monthly {
		return time.Date(at.Year(), at.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
}

func (t partitionedTable) nextPeriod(start time.Time) time.Time {
	if t.monthly {
		return start.AddDate(0, 1, 0)
	}
	return start.AddDate(0, 0, 1)
}

func (t partitionedTable) ahead() time.Duration {
	if t.monthly {
		return monthlyPartitionsAhead
	}
	return dailyPartitionsAhead
}

// partitionName is the partition of the period starting at start: request_logs_p20261125,
// audit_events_p202612.
func (t partitionedTable) partitionName(start time.Time) string {
	if t.monthly {
		return t.name + start.Format("_p200601")
	}
	return t.name + start.Format("_p20060102")
}

// partitionBound is the least UUIDv7 of instant at: its first 48 bits are the milliseconds
// since the epoch, the rest zero (the database's time_partition_bound).
func partitionBound(at time.Time) uuid.UUID {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(at.UnixMilli()))
	var id uuid.UUID
	copy(id[:6], b[2:])
	return id
}

// boundTime is the instant of UUIDv7 bound id.
func boundTime(id uuid.UUID) time.Time {
	var b [8]byte
	copy(b[2:], id[:6])
	return time.UnixMilli(int64(binary.BigEndian.Uint64(b[:]))).UTC()
}

// partitionConn is a pool or a connection: maintenance runs each table's work in a
// transaction of its own.
type partitionConn interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// rangeBound reads the bounds PostgreSQL prints for a range partition of a uuid key.
var rangeBound = regexp.MustCompile(`^FOR VALUES FROM \((MINVALUE|'([0-9a-f-]{36})')\) TO \('([0-9a-f-]{36})'\)$`)

// listPartitions reads the partitions of table t from the catalog, oldest first. A DEFAULT
// partition is not one of them: it holds no period (webhook_delivery_attempts had one from
// migration 00460 to 00620).
func listPartitions(ctx context.Context, tx pgx.Tx, t partitionedTable) ([]Partition, error) {
	rows, err := tx.Query(ctx, `
		SELECT c.relname::text, pg_get_expr(c.relpartbound, c.oid)
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = $1::regclass AND pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT'`, t.name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var parts []Partition
	for rows.Next() {
		var name, bound string
		if err := rows.Scan(&name, &bound); err != nil {
			return nil, err
		}
		m := rangeBound.FindStringSubmatch(bound)
		if m == nil {
			return nil, fmt.Errorf("partition %s of %s: unexpected bound %q", name, t.name, bound)
		}
		p := Partition{Table: t.name, Name: name, To: boundTime(uuid.MustParse(m[3]))}
		if m[2] != "" {
			p.From = boundTime(uuid.MustParse(m[2]))
		}
		parts = append(parts, p)
	}
	slices.SortFunc(parts, func(a, b Partition) int { return a.To.Compare(b.To) })
	return parts, rows.Err()
}

// family is t and its dependents, in the order of their foreign keys.
func (t partitionedTable) family() []partitionedTable {
	f := []partitionedTable{t}
	for _, name := range t.dependents {
		f = append(f, partitionedTable{name: name, monthly: t.monthly})
	}
	return f
}

// Partitions lists the partitions of every partitioned table, each table's oldest first.
func (d *DB) Partitions(ctx context.Context) ([]Partition, error) {
	var all []Partition
	for _, t := range partitionedTables {
		err := maintainTable(ctx, d.Pool, t, func(tx pgx.Tx) error {
			for _, member := range t.family() {
				parts, err := listPartitions(ctx, tx, member)
				if err != nil {
					return err
				}
				all = append(all, parts...)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return all, nil
}

// maintainTable runs fn in a transaction holding table t's maintenance lock, so that two
// processes never create or drop its partitions at once (a transaction-level lock: it works
// through a pooler in transaction mode too).
func maintainTable(ctx context.Context, conn partitionConn, t partitionedTable, fn func(pgx.Tx) error) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('partitions:' || $1::text)), set_config('lock_timeout', $2, true)",
		t.name, partitionLockTimeout); err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// lockFamily takes the locks that creating or dropping partitions of t's family needs, in
// the order of their foreign keys: the order writers take them in (an event, then its
// deliveries; a delivery, then its attempts), so maintenance never deadlocks with them.
func lockFamily(ctx context.Context, tx pgx.Tx, t partitionedTable) error {
	if len(t.dependents) == 0 {
		return nil
	}
	names := make([]string, 0, 1+len(t.dependents))
	for _, member := range t.family() {
		names = append(names, pgx.Identifier{member.name}.Sanitize())
	}
	_, err := tx.Exec(ctx, "LOCK TABLE "+strings.Join(names, ", ")+" IN ACCESS EXCLUSIVE MODE")
	return err
}

// CreatePartitions creates, for every partitioned table and its dependents, the partitions
// of the periods from the one holding now to those beginning within the table's margin ahead
// of it, and returns those it created. A period some partition already covers in part is
// skipped.
func CreatePartitions(ctx context.Context, conn partitionConn, now time.Time) ([]Partition, error) {
	var created []Partition
	for _, t := range partitionedTables {
		err := maintainTable(ctx, conn, t, func(tx pgx.Tx) error {
			var missing []Partition
			for _, member := range t.family() {
				existing, err := listPartitions(ctx, tx, member)
				if err != nil {
					return err
				}
				for start := t.periodStart(now); start.Before(now.Add(t.ahead())); start = t.nextPeriod(start) {
					p := Partition{Table: member.name, Name: member.partitionName(start), From: start, To: t.nextPeriod(start)}
					if !slices.ContainsFunc(existing, p.overlaps) {
						missing = append(missing, p)
					}
				}
			}
			if len(missing) == 0 {
				return nil
			}
			if err := lockFamily(ctx, tx, t); err != nil {
				return err
			}
			for _, p := range missing {
				if _, err := tx.Exec(ctx, fmt.Sprintf("CREATE TABLE %s PARTITION OF %s FOR VALUES FROM ('%s') TO ('%s')",
					pgx.Identifier{p.Name}.Sanitize(), pgx.Identifier{p.Table}.Sanitize(), partitionBound(p.From), partitionBound(p.To))); err != nil {
					return fmt.Errorf("creating partition %s: %w", p.Name, err)
				}
				created = append(created, p)
			}
			return nil
		})
		if err != nil {
			return created, err
		}
	}
	return created, nil
}

func (p Partition) overlaps(q Partition) bool { return p.From.Before(q.To) && q.From.Before(p.To) }

// DropExpiredPartitions drops, for every partitioned table, the partitions whose period ended
// retention or longer before now, with the same period's partitions of its dependents, and
// returns them. Dropping a partition is a catalog change: its rows go at once, without a
// DELETE, dead tuples or a vacuum. A period whose rows meet the table's keptWhile is kept
// (and the periods after it), for a later run to drop.
func DropExpiredPartitions(ctx context.Context, conn partitionConn, now time.Time, retention Retention) ([]Partition, error) {
	var dropped []Partition
	for _, t := range partitionedTables {
		horizon := now.Add(-retention.of(t.name))
		err := maintainTable(ctx, conn, t, func(tx pgx.Tx) error {
			existing, err := listPartitions(ctx, tx, t)
			if err != nil {
				return err
			}
			locked := false
			for _, p := range existing {
				if p.To.After(horizon) {
					break // oldest first
				}
				if !locked { // before kept: a resend committing meanwhile is seen, not dropped
					if err := lockFamily(ctx, tx, t); err != nil {
						return err
					}
					locked = true
				}
				if kept, err := t.kept(ctx, tx, p); err != nil || kept {
					return err
				}
				gone, err := dropPeriod(ctx, tx, t, p)
				dropped = append(dropped, gone...)
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return dropped, err
		}
	}
	return dropped, nil
}

// kept is whether partition p of t holds a row meeting t's keptWhile.
func (t partitionedTable) kept(ctx context.Context, tx pgx.Tx, p Partition) (bool, error) {
	if t.keptWhile == "" {
		return false, nil
	}
	from := uuid.Nil // the first partition holds every id below its bound
	if !p.From.IsZero() {
		from = partitionBound(p.From)
	}
	var kept bool
	err := tx.QueryRow(ctx, "SELECT "+t.keptWhile, from, partitionBound(p.To)).Scan(&kept)
	return kept, err
}

// dropPeriod drops partition p of t and the partitions of its dependents ending where it
// does, the last dependent first. A partition that another table's foreign key references is
// detached before it is dropped: detaching checks that no row refers to it, which holds once
// the referencing partition of the same period is gone.
func dropPeriod(ctx context.Context, tx pgx.Tx, t partitionedTable, p Partition) ([]Partition, error) {
	family := t.family()
	var dropped []Partition
	for i := len(family) - 1; i >= 0; i-- {
		member := family[i]
		parts, err := listPartitions(ctx, tx, member)
		if err != nil {
			return dropped, err
		}
		for _, q := range parts {
			if !q.To.Equal(p.To) {
				continue
			}
			if len(t.dependents) > 0 {
				if _, err := tx.Exec(ctx, fmt.Sprintf("ALTER TABLE %s DETACH PARTITION %s",
					pgx.Identifier{member.name}.Sanitize(), pgx.Identifier{q.Name}.Sanitize())); err != nil {
					return dropped, fmt.Errorf("detaching partition %s: %w", q.Name, err)
				}
			}
			if _, err := tx.Exec(ctx, "DROP TABLE "+pgx.Identifier{q.Name}.Sanitize()); err != nil {
				return dropped, fmt.Errorf("dropping partition %s: %w", q.Name, err)
			}
			dropped = append(dropped, q)
		}
	}
	return dropped, nil
}

// MaintainPartitions creates the partitions ahead of now and drops those past retention: the
// work of the maintenance job (internal/jobs), which passes the time so a test can move it.
func (d *DB) MaintainPartitions(ctx context.Context, now time.Time, retention Retention) (created, dropped []Partition, err error) {
	if created, err = CreatePartitions(ctx, d.Pool, now); err != nil {
		return created, nil, err
	}
	dropped, err = DropExpiredPartitions(ctx, d.Pool, now, retention)
	return created, dropped, err
}
