package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hbgraph/hbgraph/store/keys"
)

// ArticleImport is one article of an ImportArticles batch: what
// ImportArticle takes.
type ArticleImport struct {
	Author                string
	Seq                   uint64 // the article id, 1..math.MaxInt64 (the seq counter is an int64)
	Title, Body, Category string
	Posted                time.Time
	// Updated is when the article was last changed; the zero time means
	// Posted.
	Updated time.Time
}

// validate checks a as PostArticle checks its input, and its id and time,
// and returns its key, timeline row, cells and words (articleWords).
func (a ArticleImport) validate() (keys.Article, []byte, articleCells, map[string]int64, error) {
	if err := validateID("author id", a.Author); err != nil {
		return keys.Article{}, nil, articleCells{}, nil, err
	}
	if err := validateTitle(a.Title); err != nil {
		return keys.Article{}, nil, articleCells{}, nil, err
	}
	if err := validateBody(a.Body); err != nil {
		return keys.Article{}, nil, articleCells{}, nil, err
	}
	words, err := countArticleWords(a.Title, a.Body)
	if err != nil {
		return keys.Article{}, nil, articleCells{}, nil, err
	}
	if err := validateType("category", a.Category); err != nil {
		return keys.Article{}, nil, articleCells{}, nil, err
	}
	posted, updated := a.Posted.UnixMilli(), a.Posted.UnixMilli()
	if !a.Updated.IsZero() {
		updated = a.Updated.UnixMilli()
	}
	if a.Seq == 0 || a.Seq > math.MaxInt64 || posted < 0 || updated < posted {
		return keys.Article{}, nil, articleCells{}, nil, invalid("article id must be 1..%d, posted_at >= 0 and updated_at >= posted_at", int64(math.MaxInt64))
	}
	k := keys.Article{Author: a.Author, Posted: posted, Seq: a.Seq}
	row, err := k.Key()
	if err != nil {
		return keys.Article{}, nil, articleCells{}, nil, invalid("article: %v", err)
	}
	return k, row, articleCells{title: a.Title, body: a.Body, category: a.Category, updated: updated}, words, nil
}

// Fault points of ImportArticles (see Store.fault), each named after the
// writes that follow it.
const (
	pointImportTimeline   = "import-timeline"
	pointImportCategory   = "import-category"
	pointImportCounters   = "import-counters"
	pointImportWordCounts = "import-word-counts"
	pointImportTopWords   = "import-top-words"
)

// ImportArticles imports a batch of articles with the outcome
// ImportArticle would give each, in the order of arts, but with a batch's
// reads and writes grouped as ImportRelationships groups them:
//
//  1. one SendBatch of Gets of the distinct authors' node rows;
//  2. a CheckAndMutate "u absent" per timeline row, then one SendBatch of
//     Gets reading the created rows' u back (a delete marker stamped after
//     posted hides the row: ErrConflict, as ImportArticle);
//  3. a SendBatch of Puts of their category rows;
//  4. a SendBatch of Increments of the authors' counter rows, one per
//     author by the sums of its articles' n and n/<category> (one per
//     author and attempt on a retry: see importArticleRound);
//  5. a SendBatch of Increments of the authors' word count rows, one per
//     author by the sum of its articles' word counts (likewise);
//  6. the authors' top-words lists, as PostArticle updates one
//     (updateTopWords), importTopWordsWorkers authors at a time.
//
// (A SendBatch of writes carries at most writeChunk calls; a larger batch
// sends several in turn.)
//
// The order is the live PostArticle's, batch-wide: timeline rows, then
// category rows, counters, word counts. A crash between them leaves what
// one of PostArticle would, for many articles at once: Repair restores the
// category rows, counters and word counts. A rerun with the same op (the
// ctx's: see importArticleRound) finds the timeline rows it wrote and
// makes the rest again, counting each article once; a rerun with another
// op skips them and cannot tell which of them lack the rest. ImportArticles
// does not touch seq: call AdvanceArticleSeq afterwards.
//
// An article that appears more than once in arts (the same author, seq and
// posting time) is imported by its first occurrence; the later ones are
// skipped, unless the first failed, in which case the next one is tried as
// if it came on its own.
//
// The error is non-nil only when the batch stopped early (a fault point,
// see Store.fault); the items it left unsettled carry it as their Err.
func (s *Store) ImportArticles(ctx context.Context, arts []ArticleImport) ([]ImportOutcome, error) {
	out := make([]ImportOutcome, len(arts))
	layoutErr := s.CheckArticleLayout(ctx)
	if layoutErr == nil {
		layoutErr = s.migrateAuthorsOfImports(ctx, arts)
	}
	if layoutErr != nil {
		for i := range out {
			out[i].Err = layoutErr
		}
		return out, layoutErr
	}
	pending := make([]*articleImport, 0, len(arts))
	for i, a := range arts {
		k, row, c, words, err := a.validate()
		if err != nil {
			out[i].Err = err
			continue
		}
		pending = append(pending, &articleImport{importItem: importItem{i: i, row: row}, k: k, a: c, words: words})
	}
	err := importRounds(out, pending, func(round []*articleImport) error {
		return s.importArticleRound(ctx, round)
	})
	return out, err
}

// articleImport is one valid article of a batch.
type articleImport struct {
	importItem // row: the timeline row
	k          keys.Article
	a          articleCells
	attempt    string // the id of the attempt that created its row (xc)
	// words is articleWords(a), counted once, by validate: the round's
	// Increment of the author's counts and the author's top-words list
	// both read it (counting again took 30% of the list's CPU in an
	// import). Nothing changes it.
	words map[string]int64
}

// importArticleRound imports items, which name distinct articles. It
// returns an error only for a fault point; every other failure is an
// item's.
//
// Exactly once: each timeline row carries the batch's op and this
// attempt's id (xc: the ctx's op, or a fresh one, then 8 random bytes), so
// a compare-and-set that answers false, re-sent after it applied or made
// again by the caller's retry of the batch with the same op, is
// recognised as the batch's own, and the article's other writes are made
// (again). Each author's counts go in one Increment per attempt that
// created articles, whose nonce names the op, the attempt and the author:
// the articles a retry finds from an earlier attempt are counted in that
// attempt's Increment again (applied once), those it creates in its own.
// The set is the same both times (the rows that carry the attempt's id,
// as read back after the compare-and-sets), unless a read-back of some of
// an author's rows failed while others succeeded; then an article counted
// by neither is left for Repair.
func (s *Store) importArticleRound(ctx context.Context, items []*articleImport) error {
	op, ok := OpFrom(ctx)
	if !ok {
		op = NewOpID()
		ctx = WithOp(ctx, op)
	}
	attempt := NewOpID()
	createdBy := append(slices.Clip(op[:]), attempt[:importAttemptBytes]...)
	items = sortedByRow(items)
	authors := make([]string, len(items))
	for i, it := range items {
		authors[i] = it.k.Author
	}
	errs := s.nodeErrors(ctx, authors)
	for _, it := range items {
		if err := errs[it.k.Author]; err != nil {
			it.fail(err)
		}
	}
	tried := live(items)
	err := createEach(ctx, s, pointImportTimeline, keys.TableArticles, keys.FamilyArticles, keys.QualArticleU, items,
		func(it *articleImport) (cells, int64) {
			c := it.a.cells()
			c[keys.QualArticleCreatedBy] = createdBy
			if s.feedPending() {
				c[keys.QualArticleFanout] = []byte{1} // FinishFanouts writes its feed rows
			}
			return c, it.a.updated
		})
	if err != nil {
		return err
	}
	// Every row tried: one this op created, in this attempt or an earlier
	// one (a re-sent or failed compare-and-set that applied, a retry), is
	// the batch's own and goes on as created; a row created here that
	// does not show is hidden by a delete marker.
	readBack(ctx, s, keys.TableArticles, keys.FamilyArticles, []string{keys.QualArticleU, keys.QualArticleCreatedBy}, tried,
		func(it *articleImport, c rowCells) {
			xc := c.get(keys.QualArticleCreatedBy)
			switch {
			case c.get(keys.QualArticleU) == nil:
				if it.created {
					it.fail(errHiddenImport)
				}
			case len(xc) == len(createdBy) && bytes.Equal(xc[:len(op)], op[:]):
				it.created, it.settled, it.err = true, false, nil
				it.attempt = string(xc[len(op):])
			}
		})
	if items = live(items); len(items) == 0 {
		// Nothing left to write. (A later round, of the repeats of
		// articles that failed, ends here: a missing author or a delete
		// marker fails the repeat too.)
		return nil
	}
	// The count groups, fixed now: an article whose category row fails
	// below exists, and is counted all the same.
	counted := slices.Clone(items)
	if err := s.faultPoint(pointImportCategory); err != nil {
		return err
	}
	s.putCategoryRows(ctx, live(items))
	if err := s.faultPoint(pointImportCounters); err != nil {
		return err
	}
	s.incrementByAttempt(ctx, keys.TableArticles, keys.FamilyArticles, counted, "count", func(it *articleImport) ([]byte, map[string]int64) {
		return keys.Counters(it.k.Author), map[string]int64{keys.QualArticleCount: 1, keys.QualCategoryCount + it.a.category: 1}
	})
	if err := s.faultPoint(pointImportWordCounts); err != nil {
		return err
	}
	s.incrementByAttempt(ctx, keys.TableWordCounts, keys.FamilyWordCounts, counted, "words", func(it *articleImport) ([]byte, map[string]int64) {
		return keys.WordCounts(it.k.Author), it.words
	})
	if err := s.faultPoint(pointImportTopWords); err != nil {
		return err
	}
	s.updateTopWordsOf(ctx, live(items))
	for _, it := range items {
		it.settled = true
	}
	return nil
}

// importAttemptBytes is the length of an import attempt's id in xc.
const importAttemptBytes = 8

// incrementByAttempt sends one Increment per (row, attempt) of items, by
// the sum of what inc says each item adds to its row, with the nonce of
// the ctx's op for a purpose naming what, the attempt and the row (see
// importArticleRound); an item whose Increment failed fails.
func (s *Store) incrementByAttempt(ctx context.Context, table, family string, items []*articleImport, what string,
	inc func(*articleImport) ([]byte, map[string]int64)) {
	type group struct {
		purposeIncrement
		items []*articleImport
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, it := range items {
		row, deltas := inc(it)
		key := string(row) + "\x00" + it.attempt
		g := byKey[key]
		if g == nil {
			g = &group{purposeIncrement: purposeIncrement{row: row, deltas: map[string]int64{},
				purpose: "article-import/" + what + "/" + hex.EncodeToString([]byte(it.attempt))}}
			byKey[key] = g
			groups = append(groups, g)
		}
		for q, n := range deltas {
			g.deltas[q] += n
		}
		g.items = append(g.items, it)
	}
	groups = slices.DeleteFunc(groups, func(g *group) bool { return len(g.deltas) == 0 })
	slices.SortFunc(groups, func(a, b *group) int {
		return cmp.Or(bytes.Compare(a.row, b.row), strings.Compare(a.purpose, b.purpose))
	})
	incs := make([]purposeIncrement, len(groups))
	for i, g := range groups {
		incs[i] = g.purposeIncrement
	}
	for i, err := range s.incrementEachPurpose(ctx, table, family, incs) {
		if err == nil {
			continue
		}
		for _, it := range groups[i].items {
			if !it.settled {
				it.fail(err)
			}
		}
	}
}

// updateTopWordsOf updates the top-words list of each author of items
// with the words its items counted (updateTopWords), importTopWordsWorkers
// authors at a time; an author whose list failed fails its items.
func (s *Store) updateTopWordsOf(ctx context.Context, items []*articleImport) {
	byAuthor := map[string][]*articleImport{}
	var authors []string
	for _, it := range items {
		if byAuthor[it.k.Author] == nil {
			authors = append(authors, it.k.Author)
		}
		byAuthor[it.k.Author] = append(byAuthor[it.k.Author], it)
	}
	var g errgroup.Group
	g.SetLimit(importTopWordsWorkers)
	for _, author := range authors {
		g.Go(func() error {
			words := map[string]bool{}
			for _, it := range byAuthor[author] {
				for w := range it.words {
					words[w] = true
				}
			}
			// (No snapshot: import counts words without the serial.)
			if err := s.updateTopWords(ctx, author, slices.Collect(maps.Keys(words)), nil); err != nil {
				for _, it := range byAuthor[author] {
					it.fail(err)
				}
			}
			return nil
		})
	}
	_ = g.Wait() // the errors are the items'
}

// importTopWordsWorkers bounds the authors whose lists one import round
// updates at once (each a compare-and-set of a few round trips).
const importTopWordsWorkers = 8

// putCategoryRows puts the items' category rows, as putCategoryRow does
// one article's; an item whose Put failed fails.
func (s *Store) putCategoryRows(ctx context.Context, items []*articleImport) {
	puts := make([]rowPut[*articleImport], 0, len(items))
	for _, it := range items {
		crow, err := categoryRow(it.k, it.a.category)
		if err != nil {
			it.fail(err)
			continue
		}
		values := map[string]map[string][]byte{keys.FamilyArticles: it.a.cells()}
		puts = append(puts, rowPut[*articleImport]{crow, it, values, it.a.updated})
	}
	putAll(ctx, s, keys.TableArticles, puts)
}
