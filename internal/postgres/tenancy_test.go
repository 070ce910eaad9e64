package postgres_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/provider/coreapi/internal/postgres"
)

// tenancyExempt lists the queries that touch a tenant-owned table (one with an
// organization_id column) without `organization_id = ` in their SQL, each with why the
// organization is not, or cannot be, the caller's. Anything else must filter on it.
var tenancyExempt = map[string]string{
	// Authentication: the credential is what tells whose request it is.
	"APIKeyGetByPrefix":       "authentication looks a key up by its public prefix before any tenant is known",
	"OAuthTokenGetByHash":     "authentication looks a token up by its hash before any tenant is known",
	"APIKeyTouch":             "authentication maintains last_used_at of the key it just found by prefix",
	"OnboardingGetByIdentity": "onboarding looks an identity up before it has an organization",
	"IdempotencyKeyGet":       "the scope of a record is the principal that stored it, organization included",

	// The operator's cross-tenant reads and locks: called only for the operator principal
	// (see owned in tenancy.go), or, for APIKeyGetByIDAnyOrganization, by the token endpoint
	// while it authenticates a client that named its key by id.
	"APIKeyGetByIDAnyOrganization":                     "operator read; client authentication",
	"APIKeyGetByIDForUpdateAnyOrganization":            "operator lock",
	"APIKeyListAnyOrganization":                        "operator list",
	"AuditEventListAnyOrganization":                    "operator list",
	"AuditEventScanFloorAnyOrganization":               "operator list: where its filtered page stops",
	"ConnectedBusinessGetByIDAnyOrganization":          "operator read",
	"ConnectedBusinessGetByIDForUpdateAnyOrganization": "operator lock",
	"ConnectedBusinessListAnyOrganization":             "operator list",
	"SubscriptionGetByIDAnyOrganization":               "operator read",
	"SubscriptionGetByIDForUpdateAnyOrganization":      "operator lock",
	"TestClockGetByIDAnyOrganization":                  "operator read",
	"TestClockGetByIDForUpdateAnyOrganization":         "operator lock",
	"SupportCaseGetByIDAnyOrganization":                "operator read",
	"SupportCaseGetByIDForUpdateAnyOrganization":       "operator lock",
	"TaxInvoiceGetByIDAnyOrganization":                 "operator read",
	"TaxInvoiceSubmissionGetAnyOrganization":           "operator read",
	"EgsCertificateRevokedAtAnyOrganization":           "the sandbox CA's revocation list: public, as a certification authority's is; only the time is read",
	"WebhookEndpointGetByIDAnyOrganization":            "operator read",
	"WebhookEndpointListAnyOrganization":               "operator list",
	"BillingInvoiceGetByIDAnyOrganization":             "operator read",
	"BillingInvoiceGetByIDForUpdateAnyOrganization":    "operator lock",
	"BillingInvoiceListAnyOrganization":                "operator list",
	"BillingPaymentGetByIDAnyOrganization":             "operator read",
	"BillingPaymentListAnyOrganization":                "operator list",
	"CreditTransactionListAnyOrganization":             "operator list",
	"WebhookEventGetByIDAnyOrganization":               "operator read",
	"WebhookEventListAnyOrganization":                  "operator list",
	"WebhookDeliveryInsertRecovered":                   "inserts rows whose organization_id is @organization_id (INSERT … SELECT unnest)",
	"GrowthSummaryCountsAnyOrganization":               "operator's provider-wide summary",
	"GrowthSummaryUniquesAnyOrganization":              "operator's provider-wide summary",
	"GrowthSummaryFunnelAnyOrganization":               "operator's provider-wide summary",
	"SubscriberOrganizationsOfPlanAnyOrganization":     "operator's catalogue change: the organizations its webhook event goes to",
	"SubscriberOrganizationsOfProductAnyOrganization":  "operator's catalogue change: the organizations its webhook event goes to",

	// Product incidents (operator only) act on the product's subscriptions of every organization.
	"ProductLockForSubscriptionAnyOrganization":       "operator lock of a subscription's product",
	"SubscriptionLockByProductServiceAnyOrganization": "operator incident: locks the product's subscriptions",
	"SubscriptionSetServiceAnyOrganization":           "operator incident: moves the subscriptions it locked",
	"RequestLogGetAnyOrganization":                    "operator read of any organization's request log by id",

	// Workers and sweeps (internal/jobs): they run for no principal over every organization's
	// rows; what they then change of a tenant's rows they reach by the row's own
	// organization_id.
	"IdempotencyKeyDeleteExpired":       "sweep: removes expired records of every organization",
	"GrowthDailyUniquesAnyOrganization": "operator-only provider-wide rollup of every organization",
	"GrowthDailyFunnelAnyOrganization":  "operator-only provider-wide rollup of every organization",
	"GrowthHourlyCountsAnyOrganization": "operator-only provider-wide rollup of every organization",
	"BillingStepsDueAnyOrganization":    "worker: the renewal run's scan of every organization on no test clock; each step is then locked by its organization_id",

	// The renewal run's batch (renewalbatch.go): one statement for the subscriptions of many
	// organizations, each named by its organization_id with its id (joined on both).
	"RenewalBatchClaimAnyOrganization":             "worker: locks the batch's subscriptions by (organization_id, id)",
	"RenewalBatchDueAnyOrganization":               "worker: the batch's due check, by (organization_id, id)",
	"UsageCountsInPeriodsAnyOrganization":          "worker: the batch's usage, by organization_id and product",
	"WebhookEndpointListEnabledAnyOrganization":    "worker: the endpoints of the batch's organizations",
	"BillingInvoiceInsertManyAnyOrganization":      "worker: the batch's invoices, each with its organization_id",
	"SubscriptionRenewalInsertManyAnyOrganization": "worker: the batch's renewal records, each with its organization_id",
	"SubscriptionRenewManyAnyOrganization":         "worker: the batch's locked subscriptions, by (organization_id, id)",
	"AuditEventInsertManyAnyOrganization":          "worker: the batch's audit entries, each with its organization_id",
	"WebhookEventInsertManyAnyOrganization":        "worker: the batch's webhook events, each with its organization_id",
	"WebhookDeliveryInsertManyAnyOrganization":     "worker: the batch's deliveries, each with its organization_id",
}

// TestEveryTenantQueryFiltersOnOrganization reads every sqlc query of db/queries and the
// catalog of a migrated database, and fails when
//   - a query reads, locks, updates or deletes rows of a table that has an organization_id
//     column without an `organization_id = ` predicate, unless it is in tenancyExempt (a
//     nullable filter, `… IS NULL OR organization_id = …`, never counts);
//   - a query joins tenant-owned tables without equating their organization_id;
//   - the schema could not be distributed by organization (distribution_test.go): a tenant-owned
//     table's primary key or unique index lacks organization_id, a foreign key between
//     tenant-owned tables does not join on it, or a table is neither tenant-owned nor listed in
//     globalTables.
//
// Its detectors are themselves checked on synthetic cases: the schema's here, the queries' in
// TestTenancyCheckCatchesAMissingFilter.
func TestEveryTenantQueryFiltersOnOrganization(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	tenant := tenantTables(t, db)
	if !tenant["api_keys"] || !tenant["subscriptions"] {
		t.Fatalf("tenant-owned tables from the catalog = %v; expected api_keys and subscriptions among them", tenant)
	}
	queries := readQueries(t, filepath.Join("..", "..", "db", "queries"))
	if len(queries) < 50 {
		t.Fatalf("read %d queries from db/queries; expected all of them", len(queries))
	}
	t.Run("QueriesFilterOnOrganization", func(t *testing.T) {
		seen := map[string]bool{}
		for _, q := range queries {
			seen[q.name] = true
			if problem := tenancyProblem(q, tenant); problem != "" {
				if _, ok := tenancyExempt[q.name]; !ok {
					t.Errorf("%s (%s): %s", q.name, q.file, problem)
				}
			}
		}
		for name := range tenancyExempt {
			if !seen[name] {
				t.Errorf("tenancyExempt names %s, which is no query of db/queries: remove it", name)
			}
		}
	})
	t.Run("JoinsEquateOrganization", func(t *testing.T) {
		joinable := maps.Clone(tenant)
		joinable["organizations"] = true
		for _, q := range queries {
			if problem := joinProblem(q, joinable); problem != "" {
				t.Errorf("%s (%s): %s", q.name, q.file, problem)
			}
		}
	})
	t.Run("SchemaDistributesByOrganization", func(t *testing.T) { checkSchemaDistributes(t, db) })
	t.Run("SchemaCheckCanFail", func(t *testing.T) { checkSchemaCheckCanFail(t, db) })
}

// TestTenancyCheckCatchesAMissingFilter shows the check above can fail: synthetic queries
// without the predicate, or with only a nullable one, are reported; correct ones are not.
func TestTenancyCheckCatchesAMissingFilter(t *testing.T) {
	t.Parallel()
	tenant := map[string]bool{"api_keys": true, "support_cases": true}
	expectProblems(t, tenancyProblem, tenant, []syntheticQuery{
		{"SELECT * FROM api_keys WHERE id = @id FOR UPDATE;", true},
		{"SELECT * FROM api_keys WHERE (sqlc.narg(organization_id)::uuid IS NULL OR organization_id = sqlc.narg(organization_id));", true},
		{"UPDATE support_cases SET status = 'closed' WHERE id = @id RETURNING *;", true},
		{"DELETE FROM api_keys WHERE id = @id;", true},
		{"SELECT k.id FROM products p JOIN api_keys k ON k.id = p.id;", true},
		{"INSERT INTO support_cases (id, status) SELECT @id, status FROM support_cases WHERE id = @other;", true},
		{"SELECT * FROM api_keys WHERE organization_id = @organization_id AND id = @id FOR UPDATE;", false},
		{"UPDATE support_cases SET status = 'closed' WHERE organization_id = @organization_id AND id = @id;", false},
		{"INSERT INTO api_keys (id, organization_id) VALUES (@id, @organization_id);", false},
		{"SELECT * FROM products WHERE id = @id;", false},
	})
}

// TestTenancyCheckCatchesAJoinAcrossOrganizations shows the join check can fail: a join of tenant-owned tables that does not
// equate their organization_id, directly or through one parameter, is reported.
func TestTenancyCheckCatchesAJoinAcrossOrganizations(t *testing.T) {
	t.Parallel()
	tenant := map[string]bool{"api_keys": true, "oauth_tokens": true, "connected_businesses": true, "organizations": true}
	expectProblems(t, joinProblem, tenant, []syntheticQuery{
		{"SELECT * FROM oauth_tokens t JOIN api_keys k ON k.id = t.api_key_id WHERE t.organization_id = @organization_id;", true},
		{"SELECT * FROM oauth_tokens JOIN api_keys ON api_keys.id = oauth_tokens.api_key_id WHERE oauth_tokens.token_hash = @h;", true},
		{"SELECT * FROM oauth_tokens t JOIN api_keys k ON k.id = t.api_key_id WHERE t.organization_id = @a AND k.organization_id = @b;", true},
		{"SELECT * FROM api_keys k LEFT JOIN connected_businesses b ON b.organization_id = k.organization_id AND b.id = k.connected_business_id " +
			"JOIN oauth_tokens t ON t.api_key_id = k.id;", true},
		{"SELECT * FROM oauth_tokens t JOIN api_keys k ON k.organization_id = t.organization_id AND k.id = t.api_key_id;", false},
		{"SELECT * FROM oauth_tokens t JOIN api_keys k ON k.id = t.api_key_id WHERE t.organization_id = @org AND k.organization_id = @org;", false},
		{"SELECT * FROM organizations o JOIN api_keys k ON k.organization_id = o.id;", false},
		{"SELECT * FROM api_keys k JOIN products p ON p.id = k.product_id WHERE k.prefix = @prefix;", false},
		{"SELECT (SELECT count(*) FROM api_keys a), (SELECT count(*) FROM oauth_tokens b);", false},
	})
}

type syntheticQuery struct {
	sql  string
	want bool // a problem
}

// expectProblems runs check on each synthetic query and fails where it reports a problem
// where none is wanted, or none where one is.
func expectProblems(t *testing.T, check func(query, map[string]bool) string, tenant map[string]bool, cases []syntheticQuery) {
	t.Helper()
	for _, tc := range cases {
		got := check(query{name: "Synthetic", sql: tc.sql}, tenant) != ""
		if got != tc.want {
			t.Errorf("problem reported = %v, want %v, for %s", got, tc.want, tc.sql)
		}
	}
}

type query struct{ name, file, sql string }

var nameLine = regexp.MustCompile(`(?m)^-- name: (\w+) `)

// readQueries splits every .sql file of dir into its `-- name:` blocks, comments removed.
func readQueries(t *testing.T, dir string) []query {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no query files in %s: %v", dir, err)
	}
	var out []query
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		marks := nameLine.FindAllStringSubmatchIndex(text, -1)
		for i, m := range marks {
			end := len(text)
			if i+1 < len(marks) {
				end = marks[i+1][0]
			}
			var body []string
			for _, line := range strings.Split(text[m[1]:end], "\n")[1:] {
				if code, _, _ := strings.Cut(line, "--"); strings.TrimSpace(code) != "" {
					body = append(body, code)
				}
			}
			out = append(out, query{name: text[m[2]:m[3]], file: filepath.Base(f), sql: strings.Join(body, "\n")})
		}
	}
	return out
}

var (
	tableRef       = regexp.MustCompile(`(?i)\b(?:FROM|JOIN|UPDATE|INTO)\s+(\w+)`)
	orgPredicate   = regexp.MustCompile(`(?i)\borganization_id\s*=\s*(?:@|\$|sqlc\.arg)`)
	nullableFilter = regexp.MustCompile(`(?i)IS\s+NULL\s+OR\s+[\w.]*organization_id\b`)
	plainInsert    = regexp.MustCompile(`(?is)^\s*INSERT\s+INTO\s+\w+\s*\(([^)]*)\)\s*VALUES\b`)
)

// tenancyProblem says what is wrong with q's tenancy, or "" when nothing is: q touches no
// tenant-owned table, or filters on organization_id, or is an INSERT … VALUES that sets it.
func tenancyProblem(q query, tenant map[string]bool) string {
	var touched []string
	for _, m := range tableRef.FindAllStringSubmatch(q.sql, -1) {
		if name := strings.ToLower(m[1]); tenant[name] && !slices.Contains(touched, name) {
			touched = append(touched, name)
		}
	}
	if len(touched) == 0 {
		return ""
	}
	if nullableFilter.MatchString(q.sql) {
		return "filters on organization_id only when it is given (IS NULL OR …): write a query per case"
	}
	if m := plainInsert.FindStringSubmatch(q.sql); m != nil && !strings.Contains(strings.ToUpper(q.sql), " SELECT ") {
		if slices.Contains(strings.Fields(strings.ReplaceAll(m[1], ",", " ")), "organization_id") {
			return ""
		}
	}
	if orgPredicate.MatchString(q.sql) {
		return ""
	}
	return "touches " + strings.Join(touched, ", ") + " without an `organization_id = ` predicate"
}

// tenantTables are the tables of the migrated schema that have an organization_id column.
func tenantTables(t *testing.T, db *postgres.DB) map[string]bool {
	t.Helper()
	rows, err := db.Pool.Query(context.Background(),
		`SELECT table_name FROM information_schema.columns
		 WHERE table_schema = 'public' AND column_name = 'organization_id'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		out[name] = true
		names = append(names, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	t.Logf("tenant-owned tables: %s", strings.Join(names, ", "))
	return out
}
