package plan

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/hbgraph/hbgraph/graph/fields"
	"github.com/hbgraph/hbgraph/graph/generated"
	"github.com/hbgraph/hbgraph/graph/resolvers"
)

// TestEveryFieldPlanned walks the executable schema: every field of every
// object type must have a descriptor (graph/fields), be planned (kinds) or
// be explicitly left to gqlgen (fallbackTypes, fallbackFields), and
// neither may name anything the schema lacks; each descriptor must fit
// the field's definition. A field added to the schema fails here until it is one or
// the other.
func TestEveryFieldPlanned(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &resolvers.Resolver{}}).Schema()
	checkPlanned(t, schema)
}

// reporter is the part of testing.T checkPlanned uses.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

func checkPlanned(t reporter, schema *ast.Schema) {
	t.Helper()
	seen := map[string]bool{}
	for name, def := range schema.Types {
		if def.Kind != ast.Object || strings.HasPrefix(name, "__") || fallbackTypes[name] {
			continue
		}
		for _, f := range def.Fields {
			key := name + "." + f.Name
			_, planned := handPlanned[key]
			if d := fields.Lookup(name, f.Name); d != nil {
				if planned {
					t.Errorf("%s is both in handPlanned and in graph/fields", key)
				}
				seen[key] = true
				if fallbackFields[key] {
					t.Errorf("%s is both planned and left to gqlgen", key)
				}
				checkDescriptor(t, schema, d, f)
				continue
			}
			switch {
			case planned && fallbackFields[key]:
				t.Errorf("%s is both planned and left to gqlgen", key)
			case !planned && !fallbackFields[key]:
				t.Errorf("%s has no descriptor in graph/fields and is not in fallbackFields: describe it, or list it as a fallback", key)
			case planned:
				seen[key] = true
			}
		}
	}
	union := schema.Types["_Entity"]
	if union == nil || len(union.Types) != len(entityTypes) {
		t.Errorf("_Entity is %v, the plan knows %v", union, entityTypes)
	} else {
		for _, typ := range entityTypes {
			if !slices.Contains(union.Types, typ) {
				t.Errorf("_Entity has no %s", typ)
			}
		}
	}
	for key := range fields.All() {
		if !seen[key] {
			t.Errorf("graph/fields describes %s, which the schema does not have", key)
		}
	}
	for key := range handPlanned {
		if !seen[key] {
			t.Errorf("handPlanned names %s, which the schema does not have", key)
		}
	}
	for key := range fallbackFields {
		typ, field, _ := strings.Cut(key, ".")
		if def := schema.Types[typ]; def == nil || def.Fields.ForName(field) == nil {
			t.Errorf("fallbackFields names %s, which the schema does not have", key)
		}
	}
}

// checkDescriptor checks a projection against the field's definition: a
// scalar or enum, not a list, written as the scalar the schema names, of
// a parent held as the plan holds its type's objects.
// checkNested checks a nested object: an object type, a list iff the
// descriptor has a Len, of a parent and a child held as the plan holds
// their types (fields.ParentTypes), the child a type nested writes.
func checkNested(t reporter, schema *ast.Schema, d *fields.Desc, f *ast.FieldDefinition) {
	t.Helper()
	key := d.Type + "." + d.Name
	child := namedType(f.Type)
	if def := schema.Types[child]; def == nil || def.Kind != ast.Object {
		t.Errorf("%s is a %s: a nested object is an object", key, f.Type)
		return
	}
	v := reflect.ValueOf(d.Nested)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		t.Errorf("%s: nested is a %T", key, d.Nested)
		return
	}
	if v.Elem().FieldByName("Len").IsNil() != (f.Type.Elem == nil) {
		t.Errorf("%s is a %s: a list iff its descriptor has a Len", key, f.Type)
	}
	at := v.Elem().FieldByName("At").Type()
	held := func(typ string) reflect.Type { // P of the *Leaf[P] ParentTypes names
		if l := fields.ParentTypes[typ]; l != nil {
			return reflect.TypeOf(l).Elem().Field(0).Type.In(1)
		}
		return nil
	}
	if at.In(0) != held(d.Type) || at.Out(0) != held(child) {
		t.Errorf("%s: nested from %v to %v, the plan holds %s as %v and %s as %v", key, at.In(0), at.Out(0), d.Type, held(d.Type), child, held(child))
	}
	if !slices.ContainsFunc(nestedChildren, func(c any) bool { return reflect.TypeOf(c) == at.Out(0) }) {
		t.Errorf("%s: a nested %v, which the writer does not write (nested)", key, at.Out(0))
	}
}

func checkDescriptor(t reporter, schema *ast.Schema, d *fields.Desc, f *ast.FieldDefinition) {
	t.Helper()
	key := d.Type + "." + d.Name
	if d.Kind == fields.Hop {
		if f.Type.Elem != nil || namedType(f.Type) != "Node" {
			t.Errorf("%s is a %s: a hop names one Node", key, f.Type)
		}
		if want := fields.HopParentTypes[d.Type]; reflect.TypeOf(d.Hop) != reflect.TypeOf(want) {
			t.Errorf("%s's hop is a %T, the plan holds %s as %T", key, d.Hop, d.Type, want)
		}
		if len(f.Arguments) > 0 {
			t.Errorf("%s: a hop takes no arguments", key)
		}
		return
	}
	if (len(f.Arguments) > 0) != (d.Args != nil) {
		t.Errorf("%s: the schema gives it %d arguments, the descriptor decodes %v", key, len(f.Arguments), d.Args != nil)
	}
	named := schema.Types[namedType(f.Type)]
	switch d.Kind {
	case fields.StoreRead:
		if want := fields.ReadParentTypes[d.Type]; reflect.TypeOf(d.Read) != reflect.TypeOf(want) {
			t.Errorf("%s's read is a %T, the plan holds %s as %T", key, d.Read, d.Type, want)
		}
		scalar := named != nil && (named.Kind == ast.Scalar || named.Kind == ast.Enum)
		switch {
		case scalar && (d.Append == nil || d.Scalar != named.Name || f.Type.Elem != nil):
			t.Errorf("%s is a %s: a read of a scalar writes it as one (it says %q)", key, f.Type, d.Scalar)
		case !scalar && d.Append != nil:
			t.Errorf("%s is a %s: a read of an object writes no scalar", key, f.Type)
		}
		return
	case fields.NodeRead:
		if d.Type != "Query" || namedType(f.Type) != "Node" || d.Nodes == nil || d.Nodes.Whole && f.Type.Elem == nil {
			t.Errorf("%s is a %s: a root read of Nodes names Nodes (and only a list fails whole)", key, f.Type)
		}
		return
	case fields.PageScan:
		if d.Type != "Node" || f.Type.Elem != nil || named == nil || named.Kind != ast.Object {
			t.Errorf("%s is a %s: a page scan is a connection of Node", key, f.Type)
		}
		if !slices.ContainsFunc(scanTypes, func(s any) bool { return reflect.TypeOf(s) == reflect.TypeOf(d.Scan) }) {
			t.Errorf("%s scans with a %T, a store read the runner does not know (scanTypes)", key, d.Scan)
		}
		if a, err := d.Args(map[string]any{}); err != nil {
			t.Errorf("%s: its arguments do not decode from none: %v", key, err)
		} else if _, ok := a.(fields.Sized); !ok {
			t.Errorf("%s: its arguments (%T) tell no page size: limits cannot price it", key, a)
		}
		return
	case fields.Object:
		checkNested(t, schema, d, f)
		return
	case fields.Projection:
	default:
		t.Errorf("%s: a descriptor of kind %d the plan does not know", key, d.Kind)
		return
	}
	if f.Type.Elem != nil {
		t.Errorf("%s is a list: a projection writes one value", key)
	}
	switch {
	case named == nil || named.Kind != ast.Scalar && named.Kind != ast.Enum:
		t.Errorf("%s is a %s, not a scalar or an enum: not a projection", key, namedType(f.Type))
	case named.Kind == ast.Scalar && d.Scalar != named.Name:
		t.Errorf("%s is written as a %s, the schema says %s", key, d.Scalar, named.Name)
	}
	if want := fields.ParentTypes[d.Type]; reflect.TypeOf(d.Leaf) != reflect.TypeOf(want) {
		t.Errorf("%s's leaf is a %T, the plan holds %s as %T", key, d.Leaf, d.Type, want)
	}
}

// TestEveryFieldPlannedCanFail: a schema with a field the table lacks, and
// the table naming a field the schema lacks, both fail the check.
func TestEveryFieldPlannedCanFail(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &resolvers.Resolver{}}).Schema()
	node := schema.Types["Node"]
	saved := node.Fields
	node.Fields = append(append(ast.FieldList{}, saved...), &ast.FieldDefinition{Name: "nickname", Type: ast.NamedType("String", nil)})
	defer func() { node.Fields = saved }()
	ft := &fakeT{}
	checkPlanned(ft, schema)
	if len(ft.errs) != 1 || !strings.Contains(ft.errs[0], "Node.nickname") {
		t.Errorf("a new field: %q", ft.errs)
	}
	node.Fields = slices.DeleteFunc(slices.Clone(saved), func(f *ast.FieldDefinition) bool { return f.Name == "wordCounts" })
	ft = &fakeT{}
	checkPlanned(ft, schema)
	if len(ft.errs) != 1 || !strings.Contains(ft.errs[0], "Node.wordCounts") {
		t.Errorf("a field gone: %q", ft.errs)
	}
}

type fakeT struct{ errs []string }

func (*fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
