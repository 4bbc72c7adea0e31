package fields

import "github.com/hbgraph/hbgraph/store"

// Nested is an object (or a list of objects) its parent holds, nothing to
// read: a connection's edges and pageInfo, an edge's node. The plan
// writes each child, held as a C, with the descriptors of its type's
// fields, as it writes any object.
type Nested[P, C any] struct {
	// Len is the number of elements of a list; nil for one object.
	Len func(p P) int
	// At is element i of a list, or the object (i is 0).
	At func(p P, i int) C
}

// RelPage is a page of a node's relationships read along Dir: what a
// RelationshipConnection is.
type RelPage struct {
	store.RelationshipPage
	Dir store.Direction
}

// RelEdge is edge I of a page of a node's relationships: what a
// RelationshipEdge is.
type RelEdge struct {
	Page *RelPage
	I    int
}

// Rel is the edge's relationship.
func (e RelEdge) Rel() *store.Relationship { return &e.Page.Relationships[e.I] }

// ArtEdge is edge I of a page of an author's articles: what an
// ArticleEdge is.
type ArtEdge struct {
	Page *store.ArticlePage
	I    int
}

// nested registers a nested object of typ.name.
func nested[P, C any](typ, name string, n Nested[P, C]) Nested[P, C] {
	register(&Desc{Type: typ, Name: name, Kind: Object, Nested: &n})
	return n
}

func pageOf(cursors store.Cursors, info store.PageInfo) Page {
	return Page{Cursors: cursors, Info: info}
}

var (
	RelationshipConnectionEdges = nested("RelationshipConnection", "edges", Nested[*RelPage, RelEdge]{
		Len: func(p *RelPage) int { return len(p.Relationships) },
		At:  func(p *RelPage, i int) RelEdge { return RelEdge{Page: p, I: i} },
	})
	RelationshipConnectionPageInfo = nested("RelationshipConnection", "pageInfo", Nested[*RelPage, Page]{
		At: func(p *RelPage, _ int) Page { return pageOf(p.Cursors, p.PageInfo) },
	})
	RelationshipEdgeNode = nested("RelationshipEdge", "node", Nested[RelEdge, *store.Relationship]{
		At: func(e RelEdge, _ int) *store.Relationship { return e.Rel() },
	})
	ArticleConnectionEdges = nested("ArticleConnection", "edges", Nested[*store.ArticlePage, ArtEdge]{
		Len: func(p *store.ArticlePage) int { return len(p.Articles) },
		At:  func(p *store.ArticlePage, i int) ArtEdge { return ArtEdge{Page: p, I: i} },
	})
	ArticleConnectionPageInfo = nested("ArticleConnection", "pageInfo", Nested[*store.ArticlePage, Page]{
		At: func(p *store.ArticlePage, _ int) Page { return pageOf(p.Cursors, p.PageInfo) },
	})
	ArticleEdgeNode = nested("ArticleEdge", "node", Nested[ArtEdge, *store.Article]{
		At: func(e ArtEdge, _ int) *store.Article { return &e.Page.Articles[e.I] },
	})
)
