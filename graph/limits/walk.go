package limits

import (
	"context"
	"encoding/json"
	"math"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/graph/fields"
	"github.com/hbgraph/hbgraph/store"
)

// argRule is a check of one argument: its value must lie in [min, max];
// with count, the length of its list must; with objects, each element of
// its list must be an object.
type argRule struct {
	name     string
	min, max int64
	count    bool
	objects  bool
}

// argRules are, by "Type.field", the page sizes the resolvers and the
// store accept (the same ranges, checked before complexity, so that an
// oversized page is refused as a page size whatever it would cost), and
// federation's representations, which gqlgen's generated code refuses
// with an error that is not an input error when one is not an object.
var argRules = map[string][]argRule{
	"Node.wordCounts": {{name: "first", min: 1, max: store.MaxTopWords}},
	"Query.nodes":     {{name: "ids", max: store.MaxPageSize, count: true}},
	"Query._entities": {{name: "representations", objects: true}},
}

// pageRules are every page scan's (graph/fields' PageScan descriptors:
// the connections).
var pageRules = []argRule{{name: "first", max: store.MaxPageSize}, {name: "last", max: store.MaxPageSize}}

// rulesOf are the argRules of typ.name.
func rulesOf(typ, name string) []argRule {
	if d := fields.Lookup(typ, name); d != nil && d.Kind == fields.PageScan {
		return pageRules
	}
	return argRules[typ+"."+name]
}

// walker walks one validated operation. Every walk visits each fragment
// once: its result is kept by fragment.
type walker struct {
	es   graphql.ExecutableSchema
	vars map[string]any

	checked map[*ast.FragmentDefinition]bool
	depths  map[*ast.FragmentDefinition]int
	costs   map[*ast.FragmentDefinition]int
}

func newWalker(es graphql.ExecutableSchema, vars map[string]any) *walker {
	return &walker{es: es, vars: vars}
}

// arguments refuses the first argument that breaks its argRule.
func (w *walker) arguments(set ast.SelectionSet) *gqlerror.Error {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.ObjectDefinition != nil {
				if err := w.argumentsOf(s, rulesOf(s.ObjectDefinition.Name, s.Name)); err != nil {
					return err
				}
			}
			if err := w.arguments(s.SelectionSet); err != nil {
				return err
			}
		case *ast.InlineFragment:
			if err := w.arguments(s.SelectionSet); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			if s.Definition == nil || w.checked[s.Definition] {
				continue
			}
			if w.checked == nil {
				w.checked = map[*ast.FragmentDefinition]bool{}
			}
			w.checked[s.Definition] = true
			if err := w.arguments(s.Definition.SelectionSet); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *walker) argumentsOf(f *ast.Field, args []argRule) *gqlerror.Error {
	for _, a := range args {
		arg := f.Arguments.ForName(a.name)
		if arg == nil {
			continue
		}
		v, err := arg.Value.Value(w.vars)
		if err != nil || v == nil {
			continue // the resolver reports what does not convert
		}
		if a.objects {
			list, ok := v.([]any)
			if !ok {
				list = []any{v} // a single value stands for a list of it
			}
			for i, e := range list {
				if _, ok := e.(map[string]any); !ok {
					return refusef(arg.Position, "%s: %s[%d] must be an object", f.Name, a.name, i)
				}
			}
			continue
		}
		if a.count {
			list, ok := v.([]any)
			if ok && int64(len(list)) > a.max {
				return refusef(arg.Position, "%s: at most %d %s at once, got %d", f.Name, a.max, a.name, len(list))
			}
			continue
		}
		if n, ok := toInt(v); ok && (n < a.min || n > a.max) {
			return refusef(arg.Position, "%s: %s must be between %d and %d, got %d", f.Name, a.name, a.min, a.max, n)
		}
	}
	return nil
}

// toInt reads an Int argument: int64 from a literal, int64 or json.Number
// from a variable.
func toInt(v any) (int64, bool) {
	switch v := v.(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	case int32:
		return int64(v), true
	case json.Number:
		n, err := v.Int64()
		return n, err == nil
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<62 {
			return int64(v), true
		}
	}
	return 0, false
}

// depth is how deep set nests fields: 1 for scalar fields only. Fields of
// __schema and __type do not count.
func (w *walker) depth(set ast.SelectionSet) int {
	deepest := 0
	for _, sel := range set {
		d := 0
		switch s := sel.(type) {
		case *ast.Field:
			if s.Name == "__schema" || s.Name == "__type" {
				continue // introspection reads the schema, never the store; GraphiQL's is 15 deep
			}
			d = 1 + w.depth(s.SelectionSet)
		case *ast.InlineFragment:
			d = w.depth(s.SelectionSet)
		case *ast.FragmentSpread:
			d = w.fragment(s.Definition, &w.depths, w.depth)
		}
		deepest = max(deepest, d)
	}
	return deepest
}

// fragment returns what of computes for fragment f's selections, computed
// once and kept in memo. A fragment reached again while its own value is
// being computed (a cycle, which validation refuses) counts 0.
func (w *walker) fragment(f *ast.FragmentDefinition, memo *map[*ast.FragmentDefinition]int, of func(ast.SelectionSet) int) int {
	if f == nil {
		return 0
	}
	if *memo == nil {
		*memo = map[*ast.FragmentDefinition]int{}
	}
	if v, ok := (*memo)[f]; ok {
		return v
	}
	(*memo)[f] = 0
	v := of(f.SelectionSet)
	(*memo)[f] = v
	return v
}

// complexity is gqlgen's complexity.Calculate (the same figure: every
// selection counts, a fragment as often as it is spread), with each
// fragment's figure computed once.
func (w *walker) complexity(ctx context.Context, set ast.SelectionSet) int {
	total := 0
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			total = saturatingAdd(total, w.fieldComplexity(ctx, s))
		case *ast.InlineFragment:
			total = saturatingAdd(total, w.complexity(ctx, s.SelectionSet))
		case *ast.FragmentSpread:
			total = saturatingAdd(total, w.fragment(s.Definition, &w.costs, func(set ast.SelectionSet) int {
				return w.complexity(ctx, set)
			}))
		}
	}
	return total
}

func (w *walker) fieldComplexity(ctx context.Context, f *ast.Field) int {
	if f.Definition == nil || f.ObjectDefinition == nil {
		return 0 // validation refuses unknown fields
	}
	schema := w.es.Schema()
	typ := schema.Types[f.Definition.Type.Name()]
	if typ == nil || typ.Name == "__Schema" {
		return 0
	}
	child := 0
	switch typ.Kind {
	case ast.Object, ast.Interface, ast.Union:
		child = w.complexity(ctx, f.SelectionSet)
	}
	// Most fields take no arguments: they get no map (ArgumentMap makes an
	// empty one), and nothing prices them by one.
	var args map[string]any
	if len(f.Definition.Arguments) > 0 {
		args = f.ArgumentMap(w.vars)
	}
	if f.ObjectDefinition.Name == "Query" && f.Name == "_entities" {
		// Federation's entity field is not in the ComplexityRoot gqlgen
		// generates: priced here like nodes(ids:), by its representations.
		reps, _ := args["representations"].([]any)
		return saturatingAdd(1, saturatingMul(max(len(reps), 1), child))
	}
	price := func(obj *ast.Definition) int {
		if c, ok := scanPrice(obj.Name, f.Name, child, args); ok {
			return max(c, 1)
		}
		if c, ok := w.es.Complexity(ctx, obj.Name, f.Name, child, args); ok && c >= 1 {
			return c
		}
		return saturatingAdd(1, child)
	}
	if f.ObjectDefinition.Kind != ast.Interface {
		return price(f.ObjectDefinition)
	}
	// An interface's field costs what its costliest implementation's does.
	most := 0
	for _, t := range schema.GetPossibleTypes(f.ObjectDefinition) {
		most = max(most, price(t))
	}
	return most
}
