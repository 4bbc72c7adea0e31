// Package querycache is gqlgen's cache of parsed and validated documents,
// bounded by the memory the documents take as well as by their number.
//
// gqlgen's lru.New bounds entries only: a thousand distinct 1 MiB queries
// kept a thousand parsed documents of about 25 MiB each. Here a document
// is charged an estimate of its size, a multiple of its query's length
// (gqlparser's AST takes 11-25 bytes per byte of query text: 11 for
// bench/queries/q3.graphql, 25 for a 76 KB document of aliased fields),
// the least recently used are evicted past the budget, and a query longer
// than MaxQueryBytes is never kept: a client sending such documents pays
// for parsing them every time, and the cache stays for everyone else.
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

// Cache is an LRU of documents bounded by entries and estimated bytes.
type Cache struct {
	maxEntries    int
	maxBytes      int64
	maxQueryBytes int

	mu    sync.Mutex
	bytes int64
	order *list.List // of *entry, most recently used first
	byKey map[string]*list.Element
}

type entry struct {
	query string
	doc   *ast.QueryDocument
	cost  int64
}

var _ graphql.Cache[*ast.QueryDocument] = (*Cache)(nil)

// New returns a cache of at most maxEntries documents taking at most
// maxBytes by estimate, keeping none whose query is longer than
// maxQueryBytes.
func New(maxEntries int, maxBytes int64, maxQueryBytes int) *Cache {
	return &Cache{
		maxEntries:    maxEntries,
		maxBytes:      maxBytes,
		maxQueryBytes: maxQueryBytes,
		order:         list.New(),
		byKey:         make(map[string]*list.Element),
	}
}

// Cost is the estimated memory of query's parsed document.
func Cost(query string) int64 { return int64(len(query)) * BytesPerQueryByte }

// Get returns query's document if it is cached.
func (c *Cache) Get(_ context.Context, query string) (*ast.QueryDocument, bool) {
	if len(query) > c.maxQueryBytes {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[query]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry).doc, true
}

// Add keeps query's document unless the query is over the size a cached
// one may have, evicting the least recently used to stay in bounds.
func (c *Cache) Add(_ context.Context, query string, doc *ast.QueryDocument) {
	cost := Cost(query)
	if len(query) > c.maxQueryBytes || cost > c.maxBytes || c.maxEntries < 1 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[query]; ok {
		el.Value.(*entry).doc = doc
		c.order.MoveToFront(el)
		return
	}
	c.byKey[query] = c.order.PushFront(&entry{query: query, doc: doc, cost: cost})
	c.bytes += cost
	for c.order.Len() > c.maxEntries || c.bytes > c.maxBytes {
		oldest := c.order.Back()
		e := oldest.Value.(*entry)
		c.order.Remove(oldest)
		delete(c.byKey, e.query)
		c.bytes -= e.cost
	}
}

// Len returns the number of cached documents and their estimated bytes.
func (c *Cache) Len() (entries int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.bytes
}
