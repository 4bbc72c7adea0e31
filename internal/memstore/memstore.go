// Package memstore opens a store over a fresh in-memory embedded engine,
// for the tests and benchmarks of every package that needs one.
package memstore

import (
	"testing"

	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/store"
	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/keys"
)

// New returns a store over a fresh in-memory engine with hbgraph's tables,
// and the engine; both are closed when tb ends.
func New(tb testing.TB) (*store.Store, *embedded.Client) {
	tb.Helper()
	hc, err := embedded.Open(embedded.Options{Tables: keys.Tables(), Logger: zerolog.Nop()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(hc.Close)
	st, err := store.New(hc, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return st, hc
}
