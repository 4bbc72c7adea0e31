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

// pageRequest turns Relay's first/after/last/before into a store page
// request: first/after page forward, last/before backward; mixing the two
// directions is refused.
func pageRequest(first *int, after *string, last *int, before *string) (store.PageRequest, error) {
	forward := first != nil || after != nil
	backward := last != nil || before != nil
	if forward && backward {
		return store.PageRequest{}, badInput("use first/after or last/before, not both")
	}
	req := store.PageRequest{Size: defaultPageSize, Backward: backward}
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

// node loads one node through the request's batch; nil when absent.
func node(ctx context.Context, id string) (*store.Node, error) {
	if err := store.ValidateNodeID(id); err != nil {
		return nil, err
	}
	return loaders.For(ctx).Node(ctx, id)
}

// endpoint loads a node that must exist (a relationship's end, an
// article's author).
func endpoint(ctx context.Context, id string) (*store.Node, error) {
	n, err := node(ctx, id)
	if err == nil && n == nil {
		err = fmt.Errorf("node %q: %w", id, store.ErrNotFound)
	}
	return n, err
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

func nonNil(p store.Properties) store.Properties {
	if p == nil {
		return store.Properties{}
	}
	return p
}

func relationshipConnection(k loaders.AdjacencyKey, page store.RelationshipPage) *model.RelationshipConnection {
	c := &model.RelationshipConnection{
		Edges:    make([]model.RelationshipEdge, len(page.Relationships)),
		PageInfo: pageInfo(page.Cursors, page.PageInfo),
		Node:     k.Node, Direction: k.Dir, Type: k.Type,
	}
	for i, rel := range page.Relationships {
		neighbor := rel.End
		if k.Dir == store.Incoming {
			neighbor = rel.Start
		}
		c.Edges[i] = model.RelationshipEdge{Cursor: page.Cursors[i], Node: rel, NeighborID: neighbor}
	}
	return c
}

func articleConnection(k loaders.ArticlesKey, page store.ArticlePage) *model.ArticleConnection {
	c := &model.ArticleConnection{
		Edges:    make([]model.ArticleEdge, len(page.Articles)),
		PageInfo: pageInfo(page.Cursors, page.PageInfo),
		Author:   k.Author, Category: k.Category,
	}
	for i, a := range page.Articles {
		c.Edges[i] = model.ArticleEdge{Cursor: page.Cursors[i], Node: a}
	}
	return c
}

// selects reports whether the field being resolved selects the child field
// name (directly or through fragments).
func selects(ctx context.Context, name string) bool {
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		if f.Name == name {
			return true
		}
	}
	return false
}
