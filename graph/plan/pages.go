package plan

import (
	"github.com/hbgraph/hbgraph/graph/fields"
	"github.com/hbgraph/hbgraph/loaders"
	"github.com/hbgraph/hbgraph/store"
)

// This file is what the plan knows of each store read a page scan
// (fields.Scan) reads: a page of a node's relationships, of an author's
// articles. A connection over a new store read is one type here (its
// page, how it is read from the wave, which nodes its edges name, how the
// connection is written), one field of pages, one case of scan and its
// entry in scanTypes; the connection's fields are descriptors like any
// other's. A connection over an existing store read needs nothing here.

// pageVal is a page scan's page, once keyed.
type pageVal interface {
	// read decodes the page from the wave, and the connection's reads.
	read(r *runner, f *Field, l *loadVal) error
	// edges is the number of the page's edges; hop is the id of the node
	// hop sf names from edge e.
	edges() int
	hop(sf *Field, e int) string
	// write writes the connection (the page did not fail).
	write(w *writer, f *Field, l *loadVal) bool
}

// pages are the pages a loadVal holds, one per store read (no allocation
// per connection: loadVal.page points into them).
type pages struct {
	rels relPage
	arts artPage
}

// scanTypes are the page scans the runner reads (scan's cases), for
// TestEveryFieldPlanned.
var scanTypes = []any{
	(*fields.ScanOf[loaders.AdjacencyKey, store.DegreeKey])(nil),
	(*fields.ScanOf[loaders.ArticlesKey, store.ArticleCountKey])(nil),
}

// scan queues the page of connection f of node id, by the store's read
// its descriptor keys, and the connection's own reads keyed by what it
// counts.
func (r *runner) scan(f *Field, id string, l *loadVal) {
	args := argsOf(f, r.args).proj
	switch s := f.scan.(type) {
	case *fields.ScanOf[loaders.AdjacencyKey, store.DegreeKey]:
		k, err := s.Key(id, args, f.wanted)
		if err != nil {
			l.err = err
			return
		}
		p := &l.pages.rels
		p.idx, p.page.Dir, p.counted = r.w.Adjacency(k), k.Dir, s.Counted(k)
		l.page = p
		connReads(r, f, l, p.counted)
	case *fields.ScanOf[loaders.ArticlesKey, store.ArticleCountKey]:
		k, err := s.Key(id, args, f.wanted)
		if err != nil {
			l.err = err
			return
		}
		p := &l.pages.arts
		p.idx, p.counted = r.w.Articles(k), s.Counted(k)
		l.page = p
		connReads(r, f, l, p.counted)
	default:
		panic("plan: a scan of a store read it does not know: " + f.desc.Type + "." + f.desc.Name) // TestEveryFieldPlanned
	}
}

// relPage is a page of a node's relationships (a RelationshipConnection).
type relPage struct {
	idx     int // in the wave
	page    fields.RelPage
	counted store.DegreeKey
}

func (p *relPage) read(r *runner, f *Field, l *loadVal) error {
	var err error
	if p.page.RelationshipPage, err = r.w.AdjacencyPage(p.idx); err == nil {
		decodeConnReads(r, f, l, p.counted)
	}
	return err
}

func (p *relPage) edges() int { return len(p.page.Relationships) }

func (p *relPage) hop(sf *Field, e int) string {
	return hopTarget(sf, &p.page.Relationships[e], nil, fields.RelEdge{Page: &p.page, I: e})
}

func (p *relPage) write(w *writer, f *Field, l *loadVal) bool {
	return connection(w, f, l, &p.page)
}

// artPage is a page of an author's articles (an ArticleConnection).
type artPage struct {
	idx     int
	page    store.ArticlePage
	counted store.ArticleCountKey
}

func (p *artPage) read(r *runner, f *Field, l *loadVal) error {
	var err error
	if p.page, err = r.w.ArticlePage(p.idx); err == nil {
		decodeConnReads(r, f, l, p.counted)
	}
	return err
}

func (p *artPage) edges() int { return len(p.page.Articles) }

func (p *artPage) hop(sf *Field, e int) string {
	return hopTarget(sf, nil, &p.page.Articles[e], fields.RelEdge{})
}

func (p *artPage) write(w *writer, f *Field, l *loadVal) bool {
	return connection(w, f, l, &p.page)
}
