// Package memstore opens a store over a fresh in-memory embedded engine,
// for the tests and benchmarks of every package that needs one.
package memstore

import (
	"context"
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
	hc := Engine(tb)
	st, err := store.New(hc, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return st, hc
}

// Engine opens a fresh in-memory engine with hbgraph's tables, closed when
// tb ends, for tests that put a client of their own between it and a store.
func Engine(tb testing.TB) *embedded.Client {
	tb.Helper()
	hc, err := embedded.Open(embedded.Options{Tables: keys.Tables(), Logger: zerolog.Nop()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(hc.Close)
	return hc
}

// read reads one row through Store.Read, as the server does.
func read(tb testing.TB, st *store.Store, g store.Get, err error) store.Row {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
	rows, err := st.Read(context.Background(), []store.Get{g})
	if err != nil {
		tb.Fatal(err)
	}
	return rows[0]
}

// Node reads node id: nil when there is none.
func Node(tb testing.TB, st *store.Store, id string) *store.Node {
	tb.Helper()
	g, err := store.NodeGet(id)
	n, err := read(tb, st, g, err).Node(id)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// Article reads article id: nil when there is none.
func Article(tb testing.TB, st *store.Store, id string) *store.Article {
	tb.Helper()
	g, err := store.ArticleGet(id)
	a, err := read(tb, st, g, err).Article(id)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// ArticleCount reads how many articles k's author has in k's category
// ("": in all).
func ArticleCount(tb testing.TB, st *store.Store, k store.ArticleCountKey) int64 {
	tb.Helper()
	g, err := k.Get()
	n, err := read(tb, st, g, err).ArticleCount(k.Category)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// Degree reads the degree counter k.
func Degree(tb testing.TB, st *store.Store, k store.DegreeKey) int64 {
	tb.Helper()
	g, err := k.Get()
	n, err := read(tb, st, g, err).Degree()
	if err != nil {
		tb.Fatal(err)
	}
	return n
}
