package limits_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/graph/codes"
	"github.com/hbgraph/hbgraph/graph/generated"
	"github.com/hbgraph/hbgraph/graph/limits"
	"github.com/hbgraph/hbgraph/graph/resolvers"
)

// Documents every default must let through.
func legitimate(tb testing.TB) map[string]string {
	tb.Helper()
	docs := map[string]string{
		"readme feed": `query Feed($id: ID!) {
  node(id: $id) {
    properties
    relationships(type: "follows", direction: OUTGOING, first: 10) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges {
        cursor
        node { properties createdAt }
        neighbor {
          id
          property(name: "name")
          articles(first: 3) { totalCount edges { node { id title postedAt } } }
          wordCounts(first: 5) { word count }
        }
      }
    }
  }
}`,
		"service sdl": `{ _service { sdl } }`,
		"entities":    `query($r: [_Any!]!) { _entities(representations: $r) { ... on Node { id properties } ... on Article { id title } ... on Relationship { id type } } }`,
		"full page":   `{ node(id: "n1") { relationships(type: "t", direction: INCOMING, last: 100) { edges { neighbor { id } } } } }`,
		"nodes":       `{ nodes(ids: ["a", "b", "c"]) { id wordCounts(first: 1000) { word count } } }`,
	}
	for _, f := range []string{"testdata/introspection.graphql", "../../bench/queries/q1.graphql", "../../bench/queries/q2.graphql",
		"../../bench/queries/q3.graphql", "../../bench/queries/q4.graphql", "../../graphiql/example.graphql"} {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		docs[f] = string(b)
	}
	return docs
}

func TestLegitimateDocumentsPass(t *testing.T) {
	g := newGateway(t, limits.DefaultConfig)
	for name, doc := range legitimate(t) {
		t.Run(name, func(t *testing.T) {
			st, err := limits.Scan(doc, limits.DefaultConfig)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			t.Logf("%+v", st)
			resp := g.post(t, doc, `{"id": "n1", "r": [], "category": "c"}`)
			for _, e := range resp.Errors {
				if e.Extensions.Code != codes.NotFound {
					t.Errorf("error %q (%s)", e.Message, e.Extensions.Code)
				}
			}
		})
	}
}

// repeat returns s n times, joined by sep.
func repeat(s string, n int, sep string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = s
	}
	return strings.Join(parts, sep)
}

// numbered returns format (with one %d) for 1..n, joined by spaces.
func numbered(format string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, format+" ", i)
	}
	return b.String()
}

// chain is n fragments, each spreading the next twice (once directly,
// once through an inline fragment: one repeat per level).
func chain(n int, root string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{ %s { ...F0 } }\n", root)
	typ := "Query"
	switch {
	case root == "__schema":
		typ = "__Schema"
	case strings.HasPrefix(root, "node"):
		typ = "Node"
	}
	for i := range n {
		fmt.Fprintf(&b, "fragment F%d on %s { ...F%d ... { ...F%d } }\n", i, typ, i+1, i+1)
	}
	fmt.Fprintf(&b, "fragment F%d on %s { __typename }\n", n, typ)
	return b.String()
}

// Each case is refused by Scan with the bound it names, and passes with
// that bound raised: remove the bound and the case fails.
func TestScanBounds(t *testing.T) {
	deep := func(n int) string {
		return `{ node(id: ` + strings.Repeat("[", n) + `"x"` + strings.Repeat("]", n) + `) { id } }`
	}
	for _, c := range []struct {
		name   string
		doc    string
		raise  func(*limits.Config)
		want   string
		figure func(limits.Stats) int
		limit  int
	}{
		{"tokens", "{ " + numbered("f%d", 15001) + " }", func(c *limits.Config) { c.Tokens = 16000; c.Fields = 1 << 20 },
			"more than 15000 tokens", func(s limits.Stats) int { return s.Tokens }, 15000},
		{"nesting of a value", deep(64), func(c *limits.Config) { c.Nesting = 100 },
			"nests brackets more than 64 deep", func(s limits.Stats) int { return s.Nesting }, 64},
		{"nesting of selections", strings.Repeat("{ a ", 70) + strings.Repeat("}", 70), func(c *limits.Config) { c.Nesting = 100 },
			"nests brackets more than 64 deep", func(s limits.Stats) int { return s.Nesting }, 64},
		{"fields", "{ " + numbered("f%d", 1001) + " }", func(c *limits.Config) { c.Fields = 3000 },
			"selects 1001 fields", func(s limits.Stats) int { return s.Fields }, 1000},
		{"fields through fragments", chain(12, "__schema"), func(c *limits.Config) { c.Fields = 1 << 20 },
			"selects 16420 fields", func(s limits.Stats) int { return s.Fields }, 1000},
		{"aliases", "{ " + numbered(`a%d: node(id: "n1") { id }`, 101) + " }", func(c *limits.Config) { c.Aliases = 200 },
			"more than 100 aliases", func(s limits.Stats) int { return s.Aliases }, 100},
		{"repeated fields", "{ " + repeat("__typename", 22, " ") + " }", func(c *limits.Config) { c.Repeats = 100 },
			"repeats a selection in the same set more than 20 times", func(s limits.Stats) int { return s.Repeats }, 20},
		{"repeated fields across inline fragments", "{ " + repeat("... { id: __typename }", 22, " ") + " }", func(c *limits.Config) { c.Repeats = 100 },
			"repeats a selection", func(s limits.Stats) int { return s.Repeats }, 20},
		{"repeated spreads", "{ " + repeat("...F", 22, " ") + " } fragment F on Query { __typename }", func(c *limits.Config) { c.Repeats = 100 },
			"repeats a selection", func(s limits.Stats) int { return s.Repeats }, 20},
		{"fragments", "{ ...F0 } " + numbered("fragment F%d on Query { __typename }", 33), func(c *limits.Config) { c.Fragments = 200 },
			"more than 32 fragments", func(s limits.Stats) int { return s.Fragments }, 32},
		{"variables", "query(" + numbered("$v%d: Int = 1", 101) + ") { __typename }", func(c *limits.Config) { c.Variables = 200 },
			"more than 100 variables", func(s limits.Stats) int { return s.Variables }, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := limits.Scan(c.doc, limits.DefaultConfig)
			if err == nil || !strings.Contains(err.Message, c.want) || err.Extensions["code"] != codes.BadUserInput {
				t.Fatalf("want %q (BAD_USER_INPUT), got %v", c.want, err)
			}
			cfg := limits.DefaultConfig
			c.raise(&cfg)
			st, err := limits.Scan(c.doc, cfg)
			if err != nil {
				t.Fatalf("with the bound raised: %v", err)
			}
			if got := c.figure(st); got <= c.limit {
				t.Errorf("figure %d, want over %d", got, c.limit)
			}
		})
	}
}

// Literals gqlparser cannot convert are refused before they reach
// ast.Field.ArgumentMap, which panics on them.
func TestScanNumbers(t *testing.T) {
	for _, c := range []struct {
		lit string
		ok  bool
	}{
		{"1e400", false}, {"-1e400", false}, {"99999999999999999999", false}, {"-9223372036854775809", false},
		{"1e308", true}, {"1e-400", true}, {"9223372036854775807", true}, {"-9223372036854775808", true}, {"0.5", true},
	} {
		doc := `mutation { createNode(id: "x", properties: {a: [` + c.lit + `]}) { id } }`
		_, err := limits.Scan(doc, limits.DefaultConfig)
		if (err == nil) != c.ok {
			t.Errorf("%s: got %v, want ok=%v", c.lit, err, c.ok)
		}
		if err != nil && (!strings.Contains(err.Message, "out of range") || err.Extensions["code"] != codes.BadUserInput) {
			t.Errorf("%s: %v", c.lit, err)
		}
	}
}

// A cycle of fragments (which validation refuses) does not hang the scan.
func TestScanFragmentCycle(t *testing.T) {
	doc := `{ ...A } fragment A on Query { ...B __typename } fragment B on Query { ...A ...A2 } fragment A2 on Query { ...A2 }`
	st, err := limits.Scan(doc, limits.DefaultConfig)
	if err != nil || st.Fields != 11 { // the operation 1+A, A 2+B, B 2+A2 (A is the cycle), A2 1; each fragment's own 2+2+1
		t.Fatalf("fields %d, err %v", st.Fields, err)
	}
	g := newGateway(t, limits.DefaultConfig)
	if e := g.post(t, doc, "").Errors; len(e) == 0 || e[0].Extensions.Code != codes.ValidationFailed {
		t.Fatalf("want validation errors, got %+v", e)
	}
}

// allocated runs f and returns the bytes it allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The hostile documents of issue 13, through the handler: each is refused
// with BAD_USER_INPUT, at once, allocating little more than its own size
// (the request body, its decoded copy and the recorder's buffers).
func TestHostileDocuments(t *testing.T) {
	g := newGateway(t, limits.DefaultConfig)
	nested := `{ node(id: ` + strings.Repeat("[", 450000) + `"x"` + strings.Repeat("]", 450000) + `) { id } }`
	for _, c := range []struct {
		name, doc, vars, want string
	}{
		{"list nested 450,000 deep (900 KB)", nested, "", "nests brackets more than 64 deep"},
		{"__typename x 8,000 (88 KB)", "{ " + repeat("__typename", 8000, " ") + " }", "", "repeats a selection"},
		{"node(id) x 4,000", "{ " + repeat(`node(id:"n1"){id}`, 4000, " ") + " }", "", "repeats a selection"},
		{"aliased node(id) x 4,000", "{ " + numbered(`a%d: node(id:"n1"){id}`, 4000) + " }", "", "more than 100 aliases"},
		{"fragment chain, 30 levels (1 KB)", chain(30, "node(id: \"n1\")"), "", "repeats a selection"},
		{"fragment chain under __schema", chain(30, "__schema"), "", "repeats a selection"},
		{"@skip x 50,000", "{ __typename" + strings.Repeat(" @skip(if: false)", 50000) + " }", "", "more than 15000 tokens"},
		{"50,000 unused variables", "query(" + numbered("$v%d: Int", 50000) + ") { __typename }", "", "more than 100 variables"},
		{"1e400 in a literal", `mutation { createNode(id: "x", properties: {a: 1e400}) { id } }`, "", "the number 1e400 is out of range"},
		{"1e400 in a variable", `mutation($p: JSON) { createNode(id: "x", properties: $p) { id } }`, `{"p": {"a": [1e400]}}`, "variable $p: the number 1e400 is out of range"},
		{"a miscased enum in a variable", `query($d: Direction!) { node(id: "n1") { relationships(type: "t", direction: $d) { totalCount } } }`, `{"d": "incoming"}`,
			"variable $d: incoming is not a valid Direction"},
		{"a representation that is not an object", `query($r: [_Any!]!) { _entities(representations: $r) { ... on Node { id } } }`, `{"r": [{"__typename": "Node", "id": "x"}, "x"]}`,
			"_entities: representations[1] must be an object"},
		{"an Int past int64", `{ node(id: "n1") { wordCounts(first: 99999999999999999999) { word } } }`, "", "the integer 99999999999999999999 is out of range"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := map[string]any{"query": c.doc}
			if c.vars != "" {
				body["variables"] = json.RawMessage(c.vars)
			}
			raw, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			var resp response
			start := time.Now()
			alloc := allocated(func() { resp = g.postRaw(t, raw) })
			took := time.Since(start)
			e := resp.only(t)
			if e.Extensions.Code != codes.BadUserInput || !strings.Contains(e.Message, c.want) {
				t.Fatalf("want %q (BAD_USER_INPUT), got %q (%s)", c.want, e.Message, e.Extensions.Code)
			}
			if budget := uint64(8*len(c.doc)) + 4<<20; alloc > budget {
				t.Errorf("allocated %d bytes, more than %d", alloc, budget)
			}
			if took > 5*time.Second { // generous: these take milliseconds
				t.Errorf("took %v", took)
			}
			t.Logf("%d bytes: %v, %d bytes allocated", len(c.doc), took, alloc)
		})
	}
	if n := g.panics.Load() + g.internals.Load(); n != 0 {
		t.Errorf("%d panics or internal errors", n)
	}
}

func TestPageSizesBeforeComplexity(t *testing.T) {
	g := newGateway(t, limits.DefaultConfig)
	for _, c := range []struct {
		name, doc, vars, want string
	}{
		{"first literal", `{ node(id: "n1") { relationships(type: "t", direction: OUTGOING, first: 1000) { edges { neighbor { id properties createdAt } } } } }`, "",
			"relationships: first must be between 0 and 100, got 1000"},
		{"first variable", `query($n: Int) { node(id: "n1") { relationships(type: "t", direction: OUTGOING, first: $n) { totalCount } } }`, `{"n": 1000}`,
			"relationships: first must be between 0 and 100, got 1000"},
		{"variable's default", `query($n: Int = 101) { node(id: "n1") { articles(first: $n) { totalCount } } }`, "",
			"articles: first must be between 0 and 100, got 101"},
		{"negative last", `{ node(id: "n1") { articles(last: -1) { totalCount } } }`, "", "articles: last must be between 0 and 100, got -1"},
		{"in a fragment", `{ node(id: "n1") { ...P } } fragment P on Node { relationships(type: "t", direction: OUTGOING, last: 101) { totalCount } }`, "",
			"relationships: last must be between 0 and 100, got 101"},
		{"word counts", `{ node(id: "n1") { wordCounts(first: 1001) { word } } }`, "", "wordCounts: first must be between 1 and 1000, got 1001"},
		{"ids", `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, `{"ids": [` + strings.TrimSuffix(repeat(`"x",`, 101, ""), ",") + `]}`,
			"nodes: at most 100 ids at once, got 101"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := g.post(t, c.doc, c.vars).only(t)
			if e.Extensions.Code != codes.BadUserInput || e.Message != c.want {
				t.Fatalf("want %q (BAD_USER_INPUT), got %q (%s)", c.want, e.Message, e.Extensions.Code)
			}
		})
	}
}

func TestDepthAndComplexity(t *testing.T) {
	g := newGateway(t, limits.DefaultConfig)
	deep := `{ node(id: "n1") { ...R } } fragment R on Node { relationships(type: "t", direction: OUTGOING, first: 1) { edges { neighbor {
		relationships(type: "t", direction: OUTGOING, first: 1) { edges { neighbor {
		relationships(type: "t", direction: OUTGOING, first: 1) { edges { neighbor {
		relationships(type: "t", direction: OUTGOING, first: 1) { edges { cursor } } } } } } } } } } } }`
	e := g.post(t, deep, "").only(t)
	if e.Extensions.Code != codes.BadUserInput || e.Message != "operation is 13 fields deep; the limit is 12" {
		t.Fatalf("got %q (%s)", e.Message, e.Extensions.Code)
	}
	complex := `{ node(id: "n1") { relationships(type: "t", direction: OUTGOING, first: 100) { edges { neighbor {
		articles(first: 100) { edges { node { id title } } } } } } } }`
	e = g.post(t, complex, "").only(t)
	if e.Extensions.Code != codes.BadUserInput || e.Message != "operation has complexity 40302; the limit is 10000" {
		t.Fatalf("got %q (%s)", e.Message, e.Extensions.Code)
	}
	// The 30-level chain, let past the scan: the walkers price each
	// fragment once, and find gqlgen's figure: 2^30 spreads of the last
	// fragment's __typename, each 1, under node, 1.
	cfg := limits.DefaultConfig
	cfg.Fields, cfg.Repeats = 1<<62, 1<<62
	g = newGateway(t, cfg)
	e = g.post(t, chain(30, `node(id: "n1")`), "").only(t)
	if e.Extensions.Code != codes.BadUserInput || e.Message != fmt.Sprintf("operation has complexity %d; the limit is 10000", 1<<30+1) {
		t.Fatalf("got %q (%s)", e.Message, e.Extensions.Code)
	}
}

// Errors past Config.Errors are counted in one last error.
func TestErrorsCapped(t *testing.T) {
	g := newGateway(t, limits.DefaultConfig)
	doc := "{ __typename" + strings.Repeat(" @skip(if: false)", 2000) + " }" // 1999 errors: skip is not repeatable
	resp := g.post(t, doc, "")
	if len(resp.Errors) != 100 {
		t.Fatalf("%d errors", len(resp.Errors))
	}
	last := resp.Errors[99]
	if last.Message != "1900 more errors omitted (at most 99 are reported)" || last.Extensions.Code != codes.ValidationFailed {
		t.Errorf("last error %+v", last)
	}
	t.Logf("%d bytes of answer", resp.Size)
}

func TestTrimErrors(t *testing.T) {
	list := gqlerror.List{}
	for i := range 5 {
		e := gqlerror.Errorf("e%d", i)
		e.Extensions = map[string]any{"code": []string{codes.ValidationFailed, codes.ParseFailed}[i/4]}
		list = append(list, e)
	}
	if got := limits.TrimErrors(list, 5); len(got) != 5 {
		t.Errorf("trimmed at the limit: %v", got)
	}
	got := limits.TrimErrors(list, 3)
	if len(got) != 3 || got[1].Message != "e1" || got[2].Message != "3 more errors omitted (at most 2 are reported)" || got[2].Extensions["code"] != codes.BadUserInput {
		t.Errorf("got %v", got)
	}
	if got := limits.TrimErrors(list[:4], 2); got[1].Extensions["code"] != codes.ValidationFailed {
		t.Errorf("one code: %v", got[1].Extensions)
	}
}

// Through the handler: a document gqlgen has cached still has its variables
// checked.
func TestVariablesCheckedOnCacheHits(t *testing.T) {
	cfg := limits.DefaultConfig
	g := newGateway(t, cfg)
	doc := `mutation($p: JSON) { createNode(id: "c", properties: $p) { id } }`
	if resp := g.post(t, doc, `{"p": {"a": 1}}`); len(resp.Errors) != 0 {
		t.Fatalf("%+v", resp.Errors)
	}
	e := g.post(t, doc, `{"p": {"a": 1e999}}`).only(t)
	if e.Extensions.Code != codes.BadUserInput {
		t.Fatalf("%+v", e)
	}
}

// _entities costs its representations times its selections, like
// nodes(ids:): 3,000 representations of a node with its properties are
// too complex (each 1 + id 1 + properties 9 + createdAt 1 + updatedAt 1).
func TestEntitiesPricedByRepresentations(t *testing.T) {
	g := newGateway(t, limits.DefaultConfig)
	reps := "[" + strings.TrimSuffix(repeat(`{"__typename": "Node", "id": "x"},`, 3000, ""), ",") + "]"
	doc := `query($r: [_Any!]!) { _entities(representations: $r) { ... on Node { id properties createdAt updatedAt } } }`
	e := g.post(t, doc, `{"r": `+reps+`}`).only(t)
	if e.Extensions.Code != codes.BadUserInput || e.Message != "operation has complexity 36001; the limit is 10000" {
		t.Fatalf("got %q (%s)", e.Message, e.Extensions.Code)
	}
	if resp := g.post(t, doc, `{"r": [{"__typename": "Node", "id": "x"}]}`); len(resp.Errors) != 0 {
		t.Fatalf("%+v", resp.Errors)
	}
}

// alwaysCached is a query cache that holds every document.
type alwaysCached struct {
	graphql.NoCache[*ast.QueryDocument]
}

func (alwaysCached) Get(context.Context, string) (*ast.QueryDocument, bool) {
	return &ast.QueryDocument{}, true
}

// A document in the query cache passed the scan when it was added: it is
// not scanned again. The variables are checked on every request.
func TestCachedDocumentsAreNotScanned(t *testing.T) {
	ctx := context.Background()
	tooDeep := "{ a" + strings.Repeat(" { a", 100) + strings.Repeat(" }", 101)
	for _, c := range []struct {
		name  string
		cache graphql.Cache[*ast.QueryDocument]
		vars  map[string]any
		want  string
	}{
		{"miss", graphql.NoCache[*ast.QueryDocument]{}, nil, "nests brackets"},
		{"no cache", nil, nil, "nests brackets"},
		{"hit", alwaysCached{}, nil, ""},
		{"hit, bad variables", alwaysCached{}, map[string]any{"p": map[string]any{"a": []any{json.Number("-1e999")}}}, "variable $p: the number -1e999 is out of range"},
		{"hit, invalid UTF-8", alwaysCached{}, map[string]any{"p": "\xff"}, "variable $p: a string is not valid UTF-8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := limits.New(limits.DefaultConfig, c.cache).MutateOperationParameters(ctx, &graphql.RawParams{Query: tooDeep, Variables: c.vars})
			if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Message, c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	es := generated.NewExecutableSchema(generated.Config{Resolvers: &resolvers.Resolver{}})
	if err := limits.New(limits.DefaultConfig, nil).Validate(es); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []func(*limits.Config){
		func(c *limits.Config) { c.Tokens = 0 },
		func(c *limits.Config) { c.Errors = -1 },
		func(c *limits.Config) { c.Nesting, c.Depth = 20, 20 },
	} {
		cfg := limits.DefaultConfig
		bad(&cfg)
		if err := limits.New(cfg, nil).Validate(es); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// The figure is where gqlgen's extension.GetComplexityStats reads it, for
// whatever budgets operations by their complexity.
func TestComplexityStats(t *testing.T) {
	exec := executor.New(generated.NewExecutableSchema(generated.Config{Resolvers: &resolvers.Resolver{}, Complexity: limits.Pricing()}))
	exec.Use(limits.New(limits.DefaultConfig, nil))
	ctx := graphql.StartOperationTrace(context.Background())
	q, err := os.ReadFile("../../bench/queries/q3.graphql")
	if err != nil {
		t.Fatal(err)
	}
	oc, errs := exec.CreateOperationContext(ctx, &graphql.RawParams{Query: string(q), Variables: map[string]any{"id": "n0"}})
	if errs != nil {
		t.Fatal(errs)
	}
	stats := extension.GetComplexityStats(graphql.WithOperationContext(ctx, oc))
	// node: 1 + id 1 + relationships (1 + 10 x edges (1 + neighbor (1 + id 1
	// + properties 9 + articles (1 + 3 x edges (1 + node (1 + 3))))))
	if want := 1 + 1 + (1 + 10*(1+(1+1+limits.PropertiesCost+(1+3*(1+(1+3)))))); stats == nil || stats.Complexity != want || stats.ComplexityLimit != 10000 {
		t.Fatalf("stats %+v, want complexity %d", stats, want)
	}
}

// Fields that carry large values cost the most they can hold: 100 aliases
// of an article's body (up to 1 MiB each, 100 MiB in all) are refused,
// 76 fit; properties and property(name:) (up to 64 KiB) cost 9.
func TestLargeValuesPriced(t *testing.T) {
	g := newGateway(t, limits.DefaultConfig)
	for _, c := range []struct {
		name, doc string
		want      int // 0: within the limit
	}{
		{"100 bodies", `query($i: ID!) { ` + numbered("a%d: article(id: $i) { body }", 100) + ` }`, 100 * (1 + limits.BodyCost)},
		{"76 bodies", `query($i: ID!) { ` + numbered("a%d: article(id: $i) { body }", 76) + ` }`, 0},
		{"100 titles", `query($i: ID!) { ` + numbered("a%d: article(id: $i) { title }", 100) + ` }`, 0},
		{"100 node properties", `query($i: ID!) { ` + numbered("a%d: node(id: $i) { properties }", 100) + ` }`, 0},
		{"a page of bodies", `query($i: ID!) { node(id: $i) { articles(first: 100) { edges { node { body } } } } }`,
			1 + (1 + 100*(1+(1+limits.BodyCost)))},
		{"properties in a page of pages", `query($i: ID!) { node(id: $i) { relationships(type: "t", direction: OUTGOING, first: 100) { edges {
			node { properties } neighbor { property(name: "n") relationships(type: "t", direction: OUTGOING, first: 20) { edges { node { properties } } } } } } } }`,
			1 + (1 + 100*(1+(1+limits.PropertiesCost)+(1+limits.PropertiesCost+(1+20*(1+(1+limits.PropertiesCost))))))},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := g.post(t, c.doc, `{"i": "1"}`)
			if c.want == 0 {
				for _, e := range resp.Errors {
					if strings.HasPrefix(e.Message, "operation has complexity") {
						t.Fatalf("refused: %q", e.Message)
					}
				}
				return
			}
			e := resp.only(t)
			if want := fmt.Sprintf("operation has complexity %d; the limit is 10000", c.want); e.Extensions.Code != codes.BadUserInput || e.Message != want {
				t.Fatalf("got %q (%s), want %q", e.Message, e.Extensions.Code, want)
			}
		})
	}
}
