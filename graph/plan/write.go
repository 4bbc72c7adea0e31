package plan

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/graph/fetchkeys"
	"github.com/hbgraph/hbgraph/graph/model"
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

// timeLayout is model.MarshalTime's: RFC 3339 in UTC with milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

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
		switch f.Kind {
		case KTypename:
			w.typename(s)
		case KQueryNode:
			mark := len(w.buf)
			if !w.rootNode(f, &roots[i]) {
				w.buf = append(w.buf[:mark], "null"...)
			}
		case KQueryNodes:
			if !w.rootNodes(f, &roots[i]) {
				ok = false
			}
		case KQueryEntities:
			w.entities(f, &roots[i])
		case KQueryRelationship, KQueryArticle:
			mark := len(w.buf)
			if !w.rootRow(f, &roots[i]) {
				w.buf = append(w.buf[:mark], "null"...)
			}
		}
	}
	w.buf = append(w.buf, '}')
	if !ok {
		return []byte("null")
	}
	return w.buf
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
		w.buf = append(w.buf, "null"...)
		return true
	}
	return w.node(f.Sel, n)
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
		if w.full() {
			break
		}
		if j > 0 {
			w.buf = append(w.buf, ',')
		}
		w.path = append(w.path, ast.PathIndex(j))
		mark := len(w.buf)
		if n := &v.nodes[j]; n.node == nil || !w.node(f.Sel, n) {
			w.buf = append(w.buf[:mark], "null"...)
		}
		w.path = w.path[:len(w.path)-1]
	}
	w.buf = append(w.buf, ']')
	return true
}

// rootRow writes relationship(...) or article(id:): null when there is
// none, or it failed.
func (w *writer) rootRow(f *Field, v *rootVal) bool {
	switch {
	case v.err != nil:
		w.fail(f, v.err)
		return false
	case v.rel != nil:
		return w.relationship(f.Sel, v.rel, v.kids, 0)
	case v.art != nil:
		return w.article(f.Sel, v.art, v.kids, 0)
	}
	w.buf = append(w.buf, "null"...)
	return true
}

// entities writes _entities: [_Entity]!, an element null where its
// entity is absent or failed. An entity resolver's error is reported at
// ["_entities", i], without locations, as gqlgen's federation code does.
func (w *writer) entities(f *Field, v *rootVal) {
	w.buf = append(w.buf, '[')
	for i := range v.ents {
		if w.full() {
			break
		}
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.path = append(w.path, ast.PathIndex(i))
		e := &v.ents[i]
		err := e.err
		if entityTypes[e.typ] == "Node" {
			err = e.node.err
		}
		mark := len(w.buf)
		ok := false
		switch {
		case err != nil:
			w.errs = append(w.errs, gqlerror.WrapPath(slices.Clone(w.path), err))
		case e.node.node != nil:
			ok = w.node(f.entities[e.typ], &e.node)
		case e.rel != nil:
			ok = w.relationship(f.entities[e.typ], e.rel, v.kids, i)
		case e.art != nil:
			ok = w.article(f.entities[e.typ], e.art, v.kids, i)
		}
		if !ok {
			w.buf = append(w.buf[:mark], "null"...)
		}
		w.path = w.path[:len(w.path)-1]
	}
	w.buf = append(w.buf, ']')
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

// node writes a Node object.
func (w *writer) node(s *Sel, v *nodeVal) bool {
	n := v.node
	return w.object(s, func(f *Field) bool {
		switch f.Kind {
		case KNodeID:
			w.str(n.ID)
		case KNodeOwner:
			// As the resolver does: only its owner and admins see it.
			if n.Owner == "" || !auth.MaySeeOwner(w.caller, n.Owner) {
				w.buf = append(w.buf, "null"...)
			} else {
				w.str(n.Owner)
			}
		case KNodeProperties:
			w.buf = append(w.buf, n.Properties.JSON()...)
		case KNodeProperty:
			w.property(f, n.Properties)
		case KNodeCreatedAt:
			w.time(n.Created)
		case KNodeUpdatedAt:
			w.time(n.Updated)
		case KNodeRelationships:
			return w.relConn(f, &v.loads[f.load])
		case KNodeArticles:
			return w.artConn(f, &v.loads[f.load])
		case KNodeWordCounts:
			return w.wordCounts(f, &v.loads[f.load])
		}
		return true
	})
}

// object writes s's fields as a JSON object: __typename itself, every other
// field through field, which reports false when it failed a non-null
// field (the object is then null, written so by the nullable field above
// it).
func (w *writer) object(s *Sel, field func(f *Field) bool) bool {
	ok := true
	w.buf = append(w.buf, '{')
	for i := range s.Fields {
		if w.full() {
			break
		}
		f := &s.Fields[i]
		w.open(i, f)
		if f.Kind == KTypename {
			w.typename(s)
		} else {
			ok = field(f) && ok
		}
		w.close()
	}
	w.buf = append(w.buf, '}')
	return ok
}

// property writes property(name:): JSON, null when absent or failed.
func (w *writer) property(f *Field, props store.PropertySet) {
	v, err := props.Get(argsOf(f, w.args).name)
	switch {
	case err != nil:
		w.fail(f, err)
		w.buf = append(w.buf, "null"...)
	case v == nil:
		w.buf = append(w.buf, "null"...)
	default:
		model.MarshalJSON(v).MarshalGQL(appender{w})
	}
}

// appender lets a gqlgen Marshaler write into the buffer.
type appender struct{ w *writer }

func (a appender) Write(p []byte) (int, error) {
	a.w.buf = append(a.w.buf, p...)
	return len(p), nil
}

func (w *writer) wordCounts(f *Field, l *loadVal) bool {
	if l.err != nil {
		w.fail(f, l.err)
		return false
	}
	w.buf = append(w.buf, '[')
	for e := range l.words {
		if w.full() {
			break
		}
		if e > 0 {
			w.buf = append(w.buf, ',')
		}
		w.path = append(w.path, ast.PathIndex(e))
		w.object(f.Sel, func(cf *Field) bool {
			switch cf.Kind {
			case KWordWord:
				w.str(l.words[e].Word)
			case KWordCount:
				w.buf = strconv.AppendInt(w.buf, l.words[e].Count, 10)
			}
			return true
		})
		w.path = w.path[:len(w.path)-1]
	}
	w.buf = append(w.buf, ']')
	return true
}

// endpoint writes a node that must exist: neighbor, startNode, endNode,
// author.
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

func (w *writer) relConn(f *Field, l *loadVal) bool {
	if l.err != nil {
		w.fail(f, l.err)
		return false
	}
	return w.object(f.Sel, func(cf *Field) bool {
		switch cf.Kind {
		case KRelConnEdges:
			return w.list(cf, len(l.rels.Relationships), func(e int) bool { return w.relEdge(cf.Sel, l, e) })
		case KRelConnPageInfo:
			w.pageInfo(cf.Sel, l.rels.Cursors, l.rels.PageInfo)
		case KRelConnTotalCount:
			return w.total(cf, l)
		}
		return true
	})
}

func (w *writer) total(f *Field, l *loadVal) bool {
	if l.totalErr != nil {
		w.fail(f, l.totalErr)
		return false
	}
	w.buf = strconv.AppendInt(w.buf, int64(int(l.total)), 10)
	return true
}

func (w *writer) relEdge(s *Sel, l *loadVal, e int) bool {
	return w.object(s, func(f *Field) bool {
		switch f.Kind {
		case KRelEdgeCursor:
			w.str(l.rels.Cursors.At(e))
		case KRelEdgeNode:
			return w.relationship(f.Sel, &l.rels.Relationships[e], l.kids, e)
		case KRelEdgeNeighbor:
			return w.endpoint(f, l.kids, e)
		}
		return true
	})
}

func (w *writer) relationship(s *Sel, rel *store.Relationship, kids [][]nodeVal, e int) bool {
	return w.object(s, func(f *Field) bool {
		switch f.Kind {
		case KRelID:
			w.str(rel.Key().ID())
		case KRelType:
			w.str(rel.Type)
		case KRelStartNode, KRelEndNode:
			return w.endpoint(f, kids, e)
		case KRelProperties:
			w.buf = append(w.buf, rel.Properties.JSON()...)
		case KRelCreatedAt:
			w.time(rel.Created)
		case KRelUpdatedAt:
			w.time(rel.Updated)
		}
		return true
	})
}

func (w *writer) artConn(f *Field, l *loadVal) bool {
	if l.err != nil {
		w.fail(f, l.err)
		return false
	}
	return w.object(f.Sel, func(cf *Field) bool {
		switch cf.Kind {
		case KArtConnEdges:
			return w.list(cf, len(l.arts.Articles), func(e int) bool { return w.artEdge(cf.Sel, l, e) })
		case KArtConnPageInfo:
			w.pageInfo(cf.Sel, l.arts.Cursors, l.arts.PageInfo)
		case KArtConnTotalCount:
			return w.total(cf, l)
		}
		return true
	})
}

func (w *writer) artEdge(s *Sel, l *loadVal, e int) bool {
	return w.object(s, func(f *Field) bool {
		switch f.Kind {
		case KArtEdgeCursor:
			w.str(l.arts.Cursors.At(e))
		case KArtEdgeNode:
			return w.article(f.Sel, &l.arts.Articles[e], l.kids, e)
		}
		return true
	})
}

func (w *writer) article(s *Sel, a *store.Article, kids [][]nodeVal, e int) bool {
	return w.object(s, func(f *Field) bool {
		switch f.Kind {
		case KArticleID:
			w.str(a.ID)
		case KArticleAuthor:
			return w.endpoint(f, kids, e)
		case KArticleTitle:
			w.str(a.Title)
		case KArticleBody:
			w.str(a.Body)
		case KArticleCategory:
			w.str(a.Category)
		case KArticlePostedAt:
			w.time(a.Posted)
		case KArticleUpdatedAt:
			w.time(a.Updated)
		}
		return true
	})
}

// pageInfo writes a PageInfo as fetchkeys.PageInfo has it, making only
// the cursors selected.
func (w *writer) pageInfo(s *Sel, cursors store.Cursors, info store.PageInfo) {
	cursor := func(i int) {
		if cursors.Len() == 0 {
			w.buf = append(w.buf, "null"...)
			return
		}
		w.str(cursors.At(i))
	}
	w.object(s, func(f *Field) bool {
		switch f.Kind {
		case KPageHasNext:
			w.buf = strconv.AppendBool(w.buf, info.HasNext)
		case KPageHasPrevious:
			w.buf = strconv.AppendBool(w.buf, info.HasPrevious)
		case KPageStartCursor:
			cursor(0)
		case KPageEndCursor:
			cursor(cursors.Len() - 1)
		}
		return true
	})
}

// largeString is the length from which a string is charged before it is
// written: a 1 MiB body over the limit is never copied.
const largeString = 4 << 10

func (w *writer) str(s string) {
	if len(s) >= largeString && w.reserve(len(s)+2) {
		return
	}
	w.buf = appendQuoted(w.buf, s)
}

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
		if c < 0x20 || c == '\\' || c == '"' {
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
