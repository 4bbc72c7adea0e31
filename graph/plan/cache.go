package plan

import (
	"runtime"
	"sync"
	"weak"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/ast"
)

// maxVariants bounds the plans of one operation: one per combination of
// the values of the variables its @skip/@include read. Real clients use
// zero to two such variables; past this, gqlgen executes.
const maxVariants = 8

// maxCondVars bounds the variables @skip/@include may read for a plan
// (two bits each in a variant's key).
const maxCondVars = 32

// cache keeps the plans of the operations in gqlgen's query cache, keyed
// by the operation's parsed definition without keeping it alive: when the
// query cache drops a document and the GC frees it, its plans go too.
type cache struct {
	// mu guards m.
	mu sync.Mutex
	m  map[weak.Pointer[ast.OperationDefinition]]*entry

	hooks *hooks // the tests' (hooks.go); nil in production
}

// entry is one operation's plans.
type entry struct {
	condVars []string // the variables @skip/@include read, in document order
	reason   string   // set: gqlgen executes every variant (e.g. @defer)

	// mu guards variants.
	mu       sync.Mutex
	variants map[uint64]*variant
}

// variant is the plan of an operation for one combination of its
// condition variables' values; plan nil: gqlgen executes it, for reason.
type variant struct {
	plan    *Plan
	reason  string
	counter prometheus.Counter // hbgraph_plan_total{executor="plan"}, if registered
}

var tooManyVariants = &variant{reason: "variants"}

// get returns oc's variant, compiling it with compile on a miss.
func (c *cache) get(oc *graphql.OperationContext, compile func(*graphql.OperationContext) *variant) *variant {
	k := weak.Make(oc.Operation)
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[weak.Pointer[ast.OperationDefinition]]*entry)
	}
	e := c.m[k]
	if e == nil {
		e = newEntry(oc)
		if c.hooks != nil && c.hooks.entry != nil {
			c.hooks.entry(e)
		}
		c.m[k] = e
		runtime.AddCleanup(oc.Operation, func(k weak.Pointer[ast.OperationDefinition]) {
			c.mu.Lock()
			delete(c.m, k)
			c.mu.Unlock()
		}, k)
	}
	c.mu.Unlock()
	if e.reason != "" {
		return &variant{reason: e.reason}
	}
	bits := e.bits(oc.Variables)
	e.mu.Lock()
	v := e.variants[bits]
	n := len(e.variants)
	e.mu.Unlock()
	if v != nil {
		return v
	}
	if n >= maxVariants {
		return tooManyVariants
	}
	v = compile(oc) // outside the lock: two requests may both compile, once
	e.mu.Lock()
	if old := e.variants[bits]; old != nil {
		v = old
	} else {
		e.variants[bits] = v
	}
	e.mu.Unlock()
	return v
}

// newEntry finds the variables oc's @skip/@include read, and the reasons
// for gqlgen to execute the operation whatever their values.
func newEntry(oc *graphql.OperationContext) *entry {
	e := &entry{variants: map[uint64]*variant{}}
	switch {
	case oc.Operation.Operation == ast.Mutation:
		e.reason = "mutation"
	case oc.Operation.Operation != ast.Query:
		e.reason = "subscription"
	}
	seen := map[string]bool{}
	visited := map[string]bool{}
	var walk func(ss ast.SelectionSet)
	directives := func(ds ast.DirectiveList) {
		for _, d := range ds {
			switch d.Name {
			case "defer":
				e.reason = "defer"
			case "skip", "include":
				if a := d.Arguments.ForName("if"); a != nil && a.Value.Kind == ast.Variable && !seen[a.Value.Raw] {
					seen[a.Value.Raw] = true
					e.condVars = append(e.condVars, a.Value.Raw)
				}
			}
		}
	}
	walk = func(ss ast.SelectionSet) {
		for _, sel := range ss {
			switch sel := sel.(type) {
			case *ast.Field:
				directives(sel.Directives)
				walk(sel.SelectionSet)
			case *ast.InlineFragment:
				directives(sel.Directives)
				walk(sel.SelectionSet)
			case *ast.FragmentSpread:
				directives(sel.Directives)
				if !visited[sel.Name] {
					visited[sel.Name] = true
					if f := oc.Doc.Fragments.ForName(sel.Name); f != nil {
						directives(f.Directives)
						walk(f.SelectionSet)
					}
				}
			}
		}
	}
	walk(oc.Operation.SelectionSet)
	if len(e.condVars) > maxCondVars {
		e.reason = "variants"
	}
	return e
}

// bits is the variant key: two bits per condition variable (true, false,
// anything else).
func (e *entry) bits(vars map[string]any) uint64 {
	var k uint64
	for i, name := range e.condVars {
		v := uint64(3)
		switch vars[name] {
		case true:
			v = 1
		case false:
			v = 2
		}
		k |= v << (2 * i)
	}
	return k
}
