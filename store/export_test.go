package store

// This file holds what only the store's tests use: reads and imports one
// row at a time (the server reads through Read and imports in batches).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hbgraph/hbgraph/store/keys"
)

// GetArticles is GetArticle for many ids with one batch of Gets, for the
// GraphQL loaders. Both results are in the order of ids: errs[i] is nil when
// articles[i] was found, else it wraps ErrInvalidInput (a malformed id),
// ErrNotFound, or the batch's error, which every id then shares.
func (s *Store) GetArticles(ctx context.Context, ids []string) ([]Article, []error) {
	articles := make([]Article, len(ids))
	errs := make([]error, len(ids))
	ks := make([]keys.Article, 0, len(ids))
	rows := make([][]byte, 0, len(ids))
	at := make([]int, 0, len(ids)) // index in ids of rows[j]
	for i, id := range ids {
		k, row, err := parseArticleID(id)
		if err != nil {
			errs[i] = err
			continue
		}
		ks, rows, at = append(ks, k), append(rows, row), append(at, i)
	}
	err := s.CheckArticleLayout(ctx)
	var res []rowCells
	if err == nil {
		res, err = s.getBatch(ctx, keys.TableArticles, rows)
	}
	if err != nil {
		for _, i := range at {
			errs[i] = err
		}
		return articles, errs
	}
	for j, c := range res {
		i := at[j]
		a, ok, err := decodeArticleCells(rows[j], c)
		switch {
		case err != nil:
			errs[i] = err
		case !ok:
			errs[i] = fmt.Errorf("article %q: %w", ids[i], ErrNotFound)
		default:
			articles[i], errs[i] = articleFrom(ks[j], a)
		}
	}
	return articles, errs
}

// ArticleCounts returns, in the order of authorIDs, how many articles each
// author has in category ("" for all categories), reading the counter rows
// with one batch of Gets: a connection's totalCount. An author with no
// articles or no node has 0. It fails with ErrInvalidInput for a bad author
// id or category.
func (s *Store) ArticleCounts(ctx context.Context, authorIDs []string, category string) ([]int64, error) {
	ks := make([]ArticleCountKey, len(authorIDs))
	for i, id := range authorIDs {
		ks[i] = ArticleCountKey{Author: id, Category: category}
	}
	return s.CountArticles(ctx, ks)
}

// CountArticles returns the counters named by ks, in their order, with one
// batch of Gets of the authors' counter rows.
func (s *Store) CountArticles(ctx context.Context, ks []ArticleCountKey) ([]int64, error) {
	return readEach(ctx, s, ks, ArticleCountKey.Get, func(k ArticleCountKey, r Row) (int64, error) {
		return r.ArticleCount(k.Category)
	})
}

// ImportArticle posts an article with its own sequence number and posting
// time unless that timeline row exists, with its category row, counters
// and word counts, and returns its public id. The author must exist
// (ErrNotFound); an article deleted after posted cannot be imported again
// (ErrConflict: its delete marker would hide it). Call AdvanceArticleSeq
// afterwards so that live posts take higher numbers.
func (s *Store) ImportArticle(ctx context.Context, authorID string, seq uint64, title, body, category string, postedAt time.Time) (id string, created bool, err error) {
	k, row, a, _, err := ArticleImport{Author: authorID, Seq: seq, Title: title, Body: body, Category: category,
		Posted: postedAt}.validate()
	if err != nil {
		return "", false, err
	}
	if err := s.CheckArticleLayout(ctx); err != nil {
		return "", false, err
	}
	if _, err := s.getNode(ctx, authorID); err != nil {
		return "", false, err
	}
	if id, err = k.ID(); err != nil {
		return "", false, err
	}
	ok, err := s.checkAndPut(ctx, keys.TableArticles, keys.FamilyArticles, row, keys.QualArticleU, nil, a.cells(), a.updated)
	if err != nil || !ok {
		return id, false, err
	}
	// As in createEntity: a delete marker stamped after posted hides the
	// row although CheckAndMutate wrote it, and a hidden article must not
	// be indexed or counted.
	c, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, row)
	if err != nil {
		return id, false, err
	}
	if c[keys.QualArticleU] == nil {
		return id, false, errHiddenImport
	}
	if err := s.putCategoryRow(ctx, k, a); err != nil {
		return id, false, err
	}
	if err := s.countArticles(ctx, authorID, map[string]int64{keys.QualArticleCount: 1, keys.QualCategoryCount + category: 1},
		purposeCount("import", row)); err != nil {
		return id, false, err
	}
	return id, true, s.addWordCounts(ctx, authorID, articleWords(a), purposeWords("import", row))
}

// ImportRelationship creates relationship k with the given properties and
// times unless it exists, with its index rows and degree counts; both
// nodes must exist (ErrNotFound).
func (s *Store) ImportRelationship(ctx context.Context, k RelationshipKey, props Properties, createdAt, updatedAt time.Time) (created bool, err error) {
	if err := k.Validate(); err != nil {
		return false, err
	}
	encoded, err := encodeProperties(props)
	if err != nil {
		return false, err
	}
	c, u, err := importTimes(createdAt, updatedAt)
	if err != nil {
		return false, err
	}
	nodes, err := s.getNodes(ctx, []string{k.Start, k.End})
	if err != nil {
		return false, err
	}
	for i, id := range []string{k.Start, k.End} {
		if nodes[i] == nil {
			return false, fmt.Errorf("node %q: %w", id, ErrNotFound)
		}
	}
	e, err := s.createEntity(ctx, k.row(), entity{created: c, updated: u, props: encoded}, true, true)
	if errors.Is(err, ErrAlreadyExists) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := s.writeIndex(ctx, k, e); err != nil {
		return false, err
	}
	return true, s.countDegrees(ctx, k, +1, e.created)
}

// GetRelationship returns a relationship, or an error wrapping
// ErrNotFound, as the gateway reads it: its row and its ends' in one
// batch (Row.Relationship).
func (s *Store) GetRelationship(ctx context.Context, k RelationshipKey) (Relationship, error) {
	g, start, end, err := k.Gets()
	if err != nil {
		return Relationship{}, err
	}
	rows, err := s.Read(ctx, []Get{g, start, end})
	if err != nil {
		return Relationship{}, err
	}
	rel, err := rows[0].Relationship(k, rows[1], rows[2])
	if err != nil {
		return Relationship{}, err
	}
	if rel == nil {
		return Relationship{}, fmt.Errorf("relationship %s: %w", k.ID(), ErrNotFound)
	}
	return *rel, nil
}

// Degrees returns the counters in the order of ks (0 where none was ever
// counted), with one batch of Gets.
func (s *Store) Degrees(ctx context.Context, ks []DegreeKey) ([]int64, error) {
	return readEach(ctx, s, ks, DegreeKey.Get, func(_ DegreeKey, r Row) (int64, error) { return r.Degree() })
}

// RebuildWordCounts recomputes the author's word count row from the
// author's articles (one scan of the timeline, then one Get of the row)
// and adds the difference with Increments, which the region server
// stamps: a count that is off is corrected, and a word no article has any
// more is brought to 0 and left as a 0 cell, as writers leave them. It
// never stamps a count with this machine's clock, so a machine whose clock
// is ahead of the region server's writes no delete marker that would hide
// the writers' next Increments (see rebuildWordCounts).
//
// Beside writers: a write whose article row changed before the scan and
// whose Increment came after the Get is counted twice, as one that changed
// after the scan and incremented before the Get is undone; the next
// rebuild, once writers are quiet, makes the row exact. While it runs,
// TopWords may see some words recomputed and others not.
//
// A corrupt cell (not an 8-byte int64: a hand-made Put, a torn write) is
// overwritten with the recount, or deleted if no article has the word, at
// its own timestamp. No writer's Increment can have landed on it (HBase
// refuses to increment a cell that is not a long), so none is lost.
//
// It fails with ErrInvalidInput for a bad author id.
func (s *Store) RebuildWordCounts(ctx context.Context, authorID string) error {
	if err := validateID("author id", authorID); err != nil {
		return err
	}
	if err := s.CheckArticleLayout(ctx); err != nil {
		return err
	}
	if _, err := s.rebuildWordCounts(ctx, authorID); err != nil {
		return fmt.Errorf("rebuild word counts: %w", err)
	}
	return nil
}
