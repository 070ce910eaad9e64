# Provider Core API. `make help` lists the targets.
SHELL := /bin/bash
GO    ?= go
export GOFLAGS ?= -mod=mod

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: ## Run the server on 127.0.0.1:8080 (its own PostgreSQL unless DATABASE_URL is set).
	$(GO) run ./cmd/coreapi

.PHONY: build
build: ## Build the server binary into bin/.
	$(GO) build -trimpath -o bin/coreapi ./cmd/coreapi

.PHONY: generate
generate: ## Regenerate gen/ from openapi/openapi.yaml and db/ (oapi-codegen, sqlc).
	$(GO) tool oapi-codegen -config oapi-codegen.yaml openapi/openapi.yaml
	$(GO) tool sqlc generate

.PHONY: verify
verify: generate ## Fail when the committed generated code is stale.
	@git diff --exit-code -- gen/ || { echo "gen/ is stale: run 'make generate' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- gen/)" || { git status --porcelain -- gen/; echo "gen/ has untracked files"; exit 1; }

openapi/node_modules: openapi/package.json openapi/package-lock.json
	cd openapi && npm ci --no-audit --no-fund
	@touch $@

.PHONY: lint
lint: openapi/node_modules ## Lint the contract (Spectral, spectral:oas) and the Go code (go vet).
	cd openapi && npx --no-install spectral lint --fail-severity=warn openapi.yaml
	$(GO) vet ./...
	$(GO) vet -tags 'reliability webhooks' ./internal/reliability/

.PHONY: test
test: ## Run every test against a real PostgreSQL (TEST_DATABASE_URL or a throwaway cluster).
	$(GO) test -count=1 -race -timeout 10m ./...

# How long each fuzz target runs in test-reliability.
FUZZTIME ?= 30s

.PHONY: test-reliability
test-reliability: ## Faults, crashes, three processes, slow clients and secrets against the real binary, then the fuzz targets (~4 min; docs/reliability.md).
	$(GO) test -tags reliability -count=1 -timeout 10m ./internal/reliability/
	$(GO) test -run '^$$' -fuzz '^FuzzContractGate$$' -fuzztime $(FUZZTIME) ./internal/httpapi/
	$(GO) test -run '^$$' -fuzz '^FuzzStrictJSONBodyDecoder$$' -fuzztime $(FUZZTIME) ./internal/httpapi/
	$(GO) test -run '^$$' -fuzz '^FuzzInvoice$$' -fuzztime $(FUZZTIME) ./internal/einvoice/

.PHONY: test-reliability-webhooks
test-reliability-webhooks: ## The webhook-delivery reliability test (needs the webhook outbox of issue 7).
	$(GO) test -tags 'reliability webhooks' -count=1 -timeout 10m -run Webhook ./internal/reliability/

.PHONY: bench
bench: ## Run the benchmarks (BenchmarkGrowthSummary seeds a million events first: a minute or two).
	$(GO) test -run x -bench . -benchtime 5x ./internal/postgres/
