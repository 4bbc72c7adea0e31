package plan

import (
	"context"

	"github.com/hbgraph/hbgraph/graph/fetchkeys"
	"github.com/hbgraph/hbgraph/loaders"
	"github.com/hbgraph/hbgraph/store"
)

// runner fetches a plan's data, wave by wave: a node whose id is known
// joins the wave in which its id became known, with every read keyed by
// that id. One runner serves one request.
type runner struct {
	ctx  context.Context
	p    *Plan
	args []argVals
	f    *loaders.Fetcher

	w       loaders.Wave
	round   int
	pending []*nodeVal
	roots   []rootVal
}

// rootVal is the value of one root field.
type rootVal struct {
	err   error // the resolver's error: the field's value is null
	nodes []nodeVal
}

// nodeVal is one Node of the response, fetched in the wave its id became
// known.
type nodeVal struct {
	id   string
	get  int         // index of its row in the wave
	node *store.Node // nil: there is no such node
	err  error       // its row's read or decoding failed
}

// argsOf is f's arguments for this request.
func argsOf(f *Field, bound []argVals) *argVals {
	if f.static {
		return &f.args
	}
	return &bound[f.slot]
}

// fetch reads everything the plan writes.
func (r *runner) fetch() {
	sel := r.p.Root
	r.roots = make([]rootVal, len(sel.Fields))
	for i := range sel.Fields {
		f := &sel.Fields[i]
		rv := &r.roots[i]
		switch f.Kind {
		case KQueryNode:
			a := argsOf(f, r.args)
			if err := store.ValidateNodeID(a.id); err != nil {
				rv.err = err
				continue
			}
			rv.nodes = []nodeVal{{id: a.id}}
		case KQueryNodes:
			a := argsOf(f, r.args)
			if err := fetchkeys.NodeIDs(a.ids); err != nil {
				rv.err = err
				continue
			}
			rv.nodes = make([]nodeVal, len(a.ids))
			for j, id := range a.ids {
				rv.nodes[j].id = id
			}
		}
		for j := range rv.nodes {
			r.add(&rv.nodes[j])
		}
	}
	for len(r.pending) > 0 {
		r.wave()
	}
	for i := range sel.Fields {
		// nodes(ids:) fails as a whole on the first node that failed, as
		// its resolver does.
		if rv := &r.roots[i]; sel.Fields[i].Kind == KQueryNodes && rv.err == nil && testBreak != "nodes-errors" {
			for j := range rv.nodes {
				if rv.nodes[j].err != nil {
					rv.err = rv.nodes[j].err
					break
				}
			}
		}
	}
}

// add queues node v for the coming wave.
func (r *runner) add(v *nodeVal) {
	g, err := store.NodeGet(v.id)
	if err != nil {
		v.err = err
		return
	}
	v.get = r.w.Get(g)
	r.pending = append(r.pending, v)
}

// wave reads the pending nodes and decodes them.
func (r *runner) wave() {
	r.round++
	r.f.Run(r.ctx, r.round, &r.w)
	pending := r.pending
	r.pending = nil
	for _, v := range pending {
		row, err := r.w.Row(v.get)
		if err == nil {
			v.node, err = row.Node(v.id)
		}
		v.err = err
	}
	r.w.Reset()
}
