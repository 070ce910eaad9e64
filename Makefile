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

.PHONY: test
test: ## Run every test against a real PostgreSQL (TEST_DATABASE_URL or a throwaway cluster).
	$(GO) test -count=1 -race -timeout 10m ./...

# Release binaries for the load benchmark: the API and the floor it is compared with.
BENCH_BINS := bin/coreapi bin/benchfloor bin/benchdriver
.PHONY: bench-build
bench-build:
	$(GO) build -trimpath -ldflags='-s -w' -o bin/coreapi ./cmd/coreapi
	$(GO) build -trimpath -ldflags='-s -w' -o bin/benchfloor ./internal/bench/cmd/benchfloor
	$(GO) build -trimpath -o bin/benchdriver ./internal/bench/cmd/benchdriver

# BENCH_FLAGS lengthens or narrows a run, e.g. BENCH_FLAGS='-duration 20s -rounds 3' or
# BENCH_FLAGS='-only invoice' (bin/benchdriver -h lists them).
BENCH_FLAGS ?=
.PHONY: bench
bench: bench-build ## Load-test the API against the floor over loopback and print the table (~4 min; BENCH_FLAGS).
	./bin/benchdriver $(BENCH_FLAGS)

.PHONY: bench-soak
bench-soak: bench-build ## The mixed load on the API for 5 minutes, sampling its RSS.
	./bin/benchdriver -soak 5m $(BENCH_FLAGS)

.PHONY: bench-go
bench-go: ## Go benchmarks of the hot pieces (BenchmarkGrowthSummary seeds a million events first: a minute or two).
	$(GO) test -run x -bench . -benchmem ./internal/httpapi/ ./internal/einvoice/ ./internal/postgres/
