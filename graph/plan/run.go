package plan

import (
	"context"
	"slices"

	"github.com/hbgraph/hbgraph/graph/fetchkeys"
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
	get   int                 // relationship, article: its row in the wave
	ends  [2]int              // relationship: its start and end nodes' rows in the wave
	rel   *store.Relationship // relationship: nil when there is none
	art   *store.Article      // article: nil when there is none
	kids  [][]nodeVal         // [slot][0] (or [slot][i] for _entities): startNode, endNode, author
	ents  []entVal            // _entities: by representation
}

// entVal is one entity of _entities: a node, or a relationship's or an
// article's row.
type entVal struct {
	typ  int // index in entityTypes
	node nodeVal
	key  store.RelationshipKey
	id   string
	get  int
	ends [2]int // a relationship's start and end nodes' rows
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

// loadVal is what one loading field of a node read: a page of
// relationships or articles (with its counter when totalCount is
// selected, and the nodes its edges name), or word counts.
type loadVal struct {
	err   error // the key did not build, or the read failed
	idx   int   // the page's or the word count row's index in the wave
	n     int   // wordCounts: how many
	dir   store.Direction
	rels  store.RelationshipPage
	arts  store.ArticlePage
	words []store.WordCount

	totalGet int
	total    int64
	totalErr error

	kids [][]nodeVal // [slot][edge]
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
		case KQueryRelationship:
			a := argsOf(f, r.args)
			g, start, end, err := store.RelationshipKey{Start: a.id, Type: a.typ, End: a.end}.Gets()
			if err != nil {
				rv.err = err
				continue
			}
			rv.get, rv.ends = r.w.Get(g), [2]int{r.w.Get(start), r.w.Get(end)}
			r.rootsP = append(r.rootsP, rv)
		case KQueryArticle:
			g, err := store.ArticleGet(argsOf(f, r.args).id)
			if err != nil {
				rv.err = err
				continue
			}
			rv.get = r.w.Get(g)
			r.rootsP = append(r.rootsP, rv)
		case KQueryEntities:
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
		if rv.f.Kind != KQueryNodes || rv.err != nil {
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
		var g store.Get
		var err error
		switch entityTypes[rep.typ] {
		case "Node":
			e.node = nodeVal{id: rep.id, sel: f.entities[rep.typ]}
			r.add(&e.node)
			continue
		case "Relationship":
			var start, end store.Get
			if e.key, err = store.ParseRelationshipID(rep.id); err == nil {
				if g, start, end, err = e.key.Gets(); err == nil {
					e.ends = [2]int{r.w.Get(start), r.w.Get(end)}
				}
			}
		case "Article":
			g, err = store.ArticleGet(rep.id)
		}
		if err != nil {
			e.err = err
			continue
		}
		e.get = r.w.Get(g)
		queued = true
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
		row, err := r.w.Row(e.get)
		if err != nil {
			e.err = err
			continue
		}
		if entityTypes[e.typ] == "Relationship" {
			e.rel, e.err = r.relationship(row, e.key, e.ends)
		} else {
			e.art, e.err = row.Article(e.id)
		}
		if e.err != nil || e.rel == nil && e.art == nil {
			continue
		}
		for s, sf := range rv.f.slots {
			if _, fromArticle := sf.hop.(*fields.HopTo[*store.Article]); fromArticle != (e.art != nil) {
				continue // the other member's hop
			}
			rv.kids[s][i] = nodeVal{id: hopTarget(sf, e.rel, e.art, store.Outgoing), sel: sf.Sel}
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
		switch f.Kind {
		case KNodeRelationships:
			a := argsOf(f, r.args)
			k, err := fetchkeys.Adjacency(v.id, &a.rels, f.wanted)
			if err != nil {
				l.err = err
				continue
			}
			l.dir, l.idx = k.Dir, r.w.Adjacency(k)
			if f.total {
				l.totalGet, l.totalErr = r.get(fetchkeys.Degree(k).Get())
			}
		case KNodeArticles:
			a := argsOf(f, r.args)
			k, err := fetchkeys.Articles(v.id, &a.arts, f.wanted)
			if err != nil {
				l.err = err
				continue
			}
			l.idx = r.w.Articles(k)
			if f.total {
				l.totalGet, l.totalErr = r.get(fetchkeys.ArticleCount(k).Get())
			}
		case KNodeWordCounts:
			k := fetchkeys.WordCounts(v.id, argsOf(f, r.args).first)
			l.n = k.N
			l.idx, l.err = r.get(store.WordCountsGet(k.Author))
		}
	}
}

// get adds g to the wave, unless building it failed.
func (r *runner) get(g store.Get, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	return r.w.Get(g), nil
}

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

// rootRow decodes a root relationship or article and queues its endpoints.
func (r *runner) rootRow(rv *rootVal) {
	row, err := r.w.Row(rv.get)
	if err != nil {
		rv.err = err
		return
	}
	if rv.f.Kind == KQueryRelationship {
		a := argsOf(rv.f, r.args)
		rv.rel, rv.err = r.relationship(row, store.RelationshipKey{Start: a.id, Type: a.typ, End: a.end}, rv.ends)
		if rv.rel == nil || rv.err != nil {
			return
		}
	} else {
		rv.art, rv.err = row.Article(argsOf(rv.f, r.args).id)
		if rv.art == nil || rv.err != nil {
			return
		}
	}
	rv.kids = make([][]nodeVal, len(rv.f.slots))
	for s, sf := range rv.f.slots {
		rv.kids[s] = []nodeVal{{id: hopTarget(sf, rv.rel, rv.art, store.Outgoing), sel: sf.Sel}}
		r.next = append(r.next, &rv.kids[s][0])
	}
}

// relationship decodes relationship k's row with its ends' rows, read in
// the same wave (a relationship is there only while both ends are; the
// endpoints' reads in the next wave find them remembered).
func (r *runner) relationship(row store.Row, k store.RelationshipKey, ends [2]int) (*store.Relationship, error) {
	start, err := r.w.Row(ends[0])
	if err != nil {
		return nil, err
	}
	end, err := r.w.Row(ends[1])
	if err != nil {
		return nil, err
	}
	return row.Relationship(k, start, end)
}

// hopTarget is the id of the node hop f names, by its descriptor, from
// its parent as the descriptor takes it: a relationship (startNode,
// endNode), an article (author), or a relationship on a page seen along
// dir (neighbor).
func hopTarget(f *Field, rel *store.Relationship, art *store.Article, dir store.Direction) string {
	switch h := f.hop.(type) {
	case *fields.HopTo[*store.Relationship]:
		return h.Target(rel)
	case *fields.HopTo[*store.Article]:
		return h.Target(art)
	case *fields.HopTo[fields.RelEdge]:
		return h.Target(fields.RelEdge{Rel: rel, Dir: dir})
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
		if !isLoad(f.Kind) {
			continue
		}
		l := &v.loads[f.load]
		if l.err != nil {
			continue
		}
		switch f.Kind {
		case KNodeRelationships:
			l.rels, l.err = r.w.AdjacencyPage(l.idx)
		case KNodeArticles:
			l.arts, l.err = r.w.ArticlePage(l.idx)
		case KNodeWordCounts:
			var row store.Row
			if row, l.err = r.w.Row(l.idx); l.err == nil {
				l.words, l.err = row.TopWords(l.n)
			}
			continue
		}
		if l.err != nil {
			continue
		}
		if f.total && l.totalErr == nil {
			var row store.Row
			if row, l.totalErr = r.w.Row(l.totalGet); l.totalErr == nil {
				if f.Kind == KNodeRelationships {
					l.total, l.totalErr = row.Degree()
				} else {
					l.total, l.totalErr = row.ArticleCount(argsCategory(argsOf(f, r.args)))
				}
			}
		}
		n := len(l.rels.Relationships) + len(l.arts.Articles)
		l.kids = make([][]nodeVal, len(f.slots))
		for s, sf := range f.slots {
			kids := make([]nodeVal, n)
			for e := range kids {
				var rel *store.Relationship
				var art *store.Article
				if f.Kind == KNodeRelationships {
					rel = &l.rels.Relationships[e]
				} else {
					art = &l.arts.Articles[e]
				}
				kids[e] = nodeVal{id: hopTarget(sf, rel, art, l.dir), sel: sf.Sel}
				r.next = append(r.next, &kids[e])
			}
			l.kids[s] = kids
		}
	}
}

func isLoad(k Kind) bool {
	return k == KNodeRelationships || k == KNodeArticles || k == KNodeWordCounts
}

func argsCategory(a *argVals) string {
	if a.arts.Category == nil {
		return ""
	}
	return *a.arts.Category
}
