package plan

import (
	"reflect"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/graph/fields"
)

// Plan is a compiled operation: the root selection and, per object, its
// fields in the order gqlgen writes them. A Plan is immutable once
// compiled and shared by the requests that run it.
type Plan struct {
	Root *Sel
	// Waves is the number of store waves the plan makes at most: its
	// levels of nodes.
	Waves int
	// varFields are the fields whose arguments read variables: bound once
	// per request (bind), in this order.
	varFields []*Field
	// sizeHint is the largest response written so far, to size the next.
	sizeHint atomic.Int64
}

// Sel is the selection set of one concrete object type.
type Sel struct {
	Type   string
	Fields []Field
	// Loads counts the fields read with the object (its store reads; a
	// Node's page scans too): Field.load indexes them.
	Loads int
}

// Field is one response key of a selection set.
type Field struct {
	Key      []byte          // `"alias":`, quoted as gqlgen quotes it
	Alias    string          // for error paths
	pathName ast.PathElement // Alias as a path element, boxed once
	typename bool            // __typename: the object's type
	entity   bool            // _entities (kinds.go's handPlanned)
	// leaf is a projection's writer (fields.Desc.Leaf): a
	// *fields.Leaf[P] for the Go type P the writer holds the object as.
	leaf any
	// hop is a hop's *fields.HopTo[P]: the field's value is the Node its
	// parent names, read in the next wave (a slot, below).
	hop any
	// read is a store read's *fields.ReadOf[P]: its value is read in the
	// parent's wave, by keys the descriptor builds, and kept in the
	// parent's reads (load).
	read any
	// nodes: a root field whose value is the Nodes its arguments name;
	// list: its value is a list of them.
	// scan is a page scan's *fields.ScanOf[K, C]: a connection of the
	// Node, its page read in the node's wave.
	scan any
	// nested is an object's *fields.Nested[P, C]: an object (a list of
	// them when list) its parent holds.
	nested  any
	nodes   *fields.NodesByID
	list    bool
	desc    *fields.Desc // the field's descriptor, when it has one
	NonNull bool         // the field's type is T!
	// elemNonNull: a list field's elements are non-null ([T!]): a failed
	// element fails the list (write.go's list).
	elemNonNull bool
	Sel         *Sel // object and list-of-object fields
	Loc         []gqlerror.Location

	field  *ast.Field // for ArgumentMap
	static bool       // no variable in the arguments: args holds them
	args   argVals
	bound  int // !static: index into the request's bound arguments

	// load indexes a field read with its parent (a store read, a Node's
	// page scan) in its parent's reads (nodeVal.loads, loadVal.reads,
	// rootVal.read).
	load int
	// Fields that yield a Node below a connection or a root relationship
	// or article (neighbor, startNode, endNode, author) are that field's
	// slots: slot indexes the kids fetched for them, slots lists them.
	slot  int
	slots []*Field
	// _entities: the selection of each member of _Entity (entityTypes).
	entities [len(entityTypes)]*Sel
	// Connections: the page flags selected (the store reads one row more
	// only for them).
	wanted fields.PageInfoWanted
}

type compiler struct {
	oc   *graphql.OperationContext
	impl map[string][]string
	p    *Plan
}

// compile plans oc's operation for oc's variables (which decide
// @skip/@include), or says why gqlgen should execute it.
func compile(oc *graphql.OperationContext, impl map[string][]string) (*Plan, string) {
	if oc.Operation.Operation != ast.Query {
		return nil, string(oc.Operation.Operation)
	}
	c := compiler{oc: oc, impl: impl, p: &Plan{}}
	root, why := c.sel("Query", oc.Operation.SelectionSet, nil, 0)
	if why != "" {
		return nil, why
	}
	c.p.Root = root
	return c.p, ""
}

// sel compiles a selection set of type typ at wave depth; node-yielding
// fields below a connection or a root relationship or article are
// appended to slots.
func (c *compiler) sel(typ string, ss ast.SelectionSet, slots *[]*Field, depth int) (*Sel, string) {
	if typ == "Node" || depth == 0 && (typ == "Relationship" || typ == "Article") {
		depth++ // a level of its own: read in a wave of its own
		c.p.Waves = max(c.p.Waves, depth)
	}
	collected := graphql.CollectFields(c.oc, ss, c.impl[typ])
	s := &Sel{Type: typ, Fields: make([]Field, 0, len(collected))}
	seen := map[string]bool{}
	for _, f := range collected {
		if seen[f.Alias] { // gqlgen would write the first only
			return nil, "duplicate alias"
		}
		seen[f.Alias] = true
		if f.IsDeferred() {
			return nil, "defer"
		}
		pf := Field{Key: quotedKey(f.Alias), Alias: f.Alias, pathName: ast.PathName(f.Alias), field: f.Field}
		if f.Position != nil && f.Position.Line != 0 {
			pf.Loc = []gqlerror.Location{{Line: f.Position.Line, Column: f.Position.Column}}
		}
		pf.static = true // until arguments with variables say otherwise
		if f.Name == "__typename" {
			pf.typename = true
			s.Fields = append(s.Fields, pf)
			continue
		}
		if d := fields.Lookup(typ, f.Name); d != nil {
			var why string
			switch d.Kind {
			case fields.Projection:
				why = c.projection(&pf, d, f)
			case fields.Hop:
				why = c.hop(&pf, d, f, depth)
			case fields.StoreRead:
				why = c.read(&pf, d, f, s, depth)
			case fields.NodeRead:
				why = c.nodeRead(&pf, d, f, depth)
			case fields.PageScan:
				why = c.scan(&pf, d, f, s, depth)
			case fields.Object:
				why = c.nested(&pf, d, f, slots, depth)
			}
			if why != "" {
				return nil, why
			}
			s.Fields = append(s.Fields, pf)
			continue
		}
		if typ != "Query" || f.Name != "_entities" {
			return nil, "field " + typ + "." + f.Name // left to gqlgen (fallbackTypes, fallbackFields)
		}
		if why := c.entities(&pf, f, depth); why != "" {
			return nil, why
		}
		s.Fields = append(s.Fields, pf)
	}
	for i := range s.Fields {
		if f := &s.Fields[i]; f.hop != nil {
			if slots == nil {
				return nil, "node below " + typ // not reached: the schema has no other place
			}
			f.slot = len(*slots)
			*slots = append(*slots, f)
		}
	}
	// Fields whose arguments read variables are bound per request; the
	// slots point into the fields just appended, which stay put.
	for i := range s.Fields {
		f := &s.Fields[i]
		if !f.static {
			f.bound = len(c.p.varFields)
			c.p.varFields = append(c.p.varFields, f)
		}
	}
	return s, ""
}

// projection compiles a field whose value is a projection of its parent,
// written as the schema says: its scalar by the descriptor, its nullability
// by the field's definition (write.go's project).
func (c *compiler) projection(pf *Field, d *fields.Desc, f graphql.CollectedField) string {
	def := f.Definition
	if def == nil || def.Type.Elem != nil || reflect.TypeOf(d.Leaf) != reflect.TypeOf(fields.ParentTypes[d.Type]) {
		// Not reached: the registry's tests check each projection
		// against the schema and the parents' types.
		return "field " + d.Type + "." + d.Name
	}
	pf.leaf, pf.desc, pf.NonNull = d.Leaf, d, def.Type.NonNull
	return c.args(pf, d, f)
}

// args decodes a described field's arguments by its descriptor, at
// compile time when they are literals (else once per request, bind).
func (c *compiler) args(pf *Field, d *fields.Desc, f graphql.CollectedField) string {
	if d.Args == nil {
		return ""
	}
	pf.static = !hasVariable(f.Arguments)
	if pf.static {
		var err error
		if pf.args, err = convert(pf, f.ArgumentMap(nil)); err != nil {
			return "argument"
		}
	}
	return ""
}

// read compiles a field whose value is read from the store by keys its
// descriptor builds from the parent and the arguments, in the parent's
// wave: its value is kept in the parent's reads (Field.load), and written
// as its definition says (a scalar, an object, a list of objects).
func (c *compiler) read(pf *Field, d *fields.Desc, f graphql.CollectedField, s *Sel, depth int) string {
	def := f.Definition
	if def == nil || reflect.TypeOf(d.Read) != reflect.TypeOf(fields.ReadParentTypes[d.Type]) {
		return "field " + d.Type + "." + d.Name // not reached: TestEveryFieldPlanned
	}
	pf.read, pf.desc = d.Read, d
	pf.NonNull, pf.elemNonNull = def.Type.NonNull, def.Type.Elem != nil && def.Type.Elem.NonNull
	pf.load = s.Loads
	s.Loads++
	if why := c.args(pf, d, f); why != "" {
		return why
	}
	if d.Append != nil { // a scalar
		return ""
	}
	var why string
	var below *[]*Field
	if d.Type == "Query" { // a root object: the nodes it names are its slots
		below = &pf.slots
	}
	pf.Sel, why = c.sel(namedType(def.Type), f.Selections, below, depth)
	return why
}

// scan compiles a connection whose page is scanned by its descriptor's
// key, from the node's id and the arguments, in the node's wave: the
// page flags it selects decide whether the store reads one row more, and
// the Nodes its edges name are its slots.
func (c *compiler) scan(pf *Field, d *fields.Desc, f graphql.CollectedField, s *Sel, depth int) string {
	def := f.Definition
	if def == nil || d.Type != "Node" || d.Scan == nil {
		return "field " + d.Type + "." + d.Name // not reached: TestEveryFieldPlanned
	}
	pf.scan, pf.desc, pf.NonNull = d.Scan, d, def.Type.NonNull
	pf.load = s.Loads
	s.Loads++
	if why := c.args(pf, d, f); why != "" {
		return why
	}
	conn := namedType(def.Type)
	pf.wanted = fields.PageInfoOf(c.oc, f, conn)
	var why string
	pf.Sel, why = c.sel(conn, f.Selections, &pf.slots, depth)
	return why
}

// nested compiles an object (or a list of objects) its parent holds:
// its selection is written as any object of its type, and the Nodes
// below it are its parent's slots (a connection's: [slot][edge]).
func (c *compiler) nested(pf *Field, d *fields.Desc, f graphql.CollectedField, slots *[]*Field, depth int) string {
	def := f.Definition
	if def == nil || d.Nested == nil {
		return "field " + d.Type + "." + d.Name // not reached: TestEveryFieldPlanned
	}
	pf.nested, pf.desc = d.Nested, d
	pf.NonNull, pf.list = def.Type.NonNull, def.Type.Elem != nil
	pf.elemNonNull = def.Type.Elem != nil && def.Type.Elem.NonNull
	var why string
	pf.Sel, why = c.sel(namedType(def.Type), f.Selections, slots, depth)
	return why
}

// entities compiles _entities, which the plan executes without a
// descriptor (kinds.go, handPlanned): each member of _Entity gets its
// selection.
func (c *compiler) entities(pf *Field, f graphql.CollectedField, depth int) string {
	pf.entity = true
	if d := f.Definition; d != nil {
		pf.NonNull = d.Type.NonNull
		pf.elemNonNull = d.Type.Elem != nil && d.Type.Elem.NonNull
	}
	pf.static = !hasVariable(f.Arguments)
	if pf.static {
		var err error
		if pf.args, err = convert(pf, f.ArgumentMap(nil)); err != nil {
			return "argument"
		}
	}
	for t, typ := range entityTypes {
		var why string
		var below *[]*Field
		if typ != "Node" {
			below = &pf.slots
		}
		if pf.entities[t], why = c.sel(typ, f.Selections, below, depth); why != "" {
			return why
		}
	}
	return ""
}

// nodeRead compiles a root field whose value is the Nodes its arguments
// name: one or a list, as its definition says.
func (c *compiler) nodeRead(pf *Field, d *fields.Desc, f graphql.CollectedField, depth int) string {
	def := f.Definition
	if def == nil || d.Nodes == nil {
		return "field " + d.Type + "." + d.Name // not reached: TestEveryFieldPlanned
	}
	pf.nodes, pf.desc = d.Nodes, d
	pf.NonNull, pf.list = def.Type.NonNull, def.Type.Elem != nil
	pf.elemNonNull = def.Type.Elem != nil && def.Type.Elem.NonNull
	if why := c.args(pf, d, f); why != "" {
		return why
	}
	var why string
	pf.Sel, why = c.sel("Node", f.Selections, nil, depth)
	return why
}

// namedType is the named type of t, through its lists.
func namedType(t *ast.Type) string {
	for t.Elem != nil {
		t = t.Elem
	}
	return t.NamedType
}

// hop compiles a field whose value is the Node its parent names, read in
// the next wave: its selection is a new level of the plan.
func (c *compiler) hop(pf *Field, d *fields.Desc, f graphql.CollectedField, depth int) string {
	def := f.Definition
	if def == nil || def.Type.Elem != nil || reflect.TypeOf(d.Hop) != reflect.TypeOf(fields.HopParentTypes[d.Type]) {
		// Not reached: TestEveryFieldPlanned checks each hop.
		return "field " + d.Type + "." + d.Name
	}
	pf.hop, pf.desc, pf.NonNull = d.Hop, d, def.Type.NonNull
	var why string
	pf.Sel, why = c.sel("Node", f.Selections, nil, depth)
	return why
}

func hasVariable(args ast.ArgumentList) bool {
	var has func(v *ast.Value) bool
	has = func(v *ast.Value) bool {
		if v == nil {
			return false
		}
		if v.Kind == ast.Variable {
			return true
		}
		for _, c := range v.Children {
			if has(c.Value) {
				return true
			}
		}
		return false
	}
	for _, a := range args {
		if has(a.Value) {
			return true
		}
	}
	return false
}

// quotedKey is `"alias":` as gqlgen writes a response key.
func quotedKey(alias string) []byte {
	return append(fields.AppendQuoted(nil, alias), ':')
}

// bind converts the arguments that read variables, once per request. An
// error means one does not convert: gqlgen then executes the operation and
// reports it its way.
func (p *Plan) bind(oc *graphql.OperationContext) ([]argVals, error) {
	if len(p.varFields) == 0 {
		return nil, nil
	}
	out := make([]argVals, len(p.varFields))
	for i, f := range p.varFields {
		var err error
		if out[i], err = convert(f, f.field.ArgumentMap(oc.Variables)); err != nil {
			return nil, err
		}
	}
	return out, nil
}
