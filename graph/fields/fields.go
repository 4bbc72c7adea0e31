// Package fields is the registry of the schema's fields: each field's
// behaviour declared once, for both executors. The plan (graph/plan)
// derives what it compiles and writes from a field's descriptor and its
// definition in the schema; the gqlgen resolvers (and the model's methods
// gqlgen calls) call the same descriptor.
//
// A descriptor is one of six kinds (docs/plan-design.md, "The field
// registry"): the projections, a field whose value is a function of its
// parent's value (the scalar fields of Node, Relationship, Article,
// WordCount, PageInfo, the edges' cursors); the store reads, rows read by
// key in the parent's wave (totalCount, wordCounts, the root relationship
// and article); the root reads of Nodes by id (node, nodes); the page
// scans, a connection's page (relationships, articles); the nested
// objects, an object the parent holds (a connection's edges and
// pageInfo, an edge's node); and the hops, a Node the parent names
// (startNode, endNode, author, neighbor). How to add one:
// docs/adding-a-field.md.
package fields

import (
	"github.com/hbgraph/hbgraph/auth"
)

// Kind is how a field gets its value.
type Kind uint8

const (
	// Projection: a function of the parent's value, nothing to read.
	Projection Kind = iota + 1
	// StoreRead: rows read by keys built from the parent and the
	// arguments, batched with the other reads of its wave (Read).
	StoreRead
	// PageScan: a connection's page scanned from the parent's id and the
	// page arguments, in the parent's wave (Scan).
	PageScan
	// Hop: a Node named by the parent, read in the next wave.
	Hop
	// NodeRead: root Nodes named by the arguments, read in the first
	// wave (NodesByID).
	NodeRead
	// Object: an object or a list of objects the parent holds (Nested).
	Object
)

// In is what a projection may read besides its parent: who asks (what
// the caller may see) and the field's arguments, decoded once by the
// descriptor's Args.
type In struct {
	Caller auth.Principal
	Args   any
}

// Desc describes one field of the schema.
type Desc struct {
	Type, Name string
	Kind       Kind
	// Scalar is the GraphQL scalar (or enum) a projection's values are
	// written as; a test checks it is the field's type in the schema.
	Scalar string
	// Args decodes the field's argument map (literals, variables and
	// defaults as gqlgen coerced them) into the typed value the field's
	// function receives as In.Args; nil when the field takes none. An
	// error is an argument gqlgen reports itself.
	Args func(m map[string]any) (any, error)
	// Leaf is a projection's writer: a *Leaf[P] for the Go type P the
	// executors hold the parent as (ParentTypes).
	Leaf any
	// Hop is a hop's *HopTo[P] (HopParentTypes).
	Hop any
	// Read is a store read's *ReadOf[P] (ReadParentTypes); Append writes
	// its value when it is a scalar (nil for objects).
	Read   any
	Append func(b []byte, v any) []byte
	// Scan is a page scan's *ScanOf[K, C].
	Scan any
	// Nested is an Object's *Nested[P, C].
	Nested any
	// Nodes is a NodeRead's definition.
	Nodes *NodesByID
}

// Leaf writes a projection's value for a parent of Go type P.
type Leaf[P any] struct {
	// Append appends the value of the field for parent p to b, written as
	// its scalar is; null when the value is null (nothing appended); err
	// when the field failed (nothing appended). A string of max bytes or
	// more is not appended either: need is its length, for the writer to
	// charge to the response (graph/shed) before it asks again with a
	// larger max, so that a large value over the limit is never copied.
	Append func(in In, p P, b []byte, max int) (out []byte, null bool, need int, err error)
	// Plain: Append reads neither In nor fails nor is null (most
	// fields): the writer passes an empty In.
	Plain bool
}

// Project is a projection's typed definition: the function from the
// parent to the value, and the scalar the value is written as.
type Project[P, V any] struct {
	Scalar Scalar[V]
	// Get is the field's value for p: ok false is null, err a failed field.
	Get func(in In, p P) (v V, ok bool, err error)
	// plain, when set, is Get for a field that reads nothing but its
	// parent and is never null: the leaf calls it directly (one call less
	// per row).
	plain func(p P) V
}

// Value is the field's value, for a resolver: nil when null.
func (d Project[P, V]) Value(in In, p P) (*V, error) {
	v, ok, err := d.Get(in, p)
	if err != nil || !ok {
		return nil, err
	}
	return &v, nil
}

// leaf erases V: what the plan calls per parent.
func (d Project[P, V]) leaf() *Leaf[P] {
	get, app, size := d.Get, d.Scalar.Append, d.Scalar.Len
	if l := d.plainString(); l != nil {
		return l
	}
	if plain := d.plain; plain != nil {
		return &Leaf[P]{Plain: true, Append: func(_ In, p P, b []byte, max int) ([]byte, bool, int, error) {
			v := plain(p)
			if size != nil {
				if n := size(v); n >= max {
					return b, false, n, nil
				}
			}
			return app(b, v), false, 0, nil
		}}
	}
	return &Leaf[P]{Append: func(in In, p P, b []byte, max int) ([]byte, bool, int, error) {
		v, ok, err := get(in, p)
		if err != nil || !ok {
			return b, true, 0, err
		}
		if size != nil {
			if n := size(v); n >= max {
				return b, false, n, nil
			}
		}
		return app(b, v), false, 0, nil
	}}
}

// plainString is the leaf of a plain String or ID field with its scalar's
// writing called directly, not through a func value: most fields are
// these, and each call per row counts (bench/RESULTS.md, issue 25).
func (d Project[P, V]) plainString() *Leaf[P] {
	plain, ok := any(d.plain).(func(P) string)
	if !ok || plain == nil || d.Scalar.Name != String.Name && d.Scalar.Name != ID.Name {
		return nil
	}
	return &Leaf[P]{Plain: true, Append: func(_ In, p P, b []byte, max int) ([]byte, bool, int, error) {
		v := plain(p)
		if len(v) >= max {
			return b, false, len(v), nil
		}
		return AppendQuoted(b, v), false, 0, nil
	}}
}

var registry = map[string]*Desc{}

// Lookup is the descriptor of typ.name, nil when it has none.
func Lookup(typ, name string) *Desc {
	return registry[typ+"."+name]
}

// All are the registered descriptors, by "Type.field".
func All() map[string]*Desc {
	return registry
}

// project registers a projection of typ.name.
func project[P, V any](typ, name string, d Project[P, V]) Project[P, V] {
	return projectArgs(typ, name, nil, d)
}

// projectArgs registers a projection taking arguments, decoded by args.
func projectArgs[P, V any](typ, name string, args func(map[string]any) (any, error), d Project[P, V]) Project[P, V] {
	register(&Desc{Type: typ, Name: name, Kind: Projection, Scalar: d.Scalar.Name, Args: args, Leaf: d.leaf()})
	return d
}

func register(d *Desc) {
	key := d.Type + "." + d.Name
	if registry[key] != nil {
		panic("fields: " + key + " registered twice")
	}
	registry[key] = d
}
