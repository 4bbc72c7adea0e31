package plan

import (
	"context"
	"errors"
	"math"
	"slices"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/graph/fetchkeys"
	"github.com/hbgraph/hbgraph/graph/fields"
	"github.com/hbgraph/hbgraph/graph/shed"
	"github.com/hbgraph/hbgraph/store"
)

// writer writes a plan's response in one depth-first pass into one
// buffer, as gqlgen would have written it, and collects the errors gqlgen
// would have reported, in document order.
//
// Null propagation: a write method returns false when the value it had to
// write is null but its type is non-null (after reporting why); the caller
// then fails too if its own type is non-null, or truncates what it wrote
// and writes null. Siblings and list elements are written (and their
// errors reported) even after one failed, as gqlgen runs them all.
//
// The bytes written are charged to the request's response as they are
// written (shed.Charge), every accountStep and before a large string; once
// the response is refused (too large, or shed), refused is set and the
// writer stops: every object and list ends at once, and the response is
// the refusal alone.
type writer struct {
	ctx     context.Context
	charged int // bytes of buf charged to the response
	refused *gqlerror.Error

	// caller decides what Node.owner shows.
	caller auth.Principal
	args   []argVals
	buf    []byte
	path   ast.Path
	errs   []error
}

// root writes the data of the operation: null when a non-null root field
// failed.
func (w *writer) root(s *Sel, roots []rootVal) []byte {
	ok := true
	w.buf = append(w.buf, '{')
	for i := range s.Fields {
		if w.full() {
			break
		}
		f := &s.Fields[i]
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = append(w.buf, f.Key...)
		w.path = append(w.path[:0], f.pathName)
		if f.typename {
			w.typename(s)
			continue
		}
		mark := len(w.buf)
		ok = w.settle(f, mark, w.rootField(f, &roots[i])) && ok
	}
	w.buf = append(w.buf, '}')
	if !ok { // a non-null root field failed: data is null
		return []byte("null")
	}
	return w.buf
}

// rootField writes root field f's value: false when it is null for a
// reason already reported (or a non-null value below it failed).
func (w *writer) rootField(f *Field, v *rootVal) bool {
	switch {
	case f.nodes != nil && f.list:
		return w.rootNodes(f, v)
	case f.nodes != nil:
		return w.rootNode(f, v)
	case f.read != nil:
		return w.stored(f, &v.read, v.kids, 0)
	}
	return w.entities(f, v)
}

// settle applies gqlgen's rule for a field whose value was written from
// mark: when it failed (false), a nullable field is null (the null
// stops there) and a non-null one fails its parent in turn.
func (w *writer) settle(f *Field, mark int, ok bool) bool {
	if ok {
		return true
	}
	if f.NonNull {
		return false
	}
	w.buf = append(w.buf[:mark], "null"...)
	return true
}

// absent writes a value that is not there, without an error of its own:
// null where the schema allows it (nonNull false), else gqlgen's error
// for a null in a non-null position, and the position fails.
func (w *writer) absent(nonNull bool) bool {
	if nonNull {
		w.errs = append(w.errs, gqlerror.WrapPath(slices.Clone(w.path), errNull))
		return false
	}
	w.buf = append(w.buf, "null"...)
	return true
}

// accountStep is how much the buffer grows between two charges.
const accountStep = 64 << 10

// full charges what was written since the last charge, once it is
// accountStep or more, and reports whether the response was refused.
func (w *writer) full() bool {
	if w.refused == nil && len(w.buf)-w.charged >= accountStep {
		w.refused = shed.Charge(w.ctx, int64(len(w.buf)-w.charged))
		w.charged = len(w.buf)
	}
	return w.refused != nil
}

// reserve charges n bytes about to be written, with what was written since
// the last charge, and reports whether the response was refused.
func (w *writer) reserve(n int) bool {
	if w.refused == nil {
		w.refused = shed.Charge(w.ctx, int64(len(w.buf)-w.charged+n))
		w.charged = len(w.buf) + n
	}
	return w.refused != nil
}

// fail reports a resolver's error on the field at the current path.
func (w *writer) fail(f *Field, err error) {
	e := gqlerror.WrapPath(slices.Clone(w.path), err)
	e.Locations = slices.Clone(f.Loc)
	w.errs = append(w.errs, e)
}

func (w *writer) rootNode(f *Field, v *rootVal) bool {
	if v.err != nil {
		w.fail(f, v.err)
		return false
	}
	n := &v.nodes[0]
	if n.err != nil {
		w.fail(f, n.err)
		return false
	}
	if n.node == nil {
		return w.absent(f.NonNull)
	}
	return w.node(f.Sel, n)
}

// rootNodes writes nodes(ids:), a list of nodes in the order of the ids
// (an element absent where there is no node): it fails as a whole when
// one node failed (run.go's failLists).
func (w *writer) rootNodes(f *Field, v *rootVal) bool {
	if v.err != nil {
		w.fail(f, v.err)
		return false
	}
	return w.list(f, len(v.nodes), func(j int) bool {
		if n := &v.nodes[j]; n.node != nil {
			return w.node(f.Sel, n)
		}
		return w.absent(f.elemNonNull)
	})
}

// stored writes a store read's value as the field's definition says: a
// scalar by its descriptor, an object or a list of objects by the
// value's Go type (the objects the plan writes); absent when there is
// none. kids[slot][e] are the nodes its hops name.
func (w *writer) stored(f *Field, v *readVal, kids [][]nodeVal, e int) bool {
	if v.err != nil {
		w.fail(f, v.err)
		return false
	}
	switch x := v.val.(type) {
	case *store.Relationship:
		if x != nil {
			return w.relationship(f.Sel, x, kids, e)
		}
	case *store.Article:
		if x != nil {
			return w.article(f.Sel, x, kids, e)
		}
	case []store.WordCount:
		return w.list(f, len(x), func(i int) bool { return object(w, f.Sel, &x[i], nil, 0, nil) })
	default:
		if x != nil && f.desc.Append != nil {
			w.buf = f.desc.Append(w.buf, x)
			return true
		}
	}
	return w.absent(f.NonNull)
}

// entities writes _entities, one element per representation, absent
// where its entity is. An entity resolver's error is reported at
// ["_entities", i], without locations, as gqlgen's federation code does.
func (w *writer) entities(f *Field, v *rootVal) bool {
	return w.list(f, len(v.ents), func(i int) bool {
		e := &v.ents[i]
		err := e.err
		if entityTypes[e.typ] == "Node" {
			err = e.node.err
		}
		switch {
		case err != nil:
			w.errs = append(w.errs, gqlerror.WrapPath(slices.Clone(w.path), err))
			return false
		case e.node.node != nil:
			return w.node(f.entities[e.typ], &e.node)
		case e.rel != nil:
			return w.relationship(f.entities[e.typ], e.rel, v.kids, i)
		case e.art != nil:
			return w.article(f.entities[e.typ], e.art, v.kids, i)
		}
		return w.absent(f.elemNonNull)
	})
}

// open starts an object's field: the separator, the key, the path.
func (w *writer) open(i int, f *Field) {
	if i > 0 {
		w.buf = append(w.buf, ',')
	}
	w.buf = append(w.buf, f.Key...)
	w.path = append(w.path, f.pathName)
}

func (w *writer) close() { w.path = w.path[:len(w.path)-1] }

// typename writes __typename.
func (w *writer) typename(s *Sel) {
	w.str(s.Type)
}

// node writes a Node object: its store reads and page scans are in its
// loads.
func (w *writer) node(s *Sel, v *nodeVal) bool {
	return object(w, s, v.node, nil, 0, func(f *Field) bool {
		l := &v.loads[f.load]
		switch {
		case f.read != nil:
			return w.stored(f, &l.readVal, nil, 0)
		case l.err != nil:
			w.fail(f, l.err)
			return false
		}
		return l.page.write(w, f, l)
	})
}

// connection writes a page scan's connection, held as a P: its nested
// objects (edges, pageInfo) and its own reads (totalCount).
func connection[P any](w *writer, f *Field, l *loadVal, p P) bool {
	return object(w, f.Sel, p, l.kids, 0, func(cf *Field) bool { return w.stored(cf, &l.reads[cf.load], nil, 0) })
}

// object writes s's fields, of an object held as a P, as a JSON object:
// __typename itself, projections by their descriptors (project), nested
// objects by theirs (nested), hops as the nodes kids[slot][e] (endpoint),
// the object's store reads and scans through loaded, which reports false
// when the field's value failed; settle then applies the field's
// nullability from its definition. object reports false when a non-null
// field failed: the object is then null, or fails its own parent.
func object[P any](w *writer, s *Sel, p P, kids [][]nodeVal, e int, loaded func(f *Field) bool) bool {
	ok := true
	w.buf = append(w.buf, '{')
	for i := range s.Fields {
		if w.full() {
			break
		}
		f := &s.Fields[i]
		w.open(i, f)
		switch {
		case f.typename:
			w.typename(s)
		case f.leaf != nil:
			ok = project(w, f, f.leaf.(*fields.Leaf[P]), p) && ok
		default:
			mark := len(w.buf)
			var fok bool
			switch {
			case f.hop != nil:
				fok = w.endpoint(f, kids, e)
			case f.nested != nil:
				fok = nested(w, f, p, kids, e)
			default:
				fok = loaded(f)
			}
			ok = w.settle(f, mark, fok) && ok
		}
		w.close()
	}
	w.buf = append(w.buf, '}')
	return ok
}

// nested writes nested object f of parent p (fields.Nested): one object,
// or a list of them, as the field's definition says. The child's Go type
// decides which object writer writes it: those are the types the plan
// holds objects as (fields.ParentTypes), checked by TestEveryFieldPlanned
// (nestedTypes). kids[slot][e] are the nodes the hops below name, by
// edge: a list's elements are its edges.
func nested[P any](w *writer, f *Field, p P, kids [][]nodeVal, e int) bool {
	switch n := f.nested.(type) {
	case *fields.Nested[P, fields.RelEdge]:
		return nestedOf(w, f, n, p, kids, e)
	case *fields.Nested[P, fields.ArtEdge]:
		return nestedOf(w, f, n, p, kids, e)
	case *fields.Nested[P, fields.Page]:
		return nestedOf(w, f, n, p, kids, e)
	case *fields.Nested[P, *store.Relationship]:
		return nestedOf(w, f, n, p, kids, e)
	case *fields.Nested[P, *store.Article]:
		return nestedOf(w, f, n, p, kids, e)
	}
	panic("plan: a nested object of a type it does not write: " + f.desc.Type + "." + f.desc.Name) // TestEveryFieldPlanned
}

// nestedChildren are the child types nested's cases write, for
// TestEveryFieldPlanned.
var nestedChildren = []any{fields.RelEdge{}, fields.ArtEdge{}, fields.Page{}, (*store.Relationship)(nil), (*store.Article)(nil)}

func nestedOf[P, C any](w *writer, f *Field, n *fields.Nested[P, C], p P, kids [][]nodeVal, e int) bool {
	if n.Len == nil {
		return object(w, f.Sel, n.At(p, 0), kids, e, nil)
	}
	return w.list(f, n.Len(p), func(i int) bool { return object(w, f.Sel, n.At(p, i), kids, i, nil) })
}

// project writes projection f of parent p, by its descriptor's leaf, with
// gqlgen's rules for its value: a failed field is null with its error; a
// null in a non-null field fails it (and the nearest nullable parent is
// null), as gqlgen's marshallers do.
func project[P any](w *writer, f *Field, l *fields.Leaf[P], p P) bool {
	mark := len(w.buf)
	var in fields.In
	if !l.Plain {
		in.Caller = w.caller
		if f.desc.Args != nil {
			in.Args = argsOf(f, w.args).proj
		}
	}
	b, null, need, err := l.Append(in, p, w.buf, largeString)
	if need > 0 { // a large string: charged before it is copied
		if w.reserve(need + 2) {
			return true // refused: the writer stops, the response is the refusal
		}
		b, null, _, err = l.Append(in, p, w.buf, math.MaxInt)
	}
	w.buf = b
	switch {
	case err != nil:
		w.buf = w.buf[:mark]
		w.fail(f, err)
		return w.settle(f, mark, false)
	case null:
		return w.absent(f.NonNull)
	}
	return true
}

// errNull is gqlgen's error for a null in a non-null field that reported
// none (its marshalNX functions).
var errNull = errors.New("the requested element is null which the schema does not allow")

// endpoint writes a hop's node (neighbor, startNode, endNode, author),
// read in the wave after its parent's: the field fails when it does not
// exist (NOT_FOUND), as the resolvers' endpoint.
func (w *writer) endpoint(f *Field, kids [][]nodeVal, e int) bool {
	k := &kids[f.slot][e]
	switch {
	case k.err != nil:
		w.fail(f, k.err)
		return false
	case k.node == nil:
		w.fail(f, fetchkeys.MissingEndpoint(k.id))
		return false
	}
	return w.node(f.Sel, k)
}

// list writes the n elements of list field f: a failed element fails the
// list when they are non-null ([T!]), else it is null ([T]).
func (w *writer) list(f *Field, n int, elem func(e int) bool) bool {
	ok := true
	w.buf = append(w.buf, '[')
	for e := range n {
		if w.full() {
			break
		}
		if e > 0 {
			w.buf = append(w.buf, ',')
		}
		w.path = append(w.path, ast.PathIndex(e))
		mark := len(w.buf)
		if !elem(e) {
			if f.elemNonNull {
				ok = false
			} else {
				w.buf = append(w.buf[:mark], "null"...)
			}
		}
		w.path = w.path[:len(w.path)-1]
	}
	w.buf = append(w.buf, ']')
	return ok
}

func (w *writer) relationship(s *Sel, rel *store.Relationship, kids [][]nodeVal, e int) bool {
	return object(w, s, rel, kids, e, nil)
}

func (w *writer) article(s *Sel, a *store.Article, kids [][]nodeVal, e int) bool {
	return object(w, s, a, kids, e, nil)
}

// largeString is the length from which a string is charged before it is
// written: a 1 MiB body over the limit is never copied.
const largeString = 4 << 10

func (w *writer) str(s string) {
	if len(s) >= largeString && w.reserve(len(s)+2) {
		return
	}
	w.buf = fields.AppendQuoted(w.buf, s)
}
