package plan

import (
	"slices"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

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
type writer struct {
	args []argVals
	buf  []byte
	path ast.Path
	errs []error
}

// timeLayout is model.MarshalTime's: RFC 3339 in UTC with milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// root writes the data of the operation: null when a non-null root field
// failed.
func (w *writer) root(s *Sel, roots []rootVal) []byte {
	ok := true
	w.buf = append(w.buf, '{')
	for i := range s.Fields {
		f := &s.Fields[i]
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = append(w.buf, f.Key...)
		w.path = append(w.path[:0], ast.PathName(f.Alias))
		switch f.Kind {
		case KTypename:
			w.str(s.Type)
		case KQueryNode:
			mark := len(w.buf)
			if !w.rootNode(f, &roots[i]) {
				w.buf = append(w.buf[:mark], "null"...)
			}
		case KQueryNodes:
			if !w.rootNodes(f, &roots[i]) {
				ok = false
			}
		}
	}
	w.buf = append(w.buf, '}')
	if !ok {
		return []byte("null")
	}
	return w.buf
}

// fail reports a resolver's error on the field at the current path.
func (w *writer) fail(f *Field, err error) {
	e := gqlerror.WrapPath(slices.Clone(w.path), err)
	e.Locations = slices.Clone(f.Loc)
	if testBreak == "locations" {
		e.Locations = nil
	}
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
		if testBreak == "absent-node" {
			w.buf = append(w.buf, "{}"...)
			return true
		}
		w.buf = append(w.buf, "null"...)
		return true
	}
	return w.node(f.Sel, n.node)
}

// rootNodes writes nodes(ids:): [Node]!, an element null where there is
// no node.
func (w *writer) rootNodes(f *Field, v *rootVal) bool {
	if v.err != nil {
		w.fail(f, v.err)
		return false
	}
	w.buf = append(w.buf, '[')
	for j := range v.nodes {
		if j > 0 {
			w.buf = append(w.buf, ',')
		}
		w.path = append(w.path, ast.PathIndex(j))
		mark := len(w.buf)
		if n := v.nodes[j].node; n == nil || !w.node(f.Sel, n) {
			w.buf = append(w.buf[:mark], "null"...)
		}
		w.path = w.path[:len(w.path)-1]
	}
	w.buf = append(w.buf, ']')
	return true
}

// node writes a Node object.
func (w *writer) node(s *Sel, n *store.Node) bool {
	ok := true
	w.buf = append(w.buf, '{')
	for i := range s.Fields {
		f := &s.Fields[i]
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = append(w.buf, f.Key...)
		w.path = append(w.path, ast.PathName(f.Alias))
		switch f.Kind {
		case KTypename:
			if testBreak == "typename" {
				w.str("Query")
				break
			}
			w.str(s.Type)
		case KNodeID:
			w.str(n.ID)
		case KNodeProperties:
			w.buf = append(w.buf, n.Properties.JSON()...)
		case KNodeCreatedAt:
			w.time(n.Created)
		case KNodeUpdatedAt:
			w.time(n.Updated)
		}
		w.path = w.path[:len(w.path)-1]
	}
	w.buf = append(w.buf, '}')
	return ok
}

func (w *writer) str(s string) { w.buf = appendQuoted(w.buf, s) }

func (w *writer) time(t time.Time) {
	w.buf = append(w.buf, '"')
	w.buf = t.UTC().AppendFormat(w.buf, timeLayout)
	w.buf = append(w.buf, '"')
}

// appendQuoted appends s as a JSON string the way gqlgen v0.17.95 writes
// one (graphql/string.go, writeQuotedString): only '"', '\\' and control
// characters are escaped; invalid UTF-8 goes through unchanged.
func appendQuoted(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	start := 0
	for i, c := range s {
		if c < 0x20 && testBreak != "escape" || c == '\\' || c == '"' {
			b = append(b, s[start:i]...)
			switch c {
			case '\t':
				b = append(b, '\\', 't')
			case '\r':
				b = append(b, '\\', 'r')
			case '\n':
				b = append(b, '\\', 'n')
			case '\\', '"':
				b = append(b, '\\', byte(c))
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			start = i + 1
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// testBreak, set by TestDiffCatches only, breaks one rule of the writer
// so that the differential test can show it notices.
var testBreak string
