# ctxhost build, test and run targets. `make run` and `make test` are the two
# commands of the README; CI runs `make test` (see .ci/run).

GO        ?= go
BIN       ?= $(CURDIR)/bin
CONFIG    ?= examples/agent.hcl
TRANSCRIPT ?= examples/coding-session.jsonl
RUNFLAGS  ?=

PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.5.1
PROTO_FILES := sdk/proto/ctxhost/plugin/v1/plugin.proto

# binary name => package
PLUGINS := \
	ctxhost-plugin-plan=./plugins/plan \
	ctxhost-plugin-memory=./plugins/memory \
	ctxhost-plugin-tooloutput=./plugins/tooloutput \
	ctxhost-plugin-hello=./examples/hello \
	ctxhost-assembler-gemini=./plugins/assembler-gemini \
	ctxhost-assembler-claude=./plugins/assembler-claude \
	ctxhost-assembler-codex=./plugins/assembler-codex

.PHONY: all build test run proto bench lint clean

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
test: build
	CTXHOST_BIN_DIR=$(BIN) $(GO) test -race -count=1 -timeout 30m ./...

## run: build, then replay the example transcript through the whole pipeline
run: build
	$(BIN)/ctxhost run -config $(CONFIG) $(RUNFLAGS) $(TRANSCRIPT)

## proto: regenerate the protobuf code with pinned generators (needs protoc:
## apt-get install protobuf-compiler)
proto:
	$(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	$(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	PATH="$$($(GO) env GOPATH)/bin:$$PATH" protoc -I sdk/proto \
		--go_out=. --go_opt=module=github.com/ctxhost/ctxhost \
		--go-grpc_out=. --go-grpc_opt=module=github.com/ctxhost/ctxhost \
		$(PROTO_FILES)

## bench: run every benchmark once (compare ratios within one run)
bench: build
	CTXHOST_BIN_DIR=$(BIN) $(GO) test -run '^$$' -bench . -benchmem -benchtime 2x ./...

## lint: gofmt and go vet
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf $(BIN)
