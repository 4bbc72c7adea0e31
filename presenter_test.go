package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/rs/zerolog"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/hbgraph/hbgraph/explain"
	"github.com/hbgraph/hbgraph/graph/codes"
	"github.com/hbgraph/hbgraph/store"
)

// TestCorruptRowIsInternalWithTheKeyInTheLogOnly: a resolver's error that
// wraps store.ErrCorrupt reaches the client as INTERNAL with the request id
// alone; the log line has the row key.
func TestCorruptRowIsInternalWithTheKeyInTheLogOnly(t *testing.T) {
	var logged bytes.Buffer
	present := presentError(zerolog.New(&logged))
	ctx := explain.With(context.Background(), &explain.Request{ID: "req-1"})
	ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Alias: "node"}}})
	err := fmt.Errorf("node %q: %w", "alice", fmt.Errorf("%w 0a616c696365: c=01 u=78", store.ErrCorrupt))
	got := present(ctx, err)
	if got.Extensions["code"] != codes.Internal {
		t.Errorf("code %v, want %s", got.Extensions["code"], codes.Internal)
	}
	if strings.Contains(got.Message, "0a616c696365") || !strings.Contains(got.Message, "req-1") {
		t.Errorf("message %q: want the request id and not the row key", got.Message)
	}
	if !strings.Contains(logged.String(), "0a616c696365") {
		t.Errorf("the log lacks the row key: %s", logged.String())
	}
}
