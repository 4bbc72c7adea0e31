package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Exactly once for the article writes (DESIGN.md, "Exactly once",
// "Articles"). Every RPC of PostArticle, UpdateArticle and DeleteArticle
// may be applied and then answered with an error, or applied twice (a
// re-send), and a caller may retry the whole write with the same op (the
// ctx's OpID, derived from its idempotency key). Each write therefore
// records its op where its read-back, or its retry, finds it:
//
//   - a post: the op in the timeline row it creates (xc), and, for a
//     derived op, an op row (keys.ArticleOpLayout) naming the article,
//     written before the timeline row, so that a retry reuses the
//     sequence number and posting time instead of taking new ones;
//   - an update: the op in the row's list of recent update ops (xo), and
//     the cells it replaced in xp until its other writes are done, so
//     that a retry that finds its op applied can finish them;
//   - a delete: the op in the mark (x) that a compare-and-set puts on the
//     row before anything goes; the row goes last, and for a derived op
//     an op row says the deletion was this op's, for a retry that finds
//     the row gone.
//
// The other writes of each (category rows, counters, word counts) are
// made idempotent: Puts and Deletes stamped with the article's u, and
// Increments with a nonce of the op and a purpose naming the article, so
// that anyone finishing them with the same op (the write itself, its
// retry, a node deletion or Repair finishing a marked deletion with the
// mark's op) counts once.

// maxArticleOps is how many update ops a timeline row remembers (xo): a
// retry whose op has been pushed out by as many later updates is no
// longer recognised, and would apply its change again.
const maxArticleOps = 16

// Kinds of op rows.
const (
	articleOpPost   byte = 'p'
	articleOpDelete byte = 'd'
)

// timelineState is a timeline row with its exactly-once cells.
type timelineState struct {
	articleCells
	createdBy []byte // xc: the op that posted it (nil: posted before ops)
	ops       []byte // xo: recent update ops, 16 bytes each, newest last
	prev      []byte // xp: the last update's op and the cells it replaced
	deleting  []byte // x: the op deleting it
}

// decodeTimelineState decodes a timeline row; ok is false if it does not
// exist.
func decodeTimelineState(row []byte, c cells) (timelineState, bool, error) {
	a, ok, err := decodeArticleCells(row, c)
	if err != nil || !ok {
		return timelineState{}, ok, err
	}
	return timelineState{articleCells: a, createdBy: c[keys.QualArticleCreatedBy], ops: c[keys.QualArticleOps],
		prev: c[keys.QualArticlePrev], deleting: c[keys.QualArticleDeleting]}, true, nil
}

// hasOp reports whether op is among the row's recent update ops.
func (t timelineState) hasOp(op OpID) bool {
	for o := range slices.Chunk(t.ops, len(op)) {
		if bytes.Equal(o, op[:]) {
			return true
		}
	}
	return false
}

// withOp is the row's op list with op added, the oldest dropped beyond
// maxArticleOps.
func (t timelineState) withOp(op OpID) []byte {
	ops := t.ops
	if len(ops)%len(op) != 0 {
		ops = nil // corrupt: start again
	}
	if n := len(ops) / len(op); n >= maxArticleOps {
		ops = ops[(n-maxArticleOps+1)*len(op):]
	}
	return append(slices.Clip(ops), op[:]...)
}

// isMarked reports whether a deletion is under way.
func (t timelineState) isMarked() bool { return len(t.deleting) != 0 }

// markOp is the op of the deletion under way.
func (t timelineState) markOp() OpID {
	var o OpID
	copy(o[:], t.deleting)
	return o
}

// encodePrev is xp: op, then the replaced cells (u, then title, body and
// category, each uvarint(len) bytes).
func encodePrev(op OpID, a articleCells) []byte {
	b := make([]byte, 0, len(op)+8+3*binary.MaxVarintLen64+len(a.title)+len(a.body)+len(a.category))
	b = append(b, op[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(a.updated))
	for _, s := range []string{a.title, a.body, a.category} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// decodePrev decodes xp; ok is false for a cell that is not one.
func decodePrev(b []byte) (op OpID, a articleCells, ok bool) {
	if len(b) < len(op)+8 {
		return op, a, false
	}
	copy(op[:], b)
	a.updated = int64(binary.BigEndian.Uint64(b[len(op):]))
	b = b[len(op)+8:]
	var parts [3]string
	for i := range parts {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return op, a, false
		}
		parts[i] = string(b[w : w+int(n)])
		b = b[w+int(n):]
	}
	a.title, a.body, a.category = parts[0], parts[1], parts[2]
	return op, a, len(b) == 0
}

// encodeOpRecord is an op row's record: kind, posted, seq.
func encodeOpRecord(kind byte, k keys.Article) []byte {
	b := []byte{kind}
	b = binary.BigEndian.AppendUint64(b, uint64(k.Posted))
	return binary.BigEndian.AppendUint64(b, k.Seq)
}

// decodeOpRecord decodes an op row's record of author's article.
func decodeOpRecord(author string, b []byte) (kind byte, k keys.Article, ok bool) {
	if len(b) != 17 {
		return 0, k, false
	}
	k = keys.Article{Author: author, Posted: int64(binary.BigEndian.Uint64(b[1:])), Seq: binary.BigEndian.Uint64(b[9:])}
	if _, err := k.Key(); err != nil {
		return 0, k, false
	}
	return b[0], k, true
}

// readArticleOp reads the record of author's op row for op: nil if none.
func (s *Store) readArticleOp(ctx context.Context, author string, op OpID) ([]byte, error) {
	c, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, keys.ArticleOp(author, op))
	if err != nil {
		return nil, err
	}
	return c[keys.QualArticleOpRecord], nil
}

// Nonce purposes of the Increments of an article's writes: each names the
// article (its timeline row), since one op (a node deletion) may write
// many articles of one author.
func purposeCount(what string, row []byte) string { return "article-" + what + "/count/" + string(row) }
func purposeWords(what string, row []byte) string { return "article-" + what + "/words/" + string(row) }

// Fault points of the exactly-once writes.
const (
	pointArticleOpRow   = "article-op-row"
	pointArticleMark    = "article-mark"
	pointArticleRowGone = "article-row-gone"
	pointArticleDone    = "article-update-done"
)

// nonceRecent is how long after a write another may finish it with the
// write's op: well within the time HBase remembers a nonce (its grace
// period, hbase.server.hashNonce.gracePeriod, 30 minutes by default), so
// that the Increments it makes again are still recognised as the write's
// own if they were applied. A write cut short longer ago has its rows
// finished without its counts, which Repair recounts.
const nonceRecent = 10 * time.Minute

// recent reports whether a write stamped u (ms) may be finished with its
// op's nonces.
func (s *Store) recent(u int64) bool { return s.nowMs()-u < nonceRecent.Milliseconds() }

// staleAfter is how long after a write's compare-and-set another writer
// (or Repair) takes it for cut short and finishes it: far longer than a
// live write takes to make its other writes, so that a writer never makes
// another's Increments while it is making them (harmless with nonces, but
// not without them, and wasted work).
const staleAfter = time.Minute

// stale reports whether a write stamped u (ms) was cut short.
func (s *Store) stale(u int64) bool { return s.nowMs()-u >= staleAfter.Milliseconds() }

// finishArticleUpdate makes the writes that follow an update's
// compare-and-set (the category rows, counters and word counts, from old
// to next), then clears xp (clearPrev: the update wrote one; in a
// transaction it may not have): with ctx carrying the update's op, each is
// idempotent, so a retry, or the next writer of the row finding xp, may
// make them again. Without counts (withCounts false: a write cut short
// long ago, or Repair, which recounts) it makes the category rows only.
func (s *Store) finishArticleUpdate(ctx context.Context, k keys.Article, row []byte, old, next articleCells, withCounts, clearPrev bool) error {
	// A category row of its own holds what old held (see
	// cellsChangedFrom); a new one is written whole.
	cat := next.cellsChangedFrom(old)
	if next.category != old.category {
		cat = next.cells()
	}
	if err := s.putCategoryCells(ctx, k, next, cat); err != nil {
		return err
	}
	if next.category != old.category {
		oldRow, err := categoryRow(k, old.category)
		if err != nil {
			return err
		}
		if err := s.faultPoint(pointArticleOldCategory); err != nil {
			return err
		}
		// Stamped with the new u: it hides the old row's cells (stamped
		// with older u's), and an update that later moves the article back
		// writes with a newer u, which shows.
		if err := s.deleteRow(ctx, keys.TableArticles, oldRow, next.updated); err != nil {
			return err
		}
	}
	if withCounts && next.category != old.category {
		if err := s.countArticles(ctx, k.Author, map[string]int64{
			keys.QualCategoryCount + next.category: 1, keys.QualCategoryCount + old.category: -1,
		}, purposeCount("update", row)); err != nil {
			return err
		}
	}
	if withCounts && (next.title != old.title || next.body != old.body) {
		if err := s.addWordCounts(ctx, k.Author, articleWordDeltas(old, next), purposeWords("update", row)); err != nil {
			return err
		}
	}
	if err := s.faultPoint(pointArticleDone); err != nil {
		return err
	}
	if !clearPrev {
		return nil // the update wrote no xp (in a transaction)
	}
	// Stamped with the update's u: a later update's xp, stamped later,
	// stays.
	return s.deleteColumns(ctx, keys.TableArticles, keys.FamilyArticles, row, []string{keys.QualArticlePrev}, next.updated)
}

// finishPendingUpdate finishes the update recorded in t's xp, if any,
// with that update's op (see finishArticleUpdate): the writer that finds
// it may be its retry, or the next writer of the row, after a crash.
func (s *Store) finishPendingUpdate(ctx context.Context, k keys.Article, row []byte, t timelineState, withCounts bool) error {
	if t.prev == nil {
		return nil
	}
	op, old, ok := decodePrev(t.prev)
	if !ok {
		return corrupt(row, "xp of %d bytes", len(t.prev))
	}
	return s.finishArticleUpdate(WithOp(ctx, op), k, row, old, t.articleCells, withCounts, true)
}

// finishArticleDeletion makes the writes of a deletion after its mark:
// the category row, the counters and word counts, then the timeline row,
// each stamped with the mark's u or carrying the mark's op's nonce, so
// that whoever finishes a marked deletion (the deleter, its retry, a node
// deletion) counts it once. withCounts false (a deletion cut short long
// ago, or Repair, which recounts) leaves the counts out.
func (s *Store) finishArticleDeletion(ctx context.Context, k keys.Article, row []byte, t timelineState, withCounts bool) error {
	// An update whose writes are not made yet is finished first, with its
	// op: the counts below start from its text. It may be cut short (its
	// retry, finding the row marked, takes its writes for made) or under
	// way (then its Increments carry the same nonces and count once).
	if err := s.finishPendingUpdate(ctx, k, row, t, withCounts && s.recent(t.updated)); err != nil {
		return err
	}
	ctx = WithOp(ctx, t.markOp())
	ts := t.updated // the mark's
	crow, err := categoryRow(k, t.category)
	if err != nil {
		return err
	}
	if err := s.faultPoint(pointArticleCategory); err != nil {
		return err
	}
	if err := s.deleteRow(ctx, keys.TableArticles, crow, ts); err != nil {
		return err
	}
	if !withCounts {
		return s.deleteRow(ctx, keys.TableArticles, row, ts)
	}
	if err := s.countArticles(ctx, k.Author, map[string]int64{keys.QualArticleCount: -1, keys.QualCategoryCount + t.category: -1},
		purposeCount("delete", row)); err != nil {
		return err
	}
	if err := s.addWordCounts(ctx, k.Author, wordDeltas(articleWords(t.articleCells), nil), purposeWords("delete", row)); err != nil {
		return err
	}
	if err := s.faultPoint(pointArticleRowGone); err != nil {
		return err
	}
	return s.deleteRow(ctx, keys.TableArticles, row, ts)
}

// errAuthorReplaced is what a write finds when its author is not the
// node the write was authorised for: deleted, or deleted and created
// again by someone the writer may not write for.
func errAuthorReplaced(author string) error {
	return fmt.Errorf("node %q: %w", author, ErrNotFound)
}
