package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/graph/codes"
	"github.com/hbgraph/hbgraph/store"
)

// TestClientMessages: what reaches the client of each kind of error.
func TestClientMessages(t *testing.T) {
	present := presentError(zerolog.Nop())
	validation := func(msg string) error {
		return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": codes.ValidationFailed}}
	}
	variable := func(msg string, path ...ast.PathElement) error {
		return &gqlerror.Error{Message: msg, Path: path, Extensions: map[string]any{"code": codes.ValidationFailed}}
	}
	for _, c := range []struct {
		name string
		err  error
		code string
		want string
	}{
		{"a refusal's reason", fmt.Errorf("update node %q: %w", "x", &store.Refusal{Kind: store.ErrInvalidInput, Reason: "title must be short"}), codes.BadUserInput, "title must be short"},
		{"not found without a reason", fmt.Errorf("node %q: %w", "x", store.ErrNotFound), codes.NotFound, "what it names does not exist"},
		{"forbidden", fmt.Errorf("node %q: %w", "x", auth.ErrForbidden), codes.Forbidden, "only the node's owner or an admin may change it"},
		{"unavailable", fmt.Errorf("scan %x: %w", "row", store.ErrUnavailable), codes.Unavailable, "the store did not answer in time: try again"},
		{"unknown operation", &gqlerror.Error{Message: "operation A\nB not found", Extensions: map[string]any{"code": codes.ValidationFailed}}, codes.ValidationFailed, "operationName names no operation in the document"},
		{"variable kind", variable("cannot use float64 as Int", ast.PathName("variable"), ast.PathName("n")), codes.ValidationFailed, "variable $n is not a valid Int"},
		{"variable list element", variable("cannot use map as ID", ast.PathName("variable"), ast.PathName("ids"), ast.PathIndex(0)), codes.ValidationFailed, "variable $ids (an element of the list) is not a valid ID"},
		{"variable enum", variable("x\u202e is not a valid Direction", ast.PathName("variable"), ast.PathName("d")), codes.ValidationFailed, "variable $d is not a valid Direction value"},
		{"variable missing", variable("must be defined", ast.PathName("variable"), ast.PathName("d")), codes.ValidationFailed, "variable $d is required and was not given"},
		{"literal value", validation(`Int cannot represent non-integer value: "abc"`), codes.ValidationFailed, "Int cannot represent non-integer value"},
		{"expected value", validation(`Expected value of type "Int!", found "abc".`), codes.ValidationFailed, `Expected value of type "Int!"`},
		{"control characters", validation("Cannot query field \"a\nb\x1b\u202e\""), codes.ValidationFailed, `Cannot query field "a\u000ab\u001b\u202e"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := present(context.Background(), c.err)
			if got.Extensions["code"] != c.code || got.Message != c.want {
				t.Errorf("got %s %q, want %s %q", got.Extensions["code"], got.Message, c.code, c.want)
			}
		})
	}
}

func TestSanitizeBounds(t *testing.T) {
	long := strings.Repeat("é", 1000)
	got := sanitize(long)
	if len(got) > maxMessage+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("a %d-byte message became %d bytes", len(long), len(got))
	}
	if got := sanitize("fine: node \"x\""); got != "fine: node \"x\"" {
		t.Errorf("a clean message changed: %q", got)
	}
}
