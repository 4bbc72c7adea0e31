package plan

import (
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"

	"github.com/hbgraph/hbgraph/graph/generated"
	"github.com/hbgraph/hbgraph/graph/resolvers"
)

// opContext parses and validates query against the schema.
func opContext(t *testing.T, query string, vars map[string]any) *graphql.OperationContext {
	t.Helper()
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &resolvers.Resolver{}}).Schema()
	doc, errs := gqlparser.LoadQueryWithRules(schema, query, nil) // nil: the default rules
	if errs != nil {
		t.Fatal(errs)
	}
	return &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0], Variables: vars}
}

// TestCache: a plan is compiled once per operation and per combination of
// the values its @skip/@include variables take, at most maxVariants of
// them; other variables do not make variants; mutations and @defer are
// gqlgen's whatever the variables; a plan goes when its document does.
func TestCache(t *testing.T) {
	var c cache
	compiles := 0
	compile := func(*graphql.OperationContext) *variant { compiles++; return &variant{plan: &Plan{}} }

	q := `query($id: ID!, $a: Boolean!, $b: Boolean!) { node(id: $id) { id @skip(if: $a) properties @include(if: $b) } }`
	oc := opContext(t, q, map[string]any{"id": "n1", "a": true, "b": false})
	first := c.get(oc, compile)
	for _, id := range []string{"n1", "n2"} { // another id: the same plan
		oc.Variables = map[string]any{"id": id, "a": true, "b": false}
		if v := c.get(oc, compile); v != first || compiles != 1 {
			t.Fatalf("id %s: %d compiles, same variant %v", id, compiles, v == first)
		}
	}
	oc.Variables = map[string]any{"id": "n1", "a": false, "b": false}
	if v := c.get(oc, compile); v == first || compiles != 2 {
		t.Fatalf("another @skip value: %d compiles, same variant %v", compiles, v == first)
	}

	// More condition variables than maxVariants combinations: the ones
	// past the bound are gqlgen's.
	q = `query($a: Boolean!, $b: Boolean!, $c: Boolean!, $d: Boolean!) { __typename @skip(if: $a) x: __typename @skip(if: $b) y: __typename @skip(if: $c) z: __typename @skip(if: $d) }`
	oc = opContext(t, q, nil)
	fell := 0
	for i := range 16 {
		oc.Variables = map[string]any{"a": i&1 == 0, "b": i&2 == 0, "c": i&4 == 0, "d": i&8 == 0}
		if c.get(oc, compile).plan == nil {
			fell++
		}
	}
	if fell != 16-maxVariants {
		t.Errorf("%d of 16 variants fell back, want %d", fell, 16-maxVariants)
	}

	for q, reason := range map[string]string{
		`mutation { deleteNode(id: "n1") }`:                            "mutation",
		`{ node(id: "n1") { ... @defer { id } } }`:                     "defer",
		`{ node(id: "n1") { ...F @defer } } fragment F on Node { id }`: "defer",
	} {
		before := compiles
		if v := c.get(opContext(t, q, nil), compile); v.plan != nil || v.reason != reason || compiles != before {
			t.Errorf("%s: reason %q, want %q without compiling", q, v.reason, reason)
		}
	}

	// Dropped with its document.
	oc = opContext(t, `{ __typename }`, nil)
	c.get(oc, compile)
	k := weak.Make(oc.Operation)
	oc = nil
	for deadline := time.Now().Add(5 * time.Second); ; {
		runtime.GC()
		c.mu.Lock()
		_, kept := c.m[k]
		c.mu.Unlock()
		if !kept {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the plan stays after its document went")
		}
		time.Sleep(time.Millisecond)
	}
}
