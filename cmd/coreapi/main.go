// Command coreapi serves the Provider Core API.
//
// Configuration comes from the environment:
//
//	DATABASE_URL   PostgreSQL connection string; when empty, a private cluster is started
//	               from the local PostgreSQL binaries in PGDATA_DIR and reused next time.
//	PGDATA_DIR     folder of that private cluster (default .pgdata)
//	LISTEN_ADDR    address to listen on (default 127.0.0.1:8080)
//	APP_ENV        development (default: development bearer tokens) or production
//	PRODUCTION_TRAFFIC_ENABLED  true lets production API keys through (default false: gated)
//	ENCRYPTION_KEY base64 of 32 bytes: encrypts stored data that shows a secret once;
//	               required in production, a fixed development key otherwise
//	LOG_LEVEL      debug, info (default), warn or error
//	CREDENTIAL_CACHE_TTL  how long an authenticated credential is trusted without a lookup
//	               when no change was announced (default 5s; 0 turns the cache off)
//	PPROF_ADDR     when set (a loopback address), serves net/http/pprof there
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/provider/coreapi/internal/httpapi"
	"github.com/provider/coreapi/internal/pgcluster"
	"github.com/provider/coreapi/internal/postgres"
	"github.com/provider/coreapi/internal/secretbox"
)

// provisioningPollInterval is how often a process looks for due provisioning jobs: new
// sandbox subscriptions become active within about this long.
const provisioningPollInterval = 250 * time.Millisecond

func main() {
	if err := run(context.Background(), os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "coreapi:", err)
		os.Exit(1)
	}
}

type config struct {
	databaseURL string
	pgdataDir   string
	listenAddr  string
	development bool
	production  bool // production traffic enabled
	box         *secretbox.Box
	logLevel    slog.Level
	// credentialCacheTTL bounds how long a credential is trusted without a lookup.
	credentialCacheTTL time.Duration
}

func loadConfig(getenv func(string) string) (config, error) {
	cfg := config{
		databaseURL: getenv("DATABASE_URL"),
		pgdataDir:   valueOr(getenv("PGDATA_DIR"), ".pgdata"),
		listenAddr:  valueOr(getenv("LISTEN_ADDR"), "127.0.0.1:8080"),
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
		var err error
		if key, err = secretbox.ParseKey(v); err != nil {
			return cfg, fmt.Errorf("ENCRYPTION_KEY: %w", err)
		}
	} else if !cfg.development {
		return cfg, errors.New("ENCRYPTION_KEY is required in production (base64 of 32 random bytes)")
	}
	var err error
	if cfg.box, err = secretbox.New(key); err != nil {
		return cfg, fmt.Errorf("ENCRYPTION_KEY: %w", err)
	}
	if cfg.credentialCacheTTL, err = time.ParseDuration(valueOr(getenv("CREDENTIAL_CACHE_TTL"), postgres.DefaultCredentialCacheTTL.String())); err != nil || cfg.credentialCacheTTL < 0 {
		return cfg, fmt.Errorf("CREDENTIAL_CACHE_TTL must be a duration such as 5s, or 0")
	}
	if err := cfg.logLevel.UnmarshalText([]byte(valueOr(getenv("LOG_LEVEL"), "info"))); err != nil {
		return cfg, fmt.Errorf("LOG_LEVEL: %w", err)
	}
	return cfg, nil
}

// run starts the server and blocks until SIGINT or SIGTERM, then drains in-flight requests.
func run(ctx context.Context, getenv func(string) string, stdout *os.File) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: cfg.logLevel}))
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	dsn := cfg.databaseURL
	if dsn == "" {
		cluster, err := pgcluster.Start(ctx, cfg.pgdataDir, pgcluster.Options{})
		if err != nil {
			return err
		}
		dsn = cluster.DSN("postgres")
		logger.Info("using the private PostgreSQL cluster", "dir", cluster.Dir, "dsn", dsn, "reused", cluster.Reused())
		if !cluster.Reused() {
			defer func() {
				stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := cluster.Stop(stopCtx); err != nil {
					logger.Error("stopping PostgreSQL", "error", err)
				}
			}()
		}
	}
	if err := postgres.Migrate(ctx, dsn, logger); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()

	// Background workers stop after the HTTP server has drained, so requests in flight can
	// still enqueue work; a job interrupted by the stop stays pending in PostgreSQL.
	workerCtx, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	workersDone := make(chan struct{})
	go func() {
		defer close(workersDone)
		postgres.NewProvisioningWorker(db, logger, provisioningPollInterval).Run(workerCtx)
	}()
	// Credentials are cached, and forgotten by every process as soon as one changes.
	credentials := postgres.NewCredentialCache(db, cfg.credentialCacheTTL, logger)
	cacheDone := make(chan struct{})
	go func() {
		defer close(cacheDone)
		credentials.Run(workerCtx)
	}()
	defer func() {
		stopWorkers()
		<-workersDone
		<-cacheDone
	}()

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

	services := postgres.NewServices(db, cfg.box)
	services.Credentials = credentials
	handler, err := httpapi.NewHandler(ctx, httpapi.Config{
		Logger:                   logger,
		Development:              cfg.development,
		ProductionTrafficEnabled: cfg.production,
		Ready:                    db.Ping,
		Services:                 services,
		RequestLogs:              requestLogs,
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
	ln, err := net.Listen("tcp", cfg.listenAddr)
	if err != nil {
		return err
	}
	logger.Info("serving", "addr", ln.Addr().String(), "development", cfg.development)

	if addr := getenv("PPROF_ADDR"); addr != "" {
		go servePprof(addr, logger)
	}
	go every(ctx, 10*time.Minute, func() { postgres.SweepIdempotencyKeys(ctx, db, logger) })

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

// every runs fn now and then every interval until ctx ends.
func every(ctx context.Context, interval time.Duration, fn func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		fn()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
