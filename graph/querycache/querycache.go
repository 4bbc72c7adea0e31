// Package querycache is gqlgen's cache of parsed and validated documents,
// and of automatic persisted queries, bounded by the memory they take as
// well as by their number.
//
// gqlgen's lru.New bounds entries only: a thousand distinct 1 MiB queries
// kept a thousand parsed documents of about 25 MiB each. Here a document
// is charged an estimate of its size, a multiple of its query's length
// (gqlparser's AST takes 11-25 bytes per byte of query text: 11 for
// bench/queries/q3.graphql, 25 for a 76 KB document of aliased fields),
// the least recently used are evicted past the budget, and a query longer
// than MaxQueryBytes is never kept: a client sending such documents pays
// for parsing them every time, and the cache stays for everyone else.
// The persisted-query cache (hash to query text) is bounded the same way,
// charged the length of the text it keeps.
package querycache

import (
	"container/list"
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// BytesPerQueryByte is the estimate of a parsed document's memory per
// byte of its query text (the upper end of what was measured).
const BytesPerQueryByte = 32

// Cache is an LRU bounded by entries and by the estimated bytes of what it
// keeps.
type Cache[T any] struct {
	maxEntries int
	maxBytes   int64
	maxCost    int64                       // one entry's largest cost
	cost       func(key string, v T) int64 // an entry's estimated bytes

	mu    sync.Mutex
	bytes int64
	order *list.List // of *entry[T], most recently used first
	byKey map[string]*list.Element
}

type entry[T any] struct {
	key   string
	value T
	cost  int64
}

var (
	_ graphql.Cache[*ast.QueryDocument] = (*Cache[*ast.QueryDocument])(nil)
	_ graphql.Cache[string]             = (*Cache[string])(nil)
)

// Documents returns a cache of at most maxEntries documents taking at most
// maxBytes by estimate, keeping none whose query is longer than
// maxQueryBytes.
func Documents(maxEntries int, maxBytes int64, maxQueryBytes int) *Cache[*ast.QueryDocument] {
	return newCache(maxEntries, maxBytes, int64(maxQueryBytes)*BytesPerQueryByte,
		func(query string, _ *ast.QueryDocument) int64 { return DocumentCost(query) })
}

// PersistedQueries returns a cache of at most maxEntries persisted queries
// (hash to query text) of at most maxBytes of text, keeping none longer
// than maxQueryBytes.
func PersistedQueries(maxEntries int, maxBytes int64, maxQueryBytes int) *Cache[string] {
	return newCache(maxEntries, maxBytes, int64(maxQueryBytes),
		func(hash, query string) int64 { return int64(len(hash) + len(query)) })
}

func newCache[T any](maxEntries int, maxBytes, maxCost int64, cost func(string, T) int64) *Cache[T] {
	return &Cache[T]{
		maxEntries: maxEntries,
		maxBytes:   maxBytes,
		maxCost:    maxCost,
		cost:       cost,
		order:      list.New(),
		byKey:      make(map[string]*list.Element),
	}
}

// DocumentCost is the estimated memory of query's parsed document.
func DocumentCost(query string) int64 { return int64(len(query)) * BytesPerQueryByte }

// Get returns key's value if it is cached.
func (c *Cache[T]) Get(_ context.Context, key string) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		var zero T
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry[T]).value, true
}

// Add keeps value under key unless it costs more than one entry may,
// evicting the least recently used to stay in bounds.
func (c *Cache[T]) Add(_ context.Context, key string, value T) {
	cost := c.cost(key, value)
	if cost > c.maxCost || cost > c.maxBytes || c.maxEntries < 1 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		e := el.Value.(*entry[T])
		c.bytes += cost - e.cost
		e.value, e.cost = value, cost
		c.order.MoveToFront(el)
	} else {
		c.byKey[key] = c.order.PushFront(&entry[T]{key: key, value: value, cost: cost})
		c.bytes += cost
	}
	for c.order.Len() > c.maxEntries || c.bytes > c.maxBytes {
		oldest := c.order.Back()
		e := oldest.Value.(*entry[T])
		c.order.Remove(oldest)
		delete(c.byKey, e.key)
		c.bytes -= e.cost
	}
}

// Len returns the number of cached entries and their estimated bytes.
func (c *Cache[T]) Len() (entries int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.bytes
}
