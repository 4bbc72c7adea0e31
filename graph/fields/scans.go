package fields

import (
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/hbgraph/hbgraph/loaders"
	"github.com/hbgraph/hbgraph/store"
)

// Scan is a page scan's typed definition: a page of a node's rows, keyed
// by the node's id, the field's typed arguments A (decoded once by the
// descriptor's Args) and the page flags the query selects, scanned in the
// node's wave. K is the store's read (the loaders' key of the scan); C
// is what the connection's own reads (totalCount) are keyed by.
type Scan[A, K, C any] struct {
	Key     func(id string, a *A, wanted PageInfoWanted) (K, error)
	Counted func(k K) C
}

// ScanOf is a Scan with its arguments erased (In.Args holds a *A): what
// the plan calls, by the store's read K.
type ScanOf[K, C any] struct {
	Key     func(id string, args any, wanted PageInfoWanted) (K, error)
	Counted func(k K) C
}

// Sized is what a page scan's typed arguments tell the pricing
// (graph/limits): the page size asked for.
type Sized interface{ Size() int }

// scan registers a page scan of typ.name.
func scan[A, K, C any](typ, name string, args func(map[string]any) (any, error), s Scan[A, K, C]) Scan[A, K, C] {
	key := s.Key
	register(&Desc{Type: typ, Name: name, Kind: PageScan, Args: args, Scan: &ScanOf[K, C]{
		Key:     func(id string, a any, wanted PageInfoWanted) (K, error) { return key(id, a.(*A), wanted) },
		Counted: s.Counted,
	}})
	return s
}

// The connections of Node: pages of its relationships and of its
// articles, read in the node's wave.
var (
	NodeRelationships = scan("Node", "relationships", decodeRelationshipsArgs, Scan[RelationshipsArgs, loaders.AdjacencyKey, store.DegreeKey]{adjacency, degree})
	NodeArticles      = scan("Node", "articles", decodeArticlesArgs, Scan[ArticlesArgs, loaders.ArticlesKey, store.ArticleCountKey]{articles, articleCount})
)

func decodeRelationshipsArgs(m map[string]any) (any, error) {
	c := converter{m: m}
	a := &RelationshipsArgs{Type: c.str("type"), PageArgs: c.page()}
	if v, ok := m["direction"]; ok {
		switch v {
		case "INCOMING":
			a.Direction = store.Incoming
		case "OUTGOING":
			a.Direction = store.Outgoing
		default:
			c.keep(errNotDirection) // gqlgen reports it, with its message
		}
	}
	return a, c.err
}

func decodeArticlesArgs(m map[string]any) (any, error) {
	c := converter{m: m}
	a := &ArticlesArgs{Category: c.optStr("category"), PostedAfter: c.optTime("postedAfter"), PostedBefore: c.optTime("postedBefore"), PageArgs: c.page()}
	return a, c.err
}

// page converts Relay's page arguments, in the schema's order.
func (c *converter) page() PageArgs {
	return PageArgs{First: c.optInt("first"), After: c.optStr("after"), Last: c.optInt("last"), Before: c.optStr("before")}
}

func (c *converter) optTime(name string) *time.Time {
	v := c.m[name]
	if v == nil {
		return nil
	}
	t, err := ParseTime(v)
	c.keep(err)
	return &t
}

var errNotDirection = BadInput("a Direction is INCOMING or OUTGOING")

// errNotTime words a Time argument that is not one without quoting it or
// naming a Go type; the error's path names the argument.
var errNotTime = &store.Refusal{Kind: store.ErrInvalidInput, Reason: "a Time must be an RFC 3339 string, such as 2024-05-01T12:00:00Z"}

// ParseTime reads a Time argument, an RFC 3339 timestamp (graph/model's
// UnmarshalTime, which gqlgen calls, is this). A value that is not one is
// the client's input error (validation lets any string through).
func ParseTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, errNotTime
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errNotTime
	}
	return t, nil
}

// DefaultPageSize is the size of a page when neither first nor last is
// given (the schema's documented default).
const DefaultPageSize = 20

// PageInfoWanted tells which of PageInfo's hasNextPage and hasPreviousPage
// a connection field selects, and (ArticleBody) whether its edges' nodes
// select an article's body: a page of articles without it reads none.
type PageInfoWanted struct{ Next, Previous, ArticleBody bool }

// AllPageInfo is what a connection read outside a query's selection (or
// without one) assumes is wanted.
var AllPageInfo = PageInfoWanted{Next: true, Previous: true, ArticleBody: true}

// PageArgs are a connection field's Relay page arguments, each nil when
// absent or null: named, so that after and before cannot be swapped.
type PageArgs struct {
	First  *int
	After  *string
	Last   *int
	Before *string
}

// Size is the page size asked for: first, else last, else
// DefaultPageSize (the size a valid request reads, and the one the
// complexity prices).
func (p PageArgs) Size() int {
	switch {
	case p.First != nil:
		return *p.First
	case p.Last != nil:
		return *p.Last
	}
	return DefaultPageSize
}

// RelationshipsArgs are Node.relationships' arguments.
type RelationshipsArgs struct {
	Type      string
	Direction store.Direction
	PageArgs
}

// ArticlesArgs are Node.articles' arguments.
type ArticlesArgs struct {
	Category                  *string
	PostedAfter, PostedBefore *time.Time
	PageArgs
}

// PageRequest turns Relay's first/after/last/before into a store page
// request: first/after page forward, last/before backward; mixing the two
// directions is refused. The store reads one row past the page only when
// the flag that row decides (hasNextPage forward, hasPreviousPage
// backward) is wanted.
func PageRequest(wanted PageInfoWanted, p PageArgs) (store.PageRequest, error) {
	forward := p.First != nil || p.After != nil
	backward := p.Last != nil || p.Before != nil
	if forward && backward {
		return store.PageRequest{}, BadInput("use first/after or last/before, not both")
	}
	req := store.PageRequest{Size: p.Size(), Backward: backward}
	req.NoLookahead = backward && !wanted.Previous || !backward && !wanted.Next
	if req.Size < 0 || req.Size > store.MaxPageSize {
		return store.PageRequest{}, BadInput("first and last must be between 0 and %d, got %d", store.MaxPageSize, req.Size)
	}
	if p.After != nil {
		req.Cursor = *p.After
	}
	if p.Before != nil {
		req.Cursor = *p.Before
	}
	if (p.After != nil && *p.After == "") || (p.Before != nil && *p.Before == "") {
		return store.PageRequest{}, BadInput("a cursor may not be empty")
	}
	return req, nil
}

// adjacency and articles build the loader keys of a node's connections
// from the field's arguments (NodeRelationships, NodeArticles).
func adjacency(id string, a *RelationshipsArgs, wanted PageInfoWanted) (loaders.AdjacencyKey, error) {
	req, err := PageRequest(wanted, a.PageArgs)
	if err != nil {
		return loaders.AdjacencyKey{}, err
	}
	return loaders.AdjacencyKey{Node: id, Type: a.Type, Dir: a.Direction, Page: req}, nil
}

func articles(id string, a *ArticlesArgs, wanted PageInfoWanted) (loaders.ArticlesKey, error) {
	req, err := PageRequest(wanted, a.PageArgs)
	if err != nil {
		return loaders.ArticlesKey{}, err
	}
	k := loaders.ArticlesKey{Author: id, Page: req, NoBody: !wanted.ArticleBody}
	if a.Category != nil {
		if *a.Category == "" { // the store reads "" as every category
			return loaders.ArticlesKey{}, BadInput("category may not be empty; leave it out for every category")
		}
		k.Category = *a.Category
	}
	k.After, k.HasAfter = msOf(a.PostedAfter)
	k.Before, k.HasBefore = msOf(a.PostedBefore)
	return k, nil
}

// degree is the counter behind a relationship connection's totalCount.
func degree(k loaders.AdjacencyKey) store.DegreeKey {
	return store.DegreeKey{Node: k.Node, Dir: k.Dir, Type: k.Type}
}

// articleCount is the counter behind an article connection's totalCount.
func articleCount(k loaders.ArticlesKey) store.ArticleCountKey {
	return store.ArticleCountKey{Author: k.Author, Category: k.Category}
}

func msOf(t *time.Time) (int64, bool) {
	if t == nil {
		return 0, false
	}
	ms := t.UnixMilli()
	if time.UnixMilli(ms).Before(*t) {
		ms++ // the store rounds up to its millisecond precision too
	}
	return ms, true
}

// articleBodySelected tells whether the edges field edges selects its
// nodes' body (an ArticleEdge's node is an Article).
func articleBodySelected(oc *graphql.OperationContext, edges graphql.CollectedField) bool {
	for _, n := range graphql.CollectFields(oc, edges.Selections, []string{"ArticleEdge"}) {
		if n.Name != "node" {
			continue
		}
		for _, a := range graphql.CollectFields(oc, n.Selections, []string{"Article"}) {
			if a.Name == "body" {
				return true
			}
		}
	}
	return false
}

// PageInfoOf reads from the selections of connection field f, of type
// connType, which page flags it selects (through fragments and directives,
// as gqlgen collects them).
func PageInfoOf(oc *graphql.OperationContext, f graphql.CollectedField, connType string) PageInfoWanted {
	var w PageInfoWanted
	for _, c := range graphql.CollectFields(oc, f.Selections, []string{connType}) {
		if c.Name == "edges" {
			w.ArticleBody = w.ArticleBody || articleBodySelected(oc, c)
		}
		if c.Name != "pageInfo" {
			continue
		}
		for _, p := range graphql.CollectFields(oc, c.Selections, []string{"PageInfo"}) {
			switch p.Name {
			case "hasNextPage":
				w.Next = true
			case "hasPreviousPage":
				w.Previous = true
			}
		}
	}
	return w
}
