# ctxhost build, test and run targets. `make run` and `make test` are the two
# commands of the README; CI runs `make test` (see .ci/run).

GO        ?= go
BIN       ?= $(CURDIR)/bin
CONFIG    ?= examples/agent.hcl
TRANSCRIPT ?= examples/coding-session.jsonl
RUNFLAGS  ?=

PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.5.1
PROTOC_GEN_CONNECT_GO_VERSION := v1.21.1
# gotestsum runs `go test -json` and prints each test as it ends (progress),
# then the slowest tests; pinned, fetched through the Go module proxy.
GOTESTSUM_VERSION := v1.13.0
GOTESTSUM := $(GO) run gotest.tools/gotestsum@$(GOTESTSUM_VERSION)
PROTO_FILES := sdk/proto/ctxhost/plugin/v1/plugin.proto
SERVICE_PROTO_FILES := sdk/proto/ctxhost/service/v1/service.proto
# where protoc finds google/protobuf/*.proto (Debian: libprotobuf-dev)
PROTO_INCLUDE ?= /usr/include

# The Python SDK (sdk/python) and its example run on Debian's packages.
PYTHON          := /usr/bin/python3
PYTHON_PACKAGES := python3-grpcio python3-protobuf

# binary name => package
PLUGINS := \
	ctxhost-plugin-plan=./plugins/plan \
	ctxhost-plugin-memory=./plugins/memory \
	ctxhost-plugin-tooloutput=./plugins/tooloutput \
	ctxhost-plugin-repomap=./plugins/repomap \
	ctxhost-plugin-codesearch=./plugins/codesearch \
	ctxhost-plugin-codebasedocs=./plugins/codebasedocs \
	ctxhost-plugin-relevantfiles=./plugins/relevantfiles \
	ctxhost-plugin-hello=./examples/hello \
	ctxhost-assembler-gemini=./plugins/assembler-gemini \
	ctxhost-assembler-claude=./plugins/assembler-claude \
	ctxhost-assembler-codex=./plugins/assembler-codex

# The provider SDK tests (cmd/ctxhost/callpath_e2e_test.go) run the official
# npm SDKs, pinned in $(SDK_DIR)/package-lock.json, from $(SDK_DIR)/node_modules.
SDK_DIR := cmd/ctxhost/testdata/sdk

.PHONY: all build test test-full test-short run proto bench bench-growth bench-callpath nginx lint clean python-deps chaos-service sdk-deps ui ui-deps browser-deps

all: build

## build: the host and every plugin into ./bin
build:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ctxhost ./cmd/ctxhost
	@set -e; for p in $(PLUGINS); do \
		name=$${p%%=*}; pkg=$${p#*=}; \
		echo "$(GO) build -o $(BIN)/$$name $$pkg"; \
		$(GO) build -o $(BIN)/$$name $$pkg; \
	done

## test: build what the tests need, then run every test with the race detector
test: build python-deps sdk-deps ui-deps browser-deps
	@# the whole module graph in the module cache: TestOutOfTreeGuide builds
	@# a module outside the tree offline (GOPROXY=off), from the cache only
	$(GO) mod download
	CTXHOST_BIN_DIR=$(BIN) $(GOTESTSUM) --format testname --jsonfile $(BIN)/test-events.json -- \
		-race -count=1 -timeout 30m ./...
	@echo "the slowest tests (over 20 s):"
	@$(GOTESTSUM) tool slowest --jsonfile $(BIN)/test-events.json --threshold 20s

## test-full: make test with the slowest replays over all of their
## material (CTXHOST_TEST_FULL=1, internal/suite): under make test each
## replays every class of case it checks (a form of a run, an endpoint, a
## window, a strategy) on one of its runs, taken in turn; here every run
## in every class
test-full:
	CTXHOST_TEST_FULL=1 $(MAKE) test

## test-short: the edit loop: every package's tests under -short, without
## the race detector; the replays of whole corpora and trajectories, the
## browser, SDK and framework runs and the restart scenarios skip (make
## test runs them)
test-short: build
	CTXHOST_BIN_DIR=$(BIN) $(GOTESTSUM) --format pkgname-and-test-fails -- -short -count=1 -timeout 10m ./...

## python-deps: make sure $(PYTHON) can import grpc and protobuf (the Python
## SDK's only dependencies), installing the Debian packages when running as
## root on Debian; otherwise say exactly what to install and fail.
python-deps:
	@if $(PYTHON) -c 'import grpc, google.protobuf' 2>/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing $(PYTHON_PACKAGES) for the Python SDK"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y $(PYTHON_PACKAGES) || \
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(PYTHON_PACKAGES); } || exit 1; \
		$(PYTHON) -c 'import grpc, google.protobuf' && exit 0; \
	fi; \
	echo "The Python SDK tests need $(PYTHON) with the grpc and protobuf modules."; \
	echo "Install them, then run make test again:"; \
	echo "    sudo apt-get install $(PYTHON_PACKAGES)        # Debian, Ubuntu"; \
	exit 1

## chaos-service: the adversarial suite of `ctxhost serve` (minutes; not
## part of `make test`): kill -9 under concurrent load on SQLite and
## PostgreSQL (127.0.0.1:5432, or $$CTXHOST_TEST_POSTGRES) with connections
## cut, two servers creating one session, damaged stores, giant and partial
## requests, 100,000 fuzzed requests, the disk full under load (a file size
## limit on the server; and a full tmpfs when run as root), a plugin stopped
## with SIGSTOP, the memory and CPU patterns of hostile calls (peak RSS
## within memory_limit, CPU ratios). Each test prints a REPORT line with its counts. Tune with
## CTXHOST_CHAOS_SECONDS (20), CTXHOST_CHAOS_WORKERS (8), CTXHOST_CHAOS_FUZZ
## (100000), CTXHOST_CHAOS_DISK_SECONDS (10 per disk-full run).
chaos-service: build
	@echo "go test -tags chaos ./internal/servicechaos (full log: $(BIN)/chaos-service.log)"
	@CTXHOST_BIN_DIR=$(BIN) $(GO) test -tags chaos -count=1 -v -timeout 30m -run . ./internal/servicechaos \
		>$(BIN)/chaos-service.log 2>&1; rc=$$?; \
	grep -E '^(--- |    --- |PASS|FAIL|ok)|REPORT|_test\.go:[0-9]+' $(BIN)/chaos-service.log; exit $$rc

## sdk-deps: install the pinned provider SDKs (openai, @anthropic-ai/sdk,
## @google/genai) and agent frameworks (the Vercel AI SDK, LangChain.js and
## LangGraph, the OpenAI Agents SDK) into $(SDK_DIR)/node_modules with npm ci, unless they are
## installed already from the same package-lock.json. Without npm it says so
## and the SDK tests skip (they fail under CI=1).
sdk-deps:
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "npm not found: the provider SDK tests will skip (install node v20+ and npm, then run make sdk-deps)"; exit 0; fi; \
	if [ -f $(SDK_DIR)/node_modules/.package-lock.json ] && \
		[ ! $(SDK_DIR)/package-lock.json -nt $(SDK_DIR)/node_modules/.package-lock.json ]; then exit 0; fi; \
	echo "installing the provider SDKs into $(SDK_DIR)/node_modules"; \
	cd $(SDK_DIR) && npm ci --no-audit --no-fund --ignore-scripts

# The web inspector (server/inspector) is built from $(UI_DIR) with the npm
# packages pinned in $(UI_DIR)/package-lock.json (Vite, TypeScript, jsdiff;
# playwright-core drives Chromium in its browser test). Its built output,
# server/inspector/dist, is committed: `go build` embeds it without npm.
UI_DIR := web
CHROMIUM ?= /usr/bin/chromium

## ui-deps: install the inspector's pinned npm packages into
## $(UI_DIR)/node_modules with npm ci, unless installed already from the
## same package-lock.json. Without npm it says so and the browser test and
## the build check skip (they fail under CI=1).
ui-deps:
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "npm not found: the inspector's browser test will skip (install node v20+ and npm, then run make ui-deps)"; exit 0; fi; \
	if [ -f $(UI_DIR)/node_modules/.package-lock.json ] && \
		[ ! $(UI_DIR)/package-lock.json -nt $(UI_DIR)/node_modules/.package-lock.json ]; then exit 0; fi; \
	echo "installing the inspector's npm packages into $(UI_DIR)/node_modules"; \
	cd $(UI_DIR) && npm ci --no-audit --no-fund --ignore-scripts

## browser-deps: Debian's Chromium for the inspector's browser test,
## installed when running as root on Debian; elsewhere it says what to
## install and the test skips (it fails under CI=1).
browser-deps:
	@if [ -x $(CHROMIUM) ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing chromium for the inspector's browser test"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y chromium || \
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; } || \
		echo "could not install chromium: the inspector's browser test will skip"; \
		exit 0; \
	fi; \
	echo "$(CHROMIUM) not found: the inspector's browser test will skip (sudo apt-get install chromium)"

## ui: rebuild the inspector's front-end into server/inspector/dist
## (commit the result)
ui: ui-deps
	cd $(UI_DIR) && npm run build

## run: build, then replay the example transcript through the whole pipeline
run: build
	$(BIN)/ctxhost run -config $(CONFIG) $(RUNFLAGS) $(TRANSCRIPT)
	@echo "To see the same replay in the web inspector (a chart per turn, each compaction's diff, the originals):"
	@echo "    $(BIN)/ctxhost run -inspect 127.0.0.1:7401 -config $(CONFIG) $(RUNFLAGS) $(TRANSCRIPT)"
	@echo "  then open http://127.0.0.1:7401/ui/ (Ctrl-C stops it); ctxhost serve shows its sessions at /ui/ the same way."

## proto: regenerate the protobuf code with pinned generators (needs protoc:
## apt-get install protobuf-compiler libprotobuf-dev)
proto:
	$(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	$(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	$(GO) install connectrpc.com/connect/cmd/protoc-gen-connect-go@$(PROTOC_GEN_CONNECT_GO_VERSION)
	PATH="$$($(GO) env GOPATH)/bin:$$PATH" protoc -I sdk/proto \
		--go_out=. --go_opt=module=github.com/ctxhost/ctxhost \
		--go-grpc_out=. --go-grpc_opt=module=github.com/ctxhost/ctxhost \
		$(PROTO_FILES)
	PATH="$$($(GO) env GOPATH)/bin:$$PATH" protoc -I sdk/proto -I $(PROTO_INCLUDE) \
		--go_out=. --go_opt=module=github.com/ctxhost/ctxhost \
		--connect-go_out=. --connect-go_opt=module=github.com/ctxhost/ctxhost \
		$(SERVICE_PROTO_FILES)
	tmp=$$(mktemp -d) && protoc -I sdk/proto --python_out=$$tmp $(PROTO_FILES) && \
		mv $$tmp/ctxhost/plugin/v1/plugin_pb2.py sdk/python/ctxhost_plugin/plugin_pb2.py && rm -rf $$tmp

## bench: run every benchmark once (compare ratios within one run)
bench: build
	CTXHOST_BIN_DIR=$(BIN) $(GO) test -run '^$$' -bench . -benchmem -benchtime 2x ./...

## bench-growth: the cost of a turn as the history grows from 100 to
## 50,000 messages, with the example profile's plugins and assembler and
## every other first-party plugin: in-process (the host and the Gemini
## assembler in one process), through plugin processes (the engine) and
## over a real `ctxhost serve` (the Go client), unchanged and append
## turns; then the steady turn over the service in round trips. Each
## figure is against the 100-message one of the same run (x-of-100), or
## against a loopback call of the same shape (rt-added). Minutes; not part
## of `make test`. Full output: $(BIN)/bench-growth.log.
GROWTH_BENCHTIME ?= 300x
bench-growth: build
	@CTXHOST_BIN_DIR=$(BIN) $(GO) test -run '^$$' -bench '^BenchmarkGrowthInProcess$$' -benchtime $(GROWTH_BENCHTIME) \
		./assemblers/gemini >$(BIN)/bench-growth.log 2>&1 && \
	CTXHOST_BIN_DIR=$(BIN) $(GO) test -run '^$$' -bench '^(BenchmarkGrowth|BenchmarkSteadyTurnAllPlugins)$$' -benchtime $(GROWTH_BENCHTIME) \
		-timeout 60m ./cmd/ctxhost >>$(BIN)/bench-growth.log 2>&1; rc=$$?; \
	awk '/^Benchmark/ { name = $$1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$$/, "", name); \
			k = 0; line = ""; r = ""; split("", ns); split("", x); \
			for (i = 3; i <= NF; i++) { u = $$i; v = $$(i-1); \
				if (u ~ /^ns\/turn-/) { sz = u; sub(/^ns\/turn-/, "", sz); sizes[++k] = sz; ns[sz] = v } \
				if (u ~ /^x-[0-9]+-of-/) { sz = u; sub(/^x-/, "", sz); sub(/-of-.*/, "", sz); x[sz] = v } \
				if (u == "rt-added") r = v; if (u == "turn-ns") t = v; if (u == "rt-ns") rt = v; if (u == "local-ns") lo = v } \
			if (r != "") { printf "%-28s %.0f ns over the service, %.0f in-process: %.2f round trips added (one: %.0f ns)\n", name, t, lo, r, rt; next } \
			for (j = 1; j <= k; j++) { sz = sizes[j]; line = line sprintf("  %6s: %9.0f ns", sz, ns[sz]); \
				if (sz in x) line = line sprintf(" %5.2fx", x[sz]); else line = line "       " } \
			if (k) printf "%-28s%s\n", name, line } \
		/^(FAIL|panic|--- FAIL)/ { print } ' $(BIN)/bench-growth.log; exit $$rc

## nginx: Debian's nginx-light for bench-callpath's nginx column,
## installed when running as root on Debian; elsewhere it says what to
## install and the column is skipped.
nginx:
	@if [ -x /usr/sbin/nginx ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing nginx-light for bench-callpath"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y nginx-light || \
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y nginx-light; } || \
		echo "could not install nginx-light: bench-callpath skips its nginx column"; \
		exit 0; \
	fi; \
	echo "/usr/sbin/nginx not found: bench-callpath skips its nginx column (sudo apt-get install nginx-light)"

## bench-callpath: ctxhost's call path beside the stand-in called direct, a
## minimal Go reverse proxy and nginx proxy_pass, in one run: added p50 at
## 10 and 1,000 messages, the first call of a 1,000-message conversation,
## throughput at concurrency 8, a 5 MB streamed answer. Prints the table
## (also in $(BIN)/bench-callpath.md; full output $(BIN)/bench-callpath.log).
## CALLPATH_ROUNDS sets the rounds of each measurement. Minutes; not part of
## `make test`.
CALLPATH_ROUNDS ?= 8
bench-callpath: nginx
	@mkdir -p $(BIN)
	@CTXHOST_BENCH_ROUNDS=$(CALLPATH_ROUNDS) CTXHOST_BENCH_TABLE=$(BIN)/bench-callpath.md \
		$(GO) test -run '^$$' -bench '^BenchmarkCallPathBesideProxies$$' -benchtime 1x -timeout 60m \
		./server/callpath/proxybench >$(BIN)/bench-callpath.log 2>&1; rc=$$?; \
	if [ $$rc = 0 ]; then cat $(BIN)/bench-callpath.md; grep '^BenchmarkCallPath' $(BIN)/bench-callpath.log; \
	else cat $(BIN)/bench-callpath.log; fi; exit $$rc

## lint: gofmt and go vet
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf $(BIN)
