# `make test` is the one command that runs every test; .ci/run calls it.
GO        ?= go
TEST_ARGS ?=

.PHONY: test vet fmt-check generate-check unit bench

test: fmt-check generate-check vet unit

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

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./store/... .
