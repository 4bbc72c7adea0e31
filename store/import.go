package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Imports load data that already has its times and ids: the same write
// path as the live operations (every index row and counter is written),
// with the given created/updated/posted times and article sequence
// numbers. A row that exists already is skipped, not overwritten, so an
// interrupted import can simply be run again.

// errHiddenImport is an import's create that a delete marker hides: the
// row was deleted after the time it is imported at, which an import keeps.
var errHiddenImport = fmt.Errorf("%w: the row was deleted after the time it is imported at", ErrConflict)

func importTimes(created, updated time.Time) (int64, int64, error) {
	c, u := created.UnixMilli(), updated.UnixMilli()
	if c < 0 || u < c {
		return 0, 0, invalid("times must be >= 0 and updated >= created (got %d, %d)", c, u)
	}
	return c, u, nil
}

// ImportNode creates node id with the given properties and times unless it
// exists; created reports whether it did.
func (s *Store) ImportNode(ctx context.Context, id string, props Properties, createdAt, updatedAt time.Time) (created bool, err error) {
	if err := validateID("node id", id); err != nil {
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
	_, err = s.createEntity(ctx, keys.Node(id), entity{created: c, updated: u, props: encoded}, false)
	if errors.Is(err, ErrAlreadyExists) {
		return false, nil
	}
	return err == nil, err
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
	nodes, err := s.GetNodes(ctx, []string{k.Start, k.End})
	if err != nil {
		return false, err
	}
	for i, id := range []string{k.Start, k.End} {
		if nodes[i] == nil {
			return false, fmt.Errorf("node %q: %w", id, ErrNotFound)
		}
	}
	e, err := s.createEntity(ctx, k.row(), entity{created: c, updated: u, props: encoded}, false)
	if errors.Is(err, ErrAlreadyExists) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := s.writeIndex(ctx, k, e); err != nil {
		return false, err
	}
	return true, s.countDegrees(ctx, k, +1)
}

// ImportArticle posts an article with its own sequence number and posting
// time unless that timeline row exists, with its category row, counters
// and word counts, and returns its public id. The author must exist
// (ErrNotFound); an article deleted after posted cannot be imported again
// (ErrConflict: its delete marker would hide it). Call AdvanceArticleSeq
// afterwards so that live posts take higher numbers.
func (s *Store) ImportArticle(ctx context.Context, authorID string, seq uint64, title, body, category string, postedAt time.Time) (id string, created bool, err error) {
	k, row, a, err := ArticleImport{Author: authorID, Seq: seq, Title: title, Body: body, Category: category,
		Posted: postedAt}.validate()
	if err != nil {
		return "", false, err
	}
	if err := s.CheckArticleLayout(ctx); err != nil {
		return "", false, err
	}
	if _, err := s.GetNode(ctx, authorID); err != nil {
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
	if err := s.countArticles(ctx, authorID, map[string]int64{keys.QualArticleCount: 1, keys.QualCategoryCount + category: 1}); err != nil {
		return id, false, err
	}
	return id, true, s.addWordCounts(ctx, authorID, articleWords(a))
}

// AdvanceArticleSeq makes the author's next sequence number greater than
// atLeast (an Increment by the shortfall: concurrent advances can only
// push it further, which is harmless). atLeast is at most math.MaxInt64,
// as article ids are.
func (s *Store) AdvanceArticleSeq(ctx context.Context, authorID string, atLeast uint64) error {
	if err := validateID("author id", authorID); err != nil {
		return err
	}
	if atLeast > math.MaxInt64 {
		return invalid("article id %d is above %d", atLeast, int64(math.MaxInt64))
	}
	// Its counters row is a row of the table: a table with rows and no
	// layout version is read as one of layout 1.
	if err := s.CheckArticleLayout(ctx); err != nil {
		return err
	}
	row := keys.Counters(authorID)
	c, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, row)
	if err != nil {
		return err
	}
	var cur int64
	if v := c[keys.QualSeq]; v != nil {
		var ok bool
		if cur, ok = decodeMs(v); !ok {
			return corrupt(row, "sequence counter %x", v)
		}
	}
	if cur >= int64(atLeast) {
		return nil
	}
	_, err = s.increment(ctx, keys.TableArticles, keys.FamilyArticles, row, keys.QualSeq, int64(atLeast)-cur)
	return err
}
