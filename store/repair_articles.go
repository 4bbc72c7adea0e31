package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"strings"
	"time"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Kinds of fixes repairArticles reports.
const (
	fixCategoryRowWritten   = "category row written"
	fixCategoryRowRefreshed = "category row refreshed"
	fixCategoryRowDeleted   = "orphan category row deleted"
	fixArticleCounter       = "article counter corrected"
	fixArticleSeq           = "article sequence advanced"
	fixArticleDeletion      = "article deletions finished"
	fixArticleUpdate        = "article updates finished"
	fixArticleOpRowExpired  = "article op rows expired"
)

// articleOpRowTTL is how long an op row is kept: far longer than a client
// retries a write (and than HBase's nonce grace period, 30 minutes).
const articleOpRowTTL = 24 * time.Hour

// repairArticles makes the articles table consistent again after crashes
// between the writes of PostArticle, UpdateArticle and DeleteArticle, in one
// pass over the whole table (all rows of an author are adjacent: timeline,
// then category index, then counters):
//
//   - every timeline article has exactly one category row, under its
//     category, with its current cells: a missing one is written and a stale
//     one rewritten, stamped with the article's u;
//   - a category row whose article is gone, or files it under another
//     category, is deleted;
//   - a deletion cut short after its mark, or an update cut short after its
//     compare-and-set, has its rows finished (finishArticleDeletion,
//     finishPendingUpdate) but not its counts: it may be older than the
//     nonces that would recognise them, and the counters are recounted
//     below (and the word counts by repairWordCounts) anyway;
//   - op rows older than articleOpRowTTL are deleted;
//   - every counter, n and n/<category>, equals the number of timeline rows
//     it counts (0 for a category with none left, written rather than
//     deleted, see wordcounts.go), and seq is at least the highest sequence
//     number in use.
//
// Word counts are not touched here: repairWordCounts recomputes them.
//
// fix, if not nil, is called after each repair write with its kind (the
// fix* constants) and the number of rows or cells it fixed.
//
// What may run beside it. Readers, always. Article writers: every fix is
// checked against a fresh read of the rows involved and stamped so that it
// never undoes a newer write (a category row is written with the article's
// u and deleted only once a Get shows its article gone or moved; a counter
// is set with a compare-and-set against the value read before recounting),
// but a write in flight during the pass looks exactly like one cut short by
// a crash, so its counts can end up one off until the next pass. Run it
// while article writes are stopped, as Repair says, for an exact result.
// It holds one small entry per article of the author being scanned (not its
// text), so memory grows with the largest timeline, not the table.
func (s *Store) repairArticles(ctx context.Context, fix func(kind string, n int)) error {
	if fix == nil {
		fix = func(string, int) {}
	}
	r := articleRepair{s: s, fix: fix, seed: maphash.MakeSeed()}
	all := scanRange{table: keys.TableArticles, family: keys.FamilyArticles, chunkRows: articleChunkRows}
	err := s.scanAll(ctx, all, func(rw row) (bool, error) {
		return true, r.visit(ctx, rw)
	})
	if err != nil {
		return err
	}
	return r.flush(ctx)
}

// articleKey identifies an article within its author.
type articleKey struct {
	posted int64
	seq    uint64
}

// scannedArticle is what the pass keeps of one timeline row.
type scannedArticle struct {
	category string
	digest   uint64 // of the row's t, b, k, u (digestCells)
	indexed  bool   // its category row was seen, current
}

// articleRepair is the state of one repairArticles pass: the author whose
// rows are being read.
type articleRepair struct {
	s    *Store
	fix  func(string, int)
	seed maphash.Seed

	author   string
	started  bool
	articles map[articleKey]*scannedArticle
	counts   map[string]int64 // counter qualifier -> rows it counts
	maxSeq   uint64
	counters cells // the counters row; nil if none
	// countersTs is the counters row's newest cell timestamp.
	countersTs int64
	strays     []row // category rows to look at again
	// unfinished are the timeline rows marked for deletion or holding an
	// update's xp: finished first.
	unfinished []row
	expired    []row // op rows past articleOpRowTTL
}

func (r *articleRepair) digestCells(c cells) uint64 {
	var h maphash.Hash
	h.SetSeed(r.seed)
	for _, q := range []string{keys.QualTitle, keys.QualBody, keys.QualCategory, keys.QualArticleU} {
		v, ok := c[q]
		var n [9]byte
		if ok {
			n[0] = 1
		}
		binary.BigEndian.PutUint64(n[1:], uint64(len(v)))
		h.Write(n[:])
		h.Write(v)
	}
	return h.Sum64()
}

// enter starts collecting author's rows, first repairing the previous
// author's.
func (r *articleRepair) enter(ctx context.Context, author string) error {
	if r.started && author == r.author {
		return nil
	}
	if err := r.flush(ctx); err != nil {
		return err
	}
	r.author, r.started = author, true
	r.articles = map[articleKey]*scannedArticle{}
	r.counts = map[string]int64{}
	r.maxSeq, r.counters, r.strays, r.unfinished, r.expired = 0, nil, nil, nil, nil
	return nil
}

func (r *articleRepair) visit(ctx context.Context, rw row) error {
	if k, err := keys.DecodeTimeline(rw.key); err == nil {
		if err := r.enter(ctx, k.Author); err != nil {
			return err
		}
		t, ok, err := decodeTimelineState(rw.key, rw.cells)
		if err == nil && !ok {
			err = corrupt(rw.key, "a timeline row without its article cells")
		}
		if err != nil {
			return err
		}
		r.maxSeq = max(r.maxSeq, k.Seq)
		if t.isMarked() || t.prev != nil {
			r.unfinished = append(r.unfinished, row{key: rw.key, ts: rw.ts})
			if t.isMarked() {
				return nil // gone, once finished: neither counted nor indexed
			}
		}
		a := t.articleCells
		r.articles[articleKey{k.Posted, k.Seq}] = &scannedArticle{category: a.category, digest: r.digestCells(rw.cells)}
		r.counts[keys.QualArticleCount]++
		r.counts[keys.QualCategoryCount+a.category]++
		r.maxSeq = max(r.maxSeq, k.Seq)
		return nil
	}
	if c, err := keys.DecodeCategory(rw.key); err == nil {
		if err := r.enter(ctx, c.Article.Author); err != nil {
			return err
		}
		a := r.articles[articleKey{c.Article.Posted, c.Article.Seq}]
		if a != nil && !a.indexed && a.category == c.Name && a.digest == r.digestCells(rw.cells) {
			a.indexed = true
			return nil
		}
		r.strays = append(r.strays, row{key: rw.key, ts: rw.ts})
		return nil
	}
	if author, err := keys.DecodeCounters(rw.key); err == nil {
		if err := r.enter(ctx, author); err != nil {
			return err
		}
		r.counters, r.countersTs = rw.cells, rw.ts
		return nil
	}
	if author, _, err := keys.DecodeArticleOp(rw.key); err == nil {
		if err := r.enter(ctx, author); err != nil {
			return err
		}
		if rw.ts < r.s.nowMs()-articleOpRowTTL.Milliseconds() {
			r.expired = append(r.expired, row{key: rw.key, ts: rw.ts})
		}
		return nil
	}
	return nil // not an articles row: nothing here to repair it from
}

// flush repairs the author whose rows have all been read.
func (r *articleRepair) flush(ctx context.Context) error {
	if !r.started {
		return nil
	}
	s := r.s
	// The articles of an author that is gone go first, with the protocol
	// of DeleteArticle. (Posting times are not compared with the author's
	// creation: an import keeps a source's, which need not be in order.)
	author, deleting, err := s.readNode(ctx, r.author)
	if err != nil {
		return err
	}
	gone := author == nil || deleting
	orphans := 0
	if gone {
		orphans = len(r.articles)
	}
	if orphans > 0 {
		if err := s.deleteArticlesOf(ctx, r.author, math.MaxInt64); err != nil {
			return fmt.Errorf("articles of %q: %w", r.author, err)
		}
		r.fix(fixArticleOfGoneNode, orphans)
	}
	done := map[articleKey]bool{} // articles whose category row was rewritten
	finished, err := r.finishWrites(ctx)
	if err != nil {
		return err
	}
	for _, st := range r.strays {
		c, err := keys.DecodeCategory(st.key)
		if err != nil {
			return err
		}
		if finished[articleKey{c.Article.Posted, c.Article.Seq}] {
			continue // its write, finished, put or deleted it
		}
		fresh, ok, err := s.readTimeline(ctx, c.Article)
		if err != nil {
			return err
		}
		ak := articleKey{c.Article.Posted, c.Article.Seq}
		switch {
		case ok && fresh.category == c.Name:
			// Stale (or written since the scan): the article's cells, at
			// its u; a newer category row keeps its place.
			if err := s.put(ctx, keys.TableArticles, keys.FamilyArticles, st.key, fresh.cells(), fresh.updated); err != nil {
				return err
			}
			done[ak] = true
			r.fix(fixCategoryRowRefreshed, 1)
		default:
			// Its article is gone or in another category. No newer write
			// of this row can come but a move back, stamped with a newer u.
			ts := st.ts
			if ok {
				ts = max(ts, fresh.updated)
			}
			if err := s.deleteRow(ctx, keys.TableArticles, st.key, ts); err != nil {
				return err
			}
			r.fix(fixCategoryRowDeleted, 1)
		}
	}
	for ak, a := range r.articles {
		if a.indexed || done[ak] || finished[ak] {
			continue
		}
		k := keys.Article{Author: r.author, Posted: ak.posted, Seq: ak.seq}
		fresh, ok, err := s.readTimeline(ctx, k)
		if err != nil {
			return err
		}
		if !ok {
			continue // deleted since the scan, category row and all
		}
		crow, err := categoryRow(k, fresh.category)
		if err != nil {
			return err
		}
		if err := s.put(ctx, keys.TableArticles, keys.FamilyArticles, crow, fresh.cells(), fresh.updated); err != nil {
			return err
		}
		r.fix(fixCategoryRowWritten, 1)
	}
	if orphans > 0 || r.countersOff() {
		if err := s.fixArticleCounters(ctx, r.author, r.fix); err != nil {
			return fmt.Errorf("counters of %q: %w", r.author, err)
		}
	}
	for _, op := range r.expired {
		// At its own stamp: nothing writes the row again.
		if err := s.deleteRow(ctx, keys.TableArticles, op.key, op.ts); err != nil {
			return err
		}
		r.fix(fixArticleOpRowExpired, 1)
	}
	if gone && r.counters != nil {
		if err := r.deleteCounters(ctx); err != nil {
			return fmt.Errorf("counters of %q: %w", r.author, err)
		}
	}
	r.started = false
	return nil
}

// finishWrites finishes the deletions and updates of the author that a
// crash cut short (see repairArticles), each as read again, and returns
// the articles it finished.
func (r *articleRepair) finishWrites(ctx context.Context) (map[articleKey]bool, error) {
	finished := map[articleKey]bool{}
	for _, u := range r.unfinished {
		k, err := keys.DecodeTimeline(u.key)
		if err != nil {
			return nil, err
		}
		c, err := r.s.get(ctx, keys.TableArticles, keys.FamilyArticles, u.key)
		if err != nil {
			return nil, err
		}
		t, ok, err := decodeTimelineState(u.key, c)
		if err != nil {
			return nil, err
		}
		switch {
		case !ok:
			continue // finished meanwhile
		case t.isMarked():
			// A write young enough to be in flight (or retried) is
			// finished with its counts, by its op's nonces, which its
			// writer's Increments then repeat without effect: finished
			// without them, a counter recounted before the writer's
			// Increment would count it twice. An older one is finished
			// without, and recounted below.
			if err := r.s.finishArticleDeletion(ctx, k, u.key, t, r.s.recent(t.updated)); err != nil {
				return nil, err
			}
			r.fix(fixArticleDeletion, 1)
		case t.prev != nil:
			if err := r.s.finishPendingUpdate(ctx, k, u.key, t, r.s.recent(t.updated)); err != nil {
				return nil, err
			}
			r.fix(fixArticleUpdate, 1)
		default:
			continue
		}
		finished[articleKey{k.Posted, k.Seq}] = true
	}
	return finished, nil
}

// deleteCounters deletes the counters row of an author that is gone, once
// it counts nothing and the clock has passed its cells (a marker at or
// after an Increment's stamp would hide it; see deleteDegreeRows).
// Otherwise it is left for a later pass.
func (r *articleRepair) deleteCounters(ctx context.Context) error {
	s := r.s
	crow := keys.Counters(r.author)
	rows, err := s.scan(ctx, scanRange{table: keys.TableArticles, family: keys.FamilyArticles,
		start: crow, stop: keys.After(crow), limit: 1})
	if err != nil || len(rows) == 0 {
		return err
	}
	for q, v := range rows[0].cells {
		if n, ok := decodeMs(v); q != keys.QualSeq && (!ok || n != 0) {
			return nil
		}
	}
	if s.waitClockPast(ctx, rows[0].ts, s.clockWait) != nil {
		return nil
	}
	if err := s.deleteRow(ctx, keys.TableArticles, crow, rows[0].ts); err != nil {
		return err
	}
	r.fix(fixCountersOfGoneNodeDelete, 1)
	return nil
}

// countersOff reports whether the counters row read in the pass disagrees
// with the timeline rows read before it.
func (r *articleRepair) countersOff() bool {
	want, have := counterCells(r.counts, r.counters)
	for q, n := range want {
		if have[q] != n { // an absent counter is 0
			return true
		}
	}
	seq, _ := decodeMs(r.counters[keys.QualSeq])
	return uint64(seq) < r.maxSeq
}

// corruptCounter stands for a counter cell that is not an int64: it equals
// no count, so the cell is rewritten.
const corruptCounter = math.MinInt64

// counterCells returns the counts wanted, for every n and n/ qualifier
// counted or present in the counters row (0 where nothing is counted), and
// the row's counters decoded.
func counterCells(counts map[string]int64, counters cells) (want, have map[string]int64) {
	want = map[string]int64{keys.QualArticleCount: 0}
	have = map[string]int64{}
	for q, n := range counts {
		want[q] = n
	}
	for q, v := range counters {
		if q != keys.QualArticleCount && !strings.HasPrefix(q, keys.QualCategoryCount) {
			continue
		}
		n, ok := decodeMs(v)
		if !ok {
			n = corruptCounter
		}
		have[q] = n
		if _, counted := want[q]; !counted {
			want[q] = 0
		}
	}
	return want, have
}

// readTimeline reads an article's timeline row; ok is false if it is gone
// or being deleted (marked), but the cells of a marked row are returned.
func (s *Store) readTimeline(ctx context.Context, k keys.Article) (articleCells, bool, error) {
	row, err := k.Key()
	if err != nil {
		return articleCells{}, false, err
	}
	c, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, row)
	if err != nil {
		return articleCells{}, false, err
	}
	t, ok, err := decodeTimelineState(row, c)
	return t.articleCells, ok && !t.isMarked(), err
}

// fixArticleCounters sets author's counters to the rows they count. It
// counts the timeline, makes the Increments of the writes there possibly
// in flight (see settleAttempts), reads the counters row and scans the
// timeline again: if a row changed meanwhile it starts over; else the
// counters read are those of the rows counted, and each corrected cell is
// a compare-and-set against the value read, so an Increment made since is
// never overwritten (the attempt is repeated instead). After
// settleAttempts the author is left to the next run. seq only ever moves
// forward, by an Increment.
func (s *Store) fixArticleCounters(ctx context.Context, author string, fix func(string, int)) error {
	crow := keys.Counters(author)
	one := scanRange{table: keys.TableArticles, family: keys.FamilyArticles, start: crow, stop: keys.After(crow), limit: 1}
	for range settleAttempts {
		counts := map[string]int64{}
		var maxSeq uint64
		before, err := s.timelinePass(ctx, author, false, true, func(rw row, a timelineState, ok bool) error {
			k, err := keys.DecodeTimeline(rw.key)
			if err == nil && !ok {
				err = corrupt(rw.key, "a timeline row without its article cells")
			}
			if err != nil {
				return err
			}
			maxSeq = max(maxSeq, k.Seq)
			if a.isMarked() {
				return nil // being deleted: counted out already, or soon
			}
			counts[keys.QualArticleCount]++
			counts[keys.QualCategoryCount+a.category]++
			return nil
		})
		if err != nil {
			return err
		}
		rows, err := s.scan(ctx, one)
		if err != nil {
			return err
		}
		var counters cells
		var rowTs int64
		if len(rows) == 1 {
			counters, rowTs = rows[0].cells, rows[0].ts
		}
		after, err := s.timelinePass(ctx, author, false, false, nil)
		if err != nil {
			return err
		}
		if before != after {
			continue // a write began meanwhile
		}
		if seq, _ := decodeMs(counters[keys.QualSeq]); uint64(seq) < maxSeq {
			if _, err := s.increment(ctx, keys.TableArticles, keys.FamilyArticles, crow, keys.QualSeq, int64(maxSeq)-seq); err != nil {
				return err
			}
			fix(fixArticleSeq, 1)
		}
		want, have := counterCells(counts, counters)
		lost := false
		missing := map[string]int64{}
		for q, n := range want {
			h, present := have[q]
			if h == n && (present || n == 0) {
				continue
			}
			if !present {
				missing[q] = n
				continue
			}
			// Stamped with the row's newest cell's own timestamp, never
			// the clock: a counter Put ahead of the region server's clock
			// is harmless to Increments (HBase stamps one past the cell it
			// adds to), but this keeps every counter cell stamped by the
			// region server or before. At that stamp it replaces the
			// cell, which is no newer.
			wrote, err := s.checkAndPut(ctx, keys.TableArticles, keys.FamilyArticles, crow, q, counters[q],
				cells{q: encodeMs(n)}, rowTs)
			if err != nil {
				return err
			}
			if !wrote {
				lost = true
				continue
			}
			fix(fixArticleCounter, 1)
		}
		if len(missing) > 0 {
			// No cell to compare and set: an Increment of the count, as
			// the cell counted 0, stamped by the region server (one that
			// raced it adds to it).
			if err := s.incrementColumnsFor(WithOp(ctx, NewOpID()), "recount", keys.TableArticles, keys.FamilyArticles, crow, missing); err != nil {
				return err
			}
			fix(fixArticleCounter, len(missing))
		}
		if !lost {
			return nil
		}
	}
	return nil // writes go on: left to the next run
}
