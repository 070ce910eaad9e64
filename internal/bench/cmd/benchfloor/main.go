// Command benchfloor is the floor of `make bench`: the least a Go server can do to answer the
// benchmark's requests. It runs exactly the SQL the Provider Core API runs for each of them
// (the sqlc queries of gen/dbq, in the same order and transactions) over a pgx pool, with
// net/http and encoding/json, and nothing else: no contract validation, no authentication or
// credential lookup, no rate limits, no logging, no request logs, no generated server code.
// The distance between the API and this floor is what the API's own layers cost.
//
// It trusts its input completely and serves 127.0.0.1 only; it is a measuring stick, not a
// server.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/einvoice"
	"github.com/provider/coreapi/internal/postgres"
	"github.com/provider/coreapi/internal/profiler"
	"github.com/provider/coreapi/internal/secretbox"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8090", "address to serve on (loopback only)")
	dsn := flag.String("dsn", os.Getenv("DATABASE_URL"), "PostgreSQL connection string (a database the API has migrated)")
	pprofAddr := flag.String("pprof", "", "a loopback address to serve Go's profiler on, as the API's PPROF_ADDR (default: off)")
	flag.Parse()
	if *pprofAddr != "" {
		// For `benchdriver -cpuprofile-dir`, so that the floor's profile can be set beside the API's.
		go func() { log.Fatal("benchfloor: -pprof: ", profiler.Serve(*pprofAddr)) }()
	}
	if err := run(*listen, *dsn); err != nil {
		log.Fatal("benchfloor: ", err)
	}
}

func run(listen, dsn string) error {
	host, _, err := net.SplitHostPort(listen)
	if err != nil || net.ParseIP(host) == nil || !net.ParseIP(host).IsLoopback() {
		return fmt.Errorf("-listen must be a loopback address, not %q", listen)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := postgres.PoolConfig(dsn) // the API's pool settings
	if err != nil {
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	box, err := secretbox.New(secretbox.DevelopmentKey())
	if err != nil {
		return err
	}
	f := &floor{pool: pool, box: box, growth: newGroupCommit(pool)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/organizations/{id}", f.getOrganization)
	mux.HandleFunc("GET /v1/products", f.listProducts)
	mux.HandleFunc("GET /v1/plans", f.listPlans)
	mux.HandleFunc("POST /v1/support-cases", f.createSupportCase)
	mux.HandleFunc("POST /v1/growth/events", f.createGrowthEvent)
	mux.HandleFunc("POST /v1/taxauth/invoices/generate/simplified", f.generateInvoice)
	srv := &http.Server{Addr: listen, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type floor struct {
	pool   *pgxpool.Pool
	box    *secretbox.Box
	growth *groupCommit

	// The catalogue bodies of the current catalogue version, as the API keeps them.
	mu      sync.Mutex
	version int64
	bodies  map[string][]byte
}

// catalogueRead answers a catalogue list as the API does: it reads the catalogue version,
// then the body encoded for that version, building it only when there is none.
func (f *floor) catalogueRead(w http.ResponseWriter, r *http.Request, build func() (any, error)) {
	version, err := dbq.New(f.pool).CatalogueVersionGet(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	key := r.URL.Path + "?" + r.URL.RawQuery
	f.mu.Lock()
	body, ok := f.bodies[key]
	ok = ok && f.version == version
	f.mu.Unlock()
	if !ok {
		v, err := build()
		if err != nil {
			fail(w, err)
			return
		}
		body, _ = json.Marshal(v)
		f.mu.Lock()
		if version != f.version {
			f.version, f.bodies = version, map[string][]byte{}
		}
		f.bodies[key] = body
		f.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	if errors.Is(err, pgx.ErrNoRows) {
		status = http.StatusNotFound
	}
	http.Error(w, err.Error(), status)
}

// getOrganization: OrganizationService.FindOrganizationByID.
func (f *floor) getOrganization(w http.ResponseWriter, r *http.Request) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		http.Error(w, "bad id", http.StatusBadRequest)
		return
	}
	row, err := dbq.New(f.pool).OrganizationGetByID(r.Context(), id)
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, http.StatusOK, row)
}

// listProducts: CatalogueService.ListProducts with the default page, kept per catalogue
// version.
func (f *floor) listProducts(w http.ResponseWriter, r *http.Request) {
	f.catalogueRead(w, r, func() (any, error) {
		const limit = 50 // core.DefaultPageLimit
		rows, err := dbq.New(f.pool).ProductList(r.Context(), dbq.ProductListParams{MaxRows: limit + 1})
		if err != nil {
			return nil, err
		}
		return map[string]any{"items": rows[:min(len(rows), limit)]}, nil
	})
}

// listPlans: CatalogueService.ListPlans, plans then their prices, kept per catalogue version.
func (f *floor) listPlans(w http.ResponseWriter, r *http.Request) {
	var product *uuid.UUID
	if v := r.URL.Query().Get("product_id"); v != "" {
		id, err := uuid.Parse(v)
		if err != nil {
			http.Error(w, "bad product_id", http.StatusBadRequest)
			return
		}
		product = &id
	}
	f.catalogueRead(w, r, func() (any, error) {
		q := dbq.New(f.pool)
		plans, err := q.PlanList(r.Context(), dbq.PlanListParams{ProductID: product})
		if err != nil {
			return nil, err
		}
		ids := make([]uuid.UUID, len(plans))
		for i, p := range plans {
			ids[i] = p.ID
		}
		prices, err := q.PriceListByPlans(r.Context(), ids)
		if err != nil {
			return nil, err
		}
		type plan struct {
			dbq.Plan
			Prices []dbq.Price `json:"prices"`
		}
		out := make([]plan, len(plans))
		byID := make(map[uuid.UUID]*plan, len(plans))
		for i, p := range plans {
			out[i] = plan{Plan: p, Prices: []dbq.Price{}}
			byID[p.ID] = &out[i]
		}
		for _, p := range prices {
			byID[p.PlanID].Prices = append(byID[p.PlanID].Prices, p)
		}
		return map[string]any{"items": out}, nil
	})
}

// createSupportCase: an Idempotency-Key POST (IdempotencyService.Run) around
// SupportCaseService.CreateSupportCase: one transaction holding the key's advisory lock,
// the case and its audit event in a savepoint, the stored response, commit.
func (f *floor) createSupportCase(w http.ResponseWriter, r *http.Request) {
	var in struct {
		OrganizationID uuid.UUID       `json:"organization_id"`
		Subject        string          `json:"subject"`
		Description    string          `json:"description"`
		Severity       string          `json:"severity"`
		Category       string          `json:"category"`
		ProductID      *string         `json:"product_id"`
		Diagnostics    json.RawMessage `json:"diagnostics"`
	}
	body, err := readJSON(r, &in)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	key := r.Header.Get("Idempotency-Key")
	scope := "dev:org:" + in.OrganizationID.String()
	tx, err := f.pool.Begin(ctx)
	if err != nil {
		fail(w, err)
		return
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it is a no-op
	q := dbq.New(tx)
	if _, err := q.IdempotencyLockTry(ctx, fmt.Sprintf("%d:%s:%s", len(scope), scope, key)); err != nil {
		fail(w, err)
		return
	}
	if _, err := q.IdempotencyKeyGet(ctx, dbq.IdempotencyKeyGetParams{Scope: scope, Key: key}); !errors.Is(err, pgx.ErrNoRows) {
		http.Error(w, "replays are not part of the floor", http.StatusConflict)
		return
	}
	work, err := tx.Begin(ctx) // the idempotency savepoint
	if err != nil {
		fail(w, err)
		return
	}
	inner, err := work.Begin(ctx) // the service's WithTx inside it
	if err != nil {
		fail(w, err)
		return
	}
	wq := dbq.New(inner)
	if _, err := wq.OrganizationGetByID(ctx, in.OrganizationID); err != nil {
		fail(w, err)
		return
	}
	if in.ProductID != nil {
		if _, err := wq.SupportCaseProductKnown(ctx, *in.ProductID); err != nil {
			fail(w, err)
			return
		}
	}
	if in.Diagnostics == nil {
		in.Diagnostics = json.RawMessage(`{}`)
	}
	team := "support"
	row, err := wq.SupportCaseInsert(ctx, dbq.SupportCaseInsertParams{
		ID: uuid.Must(uuid.NewV7()), OrganizationID: in.OrganizationID, ProductID: in.ProductID,
		Severity: in.Severity, Category: in.Category, AssignedTeam: &team,
		Subject: &in.Subject, Description: &in.Description, Diagnostics: in.Diagnostics,
	})
	if err != nil {
		fail(w, err)
		return
	}
	if err := insertAudit(ctx, wq, in.OrganizationID, scope, "support_case.opened", "support_case", row.ID.String(), row); err != nil {
		fail(w, err)
		return
	}
	if err := inner.Commit(ctx); err != nil {
		fail(w, err)
		return
	}
	if err := work.Commit(ctx); err != nil {
		fail(w, err)
		return
	}
	resp, err := json.Marshal(row)
	if err != nil {
		fail(w, err)
		return
	}
	hash := sha256.Sum256(body)
	if err := q.IdempotencyKeyPut(ctx, dbq.IdempotencyKeyPutParams{
		Scope: scope, Key: key, OrganizationID: &in.OrganizationID, PrincipalScopes: []string{}, Method: r.Method, Path: r.URL.Path,
		RequestHash: hash[:], ResponseStatus: http.StatusCreated, ResponseContentType: "application/json", ResponseHeaders: []byte("{}"),
		ResponseBody: resp, ExpiresAt: time.Now().Add(24 * time.Hour),
	}); err != nil {
		fail(w, err)
		return
	}
	if err := tx.Commit(ctx); err != nil {
		fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(resp)
}

func insertAudit(ctx context.Context, q *dbq.Queries, org uuid.UUID, actor, action, resourceType, resourceID string, after any) error {
	row, err := auditRow(org, actor, action, resourceType, resourceID, after)
	if err != nil {
		return err
	}
	return q.AuditEventInsert(ctx, row)
}

// auditRow is the audit entry of an organization's change, after as JSON.
func auditRow(org uuid.UUID, actor, action, resourceType, resourceID string, after any) (dbq.AuditEventInsertParams, error) {
	b, err := json.Marshal(after)
	return dbq.AuditEventInsertParams{
		ID: uuid.Must(uuid.NewV7()), OrganizationID: org, ActorType: "organization", ActorID: &actor,
		Action: action, ResourceType: resourceType, ResourceID: resourceID, After: b,
	}, err
}

// createGrowthEvent: GrowthService.RecordGrowthEvent, group commit by COPY.
func (f *floor) createGrowthEvent(w http.ResponseWriter, r *http.Request) {
	var in struct {
		EventName      string          `json:"event_name"`
		OrganizationID string          `json:"organization_id"`
		OccurredAt     *time.Time      `json:"occurred_at"`
		AnonymousID    *string         `json:"anonymous_id"`
		Product        *string         `json:"product"`
		TrafficType    *string         `json:"traffic_type"`
		Source         *string         `json:"source"`
		Properties     json.RawMessage `json:"properties"`
	}
	if _, err := readJSON(r, &in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	row := dbq.GrowthEventInsertBatchParams{
		ID: uuid.Must(uuid.NewV7()), OrganizationID: in.OrganizationID, OccurredAt: time.Now(),
		EventName: in.EventName, TrafficType: "public", AnonymousID: in.AnonymousID,
		Product: in.Product, Source: in.Source, Properties: in.Properties,
	}
	if in.OccurredAt != nil {
		row.OccurredAt = *in.OccurredAt
	}
	if in.TrafficType != nil {
		row.TrafficType = *in.TrafficType
	}
	if row.Properties == nil {
		row.Properties = json.RawMessage(`{}`)
	}
	if err := f.growth.submit(r.Context(), row); err != nil {
		fail(w, err)
		return
	}
	reply(w, http.StatusAccepted, map[string]string{"status": "accepted"})
}

// generateInvoice: TaxInvoiceService.GenerateSimplifiedInvoice without a spend control, in
// the API's three round trips: the BEGIN with the organization, spend control and stamping
// key reads and the counter's lock; the invoice, its audit entry, its event and the usage
// count (with the spend control's read); then the COMMIT.
func (f *floor) generateInvoice(w http.ResponseWriter, r *http.Request) {
	var in invoiceRequest
	body, err := readJSON(r, &in)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := in.einvoice()
	draft, err := einvoice.Prepare(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}
	ctx := r.Context()
	org := in.OrganizationID
	// The API's first round trip: BEGIN, the reads, and the chain's lock.
	first := new(postgres.Pipeline)
	first.Add(func(q *dbq.Queries) (err error) {
		_, err = q.OrganizationGetByID(ctx, org)
		return err
	})
	var spendErr error
	first.Add(func(q *dbq.Queries) error {
		_, spendErr = q.SpendControlGet(ctx, dbq.SpendControlGetParams{OrganizationID: org, Product: "einvoice"})
		return nil
	})
	var stored dbq.EinvoiceStampingKeysGetRow
	first.Add(func(q *dbq.Queries) (err error) {
		stored, err = q.EinvoiceStampingKeysGet(ctx, org)
		return err
	})
	egs := einvoice.DefaultEGSUnit
	next := postgres.QueueNextInChain(ctx, first, org, org, egs)
	tx, err := first.Begin(ctx, f.pool)
	if err != nil {
		fail(w, err)
		return
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it is a no-op
	if !errors.Is(spendErr, pgx.ErrNoRows) {
		http.Error(w, "spend controls are not part of the floor", http.StatusConflict)
		return
	}
	if stored.PrivateKey == nil {
		// The API creates the key on first use; the driver's warm-up does that through it.
		fail(w, pgx.ErrNoRows)
		return
	}
	private, err := f.box.Open(stored.PrivateKey, org[:])
	if err != nil {
		fail(w, err)
		return
	}
	key, err := einvoice.LoadSandboxKey(private, stored.Certificate)
	if err != nil {
		fail(w, err)
		return
	}
	tq := dbq.New(tx)
	at, err := next(tq)
	if err != nil {
		fail(w, err)
		return
	}
	issuedAt := time.Now().UTC().Truncate(time.Second)
	invoiceUUID := uuid.New()
	identity := einvoice.Identity{
		Number: fmt.Sprintf("SINV-%06d", at.NextIcv), UUID: invoiceUUID.String(),
		ICV: at.NextIcv, PIH: at.LastInvoiceHash, IssuedAt: issuedAt,
	}
	inv, err := draft.Generate(identity, key)
	if err != nil {
		fail(w, err)
		return
	}
	result, err := json.Marshal(inv)
	if err != nil {
		fail(w, err)
		return
	}
	id := uuid.Must(uuid.NewV7())
	writes := new(postgres.Pipeline)
	writes.Add(func(q *dbq.Queries) (err error) {
		_, err = q.TaxInvoiceInsert(ctx, dbq.TaxInvoiceInsertParams{
			ID: id, OrganizationID: org, EgsUnitID: egs, Icv: identity.ICV, Number: identity.Number,
			Uuid: invoiceUUID, Pih: identity.PIH, InvoiceHash: inv.Hash, Status: einvoice.StatusGenerated,
			InvoiceType: inv.Type, RequestedType: req.RequestedType, Valid: inv.Valid(),
			PayableAmount: inv.Totals.Payable, IssuedAt: issuedAt, Request: body, Result: result, Xml: inv.XML, ChainSellerID: &org,
		})
		return err
	})
	audit, err := auditRow(org, "dev:org:"+org.String(), "tax_invoice.generated", "tax_invoice", id.String(), map[string]any{
		"id": id, "number": identity.Number, "uuid": invoiceUUID, "egs_unit_id": egs, "icv": identity.ICV,
		"invoice_hash": inv.Hash, "valid": inv.Valid(), "payable_amount": inv.Totals.Payable, "currency": einvoice.Currency,
		"created_at": at.TransactionTime,
	})
	if err != nil {
		fail(w, err)
		return
	}
	writes.Add(func(q *dbq.Queries) error { return q.AuditEventInsert(ctx, audit) })
	// The event's data is the invoice's identity and total, never its XML (the API's
	// TaxInvoiceEventData).
	event, err := json.Marshal(map[string]any{
		"id": id, "organization_id": org, "status": einvoice.StatusGenerated, "invoice_type": inv.Type, "uuid": invoiceUUID,
		"icv": identity.ICV, "payable_amount": inv.Totals.Payable, "currency": einvoice.Currency, "created_at": at.TransactionTime,
	})
	if err != nil {
		fail(w, err)
		return
	}
	eventID := uuid.Must(uuid.NewV7())
	writes.Add(func(q *dbq.Queries) (err error) {
		_, err = q.WebhookEventInsertListSubscribed(ctx, dbq.WebhookEventInsertListSubscribedParams{
			ID: eventID, OrganizationID: org, Type: "tax_invoice.generated", Data: event, ExceptTypes: []string{},
		})
		return err
	})
	usageID := uuid.Must(uuid.NewV7())
	writes.Add(func(q *dbq.Queries) (err error) {
		_, err = q.UsageRecord(ctx, dbq.UsageRecordParams{ID: usageID, OrganizationID: org, Product: "einvoice"})
		return err
	})
	writes.Add(func(q *dbq.Queries) error {
		_, spendErr = q.SpendControlGet(ctx, dbq.SpendControlGetParams{OrganizationID: org, Product: "einvoice"})
		return nil
	})
	if err := writes.Send(ctx, tx); err != nil {
		fail(w, err)
		return
	}
	if !errors.Is(spendErr, pgx.ErrNoRows) {
		fail(w, fmt.Errorf("spend control: %w", spendErr))
		return
	}
	if err := tx.Commit(ctx); err != nil {
		fail(w, err)
		return
	}
	reply(w, http.StatusCreated, map[string]any{"invoice": id, "result": inv, "xml": inv.XML})
}

// readJSON reads the whole body (the floor keeps it for request hashes) and decodes it.
func readJSON(r *http.Request, v any) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	return body, json.Unmarshal(body, v)
}
