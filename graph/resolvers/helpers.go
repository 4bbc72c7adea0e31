package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/hbgraph/hbgraph/graph/fetchkeys"
	"github.com/hbgraph/hbgraph/graph/fields"
	"github.com/hbgraph/hbgraph/graph/model"
	"github.com/hbgraph/hbgraph/loaders"
	"github.com/hbgraph/hbgraph/store"
)

// pageInfoSelected is fields.PageInfoOf for the connection field being
// resolved.
func pageInfoSelected(ctx context.Context, connType string) fields.PageInfoWanted {
	if !graphql.HasOperationContext(ctx) || graphql.GetFieldContext(ctx) == nil {
		return fields.AllPageInfo
	}
	return fields.PageInfoOf(graphql.GetOperationContext(ctx), graphql.GetFieldContext(ctx).Field, connType)
}

// propertiesArg checks that the JSON argument named arg is an object (or
// absent).
func propertiesArg(arg string, v any) (store.Properties, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return store.Properties(v), nil
	}
	return nil, fields.BadInput("%s must be a JSON object", arg)
}

// node loads one node through the request's batch; nil when absent.
func node(ctx context.Context, id string) (*model.Node, error) {
	if err := store.ValidateNodeID(id); err != nil {
		return nil, err
	}
	n, err := loaders.For(ctx).Node(ctx, id)
	return asNode(n), err
}

// nodesByID reads a root field's nodes by its descriptor (node, nodes),
// nil where there is none: the field fails on the first node that failed.
func nodesByID(ctx context.Context, d fields.NodesByID, ids []string) ([]*model.Node, error) {
	ids, err := d.IDs(fields.In{Args: &fields.IDsArgs{IDs: ids}})
	if err != nil {
		return nil, err
	}
	nodes, errs := loaders.For(ctx).Nodes(ctx, ids)
	out := make([]*model.Node, len(nodes))
	for i, n := range nodes {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out[i] = asNode(n)
	}
	return out, nil
}

// asNode, asRelationship and asArticle wrap store values as GraphQL
// objects; nil stays nil.
func asNode(n *store.Node) *model.Node {
	if n == nil {
		return nil
	}
	return &model.Node{Node: *n}
}

func asRelationship(r *store.Relationship) *model.Relationship {
	if r == nil {
		return nil
	}
	return &model.Relationship{Relationship: *r}
}

func asArticle(a *store.Article) *model.Article {
	if a == nil {
		return nil
	}
	return &model.Article{Article: *a}
}

// endpoint loads a node that must exist (a relationship's end, an
// article's author).
func endpoint(ctx context.Context, id string) (*model.Node, error) {
	n, err := node(ctx, id)
	if err == nil && n == nil {
		err = fetchkeys.MissingEndpoint(id)
	}
	return n, err
}

// relationshipPage resolves a page scan of a node's relationships by its
// descriptor (the key from the typed arguments and the page flags
// selected), with the counter of totalCount started in the same batch
// when it is selected.
func relationshipPage[A any](ctx context.Context, s fields.Scan[A, loaders.AdjacencyKey, store.DegreeKey], id string, args *A) (*model.RelationshipConnection, error) {
	k, err := s.Key(id, args, pageInfoSelected(ctx, "RelationshipConnection"))
	if err != nil {
		return nil, err
	}
	l := loaders.For(ctx)
	var total func() (int64, error)
	if selects(ctx, "RelationshipConnection", "totalCount") { // load the counter in the same wave as the page
		total = fields.RelationshipConnectionTotalCount.Start(fields.In{}, s.Counted(k), l.Rows(ctx))
	}
	page, err := l.Adjacency(ctx, k)
	if err != nil {
		return nil, err
	}
	c := relationshipConnection(k, page)
	c.Total = total
	return c, nil
}

// articlePage is relationshipPage for a page of an author's articles.
func articlePage[A any](ctx context.Context, s fields.Scan[A, loaders.ArticlesKey, store.ArticleCountKey], id string, args *A) (*model.ArticleConnection, error) {
	k, err := s.Key(id, args, pageInfoSelected(ctx, "ArticleConnection"))
	if err != nil {
		return nil, err
	}
	l := loaders.For(ctx)
	var total func() (int64, error)
	if selects(ctx, "ArticleConnection", "totalCount") {
		total = fields.ArticleConnectionTotalCount.Start(fields.In{}, s.Counted(k), l.Rows(ctx))
	}
	page, err := l.ArticlePage(ctx, k)
	if err != nil {
		return nil, err
	}
	c := articleConnection(k, page)
	c.Total = total
	return c, nil
}

func relationshipConnection(k loaders.AdjacencyKey, page store.RelationshipPage) *model.RelationshipConnection {
	c := &model.RelationshipConnection{
		Edges:    make([]model.RelationshipEdge, len(page.Relationships)),
		PageInfo: fetchkeys.PageInfo(page.Cursors, page.PageInfo),
		Node:     k.Node, Direction: k.Dir, Type: k.Type,
	}
	p := &fields.RelPage{RelationshipPage: page, Dir: k.Dir}
	for i, rel := range page.Relationships {
		e := fields.RelEdge{Page: p, I: i}
		c.Edges[i] = model.RelationshipEdge{Cursor: cursor(fields.RelationshipEdgeCursor, e), Node: model.Relationship{Relationship: rel}, NeighborID: fields.RelationshipEdgeNeighbor.Target(e)}
	}
	return c
}

func articleConnection(k loaders.ArticlesKey, page store.ArticlePage) *model.ArticleConnection {
	c := &model.ArticleConnection{
		Edges:    make([]model.ArticleEdge, len(page.Articles)),
		PageInfo: fetchkeys.PageInfo(page.Cursors, page.PageInfo),
		Author:   k.Author, Category: k.Category,
	}
	for i, a := range page.Articles {
		c.Edges[i] = model.ArticleEdge{Cursor: cursor(fields.ArticleEdgeCursor, fields.ArtEdge{Page: &page, I: i}), Node: model.Article{Article: a}}
	}
	return c
}

// cursor is edge e's cursor, by the edge type's descriptor.
func cursor[E any](d fields.Project[E, string], e E) string {
	c, _, _ := d.Get(fields.In{}, e)
	return c
}

// selects reports whether the field being resolved, of type typeName,
// selects the child field name (directly or through fragments).
func selects(ctx context.Context, typeName, name string) bool {
	for _, f := range graphql.CollectFieldsCtx(ctx, []string{typeName}) {
		if f.Name == name {
			return true
		}
	}
	return false
}

// entityErrors turns per-representation errors into the error of a batched
// entity resolver: nil when none failed, else one entry per representation
// so only the failing ones get an error.
func entityErrors(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return graphql.BatchErrorList(errs)
		}
	}
	return nil
}
