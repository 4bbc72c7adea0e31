package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/hbgraph/hbgraph/graph/generated"
	"github.com/hbgraph/hbgraph/graph/resolvers"
	"github.com/hbgraph/hbgraph/store"
)

// The differential test's generator writes random operations by walking
// the schema gqlgen serves (graph/schema.graphqls with federation's
// additions, as the executable schema's Schema() has it): the fields of
// each type, their arguments and their types come from it, so a field
// added to the schema is generated the day it is added. What the schema
// cannot say is what a sensible value is: argument values are chosen by
// the argument's name (argValue: ids of the fixture's records, page sizes
// around the store's limits, the fixture's cursors, categories, times,
// property names), else by its type. Fields left to gqlgen (leftToGqlgen)
// are not generated: the corpus has them.

// genSchema is the schema the generator walks.
var genSchema = sync.OnceValue(func() *ast.Schema {
	return generated.NewExecutableSchema(generated.Config{Resolvers: &resolvers.Resolver{}}).Schema()
})

// leftToGqlgen tells whether gqlgen always executes typ.field: the plan's
// one explicit list of such fields (kinds.go's fallbackTypes and
// fallbackFields) and introspection.
func leftToGqlgen(typ, field string) bool {
	return fallbackTypes[typ] || fallbackFields[typ+"."+field] || strings.HasPrefix(typ, "__") || strings.HasPrefix(field, "__")
}

// op is one generated request.
type op struct {
	query string
	vars  map[string]any
	name  string
	// rerun, when set, are vars with every variable @skip/@include read
	// flipped: the same document again takes another plan (compareOp).
	rerun map[string]any
	// fields are the "Type.field" the operation selects (some maybe
	// under @skip), for TestGeneratedOperationsCoverTheSchema.
	fields map[string]bool
}

// compareOp runs o through both executors, and again with o.rerun.
func (d *differ) compareOp(o op) string {
	if diff := d.compare(o.query, o.vars, o.name); diff != "" || o.rerun == nil {
		return diff
	}
	return d.compare(o.query, o.rerun, o.name)
}

// gen writes one random operation over the schema.
type gen struct {
	s      *ast.Schema
	r      *rand.Rand
	decls  []string
	vars   map[string]any
	frags  []string
	nvar   int
	fields map[string]bool
	conds  []string // the variables @skip/@include read
	// excluded: the latest directive leaves out what it is on; off counts
	// the excluded selections being written, whose fields do not count.
	excluded bool
	off      int

	naliases int
}

func generate(seed uint64) op {
	g := &gen{s: genSchema(), r: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), vars: map[string]any{}, fields: map[string]bool{}}
	var sels []string
	for range 1 + g.r.IntN(3) {
		sels = append(sels, g.item(g.s.Query, 0, true))
	}
	body := "{ " + strings.Join(sels, " ") + " }"
	name := ""
	if g.r.IntN(4) == 0 {
		name = "Op"
	}
	head := "query"
	if name != "" {
		head += " " + name
	}
	if len(g.decls) > 0 {
		head += "(" + strings.Join(g.decls, ", ") + ")"
	}
	q := head + " " + body
	for _, f := range g.frags {
		q += "\n" + f
	}
	o := op{query: q, vars: g.vars, fields: g.fields}
	if len(g.conds) > 0 && g.r.IntN(3) == 0 {
		o.rerun = maps.Clone(g.vars)
		for _, c := range g.conds {
			o.rerun[c] = !o.rerun[c].(bool)
		}
	}
	if name != "" && g.r.IntN(2) == 0 {
		o.query += "\nquery Other { __typename }"
		o.name = name
	}
	return o
}

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

// maxHops bounds the levels of entities below a root field: a field
// without arguments whose value is an entity (an object with @key:
// startNode, neighbor, author, an edge's node) is a hop.
const maxHops = 2

// isEntity tells an object type with @key, a record of its own.
func isEntity(def *ast.Definition) bool {
	return def != nil && def.Kind == ast.Object && def.Directives.ForName("key") != nil
}

// isHop tells a field that leads to another entity (see maxHops).
func isHop(s *ast.Schema, f *ast.FieldDefinition) bool {
	return len(f.Arguments) == 0 && isEntity(s.Types[namedType(f.Type)])
}

// isComposite tells a type whose fields are selected.
func isComposite(def *ast.Definition) bool {
	return def != nil && (def.Kind == ast.Object || def.Kind == ast.Union || def.Kind == ast.Interface)
}

// weight is how often a field is picked among its siblings: a leaf 2 (1
// with arguments), an object 2 plus one per object field below it, so the
// fields that lead deeper are picked more, and __typename 1.
func (g *gen) weight(f *ast.FieldDefinition) int {
	def := g.s.Types[namedType(f.Type)]
	switch {
	case f.Name == "__typename":
		return 1
	case !isComposite(def):
		if len(f.Arguments) > 0 {
			return 1
		}
		return 2
	}
	w := 2 + len(def.Types)
	for _, cf := range def.Fields {
		if isComposite(g.s.Types[namedType(cf.Type)]) {
			w++
		}
	}
	return w
}

// typename is __typename as a field definition, for the pick.
var typename = &ast.FieldDefinition{Name: "__typename", Type: ast.NonNullNamedType("String", nil)}

// item is one selection of typ: a field, or (below the root, on an
// object) at times a fragment.
func (g *gen) item(def *ast.Definition, depth int, root bool) string {
	if def.Kind != ast.Object {
		return g.abstractItem(def, depth)
	}
	if !root && depth < maxHops && g.r.IntN(6) == 0 {
		return g.fragment(def, depth)
	}
	candidates := []*ast.FieldDefinition{typename}
	for _, f := range def.Fields {
		if leftToGqlgen(def.Name, f.Name) || !root && isHop(g.s, f) && depth >= maxHops {
			continue
		}
		candidates = append(candidates, f)
	}
	total := 0
	for _, f := range candidates {
		total += g.weight(f)
	}
	n := g.r.IntN(total)
	for _, f := range candidates {
		if n -= g.weight(f); n < 0 {
			return g.field(def, f, depth, root)
		}
	}
	panic("not reached")
}

// field is f of parent, with an alias at times, its arguments, a
// directive at times and its selection.
func (g *gen) field(parent *ast.Definition, f *ast.FieldDefinition, depth int, root bool) string {
	var s string
	if root && len(f.Arguments) > 0 {
		s = g.rootAlias(f.Name)
	} else {
		s = g.alias(f.Name)
	}
	s += g.args(f) + g.directive()
	defer g.include()()
	if f.Name != "__typename" && g.off == 0 {
		g.fields[parent.Name+"."+f.Name] = true
	}
	if def := g.s.Types[namedType(f.Type)]; isComposite(def) {
		if !root && isHop(g.s, f) {
			depth++
		}
		s += " " + g.sel(def, depth)
	}
	return s
}

// sel is a selection set of def: one to a few items, more for types of
// many fields.
func (g *gen) sel(def *ast.Definition, depth int) string {
	var items []string
	for range 1 + g.r.IntN(2+len(def.Fields)/4) {
		if it := g.item(def, depth, false); it != "" {
			items = append(items, it)
		}
	}
	if len(items) == 0 {
		items = []string{"__typename"}
	}
	return "{ " + strings.Join(items, " ") + " }"
}

// fragment is a fragment on def: inline, with its own type condition, none,
// or (nested) one of an abstract type def belongs to; or a named one.
func (g *gen) fragment(def *ast.Definition, depth int) string {
	if g.r.IntN(3) > 0 {
		name := fmt.Sprintf("F%d", len(g.frags))
		g.frags = append(g.frags, "") // reserve the name before recursing
		spread := "..." + name + g.directive()
		defer g.include()()
		g.frags[len(g.frags)-1] = "fragment " + name + " on " + def.Name + " " + g.sel(def, depth+1)
		return spread
	}
	var outer []string
	for name, t := range g.s.Types {
		if t.Kind == ast.Union && slices.Contains(t.Types, def.Name) || t.Kind == ast.Interface && slices.Contains(def.Interfaces, name) {
			outer = append(outer, name)
		}
	}
	slices.Sort(outer) // map order is random: the seed alone decides
	if len(outer) > 0 && g.r.IntN(3) == 0 {
		head := "... on " + g.pick(outer...) + g.directive()
		defer g.include()()
		return head + " { ... on " + def.Name + " " + g.sel(def, depth+1) + " }"
	}
	head := "..." + g.pick(" on "+def.Name, "") + g.directive()
	defer g.include()()
	return head + " " + g.sel(def, depth+1)
}

// abstractItem is one selection of a union or interface: __typename, or
// an inline fragment on one of its members.
func (g *gen) abstractItem(def *ast.Definition, depth int) string {
	members := def.Types
	if def.Kind == ast.Interface {
		members = nil
		for _, t := range g.s.PossibleTypes[def.Name] {
			members = append(members, t.Name)
		}
	}
	if len(members) == 0 || g.r.IntN(4) == 0 {
		return g.alias("__typename")
	}
	m := g.s.Types[g.pick(members...)]
	head := "... on " + m.Name + g.directive()
	defer g.include()()
	return head + " " + g.sel(m, depth)
}

// variable declares a variable of type typ with value v (omitted when
// omit), and returns its reference.
func (g *gen) variable(typ string, v any, omit bool) string {
	g.nvar++
	name := fmt.Sprintf("v%d", g.nvar)
	g.decls = append(g.decls, "$"+name+": "+typ)
	if !omit {
		g.vars[name] = v
	}
	return "$" + name
}

// enumValue is an enum's value: a name in a literal, a string in
// variables.
type enumValue string

func literal(v any) string {
	switch v := v.(type) {
	case enumValue:
		return string(v)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = literal(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			parts = append(parts, k+": "+literal(v[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	b, _ := json.Marshal(v) // a JSON string or number is a GraphQL literal
	return string(b)
}

func (g *gen) id() any {
	switch n := g.r.IntN(20); {
	case n < 13:
		// Not flaky1: a failed read fails its whole batch, and which keys
		// share gqlgen's batches depends on its scheduler's timing.
		for {
			if id := fixtureIDs[g.r.IntN(len(fixtureIDs))]; id != "flaky1" {
				return id
			}
		}
	case n < 16:
		return missingIDs[g.r.IntN(len(missingIDs))]
	case n < 17:
		return json.Number(fmt.Sprint(g.r.IntN(9))) // an Int is an ID too
	}
	return invalidIDs[g.r.IntN(len(invalidIDs))]
}

// arg is a literal or a variable of type typ holding v: sent, or left
// to its default, or (when typ is nullable) sent as null or not sent.
func (g *gen) arg(typ string, v any) string {
	nullable := !strings.HasSuffix(typ, "!")
	switch n := g.r.IntN(12); {
	case n < 5:
		return literal(v)
	case n < 7:
		ref := g.variable(typ, v, true)
		g.decls[len(g.decls)-1] += " = " + literal(v)
		return ref
	case n < 8 && nullable:
		return g.variable(typ, nil, false)
	case n < 9 && nullable:
		return g.variable(typ, nil, true)
	}
	return g.variable(typ, v, false)
}

// alias is the field's name most of the time, else a fresh alias, and
// rarely one that may clash with another field's (a validation error both
// executors must report alike).
func (g *gen) alias(name string) string {
	switch n := g.r.IntN(20); {
	case n < 13:
		return name
	case n < 19:
		g.naliases++
		return fmt.Sprintf("a%d: %s", g.naliases, name)
	}
	return g.pick("x", "node", "id", "_") + ": " + name
}

// rootAlias is mostly a fresh alias: root fields with the same name and
// other arguments would not validate.
func (g *gen) rootAlias(name string) string {
	if g.r.IntN(4) == 0 {
		return name
	}
	g.naliases++
	return fmt.Sprintf("r%d: %s", g.naliases, name)
}

// directive is none most of the time, else @skip/@include with a literal
// or a variable; excluded says whether it leaves out what it is on.
func (g *gen) directive() string {
	g.excluded = false
	if g.r.IntN(5) > 0 {
		return ""
	}
	d := g.pick("skip", "include")
	b := g.r.IntN(2) == 0
	g.excluded = b == (d == "skip")
	if g.r.IntN(2) == 0 {
		return fmt.Sprintf(" @%s(if: %v)", d, b)
	}
	ref := g.variable("Boolean!", b, false)
	g.conds = append(g.conds, ref[1:])
	return fmt.Sprintf(" @%s(if: %s)", d, ref)
}

// include follows the latest directive into what it is on, and returns
// the way out: fields below an excluded selection are not counted as
// selected.
func (g *gen) include() func() {
	if !g.excluded {
		return func() {}
	}
	g.excluded = false
	g.off++
	return func() { g.off-- }
}

// pageArgs are Relay's page arguments: a field with first and one of
// the others gets them together (page).
var pageArgs = []string{"first", "after", "last", "before"}

// args are f's arguments, "" when none: every required one, each optional
// one at times, Relay's page arguments as a group.
func (g *gen) args(f *ast.FieldDefinition) string {
	if len(f.Arguments) == 0 {
		return ""
	}
	rec := g.record(namedType(f.Type))
	paged := f.Arguments.ForName("first") != nil && f.Arguments.ForName("after") != nil
	var args []string
	for _, a := range f.Arguments {
		required := a.Type.NonNull && a.DefaultValue == nil
		switch {
		case paged && slices.Contains(pageArgs, a.Name):
			continue
		case !required && g.r.IntN(3) > 0:
			continue
		}
		g.optArg(&args, a.Name, a.Type.String(), g.argValue(f, a, rec))
	}
	if paged {
		g.page(&args, maxPage(f))
	}
	if len(args) == 0 {
		return ""
	}
	return "(" + strings.Join(args, ", ") + ")"
}

// maxPage is the largest page a field's first or last may ask for: the
// store's top words for a list, else its page size.
func maxPage(f *ast.FieldDefinition) int {
	if f.Type.Elem != nil {
		return store.MaxTopWords
	}
	return store.MaxPageSize
}

// size is a page size: small, the limit, one past it, or negative.
func (g *gen) size(limit int) any {
	return []any{0, 1, 2, 3, 3, 2, limit, limit + 1, -1}[g.r.IntN(9)]
}

// cursor is mostly one of the fixture's cursors, else empty or forged.
func (g *gen) cursor() any {
	if g.r.IntN(6) == 0 {
		return g.pick("", "forged", "AAAA")
	}
	return fixtureCursors[g.r.IntN(len(fixtureCursors))]
}

// record is, for a field whose value is an entity of the fixture, the
// arguments that name one: mostly a record that exists, at times one
// that does not or an id that does not parse. Nil for other types.
func (g *gen) record(typ string) map[string]any {
	switch typ {
	case "Node":
		return map[string]any{"id": g.id()}
	case "Relationship":
		k := fixtureRels[g.r.IntN(len(fixtureRels))]
		rec := map[string]any{"startNodeId": k.Start, "endNodeId": k.End, "type": g.pick(k.Type, k.Type, k.Type, "nope", ""), "id": k.ID()}
		if g.r.IntN(5) == 0 {
			rec["startNodeId"] = g.id()
		}
		if g.r.IntN(8) == 0 {
			rec["endNodeId"] = g.id()
		}
		switch g.r.IntN(6) {
		case 0:
			rec["id"] = store.RelationshipKey{Start: k.Start, Type: "nope", End: k.End}.ID()
		case 1:
			rec["id"] = g.pick("", "garbage", "W10")
		}
		return rec
	case "Article":
		var id any = fixtureArticles[g.r.IntN(len(fixtureArticles))]
		if g.r.IntN(5) == 0 {
			id = g.pick("nope", "", fixtureCursors[g.r.IntN(len(fixtureCursors))])
		}
		return map[string]any{"id": id}
	}
	return nil
}

// argValue is a sensible value for argument a of f, rec being the record
// f's value names: by the argument's name when it is a known one, else by
// its type.
func (g *gen) argValue(f *ast.FieldDefinition, a *ast.ArgumentDefinition, rec map[string]any) any {
	if v, ok := rec[a.Name]; ok {
		return v
	}
	switch a.Name {
	case "representations":
		return g.representations(g.s.Types[namedType(f.Type)])
	case "type", "via":
		return g.pick("follows", "follows", "likes", "nope", "")
	case "after", "before":
		return g.cursor()
	case "first", "last":
		return g.size(maxPage(f))
	case "category":
		return g.pick("tech", "life", "nope", "")
	case "postedAfter":
		return g.pick("2025-03-26T21:00:00Z", "2025-03-26T20:58:41.826Z", "2025-03-26T20:58:41.8255Z", "garbage")
	case "postedBefore":
		return g.pick("2025-03-26T20:58:41.830Z", "2030-01-01T00:00:00+02:00")
	case "name":
		return g.pick("name", "age", "tags", "q", "nope", "")
	}
	return g.valueOf(f, a.Name, a.Type)
}

// valueOf is a value of type t for argument name of f, by the type alone;
// a list's elements are values for the name in the singular (ids: id).
func (g *gen) valueOf(f *ast.FieldDefinition, name string, t *ast.Type) any {
	if t.Elem != nil {
		one := strings.TrimSuffix(name, "s")
		elem := func() any {
			if v, ok := g.record(namedType(f.Type))[one]; ok {
				return v
			}
			return g.valueOf(f, one, t.Elem)
		}
		if g.r.IntN(30) == 0 { // one past the most a list argument may hold
			return slices.Repeat([]any{elem()}, store.MaxPageSize+1)
		}
		out := make([]any, g.r.IntN(5))
		for i := range out {
			out[i] = elem()
		}
		return out
	}
	def := g.s.Types[t.NamedType]
	if def != nil && def.Kind == ast.Enum {
		return enumValue(def.EnumValues[g.r.IntN(len(def.EnumValues))].Name)
	}
	switch t.NamedType {
	case "ID":
		return g.id()
	case "Int":
		return g.size(store.MaxPageSize)
	case "Boolean":
		return g.r.IntN(2) == 0
	case "Time":
		return g.pick("2025-03-26T21:00:00Z", "garbage")
	case "JSON":
		return map[string]any{"k": g.pick("v", "")}
	}
	return g.pick("x", "", "nope")
}

// optArg adds name: value to args (a literal or a variable of type typ),
// or leaves it out when v is nil.
func (g *gen) optArg(args *[]string, name, typ string, v any) {
	if v == nil {
		return
	}
	*args = append(*args, name+": "+g.arg(typ, v))
}

// page adds Relay's page arguments: mostly none or a small first, at times
// boundaries, backward pages, both directions at once, and cursors (real,
// empty, forged, another connection's).
func (g *gen) page(args *[]string, limit int) {
	switch g.r.IntN(8) {
	case 0, 1:
	case 2, 3:
		g.optArg(args, "first", "Int", g.size(limit))
	case 4:
		g.optArg(args, "first", "Int", g.size(limit))
		g.optArg(args, "after", "String", g.cursor())
	case 5:
		g.optArg(args, "last", "Int", g.size(limit))
		if g.r.IntN(2) == 0 {
			g.optArg(args, "before", "String", g.cursor())
		}
	case 6:
		g.optArg(args, "first", "Int", 2)
		g.optArg(args, "last", "Int", 2)
	case 7:
		g.optArg(args, "after", "String", g.cursor())
	}
}

// representations are _entities' argument, for the members of union:
// mostly good ones (of records that exist, or not, or with ids that do
// not parse), at times one gqlgen must refuse.
func (g *gen) representations(union *ast.Definition) []any {
	reps := make([]any, g.r.IntN(5))
	for i := range reps {
		switch n := g.r.IntN(20); {
		case n < 16:
			typ := union.Types[g.r.IntN(len(union.Types))]
			reps[i] = map[string]any{"__typename": typ, "id": g.record(typ)["id"]}
		case n < 17:
			reps[i] = map[string]any{"__typename": "Nope", "id": "n1"}
		case n < 18:
			reps[i] = map[string]any{"id": "n1"}
		case n < 19:
			reps[i] = map[string]any{"__typename": union.Types[0]}
		default:
			reps[i] = map[string]any{"__typename": union.Types[0], "id": nil}
		}
	}
	return reps
}

// TestGeneratedOperationsCoverTheSchema: every field of the schema runs
// through the plan in some generated operation that the differential test
// checks, unless it is explicitly left to gqlgen (leftToGqlgen). A field
// added to the schema and not taught to the plan makes every operation
// selecting it fall back, and fails here; one half taught (a kind with no
// write) fails the comparison.
func TestGeneratedOperationsCoverTheSchema(t *testing.T) {
	d := newDiffer(t)
	schema := genSchema()
	missing := map[string]bool{}
	for name, def := range schema.Types {
		if def.Kind != ast.Object || def.BuiltIn {
			continue
		}
		for _, f := range def.Fields {
			if !leftToGqlgen(name, f.Name) {
				missing[name+"."+f.Name] = true
			}
		}
	}
	if len(missing) < 40 {
		t.Fatalf("only %d fields to cover: is the schema loaded?", len(missing))
	}
	n := generatedOps()
	for seed := range uint64(n) {
		if len(missing) == 0 {
			t.Logf("every field ran through the plan within %d operations", seed)
			return
		}
		o := generate(seed)
		planned, fell := d.schema.planned.Load(), d.schema.fellBack.Load()
		if diff := d.compare(o.query, o.vars, o.name); diff != "" {
			t.Fatalf("seed %d: %s", seed, diff)
		}
		if d.schema.planned.Load() > planned && d.schema.fellBack.Load() == fell {
			for f := range o.fields {
				delete(missing, f)
			}
		}
	}
	for _, f := range slices.Sorted(maps.Keys(missing)) {
		t.Errorf("%s: no operation of %d generated ran it through the plan: describe it (graph/fields), or list it as left to gqlgen (fallbackFields)", f, n)
	}
}
