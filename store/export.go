package store

import (
	"context"
	"fmt"

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

// ScanNodes calls fn with every node of the store, in row key order. It
// stops at fn's first error and returns it. A node row that does not
// decode is ErrCorrupt.
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
		if !ok {
			return true, nil // a row without c reads as absent
		}
		if err := checkStoredProperties(rw.key, e.props); err != nil {
			return false, err
		}
		return true, fn(NodeRecord{ID: id, Owner: string(e.owner), Properties: propertiesOrEmpty(e.props),
			Created: e.created, Updated: e.updated})
	})
}

// ScanRelationships calls fn with every relationship of the store, in row
// key order (by start node's hash, then type and end node). It stops at
// fn's first error and returns it.
func (s *Store) ScanRelationships(ctx context.Context, fn func(RelationshipRecord) error) error {
	return s.scanAll(ctx, wholeGraph(), func(rw row) (bool, error) {
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
		return true, fn(RelationshipRecord{Key: RelationshipKey{Start: r.Start, Type: r.Type, End: r.End},
			Properties: propertiesOrEmpty(e.props), Created: e.created, Updated: e.updated})
	})
}

// ScanArticles calls fn with every article of the store, from the timeline
// rows, in row key order: by author's hash, then each author's newest
// first. The category index rows, copies of the timeline's, are passed
// over. A table of another article layout is ErrArticleLayout, found
// without writing (an empty table that records no layout holds no
// article). It stops at fn's first error and returns it.
func (s *Store) ScanArticles(ctx context.Context, fn func(ArticleRecord) error) error {
	v, present, err := s.readArticleLayout(ctx)
	if err != nil {
		return err
	}
	if present && v != keys.ArticleLayoutVersion {
		return fmt.Errorf("%w: it records layout %d; this hbgraph reads layout %d", ErrArticleLayout, v, keys.ArticleLayoutVersion)
	}
	all := scanRange{table: keys.TableArticles, family: keys.FamilyArticles, compact: true, chunkRows: articleChunkRows}
	return s.scanAll(ctx, all, func(rw row) (bool, error) {
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
		if !ok {
			return true, nil
		}
		return true, fn(ArticleRecord{Author: k.Author, Seq: k.Seq, Title: a.title, Body: a.body,
			Category: a.category, Posted: k.Posted, Updated: a.updated})
	})
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
