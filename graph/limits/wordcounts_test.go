package limits_test

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler/extension"

	"github.com/hbgraph/hbgraph/graph/codes"
	"github.com/hbgraph/hbgraph/graph/generated"
	"github.com/hbgraph/hbgraph/graph/limits"
	"github.com/hbgraph/hbgraph/graph/resolvers"
)

// wordCounts costs its page (first, 10 when left out) times its selection,
// as a connection does: the rows it makes the store read are bounded by the
// page, not by the author's vocabulary.
func TestWordCountsPricedByPage(t *testing.T) {
	exec := executor.New(generated.NewExecutableSchema(generated.Config{Resolvers: &resolvers.Resolver{}, Complexity: limits.Pricing()}))
	exec.Use(limits.New(limits.DefaultConfig, nil))
	for _, tc := range []struct {
		query string
		want  int
	}{
		// node 1 + wordCounts (1 + first x (word 1 + count 1))
		{`{ node(id: "n1") { wordCounts { word count } } }`, 1 + (1 + 10*2)},
		{`{ node(id: "n1") { wordCounts(first: 1) { word } } }`, 1 + (1 + 1*1)},
		{`{ node(id: "n1") { wordCounts(first: 1000) { word count } } }`, 1 + (1 + 1000*2)},
		{`{ nodes(ids: ["a", "b", "c", "d"]) { wordCounts(first: 1000) { word count } } }`, 1 + 4*(1+1000*2)},
	} {
		ctx := graphql.StartOperationTrace(context.Background())
		oc, errs := exec.CreateOperationContext(ctx, &graphql.RawParams{Query: tc.query})
		if errs != nil {
			t.Fatalf("%s: %v", tc.query, errs)
		}
		if stats := extension.GetComplexityStats(graphql.WithOperationContext(ctx, oc)); stats == nil || stats.Complexity != tc.want {
			t.Errorf("%s: stats %+v, want complexity %d", tc.query, stats, tc.want)
		}
	}
	g := newGateway(t, limits.DefaultConfig)
	e := g.post(t, `{ nodes(ids: ["a", "b", "c", "d", "e"]) { wordCounts(first: 1000) { word count } } }`, "").only(t)
	if e.Extensions.Code != codes.BadUserInput || e.Message != "operation has complexity 10006; the limit is 10000" {
		t.Fatalf("got %q (%s)", e.Message, e.Extensions.Code)
	}
}
