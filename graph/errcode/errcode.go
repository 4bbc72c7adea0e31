// Package errcode is hbgraph's policy for the extensions.code of a GraphQL
// error: which code of graph/codes' vocabulary an error gets. The server's
// error presenter and the tests' presenters use it, so that what the tests
// check is what the server answers.
package errcode

import (
	"context"
	"errors"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/graph/codes"
	"github.com/hbgraph/hbgraph/store"
)

// Of is the code of err, gerr being gqlgen's presentation of it
// (graphql.DefaultErrorPresenter). given reports that gerr already carries
// a code of the vocabulary (gqlgen's parse and validation errors, the
// limits', the edge's), which stays; a code outside it is a library's,
// replaced (the caller may log it: a bug of ours to map).
func Of(err error, gerr *gqlerror.Error) (code string, given bool) {
	if c, ok := gerr.Extensions["code"].(string); ok && codes.Known(c) {
		return c, true
	}
	code = ofError(err)
	// gqlgen's own errors about the request (a malformed body, a
	// persisted-query hash that does not match, introspection turned off)
	// wrap no error of ours: the client has to change the request.
	if direct, ok := err.(*gqlerror.Error); ok && direct.Err == nil && code == codes.Internal {
		code = codes.BadUserInput
	}
	// The entity resolvers report per representation (_entities.N); an
	// error of _entities itself is gqlgen refusing a representation (an
	// unknown __typename, a missing key field): the caller's input.
	if code == codes.Internal && len(gerr.Path) == 1 && gerr.Path[0] == ast.PathName("_entities") {
		code = codes.BadUserInput
	}
	return code, false
}

// ofError is the code of an error a resolver (or the plan) returned, by
// the sentinel it wraps.
func ofError(err error) string {
	switch {
	case errors.Is(err, auth.ErrUnauthenticated):
		return codes.Unauthenticated
	case errors.Is(err, auth.ErrForbidden), errors.Is(err, store.ErrForbidden):
		return codes.Forbidden
	case errors.Is(err, store.ErrInvalidInput):
		return codes.BadUserInput
	case errors.Is(err, store.ErrNotFound):
		return codes.NotFound
	case errors.Is(err, store.ErrAlreadyExists):
		return codes.AlreadyExists
	case errors.Is(err, store.ErrConflict):
		return codes.Conflict
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return codes.Unavailable
	case errors.Is(err, store.ErrCorrupt):
		// Damage or a bug: the row key goes to the log, not the client.
		return codes.Internal
	}
	return codes.Internal
}
