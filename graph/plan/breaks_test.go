package plan

import (
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/graph/fields"
	"github.com/hbgraph/hbgraph/store"
)

// brokenRules break one rule of the plan each, through the executor's
// hooks (hooks.go), so that TestDiffCatches can show the differential test
// notices: production code has no branch for any of them.
var brokenRules = map[string]func() *hooks{
	// __typename answers the root's type everywhere.
	"typename": func() *hooks {
		return &hooks{compiled: func(p *Plan) { eachSel(p.Root, func(s *Sel) { s.Type = "Query" }) }}
	},
	// Errors lose their locations.
	"locations": func() *hooks {
		return &hooks{compiled: func(p *Plan) { eachField(p.Root, func(f *Field) { f.Loc = nil }) }}
	},
	// Control characters are written raw in strings.
	"escape": func() *hooks {
		return &hooks{written: func(data []byte, errs []error) ([]byte, []error) { return unescapeControls(data), errs }}
	},
	// nodes(ids:) does not fail as a whole when one node failed.
	"nodes-errors": func() *hooks {
		return &hooks{fetched: func(r *runner) {
			for i := range r.roots {
				rv := &r.roots[i]
				if rv.f.nodes == nil || !rv.f.list || rv.err == nil {
					continue
				}
				for j := range rv.nodes {
					if rv.nodes[j].err == rv.err {
						rv.err = nil
						break
					}
				}
			}
		}}
	},
	// node(id:) of no node is an empty object, not null.
	"absent-node": func() *hooks {
		return &hooks{fetched: func(r *runner) {
			for i := range r.roots {
				rv := &r.roots[i]
				if rv.f.nodes != nil && !rv.f.list && rv.err == nil && rv.nodes[0].err == nil && rv.nodes[0].node == nil {
					rv.nodes[0].node = &store.Node{}
				}
			}
		}}
	},
	// A failed element of a [T!] list is null instead of failing the list.
	"propagation": func() *hooks {
		return &hooks{compiled: func(p *Plan) { eachField(p.Root, func(f *Field) { f.elemNonNull = false }) }}
	},
	// Every field is taken as nullable: a failed non-null field is null
	// where it fails instead of nulling its nearest nullable parent.
	"nullability": func() *hooks {
		return &hooks{compiled: func(p *Plan) { eachField(p.Root, func(f *Field) { f.NonNull = false }) }}
	},
	// Every connection reads its page's flags, selected or not.
	"lookahead": func() *hooks {
		return &hooks{compiled: func(p *Plan) { eachField(p.Root, func(f *Field) { f.wanted = fields.AllPageInfo }) }}
	},
	// totalCount is off by one.
	"total": func() *hooks {
		return &hooks{fetched: func(r *runner) {
			eachNode(r, func(v *nodeVal) {
				for i := range v.loads {
					for j := range v.loads[i].reads {
						if n, ok := v.loads[i].reads[j].val.(int64); ok {
							v.loads[i].reads[j].val = n + 1
						}
					}
				}
			})
		}}
	},
	// One plan serves every value of the variables @skip/@include read.
	"variants": func() *hooks {
		return &hooks{entry: func(e *entry) { e.condVars = nil }}
	},
	// Arguments ignore the request's variables (their defaults, if any).
	"variables": func() *hooks {
		return &hooks{compiled: func(p *Plan) {
			for _, f := range p.varFields {
				if a, err := convert(f, f.field.ArgumentMap(nil)); err == nil {
					f.static, f.args = true, a
				}
			}
		}}
	},
	// An entity's error is reported at ["_entities"], not ["_entities", i].
	"entity-path": func() *hooks {
		return &hooks{written: func(data []byte, errs []error) ([]byte, []error) {
			for _, err := range errs {
				if e, ok := err.(*gqlerror.Error); ok && len(e.Path) == 2 && len(e.Locations) == 0 {
					if _, index := e.Path[1].(ast.PathIndex); index {
						e.Path = e.Path[:1]
					}
				}
			}
			return data, errs
		}}
	},
	// Node.owner shows to everyone.
	"owner": func() *hooks {
		return &hooks{writing: func(w *writer) { w.caller = auth.Principal{Subject: "anyone", Admin: true} }}
	},
}

// eachSel calls fn on s and every selection below it.
func eachSel(s *Sel, fn func(*Sel)) {
	if s == nil {
		return
	}
	fn(s)
	for i := range s.Fields {
		f := &s.Fields[i]
		eachSel(f.Sel, fn)
		for _, es := range f.entities {
			eachSel(es, fn)
		}
	}
}

// eachField calls fn on every field of the plan below s.
func eachField(s *Sel, fn func(*Field)) {
	eachSel(s, func(s *Sel) {
		for i := range s.Fields {
			fn(&s.Fields[i])
		}
	})
}

// eachNode calls fn on every node a run fetched.
func eachNode(r *runner, fn func(*nodeVal)) {
	var node func(v *nodeVal)
	kids := func(ks [][]nodeVal) {
		for _, k := range ks {
			for i := range k {
				node(&k[i])
			}
		}
	}
	node = func(v *nodeVal) {
		fn(v)
		for i := range v.loads {
			kids(v.loads[i].kids)
		}
	}
	for i := range r.roots {
		rv := &r.roots[i]
		for j := range rv.nodes {
			node(&rv.nodes[j])
		}
		kids(rv.kids)
		for j := range rv.ents {
			node(&rv.ents[j].node)
		}
	}
}

// unescapeControls undoes the escaping of control characters in JSON
// strings (\n, \t, \r, \u00XX below 0x20), leaving every other escape.
func unescapeControls(b []byte) []byte {
	const hex = "0123456789ABCDEF"
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		switch c := b[i+1]; {
		case c == 'n':
			out = append(out, '\n')
		case c == 't':
			out = append(out, '\t')
		case c == 'r':
			out = append(out, '\r')
		case c == 'u' && i+5 < len(b) && b[i+2] == '0' && b[i+3] == '0' && b[i+4] <= '1':
			hi, lo := int(b[i+4]-'0'), indexByte(hex, b[i+5])
			out = append(out, byte(hi<<4|lo))
			i += 4
		default:
			out = append(out, '\\', c)
		}
		i++
	}
	return out
}

func indexByte(s string, c byte) int {
	for i := range len(s) {
		if s[i] == c {
			return i
		}
	}
	return 0
}
