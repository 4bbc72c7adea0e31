package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tsuna/gohbase/hrpc"
	"golang.org/x/sync/errgroup"

	"github.com/hbgraph/hbgraph/store/keys"
)

// The home feed (docs/design.md, "The home feed"): Feed lists the articles
// of every node a reader follows (reader -[type]-> author), newest first,
// for the relationship types the store keeps feeds of (FeedOptions.Types).
//
// Hybrid fan-out. A post by an author with at most FeedOptions.FanoutMax
// followers writes one feed row per follower (keys.FeedLayout, no copy of
// the article); an author with more is "wide": a row lists it
// (keys.WideAuthorLayout), its posts are not fanned out, and a read merges
// the timelines of the wide authors the reader follows. A page's cost is
// then flat in the number of followees that are not wide, plus one
// key-only scan (run concurrently) per wide author followed.
//
// Convergent and lazy: unfollowing, deleting an article or a node leaves
// feed rows behind, which a read skips (it checks each candidate's article
// and follow in one batch of Gets) and Repair removes. A feed row counts
// only while the follow it was written for is there: its timestamp is at
// least the relationship's creation time (fan-out and backfill stamp it
// so), so the rows of an earlier follow, or of an earlier node of the
// reader's id, never come back.

// FeedOptions configure the home feed. The zero value keeps no feeds.
type FeedOptions struct {
	// Types are the relationship types whose feeds are kept (a reader's
	// feed of type T lists the articles of the nodes it has an outgoing T
	// relationship to). Empty: no feeds, and posts fan out nothing.
	Types []string
	// FanoutMax is the most followers (incoming relationships of a kept
	// type, the degree counter) an author's post is written to; an author
	// with more is wide. 0: DefaultFeedFanoutMax.
	FanoutMax int64
	// Backfill is how many of a followee's newest articles a new follow
	// brings into the follower's feed. 0: DefaultFeedBackfill; negative:
	// none.
	Backfill int
}

const (
	DefaultFeedFanoutMax = 10_000
	DefaultFeedBackfill  = 20
	// MaxWideAuthors bounds the wide authors of a type a feed read merges
	// (the first in key order, that is by hash): an installation with
	// more has authors whose posts some feeds miss. A read costs one
	// batch of Gets over them.
	MaxWideAuthors = 1000
	// feedRounds bounds the batches of candidates a feed page validates:
	// stale rows (an unfollow, a deleted article) beyond that leave the
	// page short, with its next page flag set. Each round checks twice
	// the candidates of the one before (n+1, 2(n+1), ...: 15(n+1) in
	// all), at most feedRoundMax, which bounds the articles a round holds.
	feedRounds   = 4
	feedRoundMax = 2 * (MaxPageSize + 1)
)

// Fault points of the feed's writes.
const (
	pointFeedFanout   = "feed-fanout"   // before a post's feed rows (or its wide row)
	pointFeedDone     = "feed-done"     // before the post's pending mark goes
	pointFeedBackfill = "feed-backfill" // before a follow's feed rows
)

// Validate checks o: every type a valid relationship type (see
// CreateRelationship), FanoutMax not negative.
func (o FeedOptions) Validate() error {
	if o.FanoutMax < 0 {
		return invalid("the fan-out bound may not be negative")
	}
	for _, t := range o.Types {
		if err := validateType("a feed type", t); err != nil {
			return err
		}
	}
	return nil
}

// normalised is o with its defaults.
func (o FeedOptions) normalised() FeedOptions {
	o.Types = slices.Clone(o.Types)
	if o.FanoutMax == 0 {
		o.FanoutMax = DefaultFeedFanoutMax
	}
	if o.Backfill == 0 {
		o.Backfill = DefaultFeedBackfill
	}
	return o
}

// FeedKept reports whether the store keeps feeds of relType.
func (s *Store) FeedKept(relType string) bool { return slices.Contains(s.feed.Types, relType) }

// FeedTypes are the relationship types the store keeps feeds of.
func (s *Store) FeedTypes() []string { return slices.Clone(s.feed.Types) }

// feedPending reports whether posts fan out (a feed is kept), and so
// whether a post's timeline row carries the pending mark
// (keys.QualArticleFanout) until its fan-out is done.
func (s *Store) feedPending() bool { return len(s.feed.Types) > 0 }

// fanOutPost writes article k into the feeds of its author's followers,
// for every kept type, then takes the post's pending mark off its
// timeline row. Every write is an idempotent Put keyed by the article, so
// a retry, a re-send or Repair may make it again.
func (s *Store) fanOutPost(ctx context.Context, k keys.Article) error {
	if !s.feedPending() {
		return nil
	}
	if err := s.fanOut(ctx, k.Author, []keys.Article{k}); err != nil {
		return fmt.Errorf("post article: feed: %w", err)
	}
	return nil
}

// fanOut is fanOutPost for articles of one author at once (Repair's and
// an import's pending ones): the author's followers are read once per
// type, a chunk at a time, and each chunk's feed rows of every article
// written in batches; then the marks go, in one batch.
func (s *Store) fanOut(ctx context.Context, author string, arts []keys.Article) error {
	for _, t := range s.feed.Types {
		if err := s.fanOutType(ctx, author, arts, t); err != nil {
			return err
		}
	}
	if err := s.faultPoint(pointFeedDone); err != nil {
		return err
	}
	rows := make([][]byte, len(arts))
	for i, k := range arts {
		row, err := k.Key()
		if err != nil {
			return err
		}
		rows[i] = row
	}
	if len(rows) == 1 {
		return s.deleteColumns(ctx, keys.TableArticles, keys.FamilyArticles, rows[0], []string{keys.QualArticleFanout}, arts[0].Posted)
	}
	tb := []byte(keys.TableArticles)
	mark := map[string]map[string][]byte{keys.FamilyOnce: {keys.QualArticleFanout: nil}}
	res, err := s.sendWrites(ctx, "delete", keys.TableArticles, rows, func(ctx context.Context, i int) (hrpc.Call, error) {
		return hrpc.NewDel(ctx, tb, rows[i], mark, hrpc.TimestampUint64(uint64(arts[i].Posted)))
	})
	return firstResultError(res, err)
}

// fanOutType writes arts into the relType feed of every follower of
// author, or lists the author as wide when it has more than FanoutMax.
func (s *Store) fanOutType(ctx context.Context, author string, arts []keys.Article, relType string) error {
	if err := s.faultPoint(pointFeedFanout); err != nil {
		return err
	}
	deg, err := keys.Degree{Node: author, Dir: keys.Incoming, Type: relType}.Key()
	if err != nil {
		return err
	}
	c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, deg)
	if err != nil {
		return err
	}
	if n, _ := decodeMs(c[keys.QualDegree]); n > s.feed.FanoutMax {
		// Wide: its posts are merged at read time. The row is never
		// taken back (an author listed wide stays merged, so none of
		// its posts falls between the two ways).
		return s.put(ctx, keys.TableGraph, keys.FamilyGraph, keys.WideAuthor(relType, author),
			cells{keys.QualCreated: encodeMs(arts[len(arts)-1].Posted)}, s.nowMs())
	}
	prefix, err := keys.AdjacencyPrefix(author, keys.Incoming, relType)
	if err != nil {
		return err
	}
	var rows [][]byte
	var ts, posted []int64
	flush := func() error {
		err := s.putFeedBatch(ctx, rows, ts, posted)
		rows, ts, posted = rows[:0], ts[:0], posted[:0]
		return err
	}
	r := scanRange{table: keys.TableGraph, family: keys.FamilyGraph, start: prefix, stop: keys.PrefixEnd(prefix),
		keyOnly: true, chunkRows: writeChunk}
	err = s.scanAll(ctx, r, func(rw row) (bool, error) {
		a, err := keys.DecodeAdjacency(rw.key)
		if err != nil {
			return false, corrupt(rw.key, "not an adjacency row")
		}
		// Stamped no earlier than the follow's creation, which a read
		// requires of a feed row.
		at := max(s.nowMs(), a.Created)
		for _, k := range arts {
			row, err := keys.Feed{Reader: a.Other, Type: relType, Article: k}.Key()
			if err != nil {
				return false, err
			}
			rows, ts, posted = append(rows, row), append(ts, at), append(posted, k.Posted)
		}
		if len(rows) >= writeChunk {
			return true, flush()
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// putFeedBatch puts feed rows (cell c: the article's posting time), each
// stamped ts[i], writeChunk to a SendBatch.
func (s *Store) putFeedBatch(ctx context.Context, rows [][]byte, ts, posted []int64) error {
	tb := []byte(keys.TableGraph)
	res, err := s.sendWrites(ctx, "put", keys.TableGraph, rows, func(ctx context.Context, i int) (hrpc.Call, error) {
		value := map[string]map[string][]byte{keys.FamilyGraph: {keys.QualCreated: encodeMs(posted[i])}}
		return hrpc.NewPut(ctx, tb, rows[i], value, hrpc.TimestampUint64(uint64(ts[i])))
	})
	return firstResultError(res, err)
}

// firstResultError is a batch's error, else its first call's.
func firstResultError(res []hrpc.RPCResult, err error) error {
	if err != nil {
		return err
	}
	for i := range res {
		if res[i].Error != nil {
			return res[i].Error
		}
	}
	return nil
}

// backfillFollow brings the newest Backfill articles of rel's end into
// rel's start's feed, when its type is kept and the end is not wide (a
// wide author's articles are merged at read time). Stamped no earlier
// than the relationship's creation.
func (s *Store) backfillFollow(ctx context.Context, rel Relationship) error {
	if !s.FeedKept(rel.Type) || s.feed.Backfill < 0 {
		return nil
	}
	if err := s.faultPoint(pointFeedBackfill); err != nil {
		return err
	}
	if err := s.CheckArticleLayout(ctx); err != nil {
		return err
	}
	wide, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, keys.WideAuthor(rel.Type, rel.End))
	if err != nil {
		return err
	}
	if len(wide) > 0 {
		return nil // a read merges its timeline (the row is never taken back)
	}
	prefix := keys.TimelinePrefix(rel.End)
	rows, err := s.scan(ctx, scanRange{table: keys.TableArticles, family: keys.FamilyArticles,
		start: prefix, stop: keys.PrefixEnd(prefix), limit: s.feed.Backfill, keyOnly: true, dataOnly: true})
	if err != nil {
		return err
	}
	created := rel.Created.UnixMilli()
	feedRows := make([][]byte, 0, len(rows))
	ts := make([]int64, 0, len(rows))
	posted := make([]int64, 0, len(rows))
	now := max(s.nowMs(), created)
	for _, rw := range rows {
		k, err := keys.DecodeTimeline(rw.key)
		if err != nil {
			continue // not this layout's (a migration's): not an article of it
		}
		row, err := keys.Feed{Reader: rel.Start, Type: rel.Type, Article: k}.Key()
		if err != nil {
			return err
		}
		feedRows, ts, posted = append(feedRows, row), append(ts, now), append(posted, k.Posted)
	}
	return s.putFeedBatch(ctx, feedRows, ts, posted)
}

// errFeedNotKept answers a feed of a type the store keeps none of.
func (s *Store) errFeedNotKept(relType string) error {
	if len(s.feed.Types) == 0 {
		return invalid("no feeds are kept here (--feed-types is empty)")
	}
	return invalid("feeds are kept for relationship types %s only, not %q", strings.Join(s.feed.Types, ", "), relType)
}

// feedPos is a position in a feed: newest first by posted, then by
// author, then by seq, the highest first.
type feedPos = keys.Article

func comparePos(a, b feedPos) int {
	switch {
	case a.Posted != b.Posted:
		if a.Posted > b.Posted {
			return -1
		}
		return 1
	case a.Author != b.Author:
		return strings.Compare(a.Author, b.Author)
	case a.Seq != b.Seq:
		if a.Seq > b.Seq {
			return -1
		}
		return 1
	}
	return 0
}

// feedCand is one candidate of a page: a feed row (its article and
// follow to check) or a wide author's timeline row (its article to read;
// followedWide checked the follow).
type feedCand struct {
	pos     feedPos
	feedRow bool
	ts      int64 // a feed row's timestamp
}

// feedSource is one sorted stream of candidates: the reader's feed rows,
// or one wide author's timeline, read a chunk at a time from bound on
// (forward: rows >= bound; backward: rows < bound, read reversed).
type feedSource struct {
	author string // "" for the feed rows
	prefix []byte
	bound  []byte
	skip   []byte // forward: a row equal to it is the cursor's own, skipped
	buf    []feedCand
	done   bool
}

// Feed returns one page of reader's feed of relType, newest first, with
// the cursor of each article: its feed row's position, stable across
// follows, unfollows, edits and deletions. Cursors are bound to (reader, type); a cursor of another feed, a type
// not kept (FeedOptions.Types), a bad id or page size is ErrInvalidInput.
// A reader with no node has an empty feed.
func (s *Store) Feed(ctx context.Context, reader, relType string, req PageRequest) (ArticlePage, error) {
	if err := validateID("node id", reader); err != nil {
		return ArticlePage{}, err
	}
	if err := validateType("relationship type", relType); err != nil {
		return ArticlePage{}, err
	}
	if !s.FeedKept(relType) {
		return ArticlePage{}, s.errFeedNotKept(relType)
	}
	if err := req.validate(); err != nil {
		return ArticlePage{}, err
	}
	pr := pageRange{layout: keys.FeedLayout, table: keys.TableGraph, family: keys.FamilyGraph,
		prefix: keys.FeedPrefix(reader, relType)}
	var cursor *feedPos
	var cursorRow []byte
	if req.Cursor != "" {
		row, err := pr.cursorRow(req.Cursor)
		if err != nil {
			return ArticlePage{}, err
		}
		f, err := keys.DecodeFeed(row)
		if err != nil {
			return ArticlePage{}, invalid("malformed cursor")
		}
		cursor, cursorRow = &f.Article, row
	}
	var info PageInfo
	if req.Backward {
		info.HasNext = cursor != nil
	} else {
		info.HasPrevious = cursor != nil
	}
	want := req.Size + 1
	if req.NoLookahead {
		want = req.Size
	}
	if want == 0 {
		return ArticlePage{Articles: []Article{}, PageInfo: info}, nil
	}
	if err := s.CheckArticleLayout(ctx); err != nil {
		return ArticlePage{}, err
	}
	wide, err := s.followedWide(ctx, reader, relType)
	if err != nil {
		return ArticlePage{}, err
	}
	sources := make([]*feedSource, 0, 1+len(wide))
	own := &feedSource{prefix: pr.prefix}
	switch {
	case cursorRow == nil && !req.Backward:
		own.bound = pr.prefix
	case cursorRow == nil:
		own.bound = keys.PrefixEnd(pr.prefix)
	case !req.Backward:
		own.bound, own.skip = cursorRow, cursorRow
	default:
		own.bound = cursorRow
	}
	sources = append(sources, own)
	for _, w := range wide {
		src := &feedSource{author: w, prefix: keys.TimelinePrefix(w)}
		switch {
		case cursor == nil && !req.Backward:
			src.bound = src.prefix
		case cursor == nil:
			src.bound = keys.PrefixEnd(src.prefix)
		default:
			b, inclusive, err := keys.FeedBound(w, cursor.Posted, cursor.Author, cursor.Seq)
			if err != nil {
				return ArticlePage{}, invalid("malformed cursor")
			}
			src.bound = b
			if inclusive && !req.Backward {
				src.skip = b
			}
		}
		sources = append(sources, src)
	}

	var out []Article
	var outRows []articleRow
	var outKeys [][]byte
	var last *feedPos // the last candidate taken off the sources
	chunk := want
	round := 0
	for ; round < feedRounds && len(out) < want; round++ {
		cands, err := s.takeCandidates(ctx, sources, min(max(chunk, want-len(out)), feedRoundMax), chunk, req.Backward, last)
		if err != nil {
			return ArticlePage{}, err
		}
		if len(cands) == 0 {
			break
		}
		last = &cands[len(cands)-1].pos
		arts, rows, err := s.checkCandidates(ctx, reader, relType, cands)
		if err != nil {
			return ArticlePage{}, err
		}
		for i, a := range arts {
			if a == nil {
				continue
			}
			key, err := keys.Feed{Reader: reader, Type: relType, Article: cands[i].pos}.Key()
			if err != nil {
				return ArticlePage{}, err
			}
			out, outRows, outKeys = append(out, *a), append(outRows, rows[i]), append(outKeys, key)
		}
		chunk = min(2*chunk, feedRoundMax)
	}
	more := len(out) > req.Size
	if !more && len(out) < want {
		// Short: the sources ran dry, or the rounds did.
		for _, src := range sources {
			if len(src.buf) > 0 || !src.done {
				more = true
			}
		}
	}
	var past []byte
	if more && len(out) < want && round == feedRounds && last != nil {
		// Cut short by the bound: the next page goes on from the last
		// candidate checked, not from the last article returned.
		var err error
		if past, err = (keys.Feed{Reader: reader, Type: relType, Article: *last}).Key(); err != nil {
			return ArticlePage{}, err
		}
	}
	if len(out) > req.Size {
		out, outRows, outKeys = out[:req.Size], outRows[:req.Size], outKeys[:req.Size]
	}
	if req.Backward {
		info.HasPrevious = more
		slices.Reverse(out)
		slices.Reverse(outRows)
		slices.Reverse(outKeys)
	} else {
		info.HasNext = more
	}
	if out == nil {
		out = []Article{}
	}
	return ArticlePage{Articles: out, Cursors: Cursors{pr: pr, rows: outKeys, past: past, pastBackward: req.Backward},
		PageInfo: info, rows: outRows}, nil
}

// takeCandidates merges the sources' next n candidates in page order (a
// k-way merge; an article both fanned out and on a wide author's timeline,
// an author that became wide, is taken once), reading a source's next
// chunk when its buffer runs dry: those dry at the start (every source, on
// a page's first round) all at once.
func (s *Store) takeCandidates(ctx context.Context, sources []*feedSource, n, chunk int, backward bool, last *feedPos) ([]feedCand, error) {
	if err := s.fillDry(ctx, sources, chunk, backward); err != nil {
		return nil, err
	}
	var out []feedCand
	for len(out) < n {
		var best *feedSource
		for _, src := range sources {
			if len(src.buf) == 0 && !src.done {
				if err := s.fill(ctx, src, chunk, backward); err != nil {
					return nil, err
				}
			}
			if len(src.buf) == 0 {
				continue
			}
			if best == nil || before(src.buf[0].pos, best.buf[0].pos, backward) ||
				comparePos(src.buf[0].pos, best.buf[0].pos) == 0 && !src.buf[0].feedRow {
				// Of one article in two sources, the wide author's
				// timeline (its follow checked) goes first, and the feed
				// row, which may be an earlier follow's, is dropped.
				best = src
			}
		}
		if best == nil {
			break
		}
		c := best.buf[0]
		best.buf = best.buf[1:]
		prev := last
		if len(out) > 0 {
			prev = &out[len(out)-1].pos
		}
		if prev != nil && comparePos(*prev, c.pos) == 0 {
			continue // the same article from two sources
		}
		out = append(out, c)
	}
	return out, nil
}

// before reports whether a comes before b in the direction read.
func before(a, b feedPos, backward bool) bool {
	c := comparePos(a, b)
	if backward {
		return c > 0
	}
	return c < 0
}

// feedFillWorkers bounds the sources fillDry reads at once.
const feedFillWorkers = 16

// fillDry fills the sources whose buffers are empty, concurrently: a
// reader following k wide authors waits for about one scan, not k.
func (s *Store) fillDry(ctx context.Context, sources []*feedSource, chunk int, backward bool) error {
	var dry []*feedSource
	for _, src := range sources {
		if len(src.buf) == 0 && !src.done {
			dry = append(dry, src)
		}
	}
	if len(dry) <= 1 {
		for _, src := range dry {
			if err := s.fill(ctx, src, chunk, backward); err != nil {
				return err
			}
		}
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(feedFillWorkers)
	for _, src := range dry {
		g.Go(func() error { return s.fill(gctx, src, chunk, backward) })
	}
	return g.Wait()
}

// fill reads src's next chunk of rows. A wide author's timeline is read
// keys only: the articles of the candidates taken are read with their
// check (checkCandidates), so a page holds no bodies beyond those.
func (s *Store) fill(ctx context.Context, src *feedSource, chunk int, backward bool) error {
	r := scanRange{table: keys.TableGraph, family: keys.FamilyGraph, limit: chunk, compact: true, dataOnly: true}
	if src.author != "" {
		r.table, r.family, r.keyOnly = keys.TableArticles, keys.FamilyArticles, true
	}
	if backward {
		r.reversed, r.start, r.stop = true, src.bound, src.prefix
		r.limit++ // the bound itself may come back
	} else {
		r.start, r.stop = src.bound, keys.PrefixEnd(src.prefix)
		if src.skip != nil {
			r.limit++
		}
	}
	if !backward && bytes.Compare(r.start, r.stop) >= 0 || backward && bytes.Compare(r.start, r.stop) <= 0 {
		src.done = true
		return nil
	}
	rows, err := s.scan(ctx, r)
	if err != nil {
		return err
	}
	for _, rw := range rows {
		if !bytes.HasPrefix(rw.key, src.prefix) {
			continue
		}
		if backward && bytes.Compare(rw.key, src.bound) >= 0 || src.skip != nil && bytes.Equal(rw.key, src.skip) {
			continue
		}
		c := feedCand{ts: rw.ts}
		if src.author == "" {
			f, err := keys.DecodeFeed(rw.key)
			if err != nil {
				return corrupt(rw.key, "not a feed row")
			}
			c.pos, c.feedRow = f.Article, true
		} else {
			k, err := keys.DecodeTimeline(rw.key)
			if err != nil {
				continue
			}
			c.pos = k
		}
		src.buf = append(src.buf, c)
	}
	if len(rows) > 0 {
		lastKey := rows[len(rows)-1].key
		if backward {
			src.bound = lastKey
		} else {
			src.bound = keys.After(lastKey)
		}
	}
	src.skip = nil
	if len(rows) < r.limit {
		src.done = true
	}
	return nil
}

// checkCandidates reads what the candidates need (each one's article, and
// for feed rows the follow of each distinct author: its relationship row
// and its ends) in one batch of Gets, and returns each candidate's
// article, or nil for a stale one.
func (s *Store) checkCandidates(ctx context.Context, reader, relType string, cands []feedCand) ([]*Article, []articleRow, error) {
	var set getSet
	add := set.add
	type need struct{ art, rel, start, end int }
	needs := make([]need, len(cands))
	for i, c := range cands {
		row, err := c.pos.Key()
		if err != nil {
			return nil, nil, err
		}
		if !c.feedRow {
			needs[i].art = add(Get{keys.TableArticles, string(row)})
			continue
		}
		rk := RelationshipKey{Start: reader, Type: relType, End: c.pos.Author}
		rel, start, end, err := rk.Gets()
		if err != nil {
			return nil, nil, err
		}
		needs[i] = need{art: add(Get{keys.TableArticles, string(row)}), rel: add(rel), start: add(start), end: add(end)}
	}
	var rows []Row
	if len(set.gets) > 0 {
		var err error
		if rows, err = s.Read(ctx, set.gets); err != nil {
			return nil, nil, err
		}
	}
	arts := make([]*Article, len(cands))
	out := make([]articleRow, len(cands))
	for i, c := range cands {
		n := needs[i]
		if c.feedRow {
			rk := RelationshipKey{Start: reader, Type: relType, End: c.pos.Author}
			rel, err := rows[n.rel].Relationship(rk, rows[n.start], rows[n.end])
			if err != nil {
				return nil, nil, err
			}
			if rel == nil || c.ts < rel.Created.UnixMilli() {
				continue // unfollowed (or the row of an earlier follow)
			}
		}
		ar := rows[n.art]
		a, ok, err := decodeArticleCells(ar.key, ar.cells)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue // deleted
		}
		art, err := articleFrom(c.pos, a)
		if err != nil {
			return nil, nil, err
		}
		arts[i], out[i] = &art, articleRow{c.pos, ar.cells}
	}
	return arts, out, nil
}

// followedWide returns the wide authors of relType (at most
// MaxWideAuthors) that reader follows: one scan of the wide set, and one
// batch of Gets of reader's relationships to them with both ends' rows
// (Row.Relationship), so that a follow whose reader or author is being
// deleted, or whose deletion crashed half-way, merges nothing.
func (s *Store) followedWide(ctx context.Context, reader, relType string) ([]string, error) {
	prefix := keys.WideAuthorPrefix(relType)
	rows, err := s.scan(ctx, scanRange{table: keys.TableGraph, family: keys.FamilyGraph, start: prefix,
		stop: keys.PrefixEnd(prefix), limit: MaxWideAuthors, keyOnly: true, dataOnly: true})
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	start, err := NodeGet(reader)
	if err != nil {
		return nil, err
	}
	authors := make([]string, 0, len(rows))
	gets := []Get{start}
	for _, rw := range rows {
		_, author, err := keys.DecodeWideAuthor(rw.key)
		if err != nil || author == reader {
			continue
		}
		rel, _, end, err := RelationshipKey{Start: reader, Type: relType, End: author}.Gets()
		if err != nil {
			continue
		}
		authors, gets = append(authors, author), append(gets, rel, end)
	}
	if len(authors) == 0 {
		return nil, nil
	}
	got, err := s.Read(ctx, gets)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, author := range authors {
		rk := RelationshipKey{Start: reader, Type: relType, End: author}
		rel, err := got[1+2*i].Relationship(rk, got[0], got[2+2*i])
		if err != nil {
			return nil, err
		}
		if rel != nil {
			out = append(out, author)
		}
	}
	return out, nil
}

// getSet collects distinct Gets in the order first asked for, to be read
// in one batch: add returns a Get's index in gets.
type getSet struct {
	gets []Get
	at   map[Get]int
}

func (g *getSet) add(x Get) int {
	if i, ok := g.at[x]; ok {
		return i
	}
	if g.at == nil {
		g.at = map[Get]int{}
	}
	g.at[x] = len(g.gets)
	g.gets = append(g.gets, x)
	return len(g.gets) - 1
}
