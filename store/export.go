package store

import (
	"bytes"
	"context"
	"fmt"
	"maps"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Whole-table scans for export: every node, relationship and article, in
// row key order, read in pages (scanAll: each page its own scan and
// deadline, resumed just past the last row), so memory holds one page
// whatever the store's size. Row key order starts with a hash of the id,
// so it is no order a reader would choose, but it is a function of the
// contents alone: two stores that hold the same graph yield it in the same
// order, which is what makes an export reproducible.
//
// The pages are not one snapshot: a store written to while it is scanned
// may yield a row written after the scan began, or a relationship whose
// node was deleted meanwhile. Export a stopped store or a backup for a
// consistent copy.

// NodeRecord is a node as stored: its properties are the stored JSON
// object, never nil.
type NodeRecord struct {
	ID               string
	Owner            string // empty: nobody owns it
	Properties       []byte
	Created, Updated int64 // Unix ms
}

// RelationshipRecord is a relationship as stored.
type RelationshipRecord struct {
	Key              RelationshipKey
	Properties       []byte
	Created, Updated int64 // Unix ms
}

// ArticleRecord is an article as its timeline row stores it; Seq is the
// id an import takes.
type ArticleRecord struct {
	Author                string
	Seq                   uint64
	Title, Body, Category string
	Posted, Updated       int64 // Unix ms
}

// ScanNodes calls fn with every node of the store, in row key order, but
// those being deleted (they read as gone). It stops at fn's first error
// and returns it. A node row that does not decode is ErrCorrupt.
func (s *Store) ScanNodes(ctx context.Context, fn func(NodeRecord) error) error {
	return s.scanAll(ctx, wholeGraph(), func(rw row) (bool, error) {
		id, err := keys.DecodeNode(rw.key)
		if err != nil {
			return true, nil // another layout of the table
		}
		e, ok, err := decodeEntity(rw.key, rw.raw)
		if err != nil {
			return false, err
		}
		if !ok || e.deleting != 0 {
			return true, nil // a row without c, or being deleted: gone
		}
		if err := checkStoredProperties(rw.key, e.props); err != nil {
			return false, err
		}
		return true, fn(NodeRecord{ID: id, Owner: string(e.owner), Properties: propertiesOrEmpty(e.props),
			Created: e.created, Updated: e.updated})
	})
}

// ScanRelationships calls fn with every relationship of the store whose
// two nodes exist and are not being deleted, in row key order (by start
// node's hash, then type and end node), and returns how many it left out
// for a node that is gone: what a deletion cut short leaves until it is
// finished (by deleteNode again, or Repair). The nodes of each page of
// relationships are read with one batch of Gets. It stops at fn's first
// error and returns it.
func (s *Store) ScanRelationships(ctx context.Context, fn func(RelationshipRecord) error) (gone int, err error) {
	page := newLivePage(s, defaultChunkRows, fn, func(r RelationshipRecord) []string { return []string{r.Key.Start, r.Key.End} })
	err = s.scanAll(ctx, wholeGraph(), func(rw row) (bool, error) {
		r, err := keys.DecodeRelationship(rw.key)
		if err != nil {
			return true, nil
		}
		e, ok, err := decodeEntity(rw.key, rw.raw)
		if err != nil {
			return false, err
		}
		if !ok {
			return true, nil
		}
		if err := checkStoredProperties(rw.key, e.props); err != nil {
			return false, err
		}
		return true, page.add(ctx, RelationshipRecord{Key: RelationshipKey{Start: r.Start, Type: r.Type, End: r.End},
			Properties: bytes.Clone(propertiesOrEmpty(e.props)), Created: e.created, Updated: e.updated})
	})
	if err == nil {
		err = page.flush(ctx)
	}
	return page.gone, err
}

// ScanArticles calls fn with every article of the store whose author
// exists and is not being deleted, from the timeline rows, in row key
// order: by author's hash, then each author's newest first. It returns how
// many it left out for an author that is gone (see ScanRelationships).
// The category index rows, copies of the timeline's, are passed over. A
// table of another article layout is ErrArticleLayout, found without
// writing (an empty table that records no layout holds no article). It
// stops at fn's first error and returns it.
func (s *Store) ScanArticles(ctx context.Context, fn func(ArticleRecord) error) (gone int, err error) {
	v, present, err := s.readArticleLayout(ctx)
	if err != nil {
		return 0, err
	}
	if present && v != keys.ArticleLayoutVersion {
		return 0, fmt.Errorf("%w: it records layout %d; this hbgraph reads layout %d", ErrArticleLayout, v, keys.ArticleLayoutVersion)
	}
	// As many articles as a scan's page of them: bodies of up to 1 MiB.
	page := newLivePage(s, articleChunkRows, fn, func(a ArticleRecord) []string { return []string{a.Author} })
	all := scanRange{table: keys.TableArticles, family: keys.FamilyArticles, compact: true, chunkRows: articleChunkRows}
	err = s.scanAll(ctx, all, func(rw row) (bool, error) {
		k, err := keys.DecodeTimeline(rw.key)
		if err != nil {
			if !present {
				if _, old := keys.MigrateArticleRow(rw.key); old {
					return false, fmt.Errorf("%w: it holds rows of layout 1: run `hbgraph repair` on it to migrate them first",
						ErrArticleLayout)
				}
			}
			return true, nil // a category, counters or layout row
		}
		a, ok, err := decodeArticleCells(rw.key, rw.raw)
		if err != nil {
			return false, err
		}
		if x, _ := rw.raw.lookup(keys.QualArticleDeleting); !ok || x != nil {
			return true, nil // gone, or its deletion under way
		}
		return true, page.add(ctx, ArticleRecord{Author: k.Author, Seq: k.Seq, Title: a.title, Body: a.body,
			Category: a.category, Posted: k.Posted, Updated: a.updated})
	})
	if err == nil {
		err = page.flush(ctx)
	}
	return page.gone, err
}

// livePage gathers a page of records and hands on those whose nodes are
// live, reading the page's distinct nodes with one batch of Gets. The
// records it holds must not share memory with the scan (the engine may
// reuse a row's bytes once the scan moves on): copy what is kept.
type livePage[T any] struct {
	s       *Store
	size    int // records held at most
	fn      func(T) error
	nodesOf func(T) []string
	records []T
	gone    int // records left out for a node that is gone
	// known remembers the nodes read, live or not, up to liveNodesKnown
	// of them (then it starts again): relationships come grouped by
	// their start node, and most graphs have far fewer nodes than
	// relationships.
	known map[string]bool
}

// liveNodesKnown bounds livePage.known: a few MB.
const liveNodesKnown = 1 << 16

func newLivePage[T any](s *Store, size int, fn func(T) error, nodesOf func(T) []string) *livePage[T] {
	return &livePage[T]{s: s, size: size, fn: fn, nodesOf: nodesOf, known: map[string]bool{}}
}

func (p *livePage[T]) add(ctx context.Context, r T) error {
	p.records = append(p.records, r)
	if len(p.records) < p.size {
		return nil
	}
	return p.flush(ctx)
}

// flush reads the nodes of the records held and hands on the records
// whose nodes all exist and are not being deleted.
func (p *livePage[T]) flush(ctx context.Context) error {
	if len(p.records) == 0 {
		return nil
	}
	var ids []string
	seen := map[string]bool{}
	for _, r := range p.records {
		for _, id := range p.nodesOf(r) {
			if _, known := p.known[id]; !known && !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	if len(ids) > 0 {
		live, err := p.s.liveNodes(ctx, ids)
		if err != nil {
			return err
		}
		if len(p.known)+len(live) > liveNodesKnown {
			clear(p.known)
		}
		maps.Copy(p.known, live)
	}
	for _, r := range p.records {
		ok := true
		for _, id := range p.nodesOf(r) {
			ok = ok && p.known[id]
		}
		if !ok {
			p.gone++
			continue
		}
		if err := p.fn(r); err != nil {
			return err
		}
	}
	p.records = p.records[:0]
	return nil
}

// liveNodes reads the nodes of ids (distinct) with one batch of Gets and
// reports which exist and are not being deleted.
func (s *Store) liveNodes(ctx context.Context, ids []string) (map[string]bool, error) {
	rows := make([][]byte, len(ids))
	for i, id := range ids {
		rows[i] = keys.Node(id)
	}
	got, errs, err := s.getColumnsBatch(ctx, keys.TableGraph, keys.FamilyGraph,
		[]string{keys.QualCreated, keys.QualUpdated, keys.QualDeleting, keys.QualGone}, rows)
	if err != nil {
		return nil, err
	}
	live := make(map[string]bool, len(ids))
	for i, id := range ids {
		if errs[i] != nil {
			return nil, errs[i]
		}
		e, ok, err := decodeEntity(rows[i], got[i])
		if err != nil {
			return nil, err
		}
		live[id] = ok && e.deleting == 0
	}
	return live, nil
}

// wholeGraph is the whole of table graph, read compact.
func wholeGraph() scanRange {
	return scanRange{table: keys.TableGraph, family: keys.FamilyGraph, compact: true}
}

// checkStoredProperties fails with ErrCorrupt unless props (of row) is
// empty or a JSON object, as every read checks.
func checkStoredProperties(row []byte, props []byte) error {
	if _, err := storedProperties(props); err != nil {
		return corrupt(row, "properties are not a JSON object")
	}
	return nil
}

// propertiesOrEmpty is the stored properties, or {} for none.
func propertiesOrEmpty(props []byte) []byte {
	if len(props) == 0 {
		return []byte("{}")
	}
	return props
}
