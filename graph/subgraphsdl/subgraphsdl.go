// Package subgraphsdl adjusts the SDL hbgraph serves to federation gateways
// in _service { sdl }.
package subgraphsdl

import (
	"context"
	"regexp"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/plugin/federation/fedruntime"
)

// authDirective matches a use of @authenticated or @requiresScopes(...).
var authDirective = regexp.MustCompile(`\s+@(authenticated|requiresScopes\([^)]*\))`)

// WithoutAuthDirectives removes @authenticated and @requiresScopes from
// sdl, uses and imports. hbgraph enforces what they say either way; they
// only tell a gateway. @apollo/gateway refuses a supergraph that carries
// them (only Apollo Router implements these SECURITY features).
func WithoutAuthDirectives(sdl string) string {
	for _, imp := range []string{`, "@authenticated"`, `, "@requiresScopes"`} {
		sdl = strings.ReplaceAll(sdl, imp, "")
	}
	return authDirective.ReplaceAllString(sdl, "")
}

// StripAuthDirectives is a gqlgen field middleware that serves _service's
// SDL WithoutAuthDirectives.
func StripAuthDirectives(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
	if fc := graphql.GetFieldContext(ctx); err == nil && fc != nil && fc.Object == "Query" && fc.Field.Name == "_service" {
		if s, ok := res.(fedruntime.Service); ok {
			s.SDL = WithoutAuthDirectives(s.SDL)
			return s, nil
		}
	}
	return res, err
}
