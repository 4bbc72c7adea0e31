package resolvers

import (
	"context"
	"encoding/json"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/hbgraph/hbgraph/graph/fetchkeys"
	"github.com/hbgraph/hbgraph/graph/model"
	"github.com/hbgraph/hbgraph/loaders"
)

// prefetchNode starts the loads that the selected fields of node id will
// make: its connections' pages and counters and its word counts, with the
// arguments the query gives them. Their keys then join the batches while
// the resolver that fetches the node still runs, rather than whenever
// gqlgen gets round to running the child resolvers; and since a node's
// pages do not depend on its row, they go to the store in the same wave.
// Arguments that do not convert are left to the child resolver to report.
func prefetchNode(ctx context.Context, id string) {
	if !graphql.HasOperationContext(ctx) || graphql.GetFieldContext(ctx) == nil {
		return
	}
	oc := graphql.GetOperationContext(ctx)
	prefetchNodeFields(ctx, oc, graphql.CollectFieldsCtx(ctx, []string{"Node"}), id)
}

// prefetchNodeFields is prefetchNode for the given selected fields of a
// node.
func prefetchNodeFields(ctx context.Context, oc *graphql.OperationContext, fields []graphql.CollectedField, id string) {
	l := loaders.For(ctx)
	for _, f := range fields {
		args := f.ArgumentMap(oc.Variables)
		switch f.Name {
		case "relationships":
			typeArg, ok1 := args["type"].(string)
			dir, ok2 := args["direction"].(string)
			if !ok1 || !ok2 {
				continue
			}
			wanted := fetchkeys.PageInfoOf(oc, f, "RelationshipConnection")
			k, err := fetchkeys.Adjacency(id, typeArg, model.Direction(dir), wanted, intArg(args["first"]), strArg(args["after"]), intArg(args["last"]), strArg(args["before"]))
			if err != nil {
				continue
			}
			l.Prefetch(ctx, k)
			if childSelects(oc, f, "RelationshipConnection", "totalCount") {
				l.Prefetch(ctx, fetchkeys.Degree(k))
			}
		case "articles":
			after, okA := timeArg(args["postedAfter"])
			before, okB := timeArg(args["postedBefore"])
			if !okA || !okB {
				continue
			}
			wanted := fetchkeys.PageInfoOf(oc, f, "ArticleConnection")
			k, err := fetchkeys.Articles(id, strArg(args["category"]), after, before, wanted, intArg(args["first"]), strArg(args["after"]), intArg(args["last"]), strArg(args["before"]))
			if err != nil {
				continue
			}
			l.Prefetch(ctx, k)
			if childSelects(oc, f, "ArticleConnection", "totalCount") {
				l.Prefetch(ctx, fetchkeys.ArticleCount(k))
			}
		case "wordCounts":
			l.Prefetch(ctx, fetchkeys.WordCounts(id, intArg(args["first"])))
		}
	}
}

// prefetchEdges starts, while a connection resolver still runs, the loads
// of the nodes its edges will resolve (neighbor, node.startNode,
// node.endNode for relationships; node.author for articles) and of those
// nodes' own selected fields. Otherwise each edge's resolvers add their
// keys only once gqlgen has started them, one goroutine per edge, and a
// wide page can miss its batch.
func prefetchEdges(ctx context.Context, connection string, nodesOf func(edge int, field string) string, edges int) {
	if edges == 0 || !graphql.HasOperationContext(ctx) || graphql.GetFieldContext(ctx) == nil {
		return
	}
	oc := graphql.GetOperationContext(ctx)
	l := loaders.For(ctx)
	prefetch := func(field string, sel []graphql.CollectedField) {
		for i := range edges {
			if id := nodesOf(i, field); id != "" {
				l.Prefetch(ctx, id)
				prefetchNodeFields(ctx, oc, sel, id)
			}
		}
	}
	edgeType := map[string]string{"RelationshipConnection": "RelationshipEdge", "ArticleConnection": "ArticleEdge"}[connection]
	nodeType := map[string]string{"RelationshipConnection": "Relationship", "ArticleConnection": "Article"}[connection]
	for _, f := range graphql.CollectFieldsCtx(ctx, []string{connection}) {
		if f.Name != "edges" {
			continue
		}
		for _, e := range graphql.CollectFields(oc, f.Selections, []string{edgeType}) {
			switch e.Name {
			case "neighbor":
				prefetch("neighbor", graphql.CollectFields(oc, e.Selections, []string{"Node"}))
			case "node":
				for _, n := range graphql.CollectFields(oc, e.Selections, []string{nodeType}) {
					switch n.Name {
					case "startNode", "endNode", "author":
						prefetch(n.Name, graphql.CollectFields(oc, n.Selections, []string{"Node"}))
					}
				}
			}
		}
	}
}

func childSelects(oc *graphql.OperationContext, f graphql.CollectedField, typeName, name string) bool {
	for _, c := range graphql.CollectFields(oc, f.Selections, []string{typeName}) {
		if c.Name == name {
			return true
		}
	}
	return false
}

// intArg, strArg and timeArg read argument values as ArgumentMap gives
// them: literals as int64 or string, variables as decoded JSON.
func intArg(v any) *int {
	var n int
	switch v := v.(type) {
	case int:
		n = v
	case int64:
		n = int(v)
	case float64:
		n = int(v)
	case json.Number:
		i, err := v.Int64()
		if err != nil {
			return nil
		}
		n = int(i)
	default:
		return nil
	}
	return &n
}

func strArg(v any) *string {
	if s, ok := v.(string); ok {
		return &s
	}
	return nil
}

// timeArg returns (nil, true) for an absent time and (nil, false) for one
// that does not parse.
func timeArg(v any) (*time.Time, bool) {
	if v == nil {
		return nil, true
	}
	t, err := model.UnmarshalTime(v)
	if err != nil {
		return nil, false
	}
	return &t, true
}
