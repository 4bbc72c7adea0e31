// Package resolvers answers GraphQL fields: each resolver checks and
// converts its arguments, asks a loader or the store, and returns. Errors
// go back untouched; server.go's error presenter picks their codes.
package resolvers

import (
	"github.com/hbgraph/hbgraph/events"
	"github.com/hbgraph/hbgraph/store"
)

// Resolver holds the resolvers' dependencies.
type Resolver struct {
	Store *store.Store
	// Events gets the writes that succeeded, for the subscriptions (nil:
	// none published, subscriptions refused).
	Events *events.Bus
}
