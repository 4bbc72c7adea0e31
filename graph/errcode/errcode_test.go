package errcode

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/graph/codes"
	"github.com/hbgraph/hbgraph/store"
)

// TestOf: every sentinel, wrapped, gets its code; gqlgen's own errors and
// _entities' refusals are the caller's input; a code of the vocabulary
// stays, one outside it does not; anything else is INTERNAL.
func TestOf(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("node %q: %w", "a", err) }
	cases := []struct {
		name      string
		err       error
		gerr      *gqlerror.Error // nil: gqlerror.WrapPath(nil, err)
		code      string
		wantGiven bool
	}{
		{"unauthenticated", wrap(auth.ErrUnauthenticated), nil, codes.Unauthenticated, false},
		{"forbidden", wrap(auth.ErrForbidden), nil, codes.Forbidden, false},
		{"store forbidden", wrap(store.ErrForbidden), nil, codes.Forbidden, false},
		{"invalid input", wrap(store.ErrInvalidInput), nil, codes.BadUserInput, false},
		{"not found", wrap(store.ErrNotFound), nil, codes.NotFound, false},
		{"already exists", wrap(store.ErrAlreadyExists), nil, codes.AlreadyExists, false},
		{"conflict", wrap(store.ErrConflict), nil, codes.Conflict, false},
		{"unavailable", wrap(store.ErrUnavailable), nil, codes.Unavailable, false},
		{"deadline", wrap(context.DeadlineExceeded), nil, codes.Unavailable, false},
		{"corrupt", wrap(store.ErrCorrupt), nil, codes.Internal, false},
		{"anything else", errors.New("boom"), nil, codes.Internal, false},
		{"gqlgen's own", &gqlerror.Error{Message: "bad body"}, nil, codes.BadUserInput, false},
		{"_entities refused", errors.New("unknown type"), &gqlerror.Error{Path: ast.Path{ast.PathName("_entities")}}, codes.BadUserInput, false},
		{"an entity's own error", errors.New("boom"), &gqlerror.Error{Path: ast.Path{ast.PathName("_entities"), ast.PathIndex(0)}}, codes.Internal, false},
		{"a code of the vocabulary", errors.New("x"), &gqlerror.Error{Extensions: map[string]any{"code": codes.ValidationFailed}}, codes.ValidationFailed, true},
		{"a code outside it", wrap(store.ErrNotFound), &gqlerror.Error{Extensions: map[string]any{"code": "LIBRARY_CODE"}}, codes.NotFound, false},
	}
	for _, c := range cases {
		gerr := c.gerr
		if gerr == nil {
			gerr = gqlerror.WrapPath(nil, c.err)
		}
		code, given := Of(c.err, gerr)
		if code != c.code || given != c.wantGiven {
			t.Errorf("%s: %s given=%v, want %s given=%v", c.name, code, given, c.code, c.wantGiven)
		}
		if !codes.Known(code) {
			t.Errorf("%s: %s is not in the vocabulary", c.name, code)
		}
	}
}
