package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/store/keys"
)

// postTies posts T0..T7 by author as one request would: T0..T3 in one
// millisecond, T4..T7 in the next (the clock is frozen in between). T2 and
// T5 go to category "d", the others to "c". It returns them in the order
// posted.
func postTies(t *testing.T, s *Store, clk *fakeClock, author string) []Article {
	t.Helper()
	mustArticleAuthor(t, s, author)
	var arts []Article
	for i := range 8 {
		if i == 4 {
			clk.Advance(time.Millisecond)
		}
		cat := "c"
		if i == 2 || i == 5 {
			cat = "d"
		}
		arts = append(arts, mustPostArticle(t, s, author, fmt.Sprintf("T%d", i), "", cat))
	}
	if !arts[0].Posted.Equal(arts[3].Posted) || !arts[4].Posted.Equal(arts[7].Posted) || arts[3].Posted.Equal(arts[4].Posted) {
		t.Fatalf("posting times %v: want two groups of four in one millisecond each", arts)
	}
	return arts
}

// titles lists the titles of the articles with the given ids, for messages
// that read like the issue: "T7 T6 T5 ...".
func titles(byID map[string]string, ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = byID[id]
	}
	return strings.Join(out, " ")
}

// TestArticlesNewestFirstWithinMillisecond pages through the timeline and
// both category indexes with every page size from 1 to 9, forward
// (first/after) and backward (last/before): articles posted in the same
// millisecond come the last created first, and every page is the slice of
// that order it should be, with the right hasNext/hasPrevious.
func TestArticlesNewestFirstWithinMillisecond(t *testing.T) {
	clk := newFakeClock() // frozen: postTies decides the milliseconds
	s := newTestStoreWithClock(t, clk)
	arts := postTies(t, s, clk, "tie")
	byID := map[string]string{}
	for _, a := range arts {
		byID[a.ID] = a.Title
	}
	id := func(titles ...int) []string {
		var ids []string
		for _, i := range titles {
			ids = append(ids, arts[i].ID)
		}
		return ids
	}
	connections := []struct {
		category string
		want     []string
	}{
		{"", id(7, 6, 5, 4, 3, 2, 1, 0)},
		{"c", id(7, 6, 4, 3, 1, 0)},
		{"d", id(5, 2)},
	}
	ctx := t.Context()
	for _, conn := range connections {
		want := conn.want
		q := ArticleQuery{Category: conn.category}
		for size := 1; size <= 9; size++ {
			t.Run(fmt.Sprintf("%q/first=%d", conn.category, size), func(t *testing.T) {
				var got []string
				req := PageRequest{Size: size}
				for page := 0; ; page++ {
					p, err := s.Articles(ctx, "tie", q, req)
					if err != nil {
						t.Fatal(err)
					}
					ids := articleIDs(p.Articles)
					end := min((page+1)*size, len(want))
					if !slices.Equal(ids, want[page*size:end]) {
						t.Fatalf("page %d: %s, want %s", page, titles(byID, ids), titles(byID, want[page*size:end]))
					}
					if p.HasNext != (end < len(want)) || p.HasPrevious != (page > 0) {
						t.Fatalf("page %d: %+v", page, p.PageInfo)
					}
					got = append(got, ids...)
					if !p.HasNext {
						break
					}
					req.Cursor = p.Cursors.All()[p.Cursors.Len()-1]
				}
				if !slices.Equal(got, want) {
					t.Fatalf("got %s, want %s", titles(byID, got), titles(byID, want))
				}
			})
			t.Run(fmt.Sprintf("%q/last=%d", conn.category, size), func(t *testing.T) {
				var got []string
				req := PageRequest{Size: size, Backward: true}
				for page := 0; ; page++ {
					p, err := s.Articles(ctx, "tie", q, req)
					if err != nil {
						t.Fatal(err)
					}
					ids := articleIDs(p.Articles)
					start := max(len(want)-(page+1)*size, 0)
					wantPage := want[start : len(want)-page*size]
					if !slices.Equal(ids, wantPage) {
						t.Fatalf("page %d: %s, want %s", page, titles(byID, ids), titles(byID, wantPage))
					}
					if p.HasPrevious != (start > 0) || p.HasNext != (page > 0) {
						t.Fatalf("page %d: %+v", page, p.PageInfo)
					}
					got = append(ids, got...)
					if !p.HasPrevious {
						break
					}
					req.Cursor = p.Cursors.All()[0]
				}
				if !slices.Equal(got, want) {
					t.Fatalf("got %s, want %s", titles(byID, got), titles(byID, want))
				}
			})
		}
	}

	t.Run("window of one millisecond", func(t *testing.T) {
		from, to := arts[0].Posted, arts[0].Posted.Add(time.Millisecond)
		p, err := s.Articles(ctx, "tie", ArticleQuery{PostedAfter: &from, PostedBefore: &to}, PageRequest{Size: 10})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := articleIDs(p.Articles), id(3, 2, 1, 0); !slices.Equal(got, want) {
			t.Fatalf("got %s, want %s", titles(byID, got), titles(byID, want))
		}
	})
	t.Run("ids still name their articles", func(t *testing.T) {
		for i, a := range arts {
			got, err := s.getArticle(ctx, a.ID)
			if err != nil || got != a {
				t.Fatalf("getArticle(T%d) = %+v, %v; want %+v", i, got, err, a)
			}
			if i > 0 && articleSeq(a) <= articleSeq(arts[i-1]) {
				t.Fatalf("T%d has sequence number %d, T%d %d: not in the order of creation", i, articleSeq(a), i-1, articleSeq(arts[i-1]))
			}
		}
	})
	t.Run("cursor of another connection", func(t *testing.T) {
		p, err := s.Articles(ctx, "tie", ArticleQuery{Category: "c"}, PageRequest{Size: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []ArticleQuery{{}, {Category: "d"}} {
			_, err := s.Articles(ctx, "tie", q, PageRequest{Size: 1, Cursor: p.Cursors.All()[0]})
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("category c's cursor in %+v: %v; want ErrInvalidInput", q, err)
			}
		}
	})
}

// copyAsLayout1 copies every row of src's tables into dst's as hbgraph
// wrote them before article layout 2: each timeline and category row's
// last 8 bytes hold the sequence number as it is (u64, not desc), and there
// is no layout row. Each row's cells are copied at its newest timestamp. It
// returns the number of article rows rewritten.
func copyAsLayout1(t *testing.T, src, dst *Store) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	for table, fams := range keys.Tables() {
		err := src.scanAll(ctx, scanRange{table: table, family: fams[0]}, func(rw row) (bool, error) {
			key := rw.key
			if table == keys.TableArticles {
				var seq uint64
				if a, err := keys.DecodeTimeline(rw.key); err == nil {
					seq = a.Seq
				} else if c, err := keys.DecodeCategory(rw.key); err == nil {
					seq = c.Article.Seq
				} else if bytes.Equal(rw.key, keys.ArticleLayoutRow()) {
					return true, nil
				}
				if seq != 0 {
					key = binary.BigEndian.AppendUint64(bytes.Clone(rw.key[:len(rw.key)-8]), seq)
					n++
				}
			}
			return true, dst.put(ctx, table, fams[0], key, rw.cells, rw.ts)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// TestArticleLayout1IsRefusedThenMigrated: a store over a table of layout 1
// serves no article (rather than wrong ones) until Repair migrates it, a
// migration cut short resumes, and afterwards every article, id and
// counter is as before, in the new order.
func TestArticleLayout1IsRefusedThenMigrated(t *testing.T) {
	ctx := t.Context()
	clk := newFakeClock()
	old := newTestStoreWithClock(t, clk)
	arts := postTies(t, old, clk, "tie")
	postTies(t, old, clk, "tie2")
	before := storedRows(t, old)

	// A new process over the tables as layout 1 had them, with a clock
	// that moves: Repair's word count rebuild waits for it to pass the
	// counts' newest cell.
	clk2 := newFakeClock()
	clk2.Advance(time.Second)
	clk2.step = 1
	s := newTestStoreWithClock(t, clk2)
	if rewritten := copyAsLayout1(t, old, s); rewritten != 32 {
		t.Fatalf("rewrote %d rows, want 32 (16 articles, each a timeline and a category row)", rewritten)
	}
	if got, want := len(storedRows(t, s)), len(before)-1; got != want {
		t.Fatalf("copied %d rows, want %d", got, want)
	}
	refused := map[string]error{}
	_, refused["Articles"] = s.Articles(ctx, "tie", ArticleQuery{}, PageRequest{Size: 10})
	_, refused["GetArticle"] = s.getArticle(ctx, arts[0].ID)
	_, errs := s.GetArticles(ctx, []string{arts[0].ID})
	refused["GetArticles"] = errs[0]
	_, refused["PostArticle"] = s.PostArticle(ctx, "tie", "new", "", "c")
	title := "x"
	_, refused["UpdateArticle"] = s.UpdateArticle(ctx, arts[0].ID, &title, nil, nil)
	refused["DeleteArticle"] = s.DeleteArticle(ctx, arts[0].ID)
	_, _, refused["ImportArticle"] = s.ImportArticle(ctx, "tie", 100, "t", "", "c", time.UnixMilli(5))
	_, refused["ImportArticles"] = s.ImportArticles(ctx, []ArticleImport{{Author: "tie", Seq: 101, Title: "t", Category: "c"}})
	refused["RebuildWordCounts"] = s.RebuildWordCounts(ctx, "tie")
	refused["AdvanceArticleSeq"] = s.AdvanceArticleSeq(ctx, "tie", 100)
	g, err := ArticleGet(arts[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	_, refused["Read"] = s.Read(ctx, []Get{g})
	for op, err := range refused {
		if !errors.Is(err, ErrArticleLayout) {
			t.Errorf("%s over a layout 1 table: %v; want ErrArticleLayout", op, err)
		}
	}

	// A migration cut short after 5 rows: still refused.
	moved := 0
	s.fault = func(p string) error {
		if p == pointArticleMigrate {
			if moved++; moved > 5 {
				return errCrash
			}
		}
		return nil
	}
	if _, err := s.Repair(ctx); !errors.Is(err, errCrash) {
		t.Fatalf("Repair with a crash: %v", err)
	}
	s.fault = nil
	if _, err := s.Articles(ctx, "tie", ArticleQuery{}, PageRequest{Size: 10}); !errors.Is(err, ErrArticleLayout) {
		t.Fatalf("Articles after a migration cut short: %v; want ErrArticleLayout", err)
	}

	report, err := s.Repair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := report[fixArticleRowMigrated], 32-5; got != want {
		t.Fatalf("Repair migrated %d rows, want %d: %v", got, want, report)
	}
	if len(report) != 1 {
		t.Fatalf("Repair fixed more than the layout: %v", report)
	}
	after := storedRows(t, s)
	delete(after, keys.TableArticles+"/"+string(keys.ArticleLayoutRow()))
	delete(before, keys.TableArticles+"/"+string(keys.ArticleLayoutRow()))
	if !maps.Equal(before, after) {
		t.Fatalf("after the migration the tables differ from before the downgrade")
	}
	checkArticleInvariants(t, s)
	p, err := s.Articles(ctx, "tie", ArticleQuery{}, PageRequest{Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := articleIDs(p.Articles), newestFirst(arts); !slices.Equal(got, want) {
		t.Fatalf("after the migration: %v, want %v", got, want)
	}
	for _, a := range arts {
		if got, err := s.getArticle(ctx, a.ID); err != nil || got != a {
			t.Fatalf("getArticle(%s) after the migration = %+v, %v; want %+v", a.Title, got, err, a)
		}
	}
	if report, err := s.Repair(ctx); err != nil || len(report) != 0 {
		t.Fatalf("second Repair: %v, %v; want nothing to fix", report, err)
	}
	// Another process is served too.
	fresh, err := New(s.hc, Options{Clock: clk2.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.PostArticle(ctx, "tie", "after", "", "c"); err != nil {
		t.Fatal(err)
	}
}

// TestArticleLayoutCheck: an empty table is claimed for the current layout
// once, with its round trips paid by the first operation only; a table
// that records another version is refused.
func TestArticleLayoutCheck(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	log := &callLog{}
	if _, err := s.Articles(WithTracer(ctx, log), "ann", ArticleQuery{}, PageRequest{Size: 1}); err != nil {
		t.Fatal(err)
	}
	if calls := log.take(); len(calls) != 5 { // Get, Scan, CheckAndMutate, Get; the page's Scan
		t.Fatalf("first call: %d calls, want 5: %v", len(calls), calls)
	}
	mustPostArticle(t, s, "ann", "t", "", "c")
	if _, err := s.Articles(WithTracer(ctx, log), "ann", ArticleQuery{}, PageRequest{Size: 1}); err != nil {
		t.Fatal(err)
	}
	if calls := log.take(); len(calls) != 1 {
		t.Fatalf("later call: %d calls, want 1: %v", len(calls), calls)
	}
	// Another process sees the version recorded.
	other, err := New(s.hc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.CheckArticleLayout(WithTracer(ctx, log)); err != nil {
		t.Fatal(err)
	}
	if calls := log.take(); len(calls) != 1 {
		t.Fatalf("check of a table with a version: %d calls, want 1: %v", len(calls), calls)
	}
	// A newer hbgraph's table.
	if err := s.put(ctx, keys.TableArticles, keys.FamilyArticles, keys.ArticleLayoutRow(),
		cells{keys.QualLayoutVersion: encodeMs(keys.ArticleLayoutVersion + 1)}, s.nowMs()+1); err != nil {
		t.Fatal(err)
	}
	newer, err := New(s.hc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newer.getArticle(ctx, mustPostedID(t, s)); !errors.Is(err, ErrArticleLayout) {
		t.Fatalf("GetArticle over a newer layout: %v; want ErrArticleLayout", err)
	}
	if _, err := newer.Repair(ctx); !errors.Is(err, ErrArticleLayout) {
		t.Fatalf("Repair over a newer layout: %v; want ErrArticleLayout", err)
	}
}

// mustPostedID returns the id of one article of "ann".
func mustPostedID(t *testing.T, s *Store) string {
	t.Helper()
	p, err := s.Articles(t.Context(), "ann", ArticleQuery{}, PageRequest{Size: 1})
	if err != nil || len(p.Articles) != 1 {
		t.Fatalf("ann's articles: %+v, %v", p, err)
	}
	return p.Articles[0].ID
}

// TestEmptyIgnoresArticleLayout: the layout version that the first read of
// articles records in an empty table does not make the store look used.
func TestEmptyIgnoresArticleLayout(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t)
	if _, err := s.Articles(ctx, "nobody", ArticleQuery{}, PageRequest{Size: 1}); err != nil {
		t.Fatal(err)
	}
	if c, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, keys.ArticleLayoutRow()); err != nil || c[keys.QualLayoutVersion] == nil {
		t.Fatalf("no layout version recorded: %v, %v", c, err)
	}
	if empty, err := s.Empty(ctx); err != nil || !empty {
		t.Fatalf("Empty() = %v, %v after a read of articles; want true", empty, err)
	}
	// Any other row of the table counts, whichever sorts first.
	for _, author := range []string{"", "zz"} {
		if err := s.put(ctx, keys.TableArticles, keys.FamilyArticles, keys.Counters(author), cells{keys.QualSeq: encodeMs(1)}, s.nowMs()); err != nil {
			t.Fatal(err)
		}
		if empty, err := s.Empty(ctx); err != nil || empty {
			t.Fatalf("Empty() = %v, %v with the counters of %q; want false", empty, err, author)
		}
		if err := s.deleteRow(ctx, keys.TableArticles, keys.Counters(author), s.nowMs()); err != nil {
			t.Fatal(err)
		}
	}
}
