# `make test` is the one command that runs every test; .ci/run calls it.
GO        ?= go
TEST_ARGS ?=

.PHONY: test vet fmt-check generate-check unit bench build federation-test client-test

# The JS suites run the binary the Go build produced.
BIN := $(CURDIR)/bin/hbgraph
NPM_CI := npm ci --no-audit --no-fund

test: fmt-check generate-check vet unit federation-test client-test

fmt-check:
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# Generated gqlgen code is committed; regenerating must change nothing.
generate-check:
	$(GO) generate ./...
	@if [ -n "$$(git status --porcelain -- graph gqlgen.yml go.mod go.sum)" ]; then \
		echo "go generate changed files; run it and commit the result:"; \
		git status --porcelain -- graph gqlgen.yml go.mod go.sum; exit 1; fi

vet:
	$(GO) vet ./...

# -race always; the timeout keeps a hung test from eating CI's budget.
unit:
	$(GO) test -race -count=1 -timeout 15m $(TEST_ARGS) ./...

build:
	$(GO) build -o $(BIN) .

# Apollo Federation: @apollo/gateway and @apollo/composition against hbgraph
# and a second subgraph (tests/federation).
federation-test: build
	cd tests/federation && $(NPM_CI) && HBGRAPH_BIN=$(BIN) APOLLO_TELEMETRY_DISABLED=true npm test

# A frontend: Apollo Client paging with fetchMore (tests/client).
client-test: build
	cd tests/client && $(NPM_CI) && HBGRAPH_BIN=$(BIN) npm test

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./store/... .
