package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hbgraph/hbgraph/store/keys"
)

// recountArticleWords counts the words of author's articles from scratch.
func recountArticleWords(t testing.TB, s *Store, author string) map[string]int64 {
	t.Helper()
	want := map[string]int64{}
	err := s.scanAll(context.Background(), timelineRange(author), func(rw row) (bool, error) {
		a, ok, err := decodeTimelineState(rw.key, rw.cells)
		if err != nil || !ok {
			return false, fmt.Errorf("row %x: %v", rw.key, err)
		}
		if a.isMarked() {
			return true, nil // being deleted: its words are counted out
		}
		for w, n := range articleWords(a.articleCells) {
			want[w] += n
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// storedWordCounts returns author's word count row, zero cells included.
func storedWordCounts(t testing.TB, s *Store, author string) map[string]int64 {
	t.Helper()
	c, err := s.get(context.Background(), keys.TableWordCounts, keys.FamilyWordCounts, keys.WordCounts(author))
	if err != nil {
		t.Fatal(err)
	}
	m, err := decodeWordCounts([]byte("row"), c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkArticleWordCounts asserts that author's word count row equals a
// recount of the author's articles (a zero cell counts as absent).
func checkArticleWordCounts(t testing.TB, s *Store, author string) {
	t.Helper()
	want := recountArticleWords(t, s, author)
	have := storedWordCounts(t, s, author)
	maps.DeleteFunc(have, func(_ string, n int64) bool { return n == 0 })
	if !maps.Equal(have, want) {
		t.Errorf("word counts of %q:\n have %v\n want %v", author, have, want)
	}
}

func TestCountWords(t *testing.T) {
	long := strings.Repeat("a", MaxWordBytes)
	cases := []struct {
		name, text string
		want       map[string]int64
	}{
		{"empty", "", map[string]int64{}},
		{"punctuation only", " ,.!? -- ", map[string]int64{}},
		{"case folds", "Hello, hello HELLO world", map[string]int64{"hello": 3, "world": 1}},
		{"digits join letters", "abc123 4x 2026-01-01", map[string]int64{"abc123": 1, "4x": 1, "2026": 1, "01": 2}},
		{"apostrophe splits", "don't", map[string]int64{"don": 1, "t": 1}},
		{"non-ASCII letters", "Ça va? ÇA, straße", map[string]int64{"ça": 2, "va": 1, "straße": 1}},
		{"Japanese runs are one word", "日本語のテキスト。次の文", map[string]int64{"日本語のテキスト": 1, "次の文": 1}},
		{"full-width digits", "第１２回", map[string]int64{"第１２回": 1}},
		{"longest word counts", long + " x", map[string]int64{long: 1, "x": 1}},
		{"longer runs do not", long + "a x", map[string]int64{"x": 1}},
		{"word at the end", "end", map[string]int64{"end": 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := map[string]int64{}
			countWords(got, c.text)
			if !maps.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestWordDeltas(t *testing.T) {
	got := wordDeltas(map[string]int64{"a": 2, "b": 1, "c": 1}, map[string]int64{"a": 1, "c": 1, "d": 3})
	if want := map[string]int64{"a": -1, "b": -1, "d": 3}; !maps.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// An edit's, counted once: each of title and body, changed or not, a
	// word moved between them.
	texts := []string{"", "A b", "a a c", "b c d", "The the THE"}
	for _, ot := range texts {
		for _, ob := range texts {
			for _, nt := range texts {
				for _, nb := range texts {
					old, next := articleCells{title: ot, body: ob}, articleCells{title: nt, body: nb}
					want := wordDeltas(articleWords(old), articleWords(next))
					if got := articleWordDeltas(old, next); !maps.Equal(got, want) {
						t.Fatalf("%q/%q -> %q/%q: %v, want %v", ot, ob, nt, nb, got, want)
					}
				}
			}
		}
	}
}

func TestTopWords(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	mustPostArticle(t, s, "ann", "Cats and dogs", "cats, cats and birds; dogs", "pets")
	gone := mustPostArticle(t, s, "ann", "Zebra", "zebra zebra zebra zebra zebra", "pets")
	if err := s.DeleteArticle(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		n    int
		want []WordCount
	}{
		{1, []WordCount{{"cats", 3}}},
		{3, []WordCount{{"cats", 3}, {"and", 2}, {"dogs", 2}}},
		{1000, []WordCount{{"cats", 3}, {"and", 2}, {"dogs", 2}, {"birds", 1}}}, // no zebra at 0
	}
	for _, c := range cases {
		t.Run(fmt.Sprint("n=", c.n), func(t *testing.T) {
			got, err := s.TopWords(ctx, "ann", c.n)
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
	if got, err := s.TopWords(ctx, "nobody", 5); err != nil || len(got) != 0 {
		t.Fatalf("unknown author: %v, %v", got, err)
	}
}

// Every truncation of a count, and a count a byte too long, is a corrupt
// cell: decodeWordCounts fails naming the least such word, and
// splitWordCounts sets it aside and decodes the rest.
func TestDecodeWordCountsCorrupt(t *testing.T) {
	valid := encodeMs(42)
	for n := range len(valid) + 2 {
		if n == len(valid) {
			continue
		}
		v := append(slices.Clip(valid), 0)[:n]
		t.Run(fmt.Sprint(n, " bytes"), func(t *testing.T) {
			c := cells{"ok": encodeMs(1), "torn": v, "zz": {}}
			if _, err := decodeWordCounts([]byte("row"), c); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `"torn"`) {
				t.Errorf("decodeWordCounts: %v, want an error naming \"torn\"", err)
			}
			counts, corrupt := splitWordCounts(c)
			if !maps.Equal(counts, map[string]int64{"ok": 1}) || !maps.Equal(corrupt, map[string]bool{"torn": true, "zz": true}) {
				t.Errorf("splitWordCounts: %v and corrupt %v", counts, corrupt)
			}
		})
	}
	counts, corrupt := splitWordCounts(cells{"ok": valid})
	if !maps.Equal(counts, map[string]int64{"ok": 42}) || corrupt != nil {
		t.Errorf("splitWordCounts of a sound row: %v and corrupt %v", counts, corrupt)
	}
}

// randomText draws words from a small vocabulary with mixed case and
// punctuation, so that edits add, remove and keep words.
func randomText(rng *rand.Rand, n int) string {
	vocab := []string{"The", "cat", "CAT", "dog", "über", "Straße", "42", "x1", "日本", "and", "a", "sat"}
	seps := []string{" ", ", ", ". ", "!", "\n", " - "}
	var b strings.Builder
	for range n {
		b.WriteString(vocab[rng.IntN(len(vocab))])
		b.WriteString(seps[rng.IntN(len(seps))])
	}
	return b.String()
}

func TestWordCountsAfterRandomOperations(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t)
	authors := []string{"ann", "bob"}
	for _, a := range authors {
		mustArticleAuthor(t, s, a)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var live []string
	for i := range 200 {
		switch op := rng.IntN(10); {
		case op < 5 || len(live) == 0:
			a := mustPostArticle(t, s, authors[rng.IntN(2)], randomText(rng, 1+rng.IntN(4)), randomText(rng, rng.IntN(20)), "c")
			live = append(live, a.ID)
		case op < 8:
			id := live[rng.IntN(len(live))]
			var title, body *string
			if rng.IntN(2) == 0 {
				title = articleRef(randomText(rng, 1+rng.IntN(4)))
			}
			if title == nil || rng.IntN(2) == 0 {
				body = articleRef(randomText(rng, rng.IntN(20)))
			}
			if _, err := s.UpdateArticle(ctx, id, title, body, nil); err != nil {
				t.Fatalf("op %d: %v", i, err)
			}
		default:
			j := rng.IntN(len(live))
			if err := s.DeleteArticle(ctx, live[j]); err != nil {
				t.Fatalf("op %d: %v", i, err)
			}
			live = slices.Delete(live, j, j+1)
		}
	}
	for _, a := range authors {
		checkArticleWordCounts(t, s, a)
	}
}

func TestRebuildWordCountsFixesCorruptRow(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	mustArticleAuthor(t, s, "bob")
	for i := range 20 {
		mustPostArticle(t, s, "ann", fmt.Sprint("Title ", i), "the cat sat on the mat", "c")
	}
	mustPostArticle(t, s, "bob", "Bob", "bob's words", "c")
	bobBefore := storedWordCounts(t, s, "bob")
	row := keys.WordCounts("ann")
	cur, err := s.scan(ctx, scanRange{table: keys.TableWordCounts, family: keys.FamilyWordCounts, start: row, stop: keys.After(row)})
	if err != nil || len(cur) != 1 {
		t.Fatal(cur, err)
	}
	// Wrong counts, words no article has (one of them at zero), a missing
	// word; stamped no older than the row (Increments run ahead of the
	// clock), as a bug or a lost write would leave them.
	ts := max(s.nowMs(), cur[0].ts)
	damage := cells{"the": encodeMs(7), "cat": encodeMs(-3), "ghost": encodeMs(5), "zero": encodeMs(0)}
	if err := s.put(ctx, keys.TableWordCounts, keys.FamilyWordCounts, row, damage, ts); err != nil {
		t.Fatal(err)
	}
	if err := s.deleteColumns(ctx, keys.TableWordCounts, keys.FamilyWordCounts, row, []string{"mat"}, ts); err != nil {
		t.Fatal(err)
	}
	if got := storedWordCounts(t, s, "ann"); got["the"] != 7 || got["ghost"] != 5 || got["mat"] != 0 {
		t.Fatalf("damage did not land: %v", got)
	}
	if err := s.RebuildWordCounts(ctx, "ann"); err != nil {
		t.Fatal(err)
	}
	want := recountArticleWords(t, s, "ann")
	if got := nonzero(storedWordCounts(t, s, "ann")); !maps.Equal(got, want) { // 0 cells stay while young
		t.Fatalf("after rebuild:\n have %v\n want %v", got, want)
	}
	if got := storedWordCounts(t, s, "bob"); !maps.Equal(got, bobBefore) {
		t.Fatalf("bob's counts changed: %v, were %v", got, bobBefore)
	}
	// Writers carry on from the rebuilt row, and a second rebuild with
	// nothing to fix writes nothing.
	mustPostArticle(t, s, "ann", "Ghost", "a ghost cat", "c")
	checkArticleWordCounts(t, s, "ann")
	log := &callLog{}
	if err := s.RebuildWordCounts(WithTracer(ctx, log), "ann"); err != nil {
		t.Fatal(err)
	}
	for _, c := range log.take() {
		if c.Op != "Scan" && c.Op != "Get" && c.Op != "Batch" { // a Batch of one Get
			t.Errorf("a rebuild of an exact row wrote: %+v", c)
		}
	}
}

// articleHook is a Tracer that runs fn once, after the first call matching
// match: a way to slip a writer in between two calls of an operation.
type articleHook struct {
	once  sync.Once
	match func(Call) bool
	fn    func()
}

func (h *articleHook) StoreCall(c Call) {
	if h.match(c) {
		h.once.Do(h.fn)
	}
}

// TestRebuildWordCountsBesideWriters slips a writer in at the points of a
// rebuild where the order of its reads and writes decides the outcome.
func TestRebuildWordCountsBesideWriters(t *testing.T) {
	after := func(op, table string) func(Call) bool {
		return func(c Call) bool { return c.Op == op && c.Table == table }
	}
	cases := []struct {
		name  string
		after func(Call) bool // the writer runs after this call of the rebuild
		exact bool            // whether the row is exact after the rebuild
	}{
		// After the article scan, before the counts are read: the rebuild
		// sees the timeline change by its second scan and starts over.
		{"after the article scan", after("Scan", keys.TableArticles), true},
		// After the counts are read: the rebuild's Increments are the
		// differences it read, and the writer's add to them.
		{"after the read", after("Batch", keys.TableWordCounts), true},
		// After the rebuild's Increment: the writer's add to its result.
		{"after the increment", after("Increment", keys.TableWordCounts), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := t.Context()
			clk := newFakeClock()
			clk.step = 1
			s := newTestStoreWithClock(t, clk)
			mustArticleAuthor(t, s, "ann")
			mustPostArticle(t, s, "ann", "old", "the cat sat", "c")
			row := keys.WordCounts("ann")
			// Wrong counts: "sat" (the writer does not touch it), "cat" (it
			// does), and a word no article has.
			if err := s.put(ctx, keys.TableWordCounts, keys.FamilyWordCounts, row,
				cells{"sat": encodeMs(50), "cat": encodeMs(50), "gone": encodeMs(9)}, s.nowMs()); err != nil {
				t.Fatal(err)
			}
			ran := false
			hook := &articleHook{match: c.after, fn: func() {
				// The writer's own calls carry no tracer.
				mustPostArticle(t, s, "ann", "new", "a cat and a dog", "c")
				ran = true
			}}
			if err := s.RebuildWordCounts(WithTracer(ctx, hook), "ann"); err != nil {
				t.Fatal(err)
			}
			if !ran {
				t.Fatal("the writer did not run")
			}
			got := nonzero(storedWordCounts(t, s, "ann"))
			want := recountArticleWords(t, s, "ann")
			if !c.exact {
				// The new article's words are taken out: what the scan saw.
				want = map[string]int64{}
				countWords(want, "old the cat sat")
			}
			if !maps.Equal(got, want) {
				t.Fatalf("have %v\nwant %v", got, want)
			}
			// Once the writers are quiet, a rebuild makes the row exact.
			if err := s.RebuildWordCounts(ctx, "ann"); err != nil {
				t.Fatal(err)
			}
			checkArticleWordCounts(t, s, "ann")
		})
	}
}

// sortByRank sorts as slices.SortFunc with compareRank does, short lists
// and long, with ties in count.
func TestSortByRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 27))
	for _, n := range []int{0, 1, 5, 16, 17, 100, 600} {
		words := make([]WordCount, n)
		for i := range words {
			words[i] = WordCount{Word: fmt.Sprintf("w%d", rng.IntN(1000)), Count: rng.Int64N(5)}
		}
		want := slices.Clone(words)
		slices.SortFunc(want, compareRank)
		sortByRank(words)
		if !slices.Equal(words, want) {
			t.Fatalf("%d words: %v, want %v", n, words, want)
		}
	}
}
