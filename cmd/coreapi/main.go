// Command coreapi serves the Provider Core API and administers its database.
//
//	coreapi [serve]            serve the API and run the background workers (the default)
//	coreapi migrate            apply pending database migrations and exit
//	coreapi seed               apply migrations (the catalogue seed is one) and report the catalogue
//	coreapi operator-token     mint, list or revoke operator tokens
//	coreapi listen             forward an organization's webhook events to a local receiver
//
// `coreapi help` and `coreapi <command> --help` describe each command. Configuration comes
// from the environment (environmentHelp below, and the README, list every variable with its
// default).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/httpapi"
	"github.com/provider/coreapi/internal/jobs"
	"github.com/provider/coreapi/internal/listen"
	"github.com/provider/coreapi/internal/metrics"
	"github.com/provider/coreapi/internal/pgcluster"
	"github.com/provider/coreapi/internal/postgres"
	"github.com/provider/coreapi/internal/profiler"
	"github.com/provider/coreapi/internal/secretbox"
	"github.com/provider/coreapi/internal/telemetry"
	"github.com/provider/coreapi/internal/webhook"
)

// environmentHelp lists every variable the commands read, with its default.
const environmentHelp = `Environment:
  DATABASE_URL                PostgreSQL connection string (default: empty, a private cluster
                              is started from the local PostgreSQL binaries in PGDATA_DIR)
  DATABASE_DIRECT_URL         a connection string to PostgreSQL itself when DATABASE_URL goes
                              through a pooler in transaction mode (PgBouncer): migrations,
                              the job queue (LISTEN) and the credential cache (LISTEN) use it
                              (default: DATABASE_URL). Through such a pooler, add
                              default_query_exec_mode=cache_describe (or exec) to DATABASE_URL:
                              pgx then prepares no named statements
  PGDATA_DIR                  folder of that private cluster (default .pgdata); processes over
                              one folder share the cluster, and the last to stop stops it
  PG_BIN                      folder of the PostgreSQL server binaries for that cluster
                              (default: the newest /usr/lib/postgresql/*/bin, then PATH)
  LISTEN_ADDR                 address to listen on (default 127.0.0.1:8080)
  APP_ENV                     development or production (default development: development
                              bearer tokens dev:operator and dev:org:<id> are accepted)
  PRODUCTION_TRAFFIC_ENABLED  true lets production API keys through (default false: gated)
  ENCRYPTION_KEY              base64 of 32 bytes encrypting data stored to be shown again
                              (required in production; a fixed development key otherwise)
  LOG_LEVEL                   debug, info, warn or error (default info); JSON logs
  CREDENTIAL_CACHE_TTL        how long an authenticated credential is trusted without a database
                              lookup when no change was announced (default 5s; 0: no cache)
  WEBHOOK_EVENT_RETENTION     how long webhook events (GET /v1/events), their deliveries and
                              attempts are kept (default 720h, 30 days, also the least
                              accepted: beyond any delivery's retries); whole days are dropped
                              once past it, never while one of the day's deliveries is pending
  REQUEST_LOG_RETENTION       how long request logs are kept (default 720h, 30 days; at least
                              24h); whole days are dropped once past it
  AUDIT_RETENTION             how long audit events are kept (default 9600h, 400 days; at
                              least 24h); whole months are dropped once past it
  GROWTH_EVENT_RETENTION      how long growth events are kept (default 9504h, 396 days, 13
                              months; at least 24h); whole months are dropped once past it
  USAGE_EVENT_RETENTION       how long usage events (rating, spend controls) are kept (default
                              9600h, 400 days, also the least accepted: a yearly billing
                              period rated late); whole months are dropped once past it
  QUOTA_API_KEYS              active API keys per organization (default 100)
  QUOTA_WEBHOOK_ENDPOINTS     webhook endpoints per organization (default 16)
  QUOTA_CONNECTED_BUSINESSES  connected businesses not closed per platform organization
                              (default 10000)
  QUOTA_CREDENTIALS_PER_BUSINESS  credentials not revoked per connected business (default 20)
  QUOTA_OPEN_SUPPORT_CASES    support cases neither resolved nor closed per organization
                              (default 50); over a quota a create is 409 quota_exceeded
  RENEWAL_INTERVAL            how often the renewal run looks for renewals and ended services
                              that are due (default 1m)
  RENEWAL_CONCURRENCY         how many batches of them (100 each) a run takes at once, each on
                              a connection of the pool (default half the pool's connections,
                              at least 1), while the API is idle
  RENEWAL_BUSY_SHARE          the share of the time a run works while the API serves requests
                              (in flight, or within the last second): batches of 10, one at a
                              time, each followed by a pause (default 0.25: a pause of three
                              times the batch's time; 1: the run does not give way)
  OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and the other standard
                              OTEL_* variables: traces (OTLP over HTTP) of each request, its
                              database statements and the webhook deliveries; off unless an
                              endpoint is named (OTEL_SDK_DISABLED=true turns them off too)
  PPROF_ADDR                  a loopback address to serve Go's profiler on (default: off)
  GOGC, GOMEMLIMIT            Go's own garbage-collector settings, read by the Go runtime
                              (default: Go's, GOGC=100 and no memory limit)
`

func main() {
	os.Exit(execute(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// command is one sub-command of the binary.
type command struct {
	name, summary, usage string
	// flags declares the command's flags on fs, returning what run needs.
	flags func(fs *flag.FlagSet) func(ctx context.Context, env environment) error
}

// environment is what a command reads and writes besides its flags.
type environment struct {
	getenv         func(string) string
	stdin          io.Reader
	stdout, stderr io.Writer
}

var commands = []command{
	{
		name:    "serve",
		summary: "serve the API and run the background workers (the default command)",
		usage: `Applies pending migrations, then serves the API on LISTEN_ADDR until SIGINT or SIGTERM,
when it stops accepting connections, drains in-flight requests (up to 30 s) and stops the
background work. Every process works its share of the durable jobs (provisioning, webhook
deliveries, sweeps; River queues in PostgreSQL); any number of processes may share one
database. JSON logs go to standard output.

Besides the API it serves GET /healthz (liveness), /readyz (the database answers),
/metrics (Prometheus), /docs (the API reference), /openapi.yaml and /openapi.json.`,
		flags: func(fs *flag.FlagSet) func(context.Context, environment) error {
			return func(ctx context.Context, env environment) error { return serve(ctx, env.getenv, env.stdout) }
		},
	},
	{
		name:    "migrate",
		summary: "apply pending database migrations and exit",
		usage: `Applies every pending migration (goose, embedded in the binary) under a PostgreSQL
advisory lock, so several processes starting at once apply each migration once. serve
does the same at start; run migrate first to keep schema changes out of a rolling start.`,
		flags: func(fs *flag.FlagSet) func(context.Context, environment) error {
			return func(ctx context.Context, env environment) error {
				return withDatabase(ctx, env, func(ctx context.Context, db *postgres.DB) error {
					fmt.Fprintln(env.stdout, "migrations: up to date")
					return nil
				})
			}
		},
	},
	{
		name:    "seed",
		summary: "apply migrations, including the catalogue seed, and report the catalogue",
		usage: `The product catalogue (products einvoice, address and platform with their plans and
prices, fixed ids 0193a000-0000-7000-8000-…) is seeded by a migration that skips rows
that already exist, so it is applied exactly once by migrate or serve and applying it
again changes nothing. seed applies pending migrations, checks that every seeded
product is present and prints the catalogue.`,
		flags: func(fs *flag.FlagSet) func(context.Context, environment) error {
			return func(ctx context.Context, env environment) error {
				return withDatabase(ctx, env, func(ctx context.Context, db *postgres.DB) error {
					return reportCatalogue(ctx, postgres.NewCatalogueService(db), env.stdout)
				})
			}
		},
	},
	{
		name:    "operator-token",
		summary: "mint (default), list or revoke operator tokens",
		usage: `Mints an operator token: the production credential of the provider's staff (every
organization, every scope). The token is printed once, alone on standard output; only
its SHA-256 hash is stored, so it cannot be shown again. Requests send it as
"Authorization: Bearer op_…", in production and development mode alike.

  coreapi operator-token --name "on-call"     mint one and print it
  coreapi operator-token --list               list tokens (never the tokens themselves)
  coreapi operator-token --revoke <id>        stop a token from authenticating`,
		flags: func(fs *flag.FlagSet) func(context.Context, environment) error {
			name := fs.String("name", "bootstrap", "name of the new token (1 to 100 characters), for the list")
			list := fs.Bool("list", false, "list the tokens instead of minting one")
			revoke := fs.String("revoke", "", "revoke the token with this id instead of minting one")
			return func(ctx context.Context, env environment) error {
				return withDatabase(ctx, env, func(ctx context.Context, db *postgres.DB) error {
					svc := postgres.NewOperatorTokenService(db)
					switch {
					case *list:
						return listOperatorTokens(ctx, svc, env.stdout)
					case *revoke != "":
						id, err := uuid.Parse(*revoke)
						if err != nil {
							return fmt.Errorf("--revoke: %q is not a token id", *revoke)
						}
						tok, err := svc.Revoke(ctx, id)
						if err != nil {
							return err
						}
						fmt.Fprintf(env.stderr, "revoked operator token %s (%s)\n", tok.ID, tok.Name)
						return nil
					}
					tok, token, err := svc.Mint(ctx, *name)
					if err != nil {
						return err
					}
					fmt.Fprintf(env.stderr, "minted operator token %s (%s); it is shown once, store it now:\n", tok.ID, tok.Name)
					fmt.Fprintln(env.stdout, token)
					return nil
				})
			}
		},
	},
	listenCommand,
}

// listenCommand is `coreapi listen`: a client of a running service, not a server.
var listenCommand = command{
	name:    "listen",
	summary: "forward an organization's webhook events to a receiver on this machine",
	usage: `Follows GET /v1/events/stream of the service at --base-url with --api-key (scope
webhooks:read) and posts each new event to --forward-to with the body and the Standard
Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) a registered endpoint
would receive, signed with a secret made for this session: the secret is printed at start,
and the receiver verifies deliveries with it. One line per event shows the receiver's
answer. Type "resend <event id>" (or "resend" for the last event) and Enter to send an
event of the session again, signed anew. Stops on SIGINT or SIGTERM; exits 1 when the
service ends the stream (the key was revoked, the service stops).

  coreapi listen --api-key sk_sandbox_… --forward-to http://localhost:3000/hook
  coreapi listen --api-key … --forward-to … --events invoice.issued,invoice.paid`,
	flags: func(fs *flag.FlagSet) func(context.Context, environment) error {
		baseURL := fs.String("base-url", "http://127.0.0.1:8080", "the service's base URL")
		apiKey := fs.String("api-key", "", "an API key (or access token) with the scope webhooks:read (required)")
		forwardTo := fs.String("forward-to", "", "the receiver's URL, e.g. http://localhost:3000/hook (required)")
		events := fs.String("events", "", "comma-separated event types to forward (default: all)")
		org := fs.String("organization-id", "", "the organization to listen to (the operator only; a key listens to its own)")
		return func(ctx context.Context, env environment) error {
			if *apiKey == "" || *forwardTo == "" {
				return errors.New("--api-key and --forward-to are required")
			}
			if u, err := url.Parse(*forwardTo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("--forward-to: %q is not an http or https URL", *forwardTo)
			}
			var types []string
			for t := range strings.SplitSeq(*events, ",") {
				if t = strings.TrimSpace(t); t != "" {
					types = append(types, t)
				}
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			l := listen.New(listen.Options{BaseURL: *baseURL, APIKey: *apiKey, ForwardTo: *forwardTo, Events: types, OrganizationID: *org}, env.stdout)
			return l.Run(ctx, env.stdin)
		}
	},
}

// execute runs the command named by args and returns the process exit code: 0, 1 for a
// failure, 2 for a usage error.
func execute(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	env := environment{getenv: getenv, stdin: os.Stdin, stdout: stdout, stderr: stderr}
	name := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	} else if len(args) > 0 && isHelp(args[0]) {
		// `coreapi --help` describes the binary; `coreapi serve --help` the command.
		name = "help"
	}
	if name == "help" {
		printUsage(stdout)
		return 0
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		fs := flag.NewFlagSet("coreapi "+c.name, flag.ContinueOnError)
		fs.SetOutput(stderr)
		// Parse reports a bad flag on stderr and calls Usage for it and for -h alike; the
		// text is printed here instead, once: on stdout when asked for, on stderr after an error.
		fs.Usage = func() {}
		usage := func(w io.Writer) {
			fs.SetOutput(w)
			fmt.Fprintf(w, "Usage: coreapi %s [flags]\n\n%s\n\n", c.name, c.usage)
			if hasFlags(fs) {
				fmt.Fprintln(w, "Flags:")
				fs.PrintDefaults()
				fmt.Fprintln(w)
			}
			fmt.Fprint(w, environmentHelp)
		}
		run := c.flags(fs)
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage(stdout)
				return 0
			}
			usage(stderr)
			return 2
		}
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "coreapi %s: unexpected argument %q\n", c.name, fs.Arg(0))
			return 2
		}
		if err := run(ctx, env); err != nil {
			fmt.Fprintf(stderr, "coreapi %s: %v\n", c.name, err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stderr, "coreapi: unknown command %q\n\n", name)
	printUsage(stderr)
	return 2
}

func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: coreapi [command] [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The Provider Core API server. Commands:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, `"coreapi <command> --help" describes a command.`)
	fmt.Fprintln(w)
	fmt.Fprint(w, environmentHelp)
}

type config struct {
	databaseURL string
	// directURL reaches PostgreSQL around a pooler (DATABASE_DIRECT_URL); empty: databaseURL.
	directURL   string
	pgdataDir   string
	listenAddr  string
	development bool
	production  bool // production traffic enabled
	box         *secretbox.Box
	logLevel    slog.Level
	// credentialCacheTTL bounds how long a credential is trusted without a lookup.
	credentialCacheTTL time.Duration
	quotas             core.Quotas
	// retention is how long the time-partitioned tables keep their rows.
	retention postgres.Retention
	// renewalInterval is how often the renewal run starts.
	renewalInterval time.Duration
	// renewals is the renewal run's concurrency and how it gives way to the API's requests.
	renewals postgres.RenewalSettings
}

// loadDatabaseConfig reads what every command needs: where the database is, and the logs.
func loadDatabaseConfig(getenv func(string) string) (config, error) {
	cfg := config{
		databaseURL: getenv("DATABASE_URL"),
		directURL:   getenv("DATABASE_DIRECT_URL"),
		pgdataDir:   valueOr(getenv("PGDATA_DIR"), ".pgdata"),
		listenAddr:  valueOr(getenv("LISTEN_ADDR"), "127.0.0.1:8080"),
	}
	if err := cfg.logLevel.UnmarshalText([]byte(valueOr(getenv("LOG_LEVEL"), "info"))); err != nil {
		return cfg, fmt.Errorf("LOG_LEVEL: %w", err)
	}
	return cfg, nil
}

// loadConfig reads the whole configuration of serve.
func loadConfig(getenv func(string) string) (config, error) {
	cfg, err := loadDatabaseConfig(getenv)
	if err != nil {
		return cfg, err
	}
	switch env := valueOr(getenv("APP_ENV"), "development"); env {
	case "development":
		cfg.development = true
	case "production":
	default:
		return cfg, fmt.Errorf("APP_ENV must be development or production, not %q", env)
	}
	switch v := valueOr(getenv("PRODUCTION_TRAFFIC_ENABLED"), "false"); v {
	case "true", "false":
		cfg.production = v == "true"
	default:
		return cfg, fmt.Errorf("PRODUCTION_TRAFFIC_ENABLED must be true or false, not %q", v)
	}
	key := secretbox.DevelopmentKey()
	if v := getenv("ENCRYPTION_KEY"); v != "" {
		if key, err = secretbox.ParseKey(v); err != nil {
			return cfg, fmt.Errorf("ENCRYPTION_KEY: %w", err)
		}
	} else if !cfg.development {
		return cfg, errors.New("ENCRYPTION_KEY is required in production (base64 of 32 random bytes)")
	}
	if cfg.box, err = secretbox.New(key); err != nil {
		return cfg, fmt.Errorf("ENCRYPTION_KEY: %w", err)
	}
	if cfg.credentialCacheTTL, err = time.ParseDuration(valueOr(getenv("CREDENTIAL_CACHE_TTL"), postgres.DefaultCredentialCacheTTL.String())); err != nil || cfg.credentialCacheTTL < 0 {
		return cfg, fmt.Errorf("CREDENTIAL_CACHE_TTL must be a duration such as 5s, or 0")
	}
	if cfg.quotas, err = core.QuotasFromEnv(getenv); err != nil {
		return cfg, err
	}
	if cfg.retention, err = retentionFromEnv(getenv); err != nil {
		return cfg, err
	}
	if cfg.renewalInterval, err = time.ParseDuration(valueOr(getenv("RENEWAL_INTERVAL"), jobs.DefaultRenewalInterval.String())); err != nil || cfg.renewalInterval <= 0 {
		return cfg, fmt.Errorf("RENEWAL_INTERVAL must be a positive duration such as 1m")
	}
	if cfg.renewals, err = postgres.RenewalSettingsFromEnv(getenv); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// retentionFromEnv reads the retention of each time-partitioned table: a duration of at
// least a day (the shortest partition), or of at least postgres.MinWebhookEventRetention and
// MinUsageEventRetention for the tables whose rows are still needed that long.
func retentionFromEnv(getenv func(string) string) (postgres.Retention, error) {
	r := postgres.DefaultRetention
	for name, setting := range map[string]struct {
		field *time.Duration
		least time.Duration
	}{
		"REQUEST_LOG_RETENTION":   {&r.RequestLogs, 24 * time.Hour},
		"AUDIT_RETENTION":         {&r.AuditEvents, 24 * time.Hour},
		"GROWTH_EVENT_RETENTION":  {&r.GrowthEvents, 24 * time.Hour},
		"WEBHOOK_EVENT_RETENTION": {&r.WebhookEvents, postgres.MinWebhookEventRetention},
		"USAGE_EVENT_RETENTION":   {&r.UsageEvents, postgres.MinUsageEventRetention},
	} {
		v := getenv(name)
		if v == "" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < setting.least {
			return r, fmt.Errorf("%s must be a duration of at least %dh, such as %dh", name, int(setting.least.Hours()), 2*int(setting.least.Hours()))
		}
		*setting.field = d
	}
	return r, nil
}

// openDatabase returns the DSN of DATABASE_URL, or starts the private cluster, and applies
// pending migrations. close stops a cluster this call started.
func openDatabase(ctx context.Context, cfg config, logger *slog.Logger) (dsn string, close func(), err error) {
	dsn, close = cfg.databaseURL, func() {}
	if dsn == "" {
		cluster, err := pgcluster.Start(ctx, cfg.pgdataDir, pgcluster.Options{})
		if err != nil {
			return "", nil, err
		}
		dsn = cluster.DSN("postgres")
		logger.Info("using the private PostgreSQL cluster", "dir", cluster.Dir, "dsn", dsn, "reused", cluster.Reused())
		// Another process over the same folder (a second `make run` on another port) shares
		// the cluster: the last of them to stop stops it.
		close = func() {
			stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			stopped, err := cluster.Release(stopCtx)
			if err != nil {
				logger.Error("stopping PostgreSQL", "error", err)
			} else if !stopped {
				logger.Info("PostgreSQL left running: another process uses it", "dir", cluster.Dir)
			}
		}
	}
	// Migrations hold a session-level lock: around a pooler in transaction mode.
	if err := postgres.Migrate(ctx, valueOr(cfg.directURL, dsn), logger); err != nil {
		close()
		return "", nil, fmt.Errorf("migrate: %w", err)
	}
	return dsn, close, nil
}

// withDatabase runs an administrative command over the migrated database, logging (JSON) to
// standard error so standard output carries only the command's result.
func withDatabase(ctx context.Context, env environment, fn func(context.Context, *postgres.DB) error) error {
	cfg, err := loadDatabaseConfig(env.getenv)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	dsn, closeDB, err := openDatabase(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer closeDB()
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	db.Events = httpapi.EventEncoder{}
	return fn(ctx, db)
}

// seededProducts are the products the catalogue migration seeds.
var seededProducts = []string{"einvoice", "address", "platform"}

func reportCatalogue(ctx context.Context, svc core.CatalogueService, w io.Writer) error {
	page, err := svc.ListProducts(ctx, core.ProductFilter{Limit: core.MaxPageLimit, Audience: core.WholeCatalogue})
	if err != nil {
		return err
	}
	plans, err := svc.ListPlans(ctx, core.PlanFilter{Audience: core.WholeCatalogue})
	if err != nil {
		return err
	}
	found := map[string]bool{}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PRODUCT\tID\tAVAILABILITY\tPLANS")
	for _, p := range page.Items {
		found[p.Code] = true
		var names []string
		for _, pl := range plans {
			if pl.ProductID == p.ID {
				names = append(names, pl.Code+" ("+pl.Status+")")
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Code, p.ID, p.Availability, strings.Join(names, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, code := range seededProducts {
		if !found[code] {
			return fmt.Errorf("the seeded product %q is missing from the catalogue", code)
		}
	}
	fmt.Fprintf(w, "catalogue: %d products, %d plans\n", len(page.Items), len(plans))
	return nil
}

func listOperatorTokens(ctx context.Context, svc core.OperatorTokenService, w io.Writer) error {
	tokens, err := svc.List(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tCREATED\tLAST USED\tREVOKED")
	when := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	}
	for _, t := range tokens {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, when(&t.CreatedAt), when(t.LastUsedAt), when(t.RevokedAt))
	}
	return tw.Flush()
}

// serve starts the server and blocks until SIGINT or SIGTERM, then drains in-flight requests.
func serve(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	out := newBufferedLog(stdout)
	defer out.Close() // deferred first, so it runs last: it writes the shutdown's lines too
	logger := slog.New(flushOnWarning{Handler: slog.NewJSONHandler(out, &slog.HandlerOptions{Level: cfg.logLevel}), out: out})
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	dsn, closeDB, err := openDatabase(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer closeDB()
	tracing, stopTracing, err := telemetry.Setup(ctx, getenv)
	if err != nil {
		return fmt.Errorf("OTEL_*: %w", err)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := stopTracing(stopCtx); err != nil {
			logger.Error("exporting the last spans", "error", err)
		}
	}()
	var poolOptions []func(*pgxpool.Config)
	if tracing != nil {
		poolOptions = append(poolOptions, postgres.WithTracing(tracing))
	}
	db, err := postgres.Open(ctx, dsn, poolOptions...)
	if err != nil {
		return err
	}
	defer db.Close()
	if cfg.directURL != "" {
		if err := db.OpenDirect(ctx, cfg.directURL); err != nil {
			return fmt.Errorf("DATABASE_DIRECT_URL: %w", err)
		}
	}
	db.Events = httpapi.EventEncoder{}
	db.Quotas = cfg.quotas
	db.Renewals = cfg.renewals
	// The renewal run gives way to the requests this process serves.
	inFlight := httpapi.NewInFlight(httpapi.DefaultQuiet)
	db.Requests = inFlight
	m := metrics.New()
	if err := m.RegisterPool(db.Pool.Stat); err != nil {
		return err
	}
	if err := jobs.RegisterMetrics(m, db); err != nil {
		return err
	}

	// The durable background work (provisioning, webhook deliveries, sweeps) runs on River:
	// the services queue jobs in their transactions, and this process works its share.
	hooks := webhook.DefaultPolicy(cfg.development)
	hooks.Tracing = tracing
	queue, err := jobs.New(db, jobs.Config{Logger: logger, Box: cfg.box, Webhooks: hooks, Retention: cfg.retention, RenewalInterval: cfg.renewalInterval})
	if err != nil {
		return err
	}
	db.Jobs = queue
	workerCtx, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	var workers sync.WaitGroup
	// Credentials are cached, and forgotten by every process as soon as one changes.
	credentials := postgres.NewCredentialCache(db, cfg.credentialCacheTTL, logger)
	workers.Go(func() { credentials.Run(workerCtx) })
	// Background work stops after the HTTP server has drained, so requests in flight can still
	// queue jobs; a job interrupted by the stop goes back to the queue in PostgreSQL.
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), hooks.Timeout+10*time.Second)
		defer cancel()
		if err := queue.Stop(stopCtx); err != nil {
			logger.Error("stopping the job queue", "error", err)
		}
		stopWorkers()
		workers.Wait()
	}()
	if err := queue.Start(workerCtx); err != nil {
		return err
	}

	// Request logs are written in batches; the writer is closed (everything queued written)
	// after the HTTP server has drained and before the pool closes.
	requestLogs := postgres.NewRequestLogWriter(db, logger)
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := requestLogs.Close(closeCtx); err != nil {
			logger.Error("writing the last request logs", "error", err)
		}
	}()

	// Event streams end when the shutdown starts rather than holding the drain up.
	stopping := make(chan struct{})
	services := postgres.NewServices(db, cfg.box, hooks)
	services.Credentials = credentials
	handler, err := httpapi.NewHandler(ctx, httpapi.Config{
		Logger:                   logger,
		Development:              cfg.development,
		ProductionTrafficEnabled: cfg.production,
		Ready:                    db.Ping,
		Services:                 services,
		RequestLogs:              requestLogs,
		Metrics:                  m,
		Stopping:                 stopping,
		Tracing:                  tracing,
		InFlight:                 inFlight,
	})
	if err != nil {
		return err
	}
	srv := &http.Server{
		Addr:              cfg.listenAddr,
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(func() { close(stopping) })
	ln, err := net.Listen("tcp", cfg.listenAddr)
	if err != nil {
		return err
	}
	logger.Info("serving", "addr", ln.Addr().String(), "development", cfg.development)
	_ = out.Flush() // whoever waits for the server to listen reads this line now

	if addr := getenv("PPROF_ADDR"); addr != "" {
		go func() { logger.Error("profiler not serving", "addr", addr, "error", profiler.Serve(addr)) }()
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: draining in-flight requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return nil
}

func valueOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
