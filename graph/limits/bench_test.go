package limits_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"github.com/hbgraph/hbgraph/graph/generated"
	"github.com/hbgraph/hbgraph/graph/limits"
	"github.com/hbgraph/hbgraph/graph/resolvers"
)

// go test -run '^$' -bench . -benchmem ./graph/limits/

// parseAndValidate is what gqlgen does with a document on a cache miss.
func parseAndValidate(schema *ast.Schema, query string, tokens int) int {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, tokens)
	if err != nil {
		return 1
	}
	return len(validator.ValidateWithRules(schema, doc, rules.NewDefaultRules()))
}

func schema() *ast.Schema {
	return generated.NewExecutableSchema(generated.Config{Resolvers: &resolvers.Resolver{}}).Schema()
}

// BenchmarkMiss: the scan beside what gqlgen spends on the same cache miss.
func BenchmarkMiss(b *testing.B) {
	s := schema()
	for _, f := range []string{"../../bench/queries/q3.graphql", "testdata/introspection.graphql"} {
		q, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		name := strings.TrimSuffix(f[strings.LastIndex(f, "/")+1:], ".graphql")
		b.Run(name+"/scan", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := limits.Scan(string(q), limits.DefaultConfig); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/parse+validate", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if n := parseAndValidate(s, string(q), limits.DefaultConfig.Tokens); n != 0 {
					b.Fatal(n)
				}
			}
		})
	}
}

// hostile are issue 13's documents: each is refused by the scan.
func hostile() map[string]string {
	return map[string]string{
		"nested-list-900KB":  `{ node(id: ` + strings.Repeat("[", 450000) + `"x"` + strings.Repeat("]", 450000) + `) { id } }`,
		"typename-x8000":     "{ " + repeat("__typename", 8000, " ") + " }",
		"node-x4000":         "{ " + repeat(`node(id:"n1"){id}`, 4000, " ") + " }",
		"aliased-node-x4000": "{ " + numbered(`a%d: node(id:"n1"){id}`, 4000) + " }",
		"fragment-chain-30":  chain(30, "__schema"),
		"skip-x50000":        "{ __typename" + strings.Repeat(" @skip(if: false)", 50000) + " }",
		"unused-vars-x50000": "query(" + numbered("$v%d: Int", 50000) + ") { __typename }",
	}
}

func BenchmarkHostileScan(b *testing.B) {
	for name, q := range hostile() {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := limits.Scan(q, limits.DefaultConfig); err == nil {
					b.Fatal("not refused")
				}
			}
		})
	}
}

// atTheBounds are the costliest documents found that pass the scan with
// the defaults: what gqlgen may still spend on one document.
func atTheBounds() map[string]string {
	// 49 selections
	subtree := `{ id properties createdAt updatedAt
		relationships(type: "t", direction: OUTGOING) { totalCount edges { cursor node { id type createdAt updatedAt properties startNode { id } endNode { id } }
			neighbor { id properties createdAt updatedAt } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }
		articles { totalCount edges { cursor node { id title body category postedAt updatedAt author { id } } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }
		wordCounts { word count } }`
	var uses strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&uses, "a%d: node(id: $v%d) { id } ", i, i)
	}
	return map[string]string{
		"repeats-19-of-49-fields": "{ " + repeat(`node(id: "n1") `+subtree, 20, " ") + " }",
		// 32 fragments of 15 selections, each with the same response names
		"fragments-32-spread-together": "{ " + numbered("...F%d", 32) + " } " +
			numbered(`fragment F%d on Query { node(id: "n1") { id properties createdAt updatedAt wordCounts { word count } relationships(type: "t", direction: OUTGOING) { totalCount edges { cursor neighbor { id properties } } } } }`, 32),
		"operations-x990":     numbered("query Q%d { __typename }", 990),
		"arguments-x3000":     `{ node(` + repeat(`id: "n1"`, 3000, " ") + `) { id } }`,
		"object-fields-x3000": `mutation { createNode(id: "x", properties: {` + numbered("a%d: 1", 3000) + `}) { id } }`,
		"directives-x2100":    "{ __typename" + strings.Repeat(" @skip(if: false)", 2100) + " }",
		"variables-x100":      "query(" + numbered("$v%d: ID!", 100) + ") { " + uses.String() + " }",
		"unused-vars-x100":    "query(" + numbered("$v%d: Int", 100) + ") { __typename }",
		"list-x7000":          `{ nodes(ids: [` + repeat(`"a"`, 7000, ",") + `]) { id } }`,
	}
}

func BenchmarkAtTheBounds(b *testing.B) {
	s := schema()
	for name, q := range atTheBounds() {
		if _, err := limits.Scan(q, limits.DefaultConfig); err != nil {
			b.Fatalf("%s: refused: %v", name, err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				parseAndValidate(s, q, limits.DefaultConfig.Tokens)
			}
		})
	}
}

// BenchmarkOperationContext is what the extension adds to every request
// for q3 on a query cache hit (page sizes, depth, complexity and the
// variables), beside gqlgen's ComplexityLimit alone and nothing.
func BenchmarkOperationContext(b *testing.B) {
	q, err := os.ReadFile("../../bench/queries/q3.graphql")
	if err != nil {
		b.Fatal(err)
	}
	cache := lru.New[*ast.QueryDocument](10)
	for _, c := range []struct {
		name string
		ext  graphql.HandlerExtension
	}{
		{"none", nil},
		{"gqlgen-complexity", extension.FixedComplexityLimit(10000)},
		{"limits", limits.New(limits.DefaultConfig, cache)},
	} {
		b.Run(c.name, func(b *testing.B) {
			exec := executor.New(generated.NewExecutableSchema(generated.Config{Resolvers: &resolvers.Resolver{}, Complexity: limits.Pricing()}))
			exec.SetQueryCache(cache)
			if c.ext != nil {
				exec.Use(c.ext)
			}
			ctx := graphql.StartOperationTrace(context.Background())
			b.ReportAllocs()
			for b.Loop() {
				params := &graphql.RawParams{Query: string(q), Variables: map[string]any{"id": "n0"}}
				if _, errs := exec.CreateOperationContext(ctx, params); errs != nil {
					b.Fatal(errs)
				}
			}
		})
	}
}
