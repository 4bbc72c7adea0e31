package fields

import (
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/store"
)

// ParentTypes are the Go types the executors hold each object type's
// values as, for its projections: the plan writes an object of type T
// with the Leaf[P] of its fields for the P named here, and a test checks
// every projection's Leaf against it.
var ParentTypes = map[string]any{
	"Node":             (*Leaf[*store.Node])(nil),
	"Relationship":     (*Leaf[*store.Relationship])(nil),
	"Article":          (*Leaf[*store.Article])(nil),
	"WordCount":        (*Leaf[*store.WordCount])(nil),
	"PageInfo":         (*Leaf[Page])(nil),
	"RelationshipEdge": (*Leaf[RelEdge])(nil),
	"ArticleEdge":      (*Leaf[ArtEdge])(nil),
	// The connections have no projections: their nested objects are
	// read from them held as these.
	"RelationshipConnection": (*Leaf[*RelPage])(nil),
	"ArticleConnection":      (*Leaf[*store.ArticlePage])(nil),
}

// Page is a connection's page as PageInfo's fields see it.
type Page struct {
	Cursors store.Cursors
	Info    store.PageInfo
}

func id[P any](get func(p P) string) Project[P, string] {
	return Project[P, string]{Scalar: ID, Get: func(_ In, p P) (string, bool, error) { return get(p), true, nil }, plain: get}
}

func str[P any](get func(p P) string) Project[P, string] {
	return Project[P, string]{Scalar: String, Get: func(_ In, p P) (string, bool, error) { return get(p), true, nil }, plain: get}
}

func tm[P any](get func(p P) time.Time) Project[P, time.Time] {
	return Project[P, time.Time]{Scalar: Time, Get: func(_ In, p P) (time.Time, bool, error) { return get(p), true, nil }, plain: get}
}

func raw[P any](get func(p P) []byte) Project[P, []byte] {
	return Project[P, []byte]{Scalar: RawJSON, Get: func(_ In, p P) ([]byte, bool, error) { return get(p), true, nil }, plain: get}
}

func boolean[P any](get func(p P) bool) Project[P, bool] {
	return Project[P, bool]{Scalar: Boolean, Get: func(_ In, p P) (bool, bool, error) { return get(p), true, nil }, plain: get}
}

// Node.
var (
	NodeID = project("Node", "id", id(func(n *store.Node) string { return n.ID }))
	// NodeOwner: only the node's owner and admins see who owns it.
	NodeOwner = project("Node", "owner", Project[*store.Node, string]{Scalar: String, Get: func(in In, n *store.Node) (string, bool, error) {
		return n.Owner, n.Owner != "" && auth.MaySeeOwner(in.Caller, n.Owner), nil
	}})
	NodeProperties = project("Node", "properties", raw(func(n *store.Node) []byte { return n.Properties.JSON() }))
	// NodeProperty: one property, null when the node does not have it.
	NodeProperty = projectArgs("Node", "property", decodePropertyArgs, Project[*store.Node, any]{Scalar: JSON, Get: func(in In, n *store.Node) (any, bool, error) {
		v, err := n.Properties.Get(in.Args.(PropertyArgs).Name)
		return v, v != nil && err == nil, err
	}})
	NodeCreatedAt = project("Node", "createdAt", tm(func(n *store.Node) time.Time { return n.Created }))
	NodeUpdatedAt = project("Node", "updatedAt", tm(func(n *store.Node) time.Time { return n.Updated }))
)

// PropertyArgs are Node.property's arguments.
type PropertyArgs struct{ Name string }

func decodePropertyArgs(m map[string]any) (any, error) {
	var a PropertyArgs
	if v, ok := m["name"]; ok {
		var err error
		if a.Name, err = graphql.UnmarshalString(v); err != nil {
			return a, err
		}
	}
	return a, nil
}

// Relationship.
var (
	RelationshipID         = project("Relationship", "id", id(func(r *store.Relationship) string { return r.Key().ID() }))
	RelationshipType       = project("Relationship", "type", str(func(r *store.Relationship) string { return r.Type }))
	RelationshipProperties = project("Relationship", "properties", raw(func(r *store.Relationship) []byte { return r.Properties.JSON() }))
	RelationshipCreatedAt  = project("Relationship", "createdAt", tm(func(r *store.Relationship) time.Time { return r.Created }))
	RelationshipUpdatedAt  = project("Relationship", "updatedAt", tm(func(r *store.Relationship) time.Time { return r.Updated }))
)

// Article.
var (
	ArticleID        = project("Article", "id", id(func(a *store.Article) string { return a.ID }))
	ArticleTitle     = project("Article", "title", str(func(a *store.Article) string { return a.Title }))
	ArticleBody      = project("Article", "body", str(func(a *store.Article) string { return a.Body }))
	ArticleCategory  = project("Article", "category", str(func(a *store.Article) string { return a.Category }))
	ArticlePostedAt  = project("Article", "postedAt", tm(func(a *store.Article) time.Time { return a.Posted }))
	ArticleUpdatedAt = project("Article", "updatedAt", tm(func(a *store.Article) time.Time { return a.Updated }))
)

// WordCount.
var (
	WordCountWord  = project("WordCount", "word", str(func(w *store.WordCount) string { return w.Word }))
	WordCountCount = project("WordCount", "count", Project[*store.WordCount, int64]{Scalar: Int, Get: func(_ In, w *store.WordCount) (int64, bool, error) { return w.Count, true, nil }, plain: func(w *store.WordCount) int64 { return w.Count }})
)

// Edges and PageInfo: a page's cursors and flags; the first and last
// cursors are null on an empty page.
var (
	RelationshipEdgeCursor = project("RelationshipEdge", "cursor", str(func(e RelEdge) string { return e.Page.Cursors.At(e.I) }))
	ArticleEdgeCursor      = project("ArticleEdge", "cursor", str(func(e ArtEdge) string { return e.Page.Cursors.At(e.I) }))

	PageHasNextPage     = project("PageInfo", "hasNextPage", boolean(func(p Page) bool { return p.Info.HasNext }))
	PageHasPreviousPage = project("PageInfo", "hasPreviousPage", boolean(func(p Page) bool { return p.Info.HasPrevious }))
	PageStartCursor     = project("PageInfo", "startCursor", Project[Page, string]{Scalar: String, Get: func(_ In, p Page) (string, bool, error) {
		c, ok := p.Cursors.Start()
		return c, ok, nil
	}})
	PageEndCursor = project("PageInfo", "endCursor", Project[Page, string]{Scalar: String, Get: func(_ In, p Page) (string, bool, error) {
		c, ok := p.Cursors.End()
		return c, ok, nil
	}})
)
