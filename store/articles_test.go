package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Helpers of the article tests carry "article" in their names, so they do
// not collide with the graph tests of the same package.

func mustArticleAuthor(t testing.TB, s *Store, id string) {
	t.Helper()
	if _, err := s.CreateNode(context.Background(), id, "", Properties{"name": id}); err != nil {
		t.Fatalf("create author %q: %v", id, err)
	}
}

func mustPostArticle(t testing.TB, s *Store, author, title, body, category string) Article {
	t.Helper()
	a, err := s.PostArticle(context.Background(), author, title, body, category)
	if err != nil {
		t.Fatalf("post %q by %q: %v", title, author, err)
	}
	return a
}

// checkArticleInvariants asserts what repairArticles promises, from a raw
// scan of the articles table: every timeline article has exactly its
// category row with the same cells, every category row has its article,
// every counter equals the rows it counts and seq is past every seq used.
func checkArticleInvariants(t testing.TB, s *Store) {
	t.Helper()
	timeline := map[string]row{} // by the category row the article should have
	categories := map[string]row{}
	counters := map[string]cells{}
	want := map[string]map[string]int64{} // author -> counter -> rows
	maxSeq := map[string]uint64{}
	err := s.scanAll(context.Background(), scanRange{table: keys.TableArticles, family: keys.FamilyArticles}, func(rw row) (bool, error) {
		if k, err := keys.DecodeTimeline(rw.key); err == nil {
			a, ok, err := decodeTimelineState(rw.key, rw.cells)
			if err != nil || !ok {
				return false, fmt.Errorf("timeline row %x: %v", rw.key, err)
			}
			if a.isMarked() {
				return false, fmt.Errorf("timeline row %x: a deletion left unfinished", rw.key)
			}
			crow, err := categoryRow(k, a.category)
			if err != nil {
				return false, err
			}
			// The category row copies the article's cells, not the
			// exactly-once ones (xc, xo, xp).
			rw.cells = a.cells()
			timeline[string(crow)] = rw
			if want[k.Author] == nil {
				want[k.Author] = map[string]int64{}
			}
			want[k.Author][keys.QualArticleCount]++
			want[k.Author][keys.QualCategoryCount+a.category]++
			maxSeq[k.Author] = max(maxSeq[k.Author], k.Seq)
		} else if _, err := keys.DecodeCategory(rw.key); err == nil {
			categories[string(rw.key)] = rw
		} else if author, err := keys.DecodeCounters(rw.key); err == nil {
			counters[author] = rw.cells
		} else if _, _, err := keys.DecodeArticleOp(rw.key); err == nil {
			// an op row: no article's
		} else if bytes.Equal(rw.key, keys.ArticleLayoutRow()) {
			// the layout version: no article's
		} else {
			return false, fmt.Errorf("unknown row %x", rw.key)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for crow, tl := range timeline {
		c, ok := categories[crow]
		if !ok {
			t.Errorf("article %x has no category row", tl.key)
			continue
		}
		if !maps.EqualFunc(c.cells, tl.cells, bytes.Equal) || c.ts != tl.ts {
			t.Errorf("category row %x is %v@%d, its article %v@%d", crow, c.cells, c.ts, tl.cells, tl.ts)
		}
	}
	for crow := range categories {
		if _, ok := timeline[crow]; !ok {
			t.Errorf("category row %x has no article", crow)
		}
	}
	for _, author := range slices.Collect(maps.Keys(counters)) {
		if want[author] == nil {
			want[author] = map[string]int64{}
		}
	}
	for author, w := range want {
		have := counters[author]
		for q := range have {
			if q == keys.QualArticleCount || strings.HasPrefix(q, keys.QualCategoryCount) {
				if _, ok := w[q]; !ok {
					w[q] = 0
				}
			}
		}
		for q, n := range w {
			got, ok := decodeMs(have[q])
			if have[q] == nil {
				got, ok = 0, true
			}
			if !ok || got != n {
				t.Errorf("author %q: counter %q is %x, want %d", author, q, have[q], n)
			}
		}
		if seq, _ := decodeMs(have[keys.QualSeq]); uint64(seq) < maxSeq[author] {
			t.Errorf("author %q: seq %d is behind seq %d in use", author, seq, maxSeq[author])
		}
	}
}

// callLog is a Tracer that keeps every call.
type callLog struct {
	mu    sync.Mutex
	calls []Call
}

func (l *callLog) StoreCall(c Call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, c)
}

func (l *callLog) take() []Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.calls
	l.calls = nil
	return c
}

func articleIDs(as []Article) []string {
	ids := make([]string, len(as))
	for i, a := range as {
		ids[i] = a.ID
	}
	return ids
}

func articleRef[T any](v T) *T { return &v }

func TestArticleRoundTrip(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	posted := mustPostArticle(t, s, "ann", "Hello", "First post, hello world.", "news")
	if posted.Author != "ann" || posted.Title != "Hello" || posted.Category != "news" || !posted.Posted.Equal(posted.Updated) {
		t.Fatalf("posted %+v", posted)
	}
	got, err := s.getArticle(ctx, posted.ID)
	if err != nil || got != posted {
		t.Fatalf("get: %+v, %v; want %+v", got, err, posted)
	}

	t.Run("unknown author", func(t *testing.T) {
		if _, err := s.PostArticle(ctx, "nobody", "t", "b", "c"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})

	t.Run("batch", func(t *testing.T) {
		second := mustPostArticle(t, s, "ann", "Second", "", "misc")
		missing, _ := keys.Article{Author: "ann", Posted: 5, Seq: 99}.ID()
		log := &callLog{}
		as, errs := s.GetArticles(WithTracer(ctx, log), []string{second.ID, "bad id", missing, posted.ID})
		if errs[0] != nil || as[0] != second || errs[3] != nil || as[3] != posted {
			t.Fatalf("found: %+v %v", as, errs)
		}
		if !errors.Is(errs[1], ErrInvalidInput) || !errors.Is(errs[2], ErrNotFound) {
			t.Fatalf("errors %v", errs)
		}
		if calls := log.take(); len(calls) != 1 || calls[0].Op != "Batch" {
			t.Fatalf("calls %+v, want one batch", calls)
		}
	})

	t.Run("update", func(t *testing.T) {
		up, err := s.UpdateArticle(ctx, posted.ID, articleRef("Hello again"), nil, articleRef("opinion"))
		if err != nil {
			t.Fatal(err)
		}
		if up.ID != posted.ID || up.Title != "Hello again" || up.Body != posted.Body || up.Category != "opinion" ||
			!up.Updated.After(posted.Updated) || !up.Posted.Equal(posted.Posted) {
			t.Fatalf("updated %+v", up)
		}
		if got, err := s.getArticle(ctx, posted.ID); err != nil || got != up {
			t.Fatalf("get after update: %+v, %v", got, err)
		}
		same, err := s.UpdateArticle(ctx, posted.ID, nil, nil, nil)
		if err != nil || same != up {
			t.Fatalf("empty update: %+v, %v", same, err)
		}
		checkArticleInvariants(t, s)
		checkArticleWordCounts(t, s, "ann")
	})

	t.Run("delete", func(t *testing.T) {
		if err := s.DeleteArticle(ctx, posted.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.getArticle(ctx, posted.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("get after delete: %v", err)
		}
		if err := s.DeleteArticle(ctx, posted.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("second delete: %v", err)
		}
		if _, err := s.UpdateArticle(ctx, posted.ID, articleRef("x"), nil, nil); !errors.Is(err, ErrNotFound) {
			t.Fatalf("update after delete: %v", err)
		}
		checkArticleInvariants(t, s)
		checkArticleWordCounts(t, s, "ann")
	})
}

func TestArticleInvalidInputWritesNothing(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	mustArticleAuthor(t, s, "bob")
	a := mustPostArticle(t, s, "ann", "Title", "body words", "cat")
	bobs := mustPostArticle(t, s, "bob", "Bob", "", "cat")
	page, err := s.Articles(ctx, "bob", ArticleQuery{}, PageRequest{Size: 1})
	if err != nil || page.Cursors.Len() != 1 {
		t.Fatal(page, err)
	}
	bobCursor := page.Cursors.All()[0]
	long := strings.Repeat("x", MaxTitleBytes+1)
	huge := strings.Repeat("y", MaxBodyBytes+1)
	badUTF8 := "ok\xffno"
	cases := []struct {
		name string
		op   func() error
	}{
		{"post empty author", func() error { _, err := s.PostArticle(ctx, "", "t", "b", "c"); return err }},
		{"post long author", func() error {
			_, err := s.PostArticle(ctx, strings.Repeat("a", MaxIDBytes+1), "t", "b", "c")
			return err
		}},
		{"post bad utf8 author", func() error { _, err := s.PostArticle(ctx, badUTF8, "t", "b", "c"); return err }},
		{"post empty title", func() error { _, err := s.PostArticle(ctx, "ann", "", "b", "c"); return err }},
		{"post long title", func() error { _, err := s.PostArticle(ctx, "ann", long, "b", "c"); return err }},
		{"post bad utf8 title", func() error { _, err := s.PostArticle(ctx, "ann", badUTF8, "b", "c"); return err }},
		{"post huge body", func() error { _, err := s.PostArticle(ctx, "ann", "t", huge, "c"); return err }},
		{"post bad utf8 body", func() error { _, err := s.PostArticle(ctx, "ann", "t", badUTF8, "c"); return err }},
		{"post empty category", func() error { _, err := s.PostArticle(ctx, "ann", "t", "b", ""); return err }},
		{"post long category", func() error {
			_, err := s.PostArticle(ctx, "ann", "t", "b", strings.Repeat("c", MaxTypeBytes+1))
			return err
		}},
		{"get bad id", func() error { _, err := s.getArticle(ctx, "not-an-id!"); return err }},
		{"get empty id", func() error { _, err := s.getArticle(ctx, ""); return err }},
		{"get id with empty author", func() error {
			id, _ := keys.Article{Author: "", Posted: 1, Seq: 1}.ID()
			_, err := s.getArticle(ctx, id)
			return err
		}},
		{"get id with padding", func() error { _, err := s.getArticle(ctx, a.ID+"="); return err }},
		{"update bad id", func() error { _, err := s.UpdateArticle(ctx, "%%", articleRef("t"), nil, nil); return err }},
		{"update empty title", func() error { _, err := s.UpdateArticle(ctx, a.ID, articleRef(""), nil, nil); return err }},
		{"update huge body", func() error { _, err := s.UpdateArticle(ctx, a.ID, nil, &huge, nil); return err }},
		{"update bad category", func() error { _, err := s.UpdateArticle(ctx, a.ID, nil, nil, articleRef("")); return err }},
		{"update bad utf8 title, good body", func() error {
			_, err := s.UpdateArticle(ctx, a.ID, &badUTF8, articleRef("fine"), nil)
			return err
		}},
		{"delete bad id", func() error { return s.DeleteArticle(ctx, "AQ") }},
		{"articles bad author", func() error { _, err := s.Articles(ctx, "", ArticleQuery{}, PageRequest{Size: 1}); return err }},
		{"articles bad category", func() error {
			_, err := s.Articles(ctx, "ann", ArticleQuery{Category: strings.Repeat("c", MaxTypeBytes+1)}, PageRequest{Size: 1})
			return err
		}},
		{"articles page too big", func() error {
			_, err := s.Articles(ctx, "ann", ArticleQuery{}, PageRequest{Size: MaxPageSize + 1})
			return err
		}},
		{"articles negative page", func() error { _, err := s.Articles(ctx, "ann", ArticleQuery{}, PageRequest{Size: -1}); return err }},
		{"articles foreign cursor", func() error {
			_, err := s.Articles(ctx, "ann", ArticleQuery{}, PageRequest{Size: 1, Cursor: bobCursor})
			return err
		}},
		{"articles foreign cursor, empty window", func() error {
			now := time.Now()
			_, err := s.Articles(ctx, "ann", ArticleQuery{PostedAfter: &now, PostedBefore: &now}, PageRequest{Size: 1, Cursor: bobCursor})
			return err
		}},
		{"counts bad author", func() error { _, err := s.ArticleCounts(ctx, []string{"ann", ""}, ""); return err }},
		{"counts bad category", func() error { _, err := s.ArticleCounts(ctx, []string{"ann"}, badUTF8); return err }},
		{"top words n=0", func() error { _, err := s.TopWords(ctx, "ann", 0); return err }},
		{"top words n too big", func() error { _, err := s.TopWords(ctx, "ann", MaxTopWords+1); return err }},
		{"top words bad author", func() error { _, err := s.TopWords(ctx, "", 10); return err }},
		{"rebuild bad author", func() error { return s.RebuildWordCounts(ctx, badUTF8) }},
	}
	before := storedRows(t, s)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.op(); !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("err = %v, want ErrInvalidInput", err)
			}
			if after := storedRows(t, s); !maps.Equal(before, after) {
				t.Fatalf("stored data changed")
			}
		})
	}
	if got, err := s.getArticle(ctx, bobs.ID); err != nil || got != bobs {
		t.Fatalf("bob's article: %+v, %v", got, err)
	}
}

// collectArticlePages pages through q 7 at a time, forward from the newest
// or backward from the oldest, calling between() after each page, and
// returns the ids newest first.
func collectArticlePages(ctx context.Context, t *testing.T, s *Store, author string, q ArticleQuery, backward bool, between func()) []string {
	t.Helper()
	var ids []string
	req := PageRequest{Size: 7, Backward: backward}
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
		p, err := s.Articles(ctx, author, q, req)
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		if len(p.Articles) != p.Cursors.Len() {
			t.Fatalf("%d articles, %d cursors", len(p.Articles), p.Cursors.Len())
		}
		if pages == 0 && (backward && p.HasNext || !backward && p.HasPrevious) {
			t.Fatalf("first page has something before it: %+v", p.PageInfo)
		}
		got := articleIDs(p.Articles)
		more := p.HasNext
		if backward {
			ids = append(got, ids...)
			more = p.HasPrevious
		} else {
			ids = append(ids, got...)
		}
		if !more {
			return ids
		}
		if len(got) != 7 {
			t.Fatalf("page %d has %d articles and more beyond", pages, len(got))
		}
		if backward {
			req.Cursor = p.Cursors.All()[0]
		} else {
			req.Cursor = p.Cursors.All()[p.Cursors.Len()-1]
		}
		if between != nil {
			between()
		}
	}
}

// newestFirst lists the ids of as, newest first as Articles orders them:
// by posting time, then by sequence number, the last created first.
func newestFirst(as []Article) []string {
	sorted := slices.Clone(as)
	slices.SortFunc(sorted, func(a, b Article) int {
		return cmp.Or(b.Posted.Compare(a.Posted), cmp.Compare(articleSeq(b), articleSeq(a)))
	})
	return articleIDs(sorted)
}

// articleSeq is the sequence number in a's public id.
func articleSeq(a Article) uint64 {
	k, err := keys.ParseArticleID(a.ID)
	if err != nil {
		panic(err)
	}
	return k.Seq
}

func TestArticlePagingThousand(t *testing.T) {
	clk := newFakeClock()
	clk.step = 1 // every reading a millisecond later: distinct posting times
	s := newTestStoreWithClock(t, clk)
	mustArticleAuthor(t, s, "pat")
	mustArticleAuthor(t, s, "other")
	var inCat, all []Article
	for i := range 1000 {
		a := mustPostArticle(t, s, "pat", fmt.Sprintf("c%04d", i), "", "cat")
		inCat, all = append(inCat, a), append(all, a)
		if i%7 == 0 {
			all = append(all, mustPostArticle(t, s, "pat", fmt.Sprintf("d%04d", i), "", "dog"))
			mustPostArticle(t, s, "other", "noise", "", "cat")
		}
	}
	for _, c := range []struct {
		name string
		q    ArticleQuery
		arts *[]Article
	}{
		{"category", ArticleQuery{Category: "cat"}, &inCat},
		{"timeline", ArticleQuery{}, &all},
	} {
		n := 0
		postHead := func() {
			n++
			a := mustPostArticle(t, s, "pat", fmt.Sprintf("new %s %d", c.name, n), "", "cat")
			inCat, all = append(inCat, a), append(all, a)
		}
		t.Run(c.name+" forward", func(t *testing.T) {
			want := newestFirst(*c.arts)
			got := collectArticlePages(t.Context(), t, s, "pat", c.q, false, postHead)
			if !slices.Equal(got, want) {
				t.Fatalf("got %d ids, want %d, newest first", len(got), len(want))
			}
		})
		t.Run(c.name+" backward", func(t *testing.T) {
			before := len(*c.arts)
			got := collectArticlePages(t.Context(), t, s, "pat", c.q, true, postHead)
			// Paging backward runs toward the head, so it meets the
			// articles posted meanwhile last.
			want := newestFirst(*c.arts)
			if len(want) <= before || !slices.Equal(got, want) {
				t.Fatalf("got %d ids, want %d (%d before paging), newest first", len(got), len(want), before)
			}
		})
	}
	counts, err := s.ArticleCounts(t.Context(), []string{"pat", "other", "nobody"}, "cat")
	if err != nil || !slices.Equal(counts, []int64{int64(len(inCat)), 143, 0}) {
		t.Fatalf("counts %v, %v; want [%d 143 0]", counts, err, len(inCat))
	}
	counts, err = s.ArticleCounts(t.Context(), []string{"pat"}, "")
	if err != nil || counts[0] != int64(len(all)) {
		t.Fatalf("count %v, %v; want %d", counts, err, len(all))
	}
}

// scansStayIn fails unless every scan in calls lies within [lo, hi].
func scansStayIn(t *testing.T, calls []Call, lo, hi []byte) int {
	t.Helper()
	scans := 0
	for _, c := range calls {
		if c.Op != "Scan" {
			continue
		}
		scans++
		for _, b := range [][]byte{c.StartRow, c.StopRow} {
			if bytes.Compare(b, lo) < 0 || bytes.Compare(b, hi) > 0 {
				t.Errorf("scan [%x, %x) reversed=%v leaves [%x, %x]", c.StartRow, c.StopRow, c.Reversed, lo, hi)
			}
		}
	}
	return scans
}

func TestArticleWindows(t *testing.T) {
	clk := newFakeClock() // frozen: the test sets each posting time
	s := newTestStoreWithClock(t, clk)
	mustArticleAuthor(t, s, "win")
	var arts []Article
	for i := range 50 {
		arts = append(arts, mustPostArticle(t, s, "win", fmt.Sprintf("a%d", i), "", []string{"even", "odd"}[i%2]))
		clk.Advance(10 * time.Millisecond)
	}
	at := func(i int) *time.Time { return articleRef(arts[i].Posted) }
	off := func(i int, d time.Duration) *time.Time { return articleRef(arts[i].Posted.Add(d)) }
	cases := []struct {
		name          string
		after, before *time.Time
		from, to      int // the window holds arts[from:to]
	}{
		{"open", nil, nil, 0, 50},
		{"after is inclusive", at(10), nil, 10, 50},
		{"before is exclusive", nil, at(20), 0, 20},
		{"both", at(10), at(20), 10, 20},
		{"after just past a posting", off(10, time.Nanosecond), nil, 11, 50},
		{"after just before a posting", off(10, -time.Nanosecond), nil, 10, 50},
		{"before just past a posting", nil, off(20, time.Nanosecond), 0, 21},
		{"before a millisecond past a posting", nil, off(20, time.Millisecond), 0, 21},
		{"one article", at(33), off(33, time.Millisecond), 33, 34},
		{"equal bounds", at(10), at(10), 0, 0},
		{"reversed bounds", at(20), at(10), 0, 0},
		{"before everything", nil, at(0), 0, 0},
		{"after everything", off(49, time.Millisecond), nil, 0, 0},
		{"before the epoch", nil, articleRef(time.UnixMilli(-5)), 0, 0},
		{"after before the epoch", articleRef(time.UnixMilli(-5)), at(3), 0, 3},
	}
	for _, cat := range []string{"", "even", "odd"} {
		prefix := keys.TimelinePrefix("win")
		if cat != "" {
			prefix = keys.CategoryPrefix("win", cat)
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%s", cat, c.name), func(t *testing.T) {
				var want []Article
				for _, a := range arts[c.from:c.to] {
					if cat == "" || a.Category == cat {
						want = append(want, a)
					}
				}
				log := &callLog{}
				q := ArticleQuery{Category: cat, PostedAfter: c.after, PostedBefore: c.before}
				got := collectArticlePages(WithTracer(t.Context(), log), t, s, "win", q, false, nil)
				if !slices.Equal(got, newestFirst(want)) {
					t.Fatalf("got %d articles, want %d", len(got), len(want))
				}
				scans := scansStayIn(t, log.take(), prefix, keys.PrefixEnd(prefix))
				if c.from == c.to && c.after != nil && c.before != nil && !c.after.Before(*c.before) && scans != 0 {
					t.Fatalf("an empty window scanned %d times", scans)
				}
				back := collectArticlePages(WithTracer(t.Context(), log), t, s, "win", q, true, nil)
				if !slices.Equal(back, newestFirst(want)) {
					t.Fatalf("backward: got %d articles, want %d", len(back), len(want))
				}
				scansStayIn(t, log.take(), prefix, keys.PrefixEnd(prefix))
			})
		}
	}
}

func TestArticleForgedCursors(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t)
	for _, id := range []string{"ann", "bob"} {
		mustArticleAuthor(t, s, id)
		for i := range 3 {
			mustPostArticle(t, s, id, fmt.Sprint("t", i), "", "x")
			mustPostArticle(t, s, id, fmt.Sprint("u", i), "", "y")
		}
	}
	cursor := func(author, cat string) string {
		p, err := s.Articles(ctx, author, ArticleQuery{Category: cat}, PageRequest{Size: 1})
		if err != nil || p.Cursors.Len() != 1 {
			t.Fatal(p, err)
		}
		return p.Cursors.All()[0]
	}
	annX := cursor("ann", "x")
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	// withTag keeps annX's connection tag and replaces what follows it.
	rawX, err := base64.RawURLEncoding.DecodeString(annX)
	if err != nil {
		t.Fatal(err)
	}
	withTag := func(rest []byte) string {
		return base64.RawURLEncoding.EncodeToString(append(append([]byte(nil), rawX[:cursorTagLen]...), rest...))
	}
	garbage := make([]byte, 16)
	for i := range garbage {
		garbage[i] = byte(rng.UintN(256))
	}
	cases := []struct {
		name, cat, cursor string
	}{
		{"random bytes", "x", random(24)},
		{"random short", "", random(3)},
		{"not base64", "x", "!!!!!!!!!!!!!!!!"},
		{"another author's", "x", cursor("bob", "x")},
		{"another author's timeline", "", cursor("bob", "")},
		{"timeline cursor on a category", "x", cursor("ann", "")},
		{"category cursor on the timeline", "", annX},
		{"another category's", "y", annX},
		{"right tag, garbage row", "x", withTag(garbage)},
		{"right tag, truncated row", "x", withTag(rawX[cursorTagLen : len(rawX)-1])},
		{"right tag, nothing after", "x", withTag(nil)},
		{"too long", "x", annX + strings.Repeat("A", maxCursorLen)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, backward := range []bool{false, true} {
				_, err := s.Articles(ctx, "ann", ArticleQuery{Category: c.cat}, PageRequest{Size: 2, Cursor: c.cursor, Backward: backward})
				if !errors.Is(err, ErrInvalidInput) {
					t.Fatalf("backward=%v: err = %v, want ErrInvalidInput", backward, err)
				}
			}
		})
	}
	if _, err := s.Articles(ctx, "ann", ArticleQuery{Category: "x"}, PageRequest{Size: 2, Cursor: annX}); err != nil {
		t.Fatalf("own cursor: %v", err)
	}
}

func TestArticleCategoryChangeMovesIndexAndCounts(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	a := mustPostArticle(t, s, "ann", "Moving", "body", "from")
	mustPostArticle(t, s, "ann", "Staying", "body", "from")
	if _, err := s.UpdateArticle(ctx, a.ID, nil, nil, articleRef("to")); err != nil {
		t.Fatal(err)
	}
	list := func(cat string) []string {
		p, err := s.Articles(ctx, "ann", ArticleQuery{Category: cat}, PageRequest{Size: 10})
		if err != nil {
			t.Fatal(err)
		}
		var titles []string
		for _, a := range p.Articles {
			titles = append(titles, a.Title)
		}
		return titles
	}
	if from, to := list("from"), list("to"); !slices.Equal(from, []string{"Staying"}) || !slices.Equal(to, []string{"Moving"}) {
		t.Fatalf("from %v, to %v", from, to)
	}
	count := func(cat string) int64 {
		n, err := s.ArticleCounts(ctx, []string{"ann"}, cat)
		if err != nil {
			t.Fatal(err)
		}
		return n[0]
	}
	if count("from") != 1 || count("to") != 1 || count("") != 2 {
		t.Fatalf("counts from=%d to=%d all=%d", count("from"), count("to"), count(""))
	}
	// And back: the row deleted at the move shows again with a newer u.
	if _, err := s.UpdateArticle(ctx, a.ID, nil, nil, articleRef("from")); err != nil {
		t.Fatal(err)
	}
	if from, to := list("from"), list("to"); len(from) != 2 || len(to) != 0 {
		t.Fatalf("after moving back: from %v, to %v", from, to)
	}
	if count("from") != 2 || count("to") != 0 {
		t.Fatalf("after moving back: from=%d to=%d", count("from"), count("to"))
	}
	// An edit of the body alone rewrites b and u only: the title and
	// category cells written at the move back still read, in both rows.
	if _, err := s.UpdateArticle(ctx, a.ID, nil, articleRef("edited"), nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.getArticle(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Articles(ctx, "ann", ArticleQuery{Category: "from"}, PageRequest{Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(p.Articles, func(x Article) bool { return x.ID == a.ID })
	if got.Title != "Moving" || got.Body != "edited" || got.Category != "from" || i < 0 || p.Articles[i] != got {
		t.Fatalf("after a body edit: article %+v, category page %+v", got, p.Articles)
	}
	checkArticleInvariants(t, s)
}

func TestArticleCountsAfterRandomOperations(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t)
	authors := []string{"a", "b", "c"}
	cats := []string{"red", "green", "blue", "with\x00nul"}
	for _, a := range authors {
		mustArticleAuthor(t, s, a)
	}
	type model struct{ author, cat string }
	live := map[string]model{}
	rng := rand.New(rand.NewPCG(3, 4))
	pick := func() string {
		ids := slices.Sorted(maps.Keys(live))
		return ids[rng.IntN(len(ids))]
	}
	for i := range 300 {
		switch op := rng.IntN(10); {
		case op < 5 || len(live) == 0:
			author, cat := authors[rng.IntN(len(authors))], cats[rng.IntN(len(cats))]
			a := mustPostArticle(t, s, author, fmt.Sprint("p", i), "", cat)
			live[a.ID] = model{author, cat}
		case op < 8:
			id := pick()
			cat := cats[rng.IntN(len(cats))]
			if _, err := s.UpdateArticle(ctx, id, articleRef(fmt.Sprint("u", i)), nil, &cat); err != nil {
				t.Fatal(err)
			}
			live[id] = model{live[id].author, cat}
		default:
			id := pick()
			if err := s.DeleteArticle(ctx, id); err != nil {
				t.Fatal(err)
			}
			delete(live, id)
		}
	}
	for _, cat := range append([]string{""}, cats...) {
		got, err := s.ArticleCounts(ctx, authors, cat)
		if err != nil {
			t.Fatal(err)
		}
		for i, author := range authors {
			var want int64
			for _, m := range live {
				if m.author == author && (cat == "" || m.cat == cat) {
					want++
				}
			}
			if got[i] != want {
				t.Errorf("author %q category %q: count %d, want %d", author, cat, got[i], want)
			}
		}
	}
	checkArticleInvariants(t, s)
}

var errArticleCrash = errors.New("simulated crash")

// articleFaultPoints runs op with a recording hook and returns the fault
// points it passed, in order.
func articleFaultPoints(t *testing.T, s *Store, op func() error) []string {
	t.Helper()
	var points []string
	s.fault = func(p string) error { points = append(points, p); return nil }
	defer func() { s.fault = nil }()
	if err := op(); err != nil {
		t.Fatal(err)
	}
	return points
}

func TestArticleRepairAfterCrashAtEveryPoint(t *testing.T) {
	type scenario struct {
		name string
		op   func(s *Store, id string) error
	}
	setup := func(t *testing.T, s *Store) string {
		mustArticleAuthor(t, s, "ann")
		mustPostArticle(t, s, "ann", "Other", "unrelated words here", "old")
		return mustPostArticle(t, s, "ann", "Victim", "Some words, some more words", "old").ID
	}
	scenarios := []scenario{
		{"post", func(s *Store, _ string) error {
			_, err := s.PostArticle(context.Background(), "ann", "New one", "fresh words and some", "old")
			return err
		}},
		{"post in a new category", func(s *Store, _ string) error {
			_, err := s.PostArticle(context.Background(), "ann", "New one", "fresh words", "new")
			return err
		}},
		{"update text", func(s *Store, id string) error {
			_, err := s.UpdateArticle(context.Background(), id, articleRef("Victim renamed"), articleRef("other words entirely"), nil)
			return err
		}},
		{"update category", func(s *Store, id string) error {
			_, err := s.UpdateArticle(context.Background(), id, nil, nil, articleRef("new"))
			return err
		}},
		{"update all", func(s *Store, id string) error {
			_, err := s.UpdateArticle(context.Background(), id, articleRef("T"), articleRef("b b b"), articleRef("new"))
			return err
		}},
		{"delete", func(s *Store, id string) error { return s.DeleteArticle(context.Background(), id) }},
	}
	seen := map[string]bool{}
	for _, sc := range scenarios {
		s := newTestStore(t)
		id := setup(t, s)
		points := articleFaultPoints(t, s, func() error { return sc.op(s, id) })
		for _, p := range points {
			seen[p] = true
		}
		for crashAt := range points {
			t.Run(fmt.Sprintf("%s/%d %s", sc.name, crashAt, points[crashAt]), func(t *testing.T) {
				ctx := t.Context()
				s := newTestStore(t)
				id := setup(t, s)
				n := 0
				s.fault = func(string) error {
					if n++; n == crashAt+1 {
						return errArticleCrash
					}
					return nil
				}
				if err := sc.op(s, id); !errors.Is(err, errArticleCrash) {
					t.Fatalf("op: %v, want the crash", err)
				}
				s.fault = nil
				fixes := map[string]int{}
				if err := s.repairArticles(ctx, func(kind string, n int) { fixes[kind] += n }); err != nil {
					t.Fatal(err)
				}
				checkArticleInvariants(t, s)
				if err := s.RebuildWordCounts(ctx, "ann"); err != nil {
					t.Fatal(err)
				}
				checkArticleWordCounts(t, s, "ann")
				again := map[string]int{}
				if err := s.repairArticles(ctx, func(kind string, n int) { again[kind] += n }); err != nil {
					t.Fatal(err)
				}
				if len(again) != 0 {
					t.Fatalf("second repair fixed %v after the first fixed %v", again, fixes)
				}
				// The store still works: the article can be read, changed
				// and deleted, and the books still balance.
				if a, err := s.getArticle(ctx, id); err == nil {
					if _, err := s.UpdateArticle(ctx, a.ID, articleRef("after"), nil, articleRef("after")); err != nil {
						t.Fatal(err)
					}
					if err := s.DeleteArticle(ctx, a.ID); err != nil {
						t.Fatal(err)
					}
				}
				checkArticleInvariants(t, s)
				checkArticleWordCounts(t, s, "ann")
			})
		}
	}
	t.Logf("fault points: %v", slices.Sorted(maps.Keys(seen)))
}

func TestArticleRepairFixesHandMadeDamage(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	a := mustPostArticle(t, s, "ann", "A", "a", "x")
	b := mustPostArticle(t, s, "ann", "B", "b", "x")
	kb, _ := keys.ParseArticleID(b.ID)
	ka, _ := keys.ParseArticleID(a.ID)
	// Stale cells in a's index row, b's index row also filed elsewhere, an
	// index row of an article that never was, counters off, seq behind.
	staleRow, _ := categoryRow(ka, "x")
	if err := s.put(ctx, keys.TableArticles, keys.FamilyArticles, staleRow, cells{keys.QualTitle: []byte("old")}, a.Updated.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	elsewhere, _ := categoryRow(kb, "y")
	ghost, _ := categoryRow(keys.Article{Author: "ann", Posted: 7, Seq: 7}, "x")
	for _, r := range [][]byte{elsewhere, ghost} {
		if err := s.put(ctx, keys.TableArticles, keys.FamilyArticles, r, articleCells{"t", "b", "y", 1}.cells(), 1); err != nil {
			t.Fatal(err)
		}
	}
	counters := keys.Counters("ann")
	cur, err := s.scan(ctx, scanRange{table: keys.TableArticles, family: keys.FamilyArticles, start: counters, stop: keys.After(counters)})
	if err != nil || len(cur) != 1 {
		t.Fatal(cur, err)
	}
	// Increments may run ahead of the clock; the damage must not be older.
	if err := s.put(ctx, keys.TableArticles, keys.FamilyArticles, counters,
		cells{keys.QualArticleCount: encodeMs(9), keys.QualCategoryCount + "zzz": encodeMs(3), keys.QualCategoryCount + "x": []byte("bad"), keys.QualSeq: encodeMs(1)},
		max(s.nowMs(), cur[0].ts)); err != nil {
		t.Fatal(err)
	}
	fixes := map[string]int{}
	if err := s.repairArticles(ctx, func(kind string, n int) { fixes[kind] += n }); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{fixCategoryRowRefreshed: 1, fixCategoryRowDeleted: 2, fixArticleCounter: 3, fixArticleSeq: 1}
	if !maps.Equal(fixes, want) {
		t.Fatalf("fixes %v, want %v", fixes, want)
	}
	checkArticleInvariants(t, s)
	c := mustPostArticle(t, s, "ann", "C", "c", "x")
	if kc, _ := keys.ParseArticleID(c.ID); kc.Seq <= kb.Seq {
		t.Fatalf("seq %d handed out again (b has %d)", kc.Seq, kb.Seq)
	}
}

func TestArticleConcurrentUpdatesConverge(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	a := mustPostArticle(t, s, "ann", "start", "start body", "c")
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Go(func() {
			title, body := fmt.Sprintf("title %d", i), fmt.Sprintf("body %d words %d", i, i%3)
			if _, err := s.UpdateArticle(ctx, a.ID, &title, &body, nil); err != nil && !errors.Is(err, ErrConflict) {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	final, err := s.getArticle(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Articles(ctx, "ann", ArticleQuery{Category: "c"}, PageRequest{Size: 5})
	if err != nil || len(p.Articles) != 1 || p.Articles[0] != final {
		t.Fatalf("category row %+v, %v; article %+v", p.Articles, err, final)
	}
	checkArticleInvariants(t, s)
	checkArticleWordCounts(t, s, "ann")
}

func BenchmarkPostArticle(b *testing.B) {
	s := newTestStore(b)
	mustArticleAuthor(b, s, "bench")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.PostArticle(ctx, "bench", "A benchmark title", "Some body text with a few words in it.", "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTimelinePage20(b *testing.B) {
	s := newTestStore(b)
	mustArticleAuthor(b, s, "bench")
	ctx := context.Background()
	for i := range 200 {
		mustPostArticle(b, s, "bench", fmt.Sprint("title ", i), "Some body text with a few words in it.", "bench")
	}
	mid, err := s.Articles(ctx, "bench", ArticleQuery{}, PageRequest{Size: 100})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, cursor string
	}{{"head", ""}, {"middle", mid.Cursors.All()[99]}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := s.Articles(ctx, "bench", ArticleQuery{}, PageRequest{Size: 20, Cursor: c.cursor})
				if err != nil || len(p.Articles) != 20 {
					b.Fatal(len(p.Articles), err)
				}
			}
		})
	}
}

// wideAuthorStore is a store whose author "bench" has posted 5,000
// distinct words, w0 to w4999: a word count row of 5,000 columns and a
// full top-words list.
func wideAuthorStore(b testing.TB) *Store {
	s := newTestStore(b)
	mustArticleAuthor(b, s, "bench")
	var body strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&body, "w%d ", i)
		if i%500 == 499 {
			mustPostArticle(b, s, "bench", "vocabulary", body.String(), "bench")
			body.Reset()
		}
	}
	return s
}

// BenchmarkPostArticleLongToWideAuthor posts articles of 200 words (about
// 140 distinct) to the wide author: the common case the two benchmarks
// around it bracket, where a post's cost is its words' Increment, and the
// top-words merge is of many words at once.
func BenchmarkPostArticleLongToWideAuthor(b *testing.B) {
	s := wideAuthorStore(b)
	ctx := context.Background()
	var texts []string
	for j := range 64 {
		var body strings.Builder
		for i := range 200 {
			if i%3 == 0 {
				fmt.Fprintf(&body, "the%d ", i%10) // ten words every article has
			} else {
				fmt.Fprintf(&body, "w%d ", (j*7919+i*131)%5000)
			}
		}
		texts = append(texts, body.String())
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.PostArticle(ctx, "bench", "A benchmark title", texts[i%len(texts)], "bench"); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkPostArticleWideAuthor posts to an author whose word count row
// holds 5,000 words: a post's Increments, and the top-words list's read of
// the counts they changed, must cost the post's words, not the author's
// vocabulary.
func BenchmarkPostArticleWideAuthor(b *testing.B) {
	s := wideAuthorStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.PostArticle(ctx, "bench", "A benchmark title", "Some body text with a few words in it.", "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdateArticle edits the body of an article back and forth
// between two texts of 8 words that share half, to an author with a dozen
// words; BenchmarkUpdateArticleWideAuthor does to the wide author (a full
// top-words list).
func BenchmarkUpdateArticle(b *testing.B) {
	s := newTestStore(b)
	mustArticleAuthor(b, s, "bench")
	benchmarkUpdates(b, s)
}

func BenchmarkUpdateArticleWideAuthor(b *testing.B) {
	benchmarkUpdates(b, wideAuthorStore(b))
}

// benchmarkUpdates edits an article of author "bench" of s b.N times.
func benchmarkUpdates(b *testing.B, s *Store) {
	ctx := context.Background()
	a, err := s.PostArticle(ctx, "bench", "An edited title", "one two three four five six seven eight", "bench")
	if err != nil {
		b.Fatal(err)
	}
	bodies := []string{"one two three four nine ten eleven twelve", "one two three four five six seven eight"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.UpdateArticle(ctx, a.ID, nil, &bodies[i%2], nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
