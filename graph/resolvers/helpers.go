package resolvers

import (
	"context"
	"fmt"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/hbgraph/hbgraph/graph/model"
	"github.com/hbgraph/hbgraph/loaders"
	"github.com/hbgraph/hbgraph/store"
)

// defaultPageSize is the size of a page when neither first nor last is
// given (the schema's documented default).
const defaultPageSize = 20

func badInput(format string, args ...any) error {
	return fmt.Errorf("%w: %s", store.ErrInvalidInput, fmt.Sprintf(format, args...))
}

// pageInfoWanted tells which of PageInfo's hasNextPage and hasPreviousPage
// a connection field selects.
type pageInfoWanted struct{ next, previous bool }

// allPageInfo is what a connection read outside a query's selection (or
// without one) assumes is wanted.
var allPageInfo = pageInfoWanted{next: true, previous: true}

// pageInfoOf reads from the selections of connection field f, of type
// connType, which page flags it selects (through fragments and directives,
// as gqlgen collects them).
func pageInfoOf(oc *graphql.OperationContext, f graphql.CollectedField, connType string) pageInfoWanted {
	var w pageInfoWanted
	for _, c := range graphql.CollectFields(oc, f.Selections, []string{connType}) {
		if c.Name != "pageInfo" {
			continue
		}
		for _, p := range graphql.CollectFields(oc, c.Selections, []string{"PageInfo"}) {
			switch p.Name {
			case "hasNextPage":
				w.next = true
			case "hasPreviousPage":
				w.previous = true
			}
		}
	}
	return w
}

// pageInfoSelected is pageInfoOf for the connection field being resolved.
func pageInfoSelected(ctx context.Context, connType string) pageInfoWanted {
	if !graphql.HasOperationContext(ctx) || graphql.GetFieldContext(ctx) == nil {
		return allPageInfo
	}
	return pageInfoOf(graphql.GetOperationContext(ctx), graphql.GetFieldContext(ctx).Field, connType)
}

// pageRequest turns Relay's first/after/last/before into a store page
// request: first/after page forward, last/before backward; mixing the two
// directions is refused. The store reads one row past the page only when
// the flag that row decides (hasNextPage forward, hasPreviousPage
// backward) is wanted.
func pageRequest(wanted pageInfoWanted, first *int, after *string, last *int, before *string) (store.PageRequest, error) {
	forward := first != nil || after != nil
	backward := last != nil || before != nil
	if forward && backward {
		return store.PageRequest{}, badInput("use first/after or last/before, not both")
	}
	req := store.PageRequest{Size: defaultPageSize, Backward: backward}
	req.NoLookahead = backward && !wanted.previous || !backward && !wanted.next
	n := first
	if backward {
		n = last
	}
	if n != nil {
		if *n < 0 || *n > store.MaxPageSize {
			return store.PageRequest{}, badInput("first and last must be between 0 and %d, got %d", store.MaxPageSize, *n)
		}
		req.Size = *n
	}
	if after != nil {
		req.Cursor = *after
	}
	if before != nil {
		req.Cursor = *before
	}
	if (after != nil && *after == "") || (before != nil && *before == "") {
		return store.PageRequest{}, badInput("a cursor may not be empty")
	}
	return req, nil
}

func pageInfo(cursors []string, info store.PageInfo) model.PageInfo {
	p := model.PageInfo{HasNextPage: info.HasNext, HasPreviousPage: info.HasPrevious}
	if len(cursors) > 0 {
		p.StartCursor, p.EndCursor = &cursors[0], &cursors[len(cursors)-1]
	}
	return p
}

func storeDirection(d model.Direction) store.Direction {
	if d == model.DirectionIncoming {
		return store.Incoming
	}
	return store.Outgoing
}

// propertiesArg checks that a JSON argument is an object (or absent).
func propertiesArg(v any) (store.Properties, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return store.Properties(v), nil
	}
	return nil, badInput("properties must be a JSON object, got %T", v)
}

// node loads one node through the request's batch; nil when absent. The
// loads its selected child fields will make start first (prefetchNode).
func node(ctx context.Context, id string) (*model.Node, error) {
	if err := store.ValidateNodeID(id); err != nil {
		return nil, err
	}
	prefetchNode(ctx, id)
	n, err := loaders.For(ctx).Node(ctx, id)
	return asNode(n), err
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
		err = fmt.Errorf("node %q: %w", id, store.ErrNotFound)
	}
	return n, err
}

// adjacencyKey, articlesKey and wordCountsKey build the loader keys of a
// node's connections; the field resolvers and prefetchNode share them so a
// prefetched load and the field's own are the same key.
func adjacencyKey(id, typeArg string, direction model.Direction, wanted pageInfoWanted, first *int, after *string, last *int, before *string) (loaders.AdjacencyKey, error) {
	req, err := pageRequest(wanted, first, after, last, before)
	if err != nil {
		return loaders.AdjacencyKey{}, err
	}
	return loaders.AdjacencyKey{Node: id, Type: typeArg, Dir: storeDirection(direction), Page: req}, nil
}

func articlesKey(id string, category *string, postedAfter, postedBefore *time.Time, wanted pageInfoWanted, first *int, after *string, last *int, before *string) (loaders.ArticlesKey, error) {
	req, err := pageRequest(wanted, first, after, last, before)
	if err != nil {
		return loaders.ArticlesKey{}, err
	}
	k := loaders.ArticlesKey{Author: id, Page: req}
	if category != nil {
		if *category == "" { // the store reads "" as every category
			return loaders.ArticlesKey{}, badInput("category may not be empty; leave it out for every category")
		}
		k.Category = *category
	}
	k.After, k.HasAfter = msOf(postedAfter)
	k.Before, k.HasBefore = msOf(postedBefore)
	return k, nil
}

func wordCountsKey(id string, first *int) loaders.WordCountsKey {
	n := 10 // the schema's default
	if first != nil {
		n = *first
	}
	return loaders.WordCountsKey{Author: id, N: n}
}

func degreeKey(k loaders.AdjacencyKey) store.DegreeKey {
	return store.DegreeKey{Node: k.Node, Dir: k.Dir, Type: k.Type}
}

func articleCountKey(k loaders.ArticlesKey) store.ArticleCountKey {
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

func relationshipConnection(k loaders.AdjacencyKey, page store.RelationshipPage) *model.RelationshipConnection {
	c := &model.RelationshipConnection{
		Edges:    make([]model.RelationshipEdge, len(page.Relationships)),
		PageInfo: pageInfo(page.Cursors, page.PageInfo),
		Node:     k.Node, Direction: k.Dir, Type: k.Type,
	}
	for i, rel := range page.Relationships {
		c.Edges[i] = model.RelationshipEdge{Cursor: page.Cursors[i], Node: model.Relationship{Relationship: rel}, NeighborID: neighborOf(rel, k.Dir)}
	}
	return c
}

// neighborOf is the other end of rel, seen along dir.
func neighborOf(rel store.Relationship, dir store.Direction) string {
	if dir == store.Incoming {
		return rel.Start
	}
	return rel.End
}

func articleConnection(k loaders.ArticlesKey, page store.ArticlePage) *model.ArticleConnection {
	c := &model.ArticleConnection{
		Edges:    make([]model.ArticleEdge, len(page.Articles)),
		PageInfo: pageInfo(page.Cursors, page.PageInfo),
		Author:   k.Author, Category: k.Category,
	}
	for i, a := range page.Articles {
		c.Edges[i] = model.ArticleEdge{Cursor: page.Cursors[i], Node: model.Article{Article: a}}
	}
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
