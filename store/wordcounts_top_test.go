package store

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/store/keys"
)

// distinctWords returns n distinct words ("w0 w1 ..."), joined by spaces.
func distinctWords(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s%d ", prefix, i)
	}
	return b.String()
}

// An article over MaxArticleWords distinct words is refused by every
// writer with ErrInvalidInput and writes nothing; one at the bound goes.
func TestArticleWordBound(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	atBound := distinctWords("w", MaxArticleWords-1) // and the title's one word
	a := mustPostArticle(t, s, "ann", "title", atBound, "c")
	over := distinctWords("w", MaxArticleWords+1)
	before := storedRows(t, s)
	checkRefused := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "distinct words") {
			t.Errorf("%s: %v; want ErrInvalidInput about distinct words", name, err)
		}
		if after := storedRows(t, s); !maps.Equal(before, after) {
			t.Errorf("%s wrote rows", name)
		}
	}
	_, err := s.PostArticle(ctx, "ann", "title", over, "c")
	checkRefused("post", err)
	body := over
	_, err = s.UpdateArticle(ctx, a.ID, nil, &body, nil)
	checkRefused("update body", err)
	// The title's two words for one take the article past the bound.
	title := "two words"
	_, err = s.UpdateArticle(ctx, a.ID, &title, nil, nil)
	checkRefused("update title", err)
	out, err := s.ImportArticles(ctx, []ArticleImport{{Author: "ann", Seq: 99, Title: "t", Body: over, Category: "c", Posted: time.UnixMilli(5)}})
	if err != nil {
		t.Fatal(err)
	}
	checkRefused("import", out[0].Err)
}

// zipfText draws n words from a vocabulary of size words ("v0" the most
// frequent), so that counts tie and cross at every rank, and a top list
// (topListKeep) holds only part of an author's words.
func zipfText(rng *rand.Rand, size, n int) string {
	z := rand.NewZipf(rng, 1.1, 4, uint64(size-1))
	var b strings.Builder
	for range n {
		fmt.Fprintf(&b, "v%d ", z.Uint64())
	}
	return b.String()
}

// checkTopList asserts that author's top-words row holds a prefix of the
// ranking of the word count row that answers every page, and that
// TopWords answers every page as a sort of the whole row would.
func checkTopList(t testing.TB, s *Store, author string) {
	t.Helper()
	counts := storedWordCounts(t, s, author)
	full := rankCounts(counts, len(counts))
	c, r := readerTopRow(t, s, author, counts)
	switch {
	case len(c) == 0 && len(full) == 0:
	case !r.answersEveryPage():
		t.Errorf("top list of %q cannot answer every page: %d words, complete %v, usable %v", author, len(r.list.words), r.list.complete, r.usable())
	case len(r.list.words) > len(full) || !slices.Equal(r.list.words, full[:len(r.list.words)]):
		t.Errorf("top list of %q is not a prefix of its ranking", author)
	case r.list.complete && len(r.list.words) != len(full):
		t.Errorf("complete top list of %q has %d words of %d", author, len(r.list.words), len(full))
	}
	for _, n := range []int{1, 10, MaxTopWords} {
		got, err := s.TopWords(bg, author, n)
		if want := full[:min(n, len(full))]; err != nil || !slices.Equal(got, want) {
			t.Fatalf("TopWords(%q, %d): %v, %v; want %v", author, n, got, err, want)
		}
	}
}

// readerTopRow reads the author's top-words row and returns its cells and
// the list a reader sees: the stored list with the pending counts merged
// (counts: the author's word counts, read before).
func readerTopRow(t testing.TB, s *Store, author string, counts map[string]int64) (cells, topRow) {
	t.Helper()
	c, err := s.get(bg, keys.TableWordCounts, keys.FamilyWordCounts, keys.TopWords(author))
	if err != nil {
		t.Fatal(err)
	}
	return c, decodeTopRow(c, topListKeep).withPendings(pendingsOf(c), counts)
}

// wordCountReads counts the Gets of whole word count rows (a list
// recomputed, or a read that fell back) and of top-words rows.
type wordCountReads struct {
	mu           sync.Mutex
	whole, lists int
}

func (w *wordCountReads) StoreCall(c Call) {
	if c.Table != keys.TableWordCounts || (c.Op != "Get" && c.Op != "Batch") {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range c.Rows {
		if _, err := keys.DecodeTopWords(r); err == nil {
			w.lists++
		} else if c.Op == "Get" {
			w.whole++ // a Batch of a word count row reads some columns
		}
	}
}

// Posts, edits and deletions of one author, over a vocabulary larger than a
// top list: after each, the list is a prefix of the ranking that answers
// every page. Counts fall out of the list, and some writer recomputes it.
func TestTopListExactAfterRandomOperations(t *testing.T) {
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	rng := rand.New(rand.NewPCG(7, 8))
	reads := &wordCountReads{}
	ctx := WithTracer(bg, reads)
	const vocab = 3 * topListKeep
	var live []string
	for i := range 120 {
		switch op := rng.IntN(10); {
		case op < 5 || len(live) < 3:
			a, err := s.PostArticle(ctx, "ann", "t", zipfText(rng, vocab, 400), "c")
			if err != nil {
				t.Fatal(err)
			}
			live = append(live, a.ID)
		case op < 8:
			body := zipfText(rng, vocab, 200)
			if _, err := s.UpdateArticle(ctx, live[rng.IntN(len(live))], nil, &body, nil); err != nil {
				t.Fatalf("op %d: %v", i, err)
			}
		default:
			j := rng.IntN(len(live))
			if err := s.DeleteArticle(ctx, live[j]); err != nil {
				t.Fatalf("op %d: %v", i, err)
			}
			live = slices.Delete(live, j, j+1)
		}
		checkTopList(t, s, "ann")
		if t.Failed() {
			t.Fatalf("after op %d", i)
		}
	}
	if len(storedWordCounts(t, s, "ann")) <= topListKeep {
		t.Fatal("the author's words fit in a list: nothing tested")
	}
	t.Logf("%d lists recomputed from the whole row in 120 writes", reads.whole)
}

// Counts that fall out of a list that holds part of the author's words
// shorten it; once it could no longer answer every page, the writer
// recomputes it from the whole row.
func TestTopListRecomputedWhenShort(t *testing.T) {
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	twice := distinctWords("w", topListKeep+100)
	a := mustPostArticle(t, s, "ann", "t", twice+twice, "c") // w*: 2 each, "t": 1
	mustPostArticle(t, s, "ann", "u", distinctWords("x", 50), "c")
	checkTopList(t, s, "ann")
	reads := &wordCountReads{}
	ctx := WithTracer(bg, reads)
	// Drop the words one by one from the end of the list: each edit
	// shortens it by one, until it would hold fewer than MaxTopWords.
	kept := topListKeep + 100
	for kept > MaxTopWords-20 {
		kept -= 20
		body := distinctWords("w", kept)
		body += body
		if _, err := s.UpdateArticle(ctx, a.ID, nil, &body, nil); err != nil {
			t.Fatal(err)
		}
		checkTopList(t, s, "ann")
		if t.Failed() {
			t.Fatalf("with %d words kept", kept)
		}
	}
	if reads.whole == 0 {
		t.Error("no list was recomputed from the whole row")
	}
}

// Writers racing on one author (posts, edits, deletions at once) leave a
// list equal to a rebuild from the counts, with MaxAttempts as configured,
// and with one attempt, where writers that lose mark the list dirty (its
// posts too long to leave their counts pending instead).
func TestTopListBesideWriters(t *testing.T) {
	for _, attempts := range []int{DefaultMaxAttempts, 1} {
		t.Run(fmt.Sprint("attempts=", attempts), func(t *testing.T) {
			s := newTestStore(t)
			s.maxAttempts = attempts
			mustArticleAuthor(t, s, "ann")
			if attempts == 1 {
				// At least one writer loses: the first to reach its
				// compare-and-set waits for another's whole merge.
				var first atomic.Bool
				s.fault = func(point string) error {
					if point == pointTopWordsMerge && first.CompareAndSwap(false, true) {
						_, err := s.PostArticle(bg, "ann", "t", "one between", "c")
						return err
					}
					return nil
				}
			}
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for g := range 8 {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), 9))
					var mine []string
					for range 15 {
						var err error
						switch op := rng.IntN(10); {
						case op < 6 || len(mine) == 0:
							var a Article
							body := zipfText(rng, 2*topListKeep, 300)
							if attempts == 1 {
								for k := range pendingWordBudget {
									body += fmt.Sprintf(" g%dk%d", g, k)
								}
							}
							if a, err = s.PostArticle(bg, "ann", "t", body, "c"); err == nil {
								mine = append(mine, a.ID)
							}
						case op < 8:
							body := zipfText(rng, 2*topListKeep, 150)
							_, err = s.UpdateArticle(bg, mine[rng.IntN(len(mine))], nil, &body, nil)
						default:
							j := rng.IntN(len(mine))
							err = s.DeleteArticle(bg, mine[j])
							mine = slices.Delete(mine, j, j+1)
						}
						if err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if attempts == 1 {
				c, err := s.get(bg, keys.TableWordCounts, keys.FamilyWordCounts, keys.TopWords("ann"))
				if r := decodeTopRow(c, 0); err != nil || r.dirty == 0 {
					t.Fatalf("no writer lost its one attempt (%v): nothing tested", err)
				}
				// A dirty list answers nothing (reads fall back to the
				// whole row) until the next writer recomputes it.
				got, err := s.TopWords(bg, "ann", MaxTopWords)
				if want := rankCounts(storedWordCounts(t, s, "ann"), MaxTopWords); err != nil || !slices.Equal(got, want) {
					t.Fatalf("TopWords of a dirty list: %v", err)
				}
				s.maxAttempts = DefaultMaxAttempts
				for range topFoldEvery { // one of them folds, and recomputes it
					mustPostArticle(t, s, "ann", "t", "one more", "c")
				}
			}
			checkArticleWordCounts(t, s, "ann")
			checkTopList(t, s, "ann")
			before, err := s.get(bg, keys.TableWordCounts, keys.FamilyWordCounts, keys.TopWords("ann"))
			if err != nil {
				t.Fatal(err)
			}
			if wrote, err := s.rebuildTopWords(bg, "ann"); err != nil || wrote {
				t.Errorf("a rebuild after the writers wrote %v, %v; want the list kept", wrote, err)
				t.Logf("list before: %d bytes", len(before[keys.QualTopWords]))
			}
		})
	}
}

// A crash between the word count Increment and the top list, in a post, an
// edit or a deletion, leaves the list stale; Repair finds it and rebuilds
// it, and a second Repair finds nothing.
func TestRepairTopListAfterCrash(t *testing.T) {
	ops := []struct {
		name string
		op   func(s *Store, a Article) error
	}{
		{"post", func(s *Store, _ Article) error {
			_, err := s.PostArticle(bg, "ann", "new", "fresh words fresh", "c")
			return err
		}},
		{"update", func(s *Store, a Article) error {
			body := "other other other"
			_, err := s.UpdateArticle(bg, a.ID, nil, &body, nil)
			return err
		}},
		{"delete", func(s *Store, a Article) error { return s.DeleteArticle(bg, a.ID) }},
	}
	for _, tc := range ops {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := newSteppingStoreClock(t)
			mustArticleAuthor(t, s, "ann")
			a := mustPostArticle(t, s, "ann", "t", "cats cats cats and dogs", "c")
			mustPostArticle(t, s, "ann", "t", "dogs", "c")
			s.fault = crashAtPoint(pointTopWords)
			if err := tc.op(s, a); !errors.Is(err, errCrash) {
				t.Fatalf("%s: %v, want the crash", tc.name, err)
			}
			s.fault = nil
			clk.Advance(nonceRecent)            // cut short long ago: Repair, not the write's finish, rebuilds the list
			checkArticleWordCounts(t, s, "ann") // the counts were written
			stale, err := s.TopWords(bg, "ann", 10)
			if want := rankCounts(storedWordCounts(t, s, "ann"), 10); err != nil || slices.Equal(stale, want) {
				t.Fatalf("after the crash, TopWords %v, %v: want a stale list (the counts are %v)", stale, err, want)
			}
			report, err := s.Repair(bg)
			if err != nil {
				t.Fatal(err)
			}
			if report[fixWordCountTopLists] != 1 {
				t.Errorf("repair reported %v, want one top list rebuilt", report)
			}
			checkTopList(t, s, "ann")
			if again, err := s.Repair(bg); err != nil || len(again) != 0 {
				t.Errorf("a second repair: %v, %v", again, err)
			}
		})
	}
}

// Word counts written before top lists existed (no top-words row) are
// read whole and answered exactly; the author's next write that merges
// (a post leaves its counts pending but every topFoldEvery-th), or
// Repair, builds the list, after which a read gets the list alone.
func TestTopListMissing(t *testing.T) {
	for _, build := range []string{"write", "repair"} {
		t.Run(build, func(t *testing.T) {
			s := newSteppingStore(t)
			mustArticleAuthor(t, s, "ann")
			// As an older hbgraph left it: the counts and no list.
			s.fault = crashAtPoint(pointTopWords)
			if _, err := s.PostArticle(bg, "ann", "t", "b b b a a c", "c"); !errors.Is(err, errCrash) {
				t.Fatal(err)
			}
			s.fault = nil
			if c, err := s.get(bg, keys.TableWordCounts, keys.FamilyWordCounts, keys.TopWords("ann")); err != nil || len(c) != 0 {
				t.Fatalf("a list: %v, %v", c, err)
			}
			reads := &wordCountReads{}
			got, err := s.TopWords(WithTracer(bg, reads), "ann", 2)
			if want := []WordCount{{"b", 3}, {"a", 2}}; err != nil || !slices.Equal(got, want) {
				t.Fatalf("without a list: %v, %v; want %v", got, err, want)
			}
			if build == "write" {
				for range topFoldEvery { // the first post's serial is 2: the last folds
					mustPostArticle(t, s, "ann", "t", "d", "c")
				}
			} else if r, err := s.Repair(bg); err != nil || r[fixWordCountTopLists] != 1 {
				t.Fatalf("repair: %v, %v; want one top list rebuilt", r, err)
			}
			checkTopList(t, s, "ann")
			reads = &wordCountReads{}
			if _, err := s.TopWords(WithTracer(bg, reads), "ann", 2); err != nil || reads.lists != 1 || reads.whole != 0 {
				t.Errorf("with a list: %v; %d lists and %d whole rows read", err, reads.lists, reads.whole)
			}
		})
	}
}

// However large the author's vocabulary, TopWords reads one row, the list,
// of at most topListKeep words.
func TestTopWordsReadsTheListOnly(t *testing.T) {
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	for i := range 4 {
		mustPostArticle(t, s, "ann", "t", distinctWords(fmt.Sprint("a", i, "x"), MaxArticleWords-1), "c")
	}
	var calls []Call
	var mu sync.Mutex
	ctx := WithTracer(bg, tracerFunc(func(c Call) { mu.Lock(); calls = append(calls, c); mu.Unlock() }))
	got, err := s.TopWords(ctx, "ann", 10)
	if err != nil || len(got) != 10 || got[0] != (WordCount{"t", 4}) {
		t.Fatalf("TopWords: %v, %v", got, err)
	}
	if len(calls) != 1 || len(calls[0].Rows) != 1 || !bytes.Equal(calls[0].Rows[0], keys.TopWords("ann")) {
		t.Fatalf("calls %v; want one read of the top-words row", calls)
	}
	c, err := s.get(bg, keys.TableWordCounts, keys.FamilyWordCounts, keys.TopWords("ann"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c[keys.QualTopWords]); n > topListKeep*16 {
		t.Errorf("the list is %d bytes", n)
	}
}

// A list round-trips through its cell; every truncation of a cell, and a
// cell out of order, fails to decode.
func TestTopListCell(t *testing.T) {
	for _, l := range []topList{
		{complete: true},
		{words: []WordCount{{"b", 3}, {"a", 2}, {"c", 2}, {"日本", 1}}, complete: true},
		{words: []WordCount{{"x", 300}, {"y", 1}}},
	} {
		cell := l.encode()
		got, size, ok := decodeTopList(cell, topListKeep)
		if !ok || size != len(l.words) || got.complete != l.complete || !slices.Equal(got.words, l.words) {
			t.Fatalf("%v: decoded %v, %d, %v", l, got, size, ok)
		}
		if page, size, ok := decodeTopList(cell, 1); !ok || size != len(l.words) || len(page.words) != min(1, len(l.words)) {
			t.Fatalf("%v: first word only: %v, %d, %v", l, page, size, ok)
		}
		// A cut between entries is a shorter list, which decodes; a cut
		// inside one, or before the flags, does not.
		boundary := map[int]bool{1: true}
		for i := range l.words {
			boundary[len(topList{words: l.words[:i+1]}.encode())] = true
		}
		for n := range len(cell) {
			if _, _, ok := decodeTopList(cell[:n], topListKeep); ok != boundary[n] {
				t.Fatalf("%v cut at %d of %d: decoded %v", l, n, len(cell), ok)
			}
		}
	}
	for name, l := range map[string]topList{
		"count order": {words: []WordCount{{"a", 1}, {"b", 2}}},
		"word order":  {words: []WordCount{{"b", 2}, {"a", 2}}},
		"repeated":    {words: []WordCount{{"a", 2}, {"a", 2}}},
		"zero count":  {words: []WordCount{{"a", 0}}},
	} {
		if _, _, ok := decodeTopList(l.encode(), topListKeep); ok {
			t.Errorf("%s: decoded", name)
		}
	}
	if _, _, ok := decodeTopList([]byte{2}, topListKeep); ok {
		t.Error("unknown flags decoded")
	}
	if _, _, ok := decodeTopList(append(topList{words: []WordCount{{"a", 1}}}.encode(), 1), topListKeep); ok {
		t.Error("a torn entry decoded")
	}
}

// randomTopCounts draws an author's counts for the top-list tests: up to
// 60 words ("w0" on) of counts 1-8, and, when wide, about topListKeep more
// ("v0" on) of counts 1-3, for lists at and past topListKeep.
func randomTopCounts(rng *rand.Rand, wide bool) map[string]int64 {
	counts := map[string]int64{}
	for i := range 1 + rng.IntN(60) {
		counts[fmt.Sprint("w", i)] = int64(1 + rng.IntN(8))
	}
	if wide {
		for i := range topListKeep - 40 + rng.IntN(80) {
			counts[fmt.Sprint("v", i)] = int64(1 + rng.IntN(3))
		}
	}
	return counts
}

// mergeTopCell merges the changed counts into the encoded list; the result
// is the list a sort of the kept entries and the placed counts gives, and
// answers every page or is refused.
func TestMergeTopCellIsASortedMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for round := range 4000 {
		list := topListOf(randomTopCounts(rng, round%10 == 0))
		if rng.IntN(2) == 0 && len(list.words) > 1 { // a list cut short
			list = topList{words: list.words[:1+rng.IntN(len(list.words)-1)]}
		}
		changed := map[string]int64{}
		for range rng.IntN(12) {
			changed[fmt.Sprint("w", rng.IntN(80))] = int64(rng.IntN(10)) // 0: fell out
		}
		want := topList{words: slices.Clone(list.words), complete: list.complete}
		var last WordCount
		if !list.complete && len(want.words) > 0 {
			last = want.words[len(want.words)-1]
		}
		want.words = slices.DeleteFunc(want.words, func(e WordCount) bool { _, ok := changed[e.Word]; return ok })
		for w, n := range changed {
			if e := (WordCount{w, n}); n > 0 && (list.complete || compareRank(e, last) < 0) {
				want.words = append(want.words, e)
			}
		}
		slices.SortFunc(want.words, compareRank)
		if len(want.words) > topListKeep {
			want = topList{words: want.words[:topListKeep]}
		}
		cell := list.encode()
		before := slices.Clone(cell)
		got, ok := mergeTopCell(cell, changed)
		answers := want.answersEveryPage() && (list.complete || len(list.words) > 0)
		if ok != answers {
			t.Fatalf("round %d: merge of %v into a list of %d (complete %v): ok %v, want %v",
				round, changed, len(list.words), list.complete, ok, answers)
		}
		if ok && !bytes.Equal(got, want.encode()) {
			dec, _, _ := decodeTopList(got, topListKeep)
			at := 0
			for at < min(len(dec.words), len(want.words)) && dec.words[at] == want.words[at] {
				at++
			}
			t.Fatalf("round %d: merge of %v into a list of %d (complete %v): %d words (complete %v), want %d (complete %v); first difference at %d",
				round, changed, len(list.words), list.complete, len(dec.words), dec.complete, len(want.words), want.complete, at)
		}
		if !bytes.Equal(cell, before) {
			t.Fatalf("round %d: the merge changed the cell it was given", round)
		}
	}
}

// A cell that does not decode is not merged into: it is recomputed.
func TestMergeTopCellRefusesWhatDoesNotDecode(t *testing.T) {
	cell := topList{words: []WordCount{{"b", 3}, {"a", 2}, {"c", 2}}, complete: true}.encode()
	for n := range len(cell) {
		boundary := n == 1 // an empty complete list merges
		for i := 1; i <= 3; i++ {
			boundary = boundary || n == len(topList{words: []WordCount{{"b", 3}, {"a", 2}, {"c", 2}}[:i]}.encode())
		}
		if _, ok := mergeTopCell(cell[:n], map[string]int64{"a": 1}); ok != boundary {
			t.Errorf("cut at %d of %d: merged %v", n, len(cell), ok)
		}
	}
	for name, l := range map[string]topList{
		"count order": {words: []WordCount{{"a", 1}, {"b", 2}}, complete: true},
		"word order":  {words: []WordCount{{"b", 2}, {"a", 2}}, complete: true},
		"zero count":  {words: []WordCount{{"a", 0}}, complete: true},
	} {
		if _, ok := mergeTopCell(l.encode(), map[string]int64{"z": 1}); ok {
			t.Errorf("%s: merged", name)
		}
	}
	if _, ok := mergeTopCell([]byte{2}, map[string]int64{"z": 1}); ok {
		t.Error("unknown flags merged")
	}
	long := topListOf(map[string]int64{})
	for i := range topListKeep + 1 {
		long.words = append(long.words, WordCount{fmt.Sprintf("w%05d", i), 1})
	}
	if _, ok := mergeTopCell(long.encode(), map[string]int64{"z": 1}); ok {
		t.Error("a list longer than topListKeep merged")
	}
}
