// Package model holds the GraphQL types that are not the store's own: the
// connection and edge types, the custom scalars, and (in models_gen.go,
// generated) PageInfo and Direction.
package model

import (
	"encoding/json"

	"github.com/hbgraph/hbgraph/graph/fields"
	"github.com/hbgraph/hbgraph/store"
)

// Node, Relationship and Article are the store's types as GraphQL objects.
// They are also federation entities, which gqlgen marks with IsEntity; the
// store's own types know nothing of GraphQL.
type (
	Node         struct{ store.Node }
	Relationship struct {
		store.Relationship
		// Gone is an end deleted with the relationship (a detaching
		// deleteNode's event), as it was: that end resolves to it.
		Gone *store.Node
	}
	Article struct{ store.Article }
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

// Fields computed from the store's values are methods without a context,
// not resolvers: gqlgen runs a resolver field in a goroutine of its own
// when an object has more than one, and a neighbor with properties and
// articles then cost one more goroutine (and its stack growth) per edge.
// They call the fields' descriptors (graph/fields), which the plan writes
// with.

// PropertiesJSON is the properties field: the stored JSON object, copied
// into the response as it is.
func (n *Node) PropertiesJSON() any {
	v, _, _ := fields.NodeProperties.Get(fields.In{}, &n.Node)
	return json.RawMessage(v)
}

// Property is the property field: one value, nil when absent.
func (n *Node) Property(name string) (any, error) {
	v, _, err := fields.NodeProperty.Get(fields.In{Args: fields.PropertyArgs{Name: name}}, &n.Node)
	return v, err
}

// PropertiesJSON is the properties field of a relationship.
func (r *Relationship) PropertiesJSON() any {
	v, _, _ := fields.RelationshipProperties.Get(fields.In{}, &r.Relationship)
	return json.RawMessage(v)
}

// GraphID is the id field: opaque, stable for (start, type, end).
func (r *Relationship) GraphID() string {
	v, _, _ := fields.RelationshipID.Get(fields.In{}, &r.Relationship)
	return v
}
