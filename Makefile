# Provider Core API. `make help` lists the targets.
SHELL := /bin/bash
GO    ?= go
export GOFLAGS ?= -mod=mod

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-15s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

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
lint: openapi/node_modules ## Lint the contract (Spectral, spectral:oas) and the Go code (go vet, staticcheck; every build tag).
	cd openapi && npx --no-install spectral lint --fail-severity=warn openapi.yaml
	$(GO) vet -tags browser,e2e ./...
	$(GO) vet -tags reliability ./internal/reliability/
	$(GO) tool staticcheck -tags browser,e2e,reliability $$($(GO) list ./... | grep -v '/gen/')

.PHONY: test
test: ## Run every test against a real PostgreSQL (TEST_DATABASE_URL or a throwaway cluster).
	$(GO) test -count=1 -race -timeout 45m ./...

.PHONY: check-previous-release
check-previous-release: ## Run the previous release's binary and quickstart on the schema HEAD migrates (rolling deploys; .ci/previous-release).
	.ci/previous-release

.PHONY: test-browser
test-browser: ## Open /docs of a running server in headless Chromium and check it lists every operation.
	$(GO) test -count=1 -tags browser -run TestReferencePage ./internal/apidocs/

.PHONY: quickstart
quickstart: ## Run examples/quickstart against the server binary (production mode, its own PostgreSQL).
	$(GO) test -count=1 -tags e2e -v -run TestQuickstart ./examples/quickstart/

examples/typescript/node_modules: examples/typescript/package.json examples/typescript/package-lock.json
	cd examples/typescript && npm ci --no-audit --no-fund
	@touch $@

.PHONY: check-ts
check-ts: examples/typescript/node_modules ## Generate TypeScript types from the contract (openapi-typescript) and type-check an openapi-fetch program.
	cd examples/typescript && npm run --silent check

examples/webhook-receiver/node_modules: examples/webhook-receiver/package.json examples/webhook-receiver/package-lock.json
	cd examples/webhook-receiver && npm ci --no-audit --no-fund
	@touch $@

.PHONY: check-webhooks
check-webhooks: examples/webhook-receiver/node_modules ## Verify real webhook deliveries, secret rotation included, and what `coreapi listen` forwards, with the official standardwebhooks npm package (part of `make test` when node is installed).
	$(GO) test -count=1 -v -run '^(TestWebhookDelivery_StandardWebhooksLibrary|TestListen)$$' ./internal/httpapi/

# The official ZATCA SDK rule files (Data/Rules/schematrons) are not in this repository: point
# ZATCA_RULES_DIR at a copy. ZATCA_RULES_OUT keeps the invoices and SVRL reports.
ZATCA_RULES_DIR ?=
.PHONY: check-schematron
check-schematron: ## Run the official ZATCA/EN 16931 rule files (ZATCA_RULES_DIR) over representative invoices with Saxon; fail on any error.
	@test -n "$(ZATCA_RULES_DIR)" || { echo "set ZATCA_RULES_DIR to the ZATCA SDK's Data/Rules/schematrons (docs/einvoice-rules.md)"; exit 1; }
	ZATCA_RULES_DIR="$(ZATCA_RULES_DIR)" $(GO) test -count=1 -v -run '^TestOfficialRules$$' ./internal/einvoice/

# The ZATCA SDK's sample documents (Data/Samples) are not in this repository either: point
# ZATCA_SDK_DIR at the root of a copy of the SDK.
ZATCA_SDK_DIR ?=
.PHONY: check-sdk-samples
check-sdk-samples: ## Validate the ZATCA SDK's sample documents (ZATCA_SDK_DIR) and compare with the SDK's verdicts (docs/einvoice-rules.md).
	@test -n "$(ZATCA_SDK_DIR)" || { echo "set ZATCA_SDK_DIR to the root of a copy of the ZATCA SDK (docs/einvoice-rules.md)"; exit 1; }
	ZATCA_SDK_DIR="$(ZATCA_SDK_DIR)" $(GO) test -count=1 -v -run '^TestSDKSamples$$' ./internal/einvoice/

.PHONY: check-breaking
check-breaking: ## Refuse changes to openapi.yaml that break the frozen v1.0.0 baseline (oasdiff), except the security fixes listed in openapi/baseline/breaking-ignore.txt.
	$(GO) tool oasdiff breaking --fail-on ERR --err-ignore openapi/baseline/breaking-ignore.txt openapi/baseline/v1.0.0.yaml openapi/openapi.yaml

SWAGGER_UI_FILES := swagger-ui-bundle.js swagger-ui.css LICENSE NOTICE favicon-32x32.png

.PHONY: docs-assets
docs-assets: ## Refresh the Swagger UI files of /docs from the npm package pinned in internal/apidocs/package.json.
	cd internal/apidocs && npm ci --no-audit --no-fund
	cd internal/apidocs && for f in $(SWAGGER_UI_FILES); do cp node_modules/swagger-ui-dist/$$f assets/$$f; done
	@# The source maps are not vendored: drop the references to them.
	sed -i 's|//# sourceMappingURL=swagger-ui-bundle.js.map||' internal/apidocs/assets/swagger-ui-bundle.js
	sed -i 's|/\*# sourceMappingURL=swagger-ui.css.map\*/||' internal/apidocs/assets/swagger-ui.css

# How much each fuzz target runs in test-reliability: a count of executions, not a duration.
# A duration races Go's fuzzing coordinator at its deadline (go.dev/issue/75804): on a loaded
# machine a target fails with a bare "context deadline exceeded" and no failing input.
FUZZTIME ?= 10000x

.PHONY: test-reliability
test-reliability: ## Faults, crashes, three processes (direct and through PgBouncer), a restore drill under load, slow clients and secrets against the real binary, then the fuzz targets, 10,000 executions each (~8 min; docs/reliability.md).
	$(GO) test -tags reliability -count=1 -timeout 20m ./internal/reliability/
	# The security review's concurrency regressions (issue 21), repeated under the race detector.
	$(GO) test -race -count=3 -timeout 10m -run '^(TestWithdrawnAccessRefusedAtOnce|TestAPIKeyRotatedKeyHasOneSuccessor|TestGenerateSimplifiedInvoiceConnectedBusiness|TestFailedAuthenticationIsThrottled)$$' ./internal/httpapi/
	$(GO) test -run '^$$' -fuzz '^FuzzContractGate$$' -fuzztime $(FUZZTIME) ./internal/httpapi/
	$(GO) test -run '^$$' -fuzz '^FuzzStrictJSONBodyDecoder$$' -fuzztime $(FUZZTIME) ./internal/httpapi/
	$(GO) test -run '^$$' -fuzz '^FuzzJSONCheck$$' -fuzztime $(FUZZTIME) ./internal/httpapi/
	$(GO) test -run '^$$' -fuzz '^FuzzValidSyntax$$' -fuzztime $(FUZZTIME) ./internal/jsoncheck/
	$(GO) test -run '^$$' -fuzz '^FuzzInvoice$$' -fuzztime $(FUZZTIME) ./internal/einvoice/
	$(GO) test -run '^$$' -fuzz '^FuzzValidateXML$$' -fuzztime $(FUZZTIME) ./internal/einvoice/
	$(GO) test -run '^$$' -fuzz '^FuzzParseCSR$$' -fuzztime $(FUZZTIME) ./internal/einvoice/


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

# The lists at scale (docs/performance.md, "Lists at 10 million rows"): every list of request
# logs and the growth summary, with each filter, at LIST_BENCH_ROWS request logs and as many
# growth events against 10 thousand; LIST_BENCH_ROWS=1000000 for a quick run.
LIST_BENCH_ROWS ?= 10000000
.PHONY: bench-lists
bench-lists: bench-build ## Every list and filter at LIST_BENCH_ROWS (10 million) stored against 10 thousand; the ratio must stay ≤ 1.2.
	./bin/benchdriver -lists -lists-rows $(LIST_BENCH_ROWS) -rounds 5 $(BENCH_FLAGS)

# The renewal scenario (docs/performance.md, "Renewals"): not HTTP traffic, so a Go benchmark.
RENEWAL_BENCH_N ?= 100000
RENEWAL_CONCURRENCY ?= 8
.PHONY: bench-renewal
bench-renewal: ## RENEWAL_BENCH_N subscriptions with usage renewed and rated by one process, RENEWAL_CONCURRENCY at once, against a replay of the same SQL; then the API's hot paths during a run.
	RENEWAL_BENCH_N=$(RENEWAL_BENCH_N) RENEWAL_CONCURRENCY=$(RENEWAL_CONCURRENCY) $(GO) test -run '^$$' -bench BenchmarkRenewal -benchtime 1x -timeout 60m ./internal/postgres/
	$(GO) test -run '^$$' -bench BenchmarkHotPathsDuringRenewal -benchtime 1x -timeout 20m ./internal/httpapi/

.PHONY: bench-go
bench-go: ## Go benchmarks of the hot pieces (BenchmarkGrowthSummary seeds a million events first: a minute or two).
	$(GO) test -run x -bench . -skip 'Renewal' -benchmem ./internal/httpapi/ ./internal/einvoice/ ./internal/postgres/
