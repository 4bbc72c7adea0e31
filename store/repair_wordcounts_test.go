package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/keys"
)

// newSteppingStore is a test store whose clock steps 1 ms at every
// reading, so that rebuilds, which wait for the clock, do not stall.
func newSteppingStore(t *testing.T) *Store {
	t.Helper()
	s, _ := newSteppingStoreClock(t)
	return s
}

// newSteppingStoreClock is newSteppingStore with its clock, to age the
// writes a test cuts short: Repair finishes a write younger than
// nonceRecent with its own counts (it may be in flight), an older one
// without them, and then recounts.
func newSteppingStoreClock(t *testing.T) (*Store, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	clk.step = 1
	return newTestStoreWithClock(t, clk), clk
}

// crashAtPoint is a Store.fault that crashes every time the operation
// passes point.
func crashAtPoint(point string) func(string) error {
	return func(p string) error {
		if p == point {
			return errCrash
		}
		return nil
	}
}

// nonzero returns m without its 0 counts, which count nothing.
func nonzero(m map[string]int64) map[string]int64 {
	m = maps.Clone(m)
	maps.DeleteFunc(m, func(_ string, n int64) bool { return n == 0 })
	return m
}

// wordCountFixesDue returns the fixes Repair should report for the word
// counts of authors as they stand: a corrected cell per word whose count
// differs from a recount, a deleted cell per word no article has whose
// count is not 0.
func wordCountFixesDue(t *testing.T, s *Store, authors ...string) RepairReport {
	t.Helper()
	due := RepairReport{}
	for _, a := range authors {
		want := recountArticleWords(t, s, a)
		have := storedWordCounts(t, s, a)
		for w, n := range want {
			if h, ok := have[w]; !ok || h != n {
				due.fix(fixWordCountCorrected, 1)
			}
		}
		for w, n := range have {
			if _, ok := want[w]; !ok && n != 0 {
				due.fix(fixWordCountDeleted, 1)
			}
		}
	}
	return due
}

// reportedWordCountFixes keeps the word count kinds of a report.
func reportedWordCountFixes(r RepairReport) RepairReport {
	out := RepairReport{}
	for _, k := range []string{fixWordCountCorrected, fixWordCountDeleted} {
		out.fix(k, r[k])
	}
	return out
}

// repairWordCountsExactly runs Repair, checks that it reported the word
// count fixes due, that every author's row is a recount (with 0 cells for
// the words no article has), and that a second Repair finds nothing to fix.
func repairWordCountsExactly(t *testing.T, ctx context.Context, s *Store, authors ...string) RepairReport {
	t.Helper()
	due := wordCountFixesDue(t, s, authors...)
	report, err := s.Repair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := reportedWordCountFixes(report); !maps.Equal(got, due) {
		t.Errorf("repair reported %v of word counts, want %v", got, due)
	}
	for _, a := range authors {
		// 0 cells stay (young ones: see zeroCellAge).
		if have, want := nonzero(storedWordCounts(t, s, a)), recountArticleWords(t, s, a); !maps.Equal(have, want) {
			t.Errorf("after repair, word counts of %q:\n have %v\n want %v", a, have, want)
		}
	}
	again, err := s.Repair(bg)
	if err != nil || len(again) != 0 {
		t.Fatalf("a second repair fixed %v, %v", again, err)
	}
	if again.String() != "nothing to fix\n" {
		t.Fatalf("second report: %q", again.String())
	}
	return report
}

// checkSameTopWords compares the authors' top words in two stores.
func checkSameTopWords(t *testing.T, got, want *Store, authors ...string) {
	t.Helper()
	for _, a := range authors {
		g, err := got.TopWords(bg, a, MaxTopWords)
		if err != nil {
			t.Fatal(err)
		}
		w, err := want.TopWords(bg, a, MaxTopWords)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g, w) {
			t.Errorf("top words of %q:\n have %v\n want %v (a run without the crash)", a, g, w)
		}
	}
}

// A crash at the word count step of a batch import leaves every author of
// the batch short of its articles' words; Repair makes the rows those of
// an import that did not crash.
func TestRepairWordCountsAfterImportCrash(t *testing.T) {
	run := func(t *testing.T, crashAt string) *Store {
		s := newSteppingStore(t)
		articleImportSetup(t, s)
		s.fault = crashAtPoint(crashAt)
		_, err := s.ImportArticles(bg, articleImportCases())
		if (crashAt != "") != errors.Is(err, errCrash) {
			t.Fatalf("import with a crash at %q: %v", crashAt, err)
		}
		s.fault = nil
		return s
	}
	clean := run(t, "")
	s := run(t, pointImportWordCounts)
	for _, a := range articleImportAuthors {
		have, want := storedWordCounts(t, s, a), recountArticleWords(t, s, a)
		short := false
		for w, n := range want {
			short = short || have[w] < n
		}
		if !short {
			t.Fatalf("the crash left no count of %q short: have %v, articles have %v", a, have, want)
		}
	}
	report := repairWordCountsExactly(t, bg, s, articleImportAuthors...)
	t.Logf("repair: %v", report)
	for _, a := range articleImportAuthors {
		if have, want := nonzero(storedWordCounts(t, s, a)), nonzero(storedWordCounts(t, clean, a)); !maps.Equal(have, want) {
			t.Errorf("word counts of %q after the crash and Repair:\n have %v\n want %v (an import that did not crash)", a, have, want)
		}
	}
	checkSameTopWords(t, s, clean, articleImportAuthors...)
}

// A crash of PostArticle, UpdateArticle or DeleteArticle just before its
// word count Increment leaves the author's counts short or long; Repair
// makes them those of the operation had it not crashed.
func TestRepairWordCountsAfterArticleCrash(t *testing.T) {
	setup := func(t *testing.T, s *Store) string {
		mustArticleAuthor(t, s, "ann")
		mustArticleAuthor(t, s, "bob")
		mustPostArticle(t, s, "ann", "Other", "shared words stay", "c")
		mustPostArticle(t, s, "bob", "Bob", "bob is not touched", "c")
		return mustPostArticle(t, s, "ann", "Victim", "shared words and its own words", "c").ID
	}
	for _, tc := range []struct {
		name string
		op   func(s *Store, id string) error
	}{
		{"post", func(s *Store, _ string) error {
			_, err := s.PostArticle(bg, "ann", "New", "fresh words, shared words", "c")
			return err
		}},
		{"update", func(s *Store, id string) error {
			_, err := s.UpdateArticle(bg, id, articleRef("Renamed"), articleRef("entirely other text"), nil)
			return err
		}},
		{"delete", func(s *Store, id string) error { return s.DeleteArticle(bg, id) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clean := newSteppingStore(t)
			if err := tc.op(clean, setup(t, clean)); err != nil {
				t.Fatal(err)
			}
			s, clk := newSteppingStoreClock(t)
			id := setup(t, s)
			s.fault = crashAtPoint(pointWordCount)
			if err := tc.op(s, id); !errors.Is(err, errCrash) {
				t.Fatalf("%s: %v, want the crash", tc.name, err)
			}
			s.fault = nil
			clk.Advance(nonceRecent) // cut short long ago: the rebuild recounts it
			if have, want := nonzero(storedWordCounts(t, s, "ann")), recountArticleWords(t, s, "ann"); maps.Equal(have, want) {
				t.Fatalf("the crash left the counts exact: %v", have)
			}
			repairWordCountsExactly(t, bg, s, "ann", "bob")
			checkSameTopWords(t, s, clean, "ann", "bob")
		})
	}
}

// Authors with no articles left are found by their word count rows: a
// crashed delete of an author's last article, a row with no author at all,
// and 0 cells left by clean deletes all end with no cells, and only the
// nonzero ones count as fixes.
func TestRepairWordCountsOfAuthorsWithoutArticles(t *testing.T) {
	s, clk := newSteppingStoreClock(t)
	mustArticleAuthor(t, s, "ann")
	mustArticleAuthor(t, s, "bob")
	last := mustPostArticle(t, s, "ann", "Last", "the last words of ann", "c")
	s.fault = crashAtPoint(pointWordCount)
	if err := s.DeleteArticle(bg, last.ID); !errors.Is(err, errCrash) {
		t.Fatalf("delete: %v, want the crash", err)
	}
	s.fault = nil
	clk.Advance(nonceRecent) // cut short long ago: the rebuild recounts it
	bobs := mustPostArticle(t, s, "bob", "Bob", "bob's words", "c")
	if err := s.DeleteArticle(bg, bobs.ID); err != nil {
		t.Fatal(err)
	}
	row := keys.WordCounts("ghost")
	if err := s.put(bg, keys.TableWordCounts, keys.FamilyWordCounts, row, cells{"boo": encodeMs(3), "nil": encodeMs(0)}, s.nowMs()); err != nil {
		t.Fatal(err)
	}
	for author, wantCells := range map[string]int{"ann": 5, "bob": 3, "ghost": 2} {
		if got := storedWordCounts(t, s, author); len(got) != wantCells {
			t.Fatalf("%s's row before repair: %v, want %d cells", author, got, wantCells)
		}
	}
	report := repairWordCountsExactly(t, bg, s, "ann", "bob", "ghost")
	if got := reportedWordCountFixes(report); !maps.Equal(got, RepairReport{fixWordCountDeleted: 5 + 1}) {
		t.Errorf("word count fixes %v, want ann's 5 cells and ghost's 1 nonzero one deleted", got)
	}
	// Brought to 0, and left (young 0 cells: see zeroCellAge).
	for _, author := range []string{"ann", "bob", "ghost"} {
		if got := nonzero(storedWordCounts(t, s, author)); len(got) != 0 {
			t.Errorf("%s's row after repair: %v, want only 0 cells", author, got)
		}
	}
}

// A store that never crashed, with deleted articles' 0 cells in it, has
// nothing to fix: removing 0 cells is no fix.
func TestRepairCleanStoreReportsNothing(t *testing.T) {
	ctx := t.Context()
	s := newSteppingStore(t)
	for _, id := range []string{"ann", "bob", "cyd"} {
		mustArticleAuthor(t, s, id)
	}
	if _, err := s.CreateRelationship(ctx, RelationshipKey{"ann", "follows", "bob"}, nil); err != nil {
		t.Fatal(err)
	}
	mustPostArticle(t, s, "ann", "Kept", "kept words", "c")
	edited := mustPostArticle(t, s, "bob", "Edited", "before the edit", "c")
	if _, err := s.UpdateArticle(ctx, edited.ID, nil, articleRef("after the edit"), articleRef("d")); err != nil {
		t.Fatal(err)
	}
	gone := mustPostArticle(t, s, "cyd", "Gone", "words of a deleted article", "c")
	if err := s.DeleteArticle(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if got := storedWordCounts(t, s, "cyd"); len(got) == 0 {
		t.Fatal("the delete left no 0 cells; the test needs them")
	}
	report, err := s.Repair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := report.String(); got != "nothing to fix\n" {
		t.Fatalf("repair of a clean store reported:\n%s", got)
	}
	for _, a := range []string{"ann", "bob", "cyd"} {
		// 0 cells stay (young ones: see zeroCellAge).
		if have, want := nonzero(storedWordCounts(t, s, a)), recountArticleWords(t, s, a); !maps.Equal(have, want) {
			t.Errorf("word counts of %q: have %v, want %v", a, have, want)
		}
	}
}

// Enough authors to fill every hash range, some with articles, some with
// only a word count row, some with both, among rows of no known layout:
// each range's walk of the two tables yields every author once.
func TestRepairWordCountsEveryAuthorOfEveryRange(t *testing.T) {
	s := newSteppingStore(t)
	const authors = 4 * wordCountRanges
	var input []ArticleImport
	var all []string
	for i := range authors {
		author := fmt.Sprint("au", i)
		all = append(all, author)
		if i%4 == 3 {
			// Only a word count row, the words of nothing.
			if err := s.put(bg, keys.TableWordCounts, keys.FamilyWordCounts, keys.WordCounts(author),
				cells{"stray": encodeMs(int64(i))}, s.nowMs()); err != nil {
				t.Fatal(err)
			}
			continue
		}
		mustNode(t, s, author, nil)
		for seq := range 1 + i%4 { // up to three articles
			input = append(input, ArticleImport{Author: author, Seq: uint64(seq + 1), Title: fmt.Sprint("title ", i),
				Body: "some words", Category: fmt.Sprint("c", seq), Posted: time.UnixMilli(int64(i))})
		}
	}
	s.fault = crashAtPoint(pointImportWordCounts)
	if _, err := s.ImportArticles(bg, input); !errors.Is(err, errCrash) {
		t.Fatalf("import: %v, want the crash", err)
	}
	s.fault = nil
	// Authors with articles and a word count row: counts off both ways.
	for i := 1; i < authors; i += 4 {
		if err := s.put(bg, keys.TableWordCounts, keys.FamilyWordCounts, keys.WordCounts(all[i]),
			cells{"some": encodeMs(9), "ghost": encodeMs(1)}, s.nowMs()); err != nil {
			t.Fatal(err)
		}
	}
	// Rows of no layout, which the walks step over: between an author's
	// rows and the next author's, and at a range's first and last key.
	splits, err := keys.SplitKeys(wordCountRanges)
	if err != nil {
		t.Fatal(err)
	}
	junk := [][]byte{
		keys.AuthorPrefix(all[0]),               // before au0's rows in articles
		append(keys.AuthorPrefix(all[0]), 0x07), // after au0's row in wordcounts
		splits[0], splits[1][:3], splits[1],     // a range's first and last keys
		{0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, // the table's last
	}
	for _, j := range junk {
		for _, table := range []string{keys.TableArticles, keys.TableWordCounts} {
			if err := s.put(bg, table, keys.Tables()[table][0], j, cells{"x": encodeMs(1)}, s.nowMs()); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Each author is rebuilt once: two or three Gets of its word count
	// row, one for the counts (two when the articles are young enough to
	// be posts in flight, whose Increments the rebuild then makes first,
	// see settleAttempts) and one for the top list after them.
	var mu sync.Mutex
	gets := map[string]int{}
	log := tracerFunc(func(c Call) {
		if (c.Op != "Get" && c.Op != "Batch") || c.Table != keys.TableWordCounts {
			return
		}
		if _, err := keys.DecodeWordCounts(c.Rows[0]); err == nil {
			mu.Lock()
			defer mu.Unlock()
			gets[string(c.Rows[0])]++
		}
	})
	repairWordCountsExactly(t, WithTracer(bg, log), s, all...)
	for _, a := range all {
		if n := gets[string(keys.WordCounts(a))]; n != 2 && n != 3 {
			t.Errorf("%s: %d reads of its word counts, want 2 or 3", a, n)
		}
	}
	if len(gets) != len(all) {
		t.Errorf("%d rows rebuilt, want %d", len(gets), len(all))
	}
}

// The rebuilds run at most wordCountWorkers at a time, and more than one.
func TestRepairWordCountsBoundsConcurrency(t *testing.T) {
	clk := newFakeClock()
	clk.step = 1
	db := openTestEngine(t, clk)
	slow := &slowScans{Client: db, table: keys.TableWordCounts, delay: 5 * time.Millisecond}
	s, err := New(slow, Options{Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 * wordCountWorkers {
		author := fmt.Sprint("au", i)
		mustArticleAuthor(t, s, author)
		mustPostArticle(t, s, author, "T", "words", "c")
	}
	slow.on.Store(true)
	if _, err := s.Repair(bg); err != nil {
		t.Fatal(err)
	}
	if most := slow.most.Load(); most < 2 || most > wordCountWorkers {
		t.Fatalf("at most %d word count scans at a time, want 2..%d", most, wordCountWorkers)
	}
}

// slowScans makes each Scan of table take delay and records how many ran
// at once.
type slowScans struct {
	gohbase.Client
	table string
	delay time.Duration

	on             atomic.Bool
	inFlight, most atomic.Int64
	failRow        []byte // a Get of it fails while on
}

func (c *slowScans) SendBatch(ctx context.Context, batch []hrpc.Call) ([]hrpc.RPCResult, bool) {
	if c.on.Load() && c.failRow != nil && slices.ContainsFunc(batch, func(b hrpc.Call) bool { return bytes.Equal(b.Key(), c.failRow) }) {
		res := make([]hrpc.RPCResult, len(batch))
		for i := range res {
			res[i].Error = errors.New("injected: region unavailable")
		}
		return res, false
	}
	return c.Client.SendBatch(ctx, batch)
}

func (c *slowScans) Scan(sc *hrpc.Scan) hrpc.Scanner {
	if c.on.Load() && string(sc.Table()) == c.table {
		n := c.inFlight.Add(1)
		for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
		}
		time.Sleep(c.delay)
		c.inFlight.Add(-1)
	}
	return c.Client.Scan(sc)
}

// The first failing rebuild stops the others, and Repair says which
// author failed; the authors rebuilt before it are reported.
func TestRepairWordCountsStopsAtFirstError(t *testing.T) {
	// Every word count scan takes a while, so that the other workers are
	// still at their first authors when the first range fails: without it,
	// a busy machine sometimes ran most ranges before the failing one (127
	// and 188 of 191 rebuilt, 3 runs in 30).
	clk := newFakeClock()
	clk.step = 1
	slow := &slowScans{Client: openTestEngine(t, clk), table: keys.TableWordCounts, delay: 5 * time.Millisecond}
	s, err := New(slow, Options{Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for i := range 3 * wordCountRanges {
		author := fmt.Sprint("au", i)
		all = append(all, author)
		if err := s.put(bg, keys.TableWordCounts, keys.FamilyWordCounts, keys.WordCounts(author),
			cells{"stray": encodeMs(1)}, s.nowMs()); err != nil {
			t.Fatal(err)
		}
	}
	// The first author of the first range, so that most ranges are still
	// to start when it fails: its word count row cannot be read.
	bad := slices.MinFunc(all, func(a, b string) int { return bytes.Compare(keys.WordCounts(a), keys.WordCounts(b)) })
	slow.failRow = keys.WordCounts(bad)
	slow.on.Store(true)
	var rebuilt sync.Map
	log := tracerFunc(func(c Call) {
		if c.Op == "Increment" && c.Table == keys.TableWordCounts && c.Err == nil {
			rebuilt.Store(string(c.Rows[0]), true)
		}
	})
	report, err := s.Repair(WithTracer(bg, log))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) {
		t.Fatalf("repair: %v, want an error naming %q", err, bad)
	}
	n := 0
	rebuilt.Range(func(any, any) bool { n++; return true })
	if got := report[fixWordCountDeleted]; got != n || n > len(all)/2 {
		t.Errorf("%d rows rebuilt, %d cells reported deleted; want them equal and well short of all %d", n, got, len(all)-1)
	}
	if _, err := s.Repair(context.Background()); err == nil {
		t.Fatal("a second repair passed the row it cannot read")
	}
}

type tracerFunc func(Call)

func (f tracerFunc) StoreCall(c Call) { f(c) }

// A word count cell that is not an int64 (a hand-made Put, a torn write)
// is a wrong count: Repair writes the recount over it, or deletes it if no
// article has the word, and reports it as a corrupt cell fixed, apart from
// the other kinds. Until then TopWords fails; after, it works, and writers
// carry on from the rewritten counts.
func TestRepairWordCountsFixesCorruptCells(t *testing.T) {
	// torn returns each truncation of a valid cell, and one a byte too long.
	torn := func(prefix string) cells {
		valid := encodeMs(2)
		c := cells{fmt.Sprint(prefix, 8): append(slices.Clip(valid), 0)}
		for n := range len(valid) {
			c[fmt.Sprint(prefix, n)] = valid[:n]
		}
		return c
	}
	const body = "h0 h1 h2 h3 h4 h5 h6 h7 h8 and the cat, the cat"
	cases := []struct {
		name   string
		damage cells
		want   RepairReport
	}{
		{"words an article has", torn("h"), RepairReport{fixWordCountCorrupt: 9}},
		{"words no article has", torn("g"), RepairReport{fixWordCountCorrupt: 9}},
		{"among wrong counts", func() cells {
			c := cells{"the": encodeMs(7), "ghost": encodeMs(5), "zero": encodeMs(0)}
			maps.Copy(c, torn("h"))
			maps.Copy(c, torn("g"))
			return c
		}(), RepairReport{fixWordCountCorrupt: 18, fixWordCountCorrected: 1, fixWordCountDeleted: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s := newSteppingStore(t)
			mustArticleAuthor(t, s, "ann")
			mustArticleAuthor(t, s, "bob")
			mustPostArticle(t, s, "ann", "Torn", body, "c")
			mustPostArticle(t, s, "bob", "Bob", "bob's words", "c")
			want := recountArticleWords(t, s, "ann")
			wantTop, err := s.TopWords(ctx, "ann", MaxTopWords)
			if err != nil {
				t.Fatal(err)
			}
			row := keys.WordCounts("ann")
			cur, err := s.scan(ctx, scanRange{table: keys.TableWordCounts, family: keys.FamilyWordCounts, start: row, stop: keys.After(row)})
			if err != nil || len(cur) != 1 {
				t.Fatal(cur, err)
			}
			// Stamped ahead of the clock, as by a foreign tool's clock or
			// after Increments that ran ahead: the fix must still win.
			ts := max(s.nowMs(), cur[0].ts) + 5
			if err := s.put(ctx, keys.TableWordCounts, keys.FamilyWordCounts, row, tc.damage, ts); err != nil {
				t.Fatal(err)
			}
			// TopWords reads ann's top-words list, which the damage did
			// not touch; a rebuild of the list would fail on the row.
			if _, _, err := s.recountTopList(ctx, row); err == nil || !strings.Contains(err.Error(), "corrupt word count") {
				t.Fatalf("a top list of a corrupt row: %v, want the corrupt cell named", err)
			}

			report, err := s.Repair(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(report, tc.want) {
				t.Errorf("repair reported %v, want %v", report, tc.want)
			}
			c, err := s.get(ctx, keys.TableWordCounts, keys.FamilyWordCounts, row)
			if err != nil {
				t.Fatal(err)
			}
			// Words no article has are brought to 0 and stay (young); the
			// serial is not a word.
			maps.DeleteFunc(c, func(_ string, v []byte) bool { n, ok := decodeMs(v); return ok && n == 0 })
			delete(c, keys.QualWordSerial)
			wantCells := cells{}
			for w, n := range want {
				wantCells[w] = encodeMs(n)
			}
			if !maps.EqualFunc(c, wantCells, bytes.Equal) {
				t.Errorf("ann's row after repair:\n have %v\n want %v (the recount)", c, wantCells)
			}
			if got, err := s.TopWords(ctx, "ann", MaxTopWords); err != nil || !slices.Equal(got, wantTop) {
				t.Errorf("TopWords after repair: %v, %v; want %v", got, err, wantTop)
			}
			again, err := s.Repair(ctx)
			if err != nil || len(again) != 0 {
				t.Fatalf("a second repair fixed %v, %v", again, err)
			}
			mustPostArticle(t, s, "ann", "More", "h0 g0 cat", "c")
			checkArticleWordCounts(t, s, "ann")
		})
	}
}
