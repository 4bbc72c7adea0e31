// Package model holds the GraphQL types that are not the store's own: the
// connection and edge types, the custom scalars, and (in models_gen.go,
// generated) PageInfo and Direction.
package model

import "github.com/hbgraph/hbgraph/store"

// Node, Relationship and Article are the store's types as GraphQL objects.
// They are also federation entities, which gqlgen marks with IsEntity; the
// store's own types know nothing of GraphQL.
type (
	Node         struct{ store.Node }
	Relationship struct{ store.Relationship }
	Article      struct{ store.Article }
)

func (Node) IsEntity()         {}
func (Relationship) IsEntity() {}
func (Article) IsEntity()      {}

// RelationshipConnection is one page of a node's relationships of one type
// and direction; the key fields let totalCount read the right counter.
type RelationshipConnection struct {
	Edges    []RelationshipEdge
	PageInfo PageInfo

	Node      string
	Direction store.Direction
	Type      string
	// Total, when set, is the counter load started together with the page.
	Total func() (int64, error)
}

// RelationshipEdge is a relationship seen from one of its nodes.
type RelationshipEdge struct {
	Cursor     string
	Node       Relationship
	NeighborID string // the other end
}

// ArticleConnection is one page of an author's articles; Author and
// Category select the counter behind totalCount.
type ArticleConnection struct {
	Edges    []ArticleEdge
	PageInfo PageInfo

	Author   string
	Category string
	// Total, when set, is the counter load started together with the page.
	Total func() (int64, error)
}

// ArticleEdge is one article of a connection.
type ArticleEdge struct {
	Cursor string
	Node   Article
}
