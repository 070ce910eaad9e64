package postgres_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/provider/coreapi/internal/postgres"
)

// The schema half of TestEveryTenantQueryFiltersOnOrganization: could every tenant-owned table
// be distributed by organization (Citus), the global tables be reference tables, and every
// query run unchanged? A distributed table's primary key and unique indexes must contain its
// distribution column, a foreign key between distributed tables must join on it, a reference
// table may not point at a distributed one, and a join of distributed tables must equate it.

// globalTables are the tables that have no organization_id: on a distributed PostgreSQL they
// are reference tables (copied to every node), or stay on the coordinator. Every table of the
// schema is either tenant-owned (it has organization_id) or listed here with why.
var globalTables = map[string]string{
	"products":          "the catalogue: every organization's subscriptions refer to it",
	"plans":             "the catalogue",
	"prices":            "the catalogue",
	"catalogue_version": "the catalogue's version counter (one row)",
	"product_incidents": "the operator's incidents of a product, seen by every subscriber of it",
	"operator_tokens":   "the operator's credentials: the operator belongs to no organization",
	"platform_einvoice_units": "the provider's own e-invoicing units, which sign the provider's invoices to every organization; " +
		"their ICV chain stays on the coordinator",
	"einvoice_sandbox_ca":            "the sandbox's certificate authority (one row)",
	"growth_visitors":                "provider-wide growth rollup of anonymous visitors, kept by growth_events' statement trigger",
	"growth_actors":                  "provider-wide growth rollup of actors per event name",
	"growth_provider_daily_counts":   "provider-wide growth rollup of daily counts",
	"growth_provider_monthly_counts": "provider-wide growth rollup of monthly counts",
	"growth_visitor_days":            "provider-wide growth rollup: visitors per day of their last sighting",
	"growth_actor_days":              "provider-wide growth rollup: actors per event name and day of their last sighting",
	"growth_visitor_hours":           "provider-wide growth rollup: visitors per hour of their last sighting",
	"growth_actor_hours":             "provider-wide growth rollup: actors per event name and hour of their last sighting",
	"goose_db_version":               "the migrations' own bookkeeping",
	"river_job":                      "River's job queue: stays on the coordinator (jobs carry the organization in their arguments)",
	"river_leader":                   "River's leader election",
	"river_migration":                "River's migrations",
	"river_notification":             "River's notifications",
	"river_queue":                    "River's queues",
}

// distributionColumns names the tables distributed by a column other than organization_id.
var distributionColumns = map[string]string{
	// The root: every organization_id of the other tables references organizations(id).
	"organizations": "id",
	// A record belongs to the principal that stored it (its scope); the operator's have no
	// organization. Looked up by (scope, key) only, joined with nothing, so its own shards.
	"idempotency_keys": "scope",
}

// globalLookupKeys are unique indexes of tenant-owned tables that must be unique across
// organizations, because they are looked up before any organization is known. On a distributed
// PostgreSQL each becomes a small lookup table distributed by that key (prefix → organization,
// id), written in the transaction that writes the row; the row itself stays with its organization.
var globalLookupKeys = map[string]string{
	"api_keys_prefix_key":                              "authentication finds a key by its public prefix",
	"oauth_tokens_token_hash_key":                      "authentication finds an access token by its hash",
	"onboardings_identity_issuer_identity_subject_key": "onboarding finds an identity before it has an organization",
}

type (
	catalogTable struct {
		name            string
		hasOrganization bool
		uniques         []catalogKey // the primary key and every other unique index
		references      []catalogReference
	}
	catalogKey struct {
		name    string
		columns []string
	}
	catalogReference struct {
		name, to           string
		columns, toColumns []string
	}
	// schemaProblem is one thing that would stop a table from being distributed.
	schemaProblem struct{ table, constraint, why string }
)

func (p schemaProblem) String() string { return p.table + "." + p.constraint + ": " + p.why }

// readCatalog reads the tables of schema (partitions excluded: they follow their parent) with
// their unique indexes and foreign keys.
func readCatalog(t *testing.T, db *postgres.DB, schema string) map[string]*catalogTable {
	t.Helper()
	ctx := context.Background()
	tables := map[string]*catalogTable{}
	scan := func(sql string, each func(name string, rest []any)) {
		t.Helper()
		rows, err := db.Pool.Query(ctx, sql, schema)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			each(vals[0].(string), vals[1:])
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	scan(`SELECT c.relname::text, EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid
	        AND a.attname = 'organization_id' AND NOT a.attisdropped)
	      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition`,
		func(name string, rest []any) {
			tables[name] = &catalogTable{name: name, hasOrganization: rest[0].(bool)}
		})
	scan(`SELECT tc.relname::text, ic.relname::text, ARRAY(SELECT coalesce(a.attname::text, '(expression)')
	        FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(num, ord)
	        LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.num ORDER BY k.ord)
	      FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid JOIN pg_class tc ON tc.oid = x.indrelid
	      JOIN pg_namespace n ON n.oid = tc.relnamespace
	      WHERE n.nspname = $1 AND x.indisunique AND tc.relkind IN ('r', 'p') AND NOT tc.relispartition`,
		func(name string, rest []any) {
			tables[name].uniques = append(tables[name].uniques, catalogKey{rest[0].(string), strs(rest[1])})
		})
	scan(`SELECT tc.relname::text, con.conname::text, rc.relname::text,
	        ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(num, ord)
	              JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.num ORDER BY k.ord),
	        ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(num, ord)
	              JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.num ORDER BY k.ord)
	      FROM pg_constraint con JOIN pg_class tc ON tc.oid = con.conrelid JOIN pg_class rc ON rc.oid = con.confrelid
	      JOIN pg_namespace n ON n.oid = tc.relnamespace
	      WHERE n.nspname = $1 AND con.contype = 'f' AND con.conparentid = 0 AND NOT tc.relispartition`,
		func(name string, rest []any) {
			tables[name].references = append(tables[name].references, catalogReference{
				name: rest[0].(string), to: rest[1].(string), columns: strs(rest[2]), toColumns: strs(rest[3]),
			})
		})
	return tables
}

func strs(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

// distributionColumn is the column t would be distributed by, or "" for a global table.
func distributionColumn(t *catalogTable, distributedBy map[string]string) string {
	if column, ok := distributedBy[t.name]; ok {
		return column
	}
	if t.hasOrganization {
		return "organization_id"
	}
	return ""
}

// distributionProblems lists what stops tables from being distributed by organization:
// unclassified tables, keys without the distribution column, foreign keys that do not join on
// it, and reference tables pointing at distributed ones.
func distributionProblems(tables map[string]*catalogTable, global, distributedBy map[string]string) []schemaProblem {
	var out []schemaProblem
	for _, t := range tables {
		column := distributionColumn(t, distributedBy)
		if column == "" {
			if _, ok := global[t.name]; !ok {
				out = append(out, schemaProblem{t.name, "(table)", "has no organization_id and is not listed as a global table"})
			}
		} else if _, ok := global[t.name]; ok {
			out = append(out, schemaProblem{t.name, "(table)", "is listed as a global table but is distributed by " + column})
		}
		for _, k := range t.uniques {
			if column != "" && !slices.Contains(k.columns, column) {
				out = append(out, schemaProblem{t.name, k.name, fmt.Sprintf("unique (%s) lacks %s", strings.Join(k.columns, ", "), column)})
			}
		}
		for _, r := range t.references {
			if why := referenceProblem(column, r, tables[r.to], distributedBy); why != "" {
				out = append(out, schemaProblem{t.name, r.name, why})
			}
		}
	}
	slices.SortFunc(out, func(a, b schemaProblem) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// referenceProblem says why foreign key r of a table distributed by column (global when "")
// could not be kept on a distributed PostgreSQL, or "".
func referenceProblem(column string, r catalogReference, to *catalogTable, distributedBy map[string]string) string {
	toColumn := distributionColumn(to, distributedBy)
	switch {
	case toColumn == "":
		return "" // a reference table: any table may point at it
	case column == "":
		return "a global table references " + r.to + ", which is distributed"
	}
	for i, c := range r.columns {
		if c == column && r.toColumns[i] == toColumn {
			return ""
		}
	}
	return fmt.Sprintf("(%s) → %s(%s) does not join %s to %s", strings.Join(r.columns, ", "), r.to,
		strings.Join(r.toColumns, ", "), column, toColumn)
}

// checkSchemaDistributes is the schema half of the tenancy test on the migrated database.
func checkSchemaDistributes(t *testing.T, db *postgres.DB) {
	tables := readCatalog(t, db, "public")
	if len(tables) < 30 || tables["api_keys"] == nil {
		t.Fatalf("read %d tables from the catalog; expected the whole schema", len(tables))
	}
	for _, p := range distributionProblems(tables, globalTables, distributionColumns) {
		_, lookup := globalLookupKeys[p.constraint]
		if !lookup {
			t.Errorf("%s", p)
		}
	}
	for name := range globalTables {
		if tables[name] == nil {
			t.Errorf("globalTables names %s, which is no table of the schema: remove it", name)
		}
	}
	for name := range globalLookupKeys {
		if !hasUnique(tables, name) {
			t.Errorf("globalLookupKeys names %s, which is no unique index of the schema: remove it", name)
		}
	}
}

func hasUnique(tables map[string]*catalogTable, name string) bool {
	for _, t := range tables {
		if slices.ContainsFunc(t.uniques, func(k catalogKey) bool { return k.name == name }) {
			return true
		}
	}
	return false
}

// syntheticSchema has one table of each kind the schema check must accept or refuse.
const syntheticSchema = `
CREATE SCHEMA synthetic;
SET search_path = synthetic;
CREATE TABLE organizations (id uuid PRIMARY KEY);
CREATE TABLE catalogue (id uuid PRIMARY KEY, code text UNIQUE);
CREATE TABLE good (organization_id uuid REFERENCES organizations, id uuid,
    catalogue_id uuid REFERENCES catalogue, code text,
    PRIMARY KEY (organization_id, id), UNIQUE (organization_id, code));
CREATE TABLE good_child (organization_id uuid, id uuid, good_id uuid, PRIMARY KEY (organization_id, id),
    FOREIGN KEY (organization_id, good_id) REFERENCES good (organization_id, id));
CREATE TABLE keyed_by_id (organization_id uuid, id uuid PRIMARY KEY, code text);
CREATE UNIQUE INDEX keyed_by_id_code ON keyed_by_id (code);
CREATE TABLE single_reference (organization_id uuid, id uuid, keyed_id uuid REFERENCES keyed_by_id,
    PRIMARY KEY (organization_id, id));
CREATE TABLE crossed_reference (organization_id uuid, id uuid, good_id uuid, PRIMARY KEY (organization_id, id),
    CONSTRAINT crossed FOREIGN KEY (organization_id, good_id) REFERENCES good (id, organization_id));
CREATE TABLE global_pointing_at_tenant (id uuid PRIMARY KEY, owner uuid, good_id uuid,
    CONSTRAINT pointing FOREIGN KEY (owner, good_id) REFERENCES good (organization_id, id));
CREATE TABLE unlisted (id uuid PRIMARY KEY);
RESET search_path;`

// checkSchemaCheckCanFail runs the schema check on a small synthetic schema in db and compares
// what it reports with what is wrong there, so that the check above is known to be able to fail.
func checkSchemaCheckCanFail(t *testing.T, db *postgres.DB) {
	if _, err := db.Pool.Exec(context.Background(), syntheticSchema); err != nil {
		t.Fatal(err)
	}
	global := map[string]string{"catalogue": "synthetic", "global_pointing_at_tenant": "synthetic"}
	var got []string
	for _, p := range distributionProblems(readCatalog(t, db, "synthetic"), global, map[string]string{"organizations": "id"}) {
		got = append(got, p.table+"."+p.constraint)
	}
	want := []string{
		"crossed_reference.crossed",
		"global_pointing_at_tenant.pointing",
		"keyed_by_id.keyed_by_id_code",
		"keyed_by_id.keyed_by_id_pkey",
		"single_reference.single_reference_keyed_id_fkey",
		"unlisted.(table)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("schema problems of the synthetic schema:\n got %q\nwant %q", got, want)
	}
}

// The query half: a join of two tenant-owned tables must equate their organization_id, either
// directly (a.organization_id = b.organization_id) or through one parameter both are equal to.

var (
	aliasAfter   = regexp.MustCompile(`(?i)^\s+(?:AS\s+)?(\w+)`)
	columnEquals = regexp.MustCompile(`\b(\w+)\.(\w+)\s*=\s*(\w+)\.(\w+)\b`)
	parameterEq  = regexp.MustCompile(`\b(\w+)\.(\w+)\s*=\s*(@\w+|\$\d+|sqlc\.arg\(\s*\w+\s*\))`)
	notAnAlias   = regexp.MustCompile(`(?i)^(WHERE|ON|JOIN|LEFT|RIGHT|INNER|FULL|CROSS|SET|USING|GROUP|ORDER|LIMIT|SELECT|VALUES|RETURNING|AND|OR|FOR|WITH|LATERAL|NATURAL|UNION|OFFSET)$`)
)

// organizationColumn is the column of tenant-owned table that names its organization.
func organizationColumn(table string) string {
	if column, ok := distributionColumns[table]; ok {
		return column
	}
	return "organization_id"
}

// joinProblem says which joins of tenant-owned tables in q do not equate their organization,
// or "". A join is an equality between columns of two aliases of tenant-owned tables.
func joinProblem(q query, tenant map[string]bool) string {
	aliases := map[string]string{} // alias (or table name) → table
	for _, m := range tableRef.FindAllStringSubmatchIndex(q.sql, -1) {
		table := strings.ToLower(q.sql[m[2]:m[3]])
		if !tenant[table] {
			continue
		}
		aliases[table] = table
		if a := aliasAfter.FindStringSubmatch(q.sql[m[1]:]); a != nil && !notAnAlias.MatchString(a[1]) {
			aliases[a[1]] = table
		}
	}
	same := unionFind{}
	onOrganization := func(alias, column string) bool {
		table, ok := aliases[alias]
		return ok && column == organizationColumn(table)
	}
	for _, m := range parameterEq.FindAllStringSubmatch(q.sql, -1) {
		if onOrganization(m[1], m[2]) {
			same.join(m[1], strings.ReplaceAll(m[3], " ", ""))
		}
	}
	var joins [][2]string
	for _, m := range columnEquals.FindAllStringSubmatch(q.sql, -1) {
		a, b := m[1], m[3]
		if _, ok := aliases[a]; !ok || a == b {
			continue
		}
		if _, ok := aliases[b]; !ok {
			continue
		}
		joins = append(joins, [2]string{a, b})
		if onOrganization(a, m[2]) && onOrganization(b, m[4]) {
			same.join(a, b)
		}
	}
	var unequated []string
	for _, j := range joins {
		if same.find(j[0]) != same.find(j[1]) {
			unequated = append(unequated, aliases[j[0]]+" "+j[0]+" with "+aliases[j[1]]+" "+j[1])
		}
	}
	if len(unequated) == 0 {
		return ""
	}
	return "joins " + strings.Join(unequated, ", ") + " without equating their organization_id"
}

type unionFind map[string]string

func (u unionFind) find(x string) string {
	for u[x] != "" && u[x] != x {
		x = u[x]
	}
	return x
}

func (u unionFind) join(a, b string) { u[u.find(a)] = u.find(b) }
