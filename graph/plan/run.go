package plan

import (
	"context"
	"slices"

	"github.com/hbgraph/hbgraph/graph/fields"
	"github.com/hbgraph/hbgraph/loaders"
	"github.com/hbgraph/hbgraph/store"
	"github.com/hbgraph/hbgraph/tracing"
)

// runner fetches a plan's data, wave by wave: a node whose id is known
// joins the wave in which its id became known, with every read keyed by
// that id (its connections' pages and counters, its word counts). One
// runner serves one request, on the request's goroutine.
type runner struct {
	ctx  context.Context
	p    *Plan
	args []argVals
	f    *loaders.Fetcher

	w       loaders.Wave
	round   int
	pending []*nodeVal // read in the coming wave
	next    []*nodeVal // found in this wave's answers: read in the next
	rootsP  []*rootVal // root relationships and articles read in the coming wave
	entsP   []*rootVal // _entities whose relationships and articles are read in the coming wave
	roots   []rootVal
}

// rootVal is the value of one root field.
type rootVal struct {
	f     *Field
	err   error // the resolver's error: the field's value is null
	nodes []nodeVal
	read  readVal     // a store read (relationship, article)
	kids  [][]nodeVal // [slot][0] (or [slot][i] for _entities): startNode, endNode, author
	ents  []entVal    // _entities: by representation
}

// readVal is a store read's value (fields.ReadOf): the rows its keys
// named in the wave, then the value decoded from them.
type readVal struct {
	idx [fields.MaxReadRows]int
	n   int
	val any
	err error
}

// entVal is one entity of _entities: a node, or a relationship's or an
// article's row.
type entVal struct {
	typ  int // index in entityTypes
	node nodeVal
	key  store.RelationshipKey
	id   string
	read readVal // a relationship's or an article's row (and ends)
	rel  *store.Relationship
	art  *store.Article
	err  error
}

// nodeVal is one Node of the response.
type nodeVal struct {
	id    string
	sel   *Sel
	get   int         // index of its row in the wave
	node  *store.Node // nil: there is no such node
	err   error       // its row's read or decoding failed
	loads []loadVal   // by Field.load
}

// loadVal is what one field read with a node read: a store read's value
// (readVal), or a page scan's page (pages.go), with the connection's own
// reads (totalCount's counter) and the nodes its edges name.
type loadVal struct {
	readVal
	page  pageVal   // a page scan's: one of pages below, nil until keyed
	pages pages     // the page, by the store's read
	reads []readVal // the connection's reads, by Field.load
	read1 [1]readVal

	kids [][]nodeVal // [slot][edge]
}

// queueRead adds the rows read f's keys name for parent p to the wave.
func queueRead[P any](r *runner, f *Field, p P, v *readVal) {
	queueReadOf(r, f.read.(*fields.ReadOf[P]), r.in(f), p, v)
}

// decodeRead decodes read f's value for parent p from the wave's rows.
func decodeRead[P any](r *runner, f *Field, p P, v *readVal) {
	decodeReadOf(r, f.read.(*fields.ReadOf[P]), r.in(f), p, v)
}

// queueReadOf adds the rows ro's keys name for parent p to the wave.
func queueReadOf[P any](r *runner, ro *fields.ReadOf[P], in fields.In, p P, v *readVal) {
	gets, err := ro.Keys(in, p)
	if err != nil {
		v.err = err
		return
	}
	for i := range gets.N {
		v.idx[i] = r.w.Get(gets.Get[i])
	}
	v.n = gets.N
}

// decodeReadOf decodes ro's value for parent p from the wave's rows.
func decodeReadOf[P any](r *runner, ro *fields.ReadOf[P], in fields.In, p P, v *readVal) {
	if v.err != nil {
		return
	}
	rows := fields.Rows{N: v.n}
	for i := range v.n {
		if rows.Row[i], v.err = r.w.Row(v.idx[i]); v.err != nil {
			return
		}
	}
	v.val, v.err = ro.Decode(in, p, rows)
}

// in is what field f's descriptor reads besides its parent.
func (r *runner) in(f *Field) fields.In {
	if f.desc == nil || f.desc.Args == nil {
		return fields.In{}
	}
	return fields.In{Args: argsOf(f, r.args).proj}
}

// argsOf is f's arguments for this request.
func argsOf(f *Field, bound []argVals) *argVals {
	if f.static {
		return &f.args
	}
	return &bound[f.bound]
}

// fetch reads everything the plan writes.
func (r *runner) fetch() {
	sel := r.p.Root
	r.roots = make([]rootVal, len(sel.Fields))
	for i := range sel.Fields {
		f := &sel.Fields[i]
		rv := &r.roots[i]
		rv.f = f
		switch {
		case f.nodes != nil:
			ids, err := f.nodes.IDs(r.in(f))
			if err != nil {
				rv.err = err
				continue
			}
			rv.nodes = make([]nodeVal, len(ids))
			for j, id := range ids {
				rv.nodes[j].id = id
			}
		case f.read != nil:
			if queueRead(r, f, fields.Root{}, &rv.read); rv.read.err == nil {
				r.rootsP = append(r.rootsP, rv)
			}
		case f.entity:
			r.entities(f, rv)
		}
		for j := range rv.nodes {
			rv.nodes[j].sel = f.Sel
			r.add(&rv.nodes[j])
		}
	}
	for len(r.pending) > 0 || len(r.rootsP) > 0 || len(r.entsP) > 0 {
		r.wave()
	}
	tracing.PlanRan(r.ctx, r.round)
	r.failLists(nil) // when no wave ran: every id failed before a read
}

// failLists applies nodes(ids:)'s rule once its nodes are read (in the
// first wave): it fails as a whole on the first node that failed, as its
// resolver does, and nothing below it is read, as gqlgen resolves nothing
// below it. next are the nodes queued for the coming wave; failLists
// returns those that stay.
func (r *runner) failLists(next []*nodeVal) []*nodeVal {
	for i := range r.roots {
		rv := &r.roots[i]
		if rv.f.nodes == nil || !rv.f.nodes.Whole || rv.err != nil {
			continue
		}
		for j := range rv.nodes {
			if rv.nodes[j].err != nil {
				rv.err = rv.nodes[j].err
				break
			}
		}
		if rv.err == nil || len(next) == 0 {
			continue
		}
		below := map[*nodeVal]bool{}
		for j := range rv.nodes {
			for _, l := range rv.nodes[j].loads {
				for _, kids := range l.kids {
					for e := range kids {
						below[&kids[e]] = true
					}
				}
			}
		}
		next = slices.DeleteFunc(next, func(v *nodeVal) bool { return below[v] })
	}
	return next
}

// entities queues _entities' representations, as its entity resolvers
// read them: nodes (with the reads keyed by their ids), relationships'
// and articles' rows.
func (r *runner) entities(f *Field, rv *rootVal) {
	reps := argsOf(f, r.args).reps
	rv.ents = make([]entVal, len(reps))
	rv.kids = make([][]nodeVal, len(f.slots))
	for s := range rv.kids {
		rv.kids[s] = make([]nodeVal, len(reps))
	}
	queued := false
	for i, rep := range reps {
		e := &rv.ents[i]
		e.typ, e.id = rep.typ, rep.id
		switch entityTypes[rep.typ] {
		case "Node":
			e.node = nodeVal{id: rep.id, sel: f.entities[rep.typ]}
			r.add(&e.node)
			continue
		case "Relationship":
			if e.key, e.err = store.ParseRelationshipID(rep.id); e.err == nil {
				queueReadOf(r, relationshipByKey, fields.In{}, e.key, &e.read)
			}
		case "Article":
			queueReadOf(r, articleByID, fields.In{}, rep.id, &e.read)
		}
		if e.err == nil {
			e.err = e.read.err
		}
		queued = queued || e.err == nil
	}
	if queued {
		r.entsP = append(r.entsP, rv)
	}
}

// entityRows decodes _entities' relationships and articles and queues
// their endpoints.
func (r *runner) entityRows(rv *rootVal) {
	for i := range rv.ents {
		e := &rv.ents[i]
		if e.err != nil || entityTypes[e.typ] == "Node" {
			continue
		}
		if entityTypes[e.typ] == "Relationship" {
			decodeReadOf(r, relationshipByKey, fields.In{}, e.key, &e.read)
		} else {
			decodeReadOf(r, articleByID, fields.In{}, e.id, &e.read)
		}
		e.err = e.read.err
		e.rel, _ = e.read.val.(*store.Relationship)
		e.art, _ = e.read.val.(*store.Article)
		if e.err != nil || e.rel == nil && e.art == nil {
			continue
		}
		for s, sf := range rv.f.slots {
			if _, fromArticle := sf.hop.(*fields.HopTo[*store.Article]); fromArticle != (e.art != nil) {
				continue // the other member's hop
			}
			rv.kids[s][i] = nodeVal{id: hopTarget(sf, e.rel, e.art, fields.RelEdge{}), sel: sf.Sel}
			r.next = append(r.next, &rv.kids[s][i])
		}
	}
}

// add queues node v, and the reads keyed by its id, for the coming wave.
func (r *runner) add(v *nodeVal) {
	g, err := store.NodeGet(v.id)
	if err != nil {
		v.err = err
		return
	}
	v.get = r.w.Get(g)
	r.pending = append(r.pending, v)
	if v.sel.Loads == 0 {
		return
	}
	v.loads = make([]loadVal, v.sel.Loads)
	for i := range v.sel.Fields {
		f := &v.sel.Fields[i]
		l := &v.loads[f.load]
		switch {
		case f.read != nil:
			queueRead(r, f, v.id, &l.readVal)
		case f.scan != nil:
			r.scan(f, v.id, l)
		}
	}
}

// connReads queues the reads of connection f (its totalCount's counter),
// keyed by what it counts, in its page's wave.
func connReads[P any](r *runner, f *Field, l *loadVal, p P) {
	if f.Sel.Loads == 0 {
		return
	}
	if f.Sel.Loads <= len(l.read1) { // totalCount: no allocation of its own
		l.reads = l.read1[:f.Sel.Loads]
	} else {
		l.reads = make([]readVal, f.Sel.Loads)
	}
	for i := range f.Sel.Fields {
		if cf := &f.Sel.Fields[i]; cf.read != nil {
			queueRead(r, cf, p, &l.reads[cf.load])
		}
	}
}

// decodeConnReads decodes connection f's reads once its page is read.
func decodeConnReads[P any](r *runner, f *Field, l *loadVal, p P) {
	for i := range f.Sel.Fields {
		if cf := &f.Sel.Fields[i]; cf.read != nil {
			decodeRead(r, cf, p, &l.reads[cf.load])
		}
	}
}

// The reads _entities makes by typed definition (fields.RelationshipByKey,
// fields.ArticleByID), erased once.
var (
	relationshipByKey = fields.RelationshipByKey.Erased()
	articleByID       = fields.ArticleByID.Erased()
)

// wave reads the pending nodes, their loads and the pending root rows,
// decodes them, and queues the nodes their answers name.
func (r *runner) wave() {
	r.round++
	r.f.Run(r.ctx, r.round, &r.w)
	for _, rv := range r.rootsP {
		r.rootRow(rv)
	}
	for _, rv := range r.entsP {
		r.entityRows(rv)
	}
	for _, v := range r.pending {
		r.fill(v)
	}
	next := r.next
	if r.round == 1 {
		next = r.failLists(next)
	}
	if len(next) > 0 {
		r.f.Remember(&r.w)
	}
	r.pending, r.next, r.rootsP, r.entsP = r.pending[:0], nil, nil, nil
	r.w.Reset()
	for _, v := range next {
		r.add(v)
	}
}

// rootRow decodes a root store read (relationship, article) and queues
// the nodes it names (its hops).
func (r *runner) rootRow(rv *rootVal) {
	decodeRead(r, rv.f, fields.Root{}, &rv.read)
	rel, _ := rv.read.val.(*store.Relationship)
	art, _ := rv.read.val.(*store.Article)
	if rv.read.err != nil || rel == nil && art == nil {
		return
	}
	rv.kids = make([][]nodeVal, len(rv.f.slots))
	for s, sf := range rv.f.slots {
		rv.kids[s] = []nodeVal{{id: hopTarget(sf, rel, art, fields.RelEdge{}), sel: sf.Sel}}
		r.next = append(r.next, &rv.kids[s][0])
	}
}

// hopTarget is the id of the node hop f names, by its descriptor, from
// its parent as the descriptor takes it: a relationship (startNode,
// endNode), an article (author), or an edge of a page of relationships
// (neighbor).
func hopTarget(f *Field, rel *store.Relationship, art *store.Article, edge fields.RelEdge) string {
	switch h := f.hop.(type) {
	case *fields.HopTo[*store.Relationship]:
		return h.Target(rel)
	case *fields.HopTo[*store.Article]:
		return h.Target(art)
	case *fields.HopTo[fields.RelEdge]:
		return h.Target(edge)
	}
	panic("plan: a hop from a parent it does not know: " + f.desc.Type + "." + f.desc.Name) // TestEveryFieldPlanned
}

// fill decodes node v and its loads, and queues the nodes its pages name.
func (r *runner) fill(v *nodeVal) {
	row, err := r.w.Row(v.get)
	if err == nil {
		v.node, err = row.Node(v.id)
	}
	v.err = err
	if v.node == nil || v.err != nil {
		return // its fields are not written: their reads were for nothing
	}
	for i := range v.sel.Fields {
		f := &v.sel.Fields[i]
		if f.read != nil {
			decodeRead(r, f, v.id, &v.loads[f.load].readVal)
			continue
		}
		if f.scan == nil {
			continue
		}
		l := &v.loads[f.load]
		if l.err != nil {
			continue
		}
		if l.err = l.page.read(r, f, l); l.err != nil {
			continue
		}
		n := l.page.edges()
		l.kids = make([][]nodeVal, len(f.slots))
		for s, sf := range f.slots {
			kids := make([]nodeVal, n)
			for e := range kids {
				kids[e] = nodeVal{id: l.page.hop(sf, e), sel: sf.Sel}
				r.next = append(r.next, &kids[e])
			}
			l.kids[s] = kids
		}
	}
}
