package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hbgraph/hbgraph/store/keys"
)

// pendingCells returns the write counts (serialWrites) of the pending
// cells of the author's top-words row as stored.
func pendingCells(t testing.TB, s *Store, author string) []int64 {
	t.Helper()
	c, err := s.get(bg, keys.TableWordCounts, keys.FamilyWordCounts, keys.TopWords(author))
	if err != nil {
		t.Fatal(err)
	}
	var serials []int64
	for _, p := range pendingsOf(c) {
		if _, _, _, ok := pendingCounts([]topPending{p}, 0, true); !ok {
			t.Fatalf("pending cell %x does not decode", p.qualifier)
		}
		serials = append(serials, serialWrites(p.serial))
	}
	return serials
}

// Posts leave their counts pending until one folds them all into the
// list and deletes them: every topFoldEvery-th, and the one whose words
// take the author's past a multiple of pendingWordBudget (so long posts
// fold more often, and one of the budget's size always does). A read
// sees every post's counts throughout, over a vocabulary wider than a
// list. The serial counts the writes and their distinct words.
func TestPendingPostsFold(t *testing.T) {
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	rng := rand.New(rand.NewPCG(3, 4))
	var (
		words   int64   // distinct words of each post, summed
		want    []int64 // pending cells' write counts
		pending int64   // their words
		folds   [2]int  // by the write count, by the budget
	)
	for i := range 3*topFoldEvery + 5 {
		// Most short (up to 32 words, 16 of them new), some long, one of
		// the budget's size.
		text := zipfText(rng, 3*topListKeep, 15) + fmt.Sprintf("u%d ", i) + strings.Repeat(fmt.Sprintf("x%d ", i), 2)
		long := 14
		switch {
		case i == 2*topFoldEvery+7:
			long = pendingWordBudget
		case i%5 == 3:
			long = 60 + rng.IntN(200)
		}
		for k := range long {
			text += fmt.Sprintf("n%dz%d ", i, k)
		}
		mustPostArticle(t, s, "ann", "t", text, "c")
		counted, err := countArticleWords("t", text)
		if err != nil {
			t.Fatal(err)
		}
		n, writes := int64(len(counted)), int64(i+1)
		words += n
		snap, err := s.wordCountsOf(bg, keys.WordCounts("ann"), nil)
		if err != nil || snap.serial != writes+words<<serialWordShift {
			t.Fatalf("after post %d: serial %x, %v; want %d writes and %d words", writes, snap.serial, err, writes, words)
		}
		first, byWrites := writes <= topFoldEvery, writes%topFoldEvery == 1
		byWords := words/pendingWordBudget != (words-n)/pendingWordBudget
		switch {
		case first || byWrites || byWords:
			want, pending = nil, 0
			if !first {
				folds[map[bool]int{true: 0, false: 1}[byWrites]]++
			}
		default:
			want, pending = append(want, writes), pending+n
		}
		if got := pendingCells(t, s, "ann"); !slices.Equal(got, want) {
			t.Fatalf("after post %d (%d words): pending cells of writes %v, want %v", writes, n, got, want)
		}
		if len(want) >= topFoldEvery || pending >= pendingWordBudget {
			t.Fatalf("after post %d: %d cells pending, of %d words", writes, len(want), pending)
		}
		checkTopList(t, s, "ann")
	}
	if folds[0] < 2 || folds[1] < 5 {
		t.Fatalf("%d folds by the writes and %d by the words: the posts try too few", folds[0], folds[1])
	}
	if len(storedWordCounts(t, s, "ann")) <= topListKeep {
		t.Fatal("the author's words fit in a list: nothing tested")
	}
	// Edits and deletions leave their counts pending too, counts of 0
	// among them (pendingZeros), and a fold takes them with the rest.
	a := mustPostArticle(t, s, "ann", "t", "only once here", "c")
	edited := "only twice here here"
	if _, err := s.UpdateArticle(bg, a.ID, nil, &edited, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteArticle(bg, a.ID); err != nil {
		t.Fatal(err)
	}
	snap, err := s.wordCountsOf(bg, keys.WordCounts("ann"), []string{"only", "twice"})
	if err != nil || snap.counts["only"] != 0 || snap.counts["twice"] != 0 {
		t.Fatalf("counts after the deletion: %v, %v", snap, err)
	}
	got := pendingCells(t, s, "ann")
	if writes := serialWrites(snap.serial); len(got) < 2 || got[len(got)-1] != writes || got[len(got)-2] != writes-1 {
		t.Fatalf("pending cells of writes %v: want the edit's and the deletion's, %d and %d", got, writes-1, writes)
	}
	checkTopList(t, s, "ann")
	for range topFoldEvery {
		mustPostArticle(t, s, "ann", "t", "fold", "c")
	}
	if got := pendingCells(t, s, "ann"); len(got) >= topFoldEvery {
		t.Fatalf("pending cells of writes %v: no fold", got)
	}
	checkTopList(t, s, "ann")
	if r, err := s.Repair(bg); err != nil || len(r) != 0 {
		t.Fatalf("repair: %v, %v; want nothing to fix", r, err)
	}
}

// A post slow between its Increment and its pending cell writes the cell
// after a fold that did not see it: the cell's serial is below the
// list's, and its counts older than the list's for words that later posts
// changed. Readers and the next fold read those counts again; taken as
// they are, "cat" would read 1 instead of 16.
func TestPendingCellWrittenAfterAFold(t *testing.T) {
	s := newSteppingStore(t)
	mustArticleAuthor(t, s, "ann")
	mustPostArticle(t, s, "ann", "t", "dog", "c") // serial 1: the list
	s.fault = crashAtPoint(pointTopWords)
	if _, err := s.PostArticle(bg, "ann", "t", "cat", "c"); !errors.Is(err, errCrash) { // serial 2
		t.Fatal(err)
	}
	s.fault = nil
	slow, err := s.wordCountsOf(bg, keys.WordCounts("ann"), []string{"t", "cat"})
	if err != nil || serialWrites(slow.serial) != 2 {
		t.Fatalf("the slow post's snapshot: %+v, %v", slow, err)
	}
	for range topFoldEvery - 1 { // writes 3 to topFoldEvery+1: the last folds, and finds no cell of write 2
		mustPostArticle(t, s, "ann", "t", "cat", "c")
	}
	slow.nonce = 1
	if err := s.putPending(bg, "ann", slow); err != nil {
		t.Fatal(err)
	}
	if got := pendingCells(t, s, "ann"); !slices.Contains(got, 2) {
		t.Fatalf("pending serials %v: want the slow post's, 2", got)
	}
	got, err := s.TopWords(bg, "ann", 2)
	if want := []WordCount{{"t", topFoldEvery + 1}, {"cat", topFoldEvery}}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("TopWords: %v, %v; want %v", got, err, want)
	}
	checkTopList(t, s, "ann")
	if r, err := s.Repair(bg); err != nil || len(r) != 0 {
		t.Fatalf("repair: %v, %v; want nothing to fix", r, err)
	}
	for range topFoldEvery {
		mustPostArticle(t, s, "ann", "t", "bird", "c")
	}
	if got := pendingCells(t, s, "ann"); slices.Contains(got, 2) {
		t.Fatalf("pending serials %v: the fold left the slow post's", got)
	}
	checkTopList(t, s, "ann")
}

// A pending cell that does not decode makes readers read the whole word
// count row, and the next fold recounts the list and deletes it.
func TestPendingCellThatDoesNotDecode(t *testing.T) {
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	mustPostArticle(t, s, "ann", "t", "a b b", "c")
	q := pendingQualifier(7, 7)
	if err := s.put(bg, keys.TableWordCounts, keys.FamilyWordCounts, keys.TopWords("ann"), cells{q: []byte("not a list")}, s.nowMs()); err != nil {
		t.Fatal(err)
	}
	reads := &callLog{}
	got, err := s.TopWords(WithTracer(bg, reads), "ann", 3)
	if want := []WordCount{{"b", 2}, {"a", 1}, {"t", 1}}; err != nil || !slices.Equal(got, want) || !reads.read(keys.WordCounts("ann")) {
		t.Fatalf("TopWords: %v, %v, calls %v; want %v from the word count row", got, err, reads.calls, want)
	}
	if err := s.DeleteArticle(bg, mustPostArticle(t, s, "ann", "t", strings.Repeat("c ", 3), "c").ID); err != nil {
		t.Fatal(err)
	}
	if got := pendingCells(t, s, "ann"); len(got) != 0 {
		t.Fatalf("pending serials %v after a fold", got)
	}
	checkTopList(t, s, "ann")
}

// read reports whether a call read row.
func (l *callLog) read(row []byte) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.calls {
		if (c.Op == "Get" || c.Op == "Batch") && slices.ContainsFunc(c.Rows, func(r []byte) bool { return bytes.Equal(r, row) }) {
			return true
		}
	}
	return false
}

// foldWithRoom posts to author until a post folds with no write that
// folds among the next topFoldEvery-2 and the whole of pendingWordBudget
// before the next fold by the words: the one whose write count is 1 past
// a multiple of topFoldEvery, then one that takes the author's words to a
// multiple of pendingWordBudget, which also folds.
func foldWithRoom(b *testing.B, s *Store, author string) {
	b.Helper()
	words := func() (int64, int64) {
		snap, err := s.wordCountsOf(bg, keys.WordCounts(author), nil)
		if err != nil {
			b.Fatal(err)
		}
		return serialWrites(snap.serial), serialWords(snap.serial)
	}
	for {
		if n, _ := words(); n > topFoldEvery && n%topFoldEvery == 1 {
			break
		}
		mustPostArticle(b, s, author, "fold", "fold", "bench")
	}
	_, w := words()
	var body strings.Builder
	for i := range pendingWordBudget - 1 - w%pendingWordBudget { // and the title's word
		fmt.Fprintf(&body, "room%d ", i)
	}
	mustPostArticle(b, s, author, "fold", body.String(), "bench")
	if _, w := words(); w%pendingWordBudget != 0 || len(pendingCells(b, s, author)) != 0 {
		b.Fatalf("%d words after the fold, %d cells pending", w, len(pendingCells(b, s, author)))
	}
}

// BenchmarkTopWordsOfAWideAuthor reads the first 10 top words of the wide
// author (a full list), with no pending cells and with nearly the most a
// row holds between two folds (topFoldEvery-2 cells, or nearly
// pendingWordBudget words in them): what pending counts add to a read.
func BenchmarkTopWordsOfAWideAuthor(b *testing.B) {
	for _, c := range []struct {
		name  string
		posts int
		words int
	}{{"no pending", 0, 0}, {"15 posts of 8 words pending", 15, 8}, {"62 posts of 8 words pending", topFoldEvery - 2, 8}, {"15 posts of 32 words pending", 15, 32}, {"3 posts of 160 words pending", 3, 160}} {
		b.Run(c.name, func(b *testing.B) {
			s := wideAuthorStore(b)
			foldWithRoom(b, s, "bench")
			for j := range c.posts {
				var body strings.Builder
				for i := range c.words - 1 { // and the title's word
					fmt.Fprintf(&body, "w%d ", (j*7919+i*131)%5000)
				}
				mustPostArticle(b, s, "bench", "pending", body.String(), "bench")
			}
			if c.posts > 0 && len(pendingCells(b, s, "bench")) != c.posts {
				b.Fatalf("%d pending cells, want %d", len(pendingCells(b, s, "bench")), c.posts)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.TopWords(bg, "bench", 10); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A read's view of a list with pending counts answers what a writer's
// merge of them (mergeTopCell) would hold, page by page, and answers
// when and only when that merge would: over random lists, full ones and
// ones cut short, and counts that rise, fall, fall out and come in.
func TestTopViewPagesAreTheMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	answered := 0
	for round := range 4000 {
		list := topListOf(randomTopCounts(rng, round%4 == 0))
		switch {
		case rng.IntN(4) == 0 && len(list.words) > 1: // a list cut short
			list = topList{words: list.words[:1+rng.IntN(len(list.words)-1)]}
		case rng.IntN(2) == 0 && len(list.words) > MaxTopWords+10: // cut near a page's largest
			list = topList{words: list.words[:MaxTopWords-20+rng.IntN(30)]}
		}
		pending := map[string]int64{}
		for range rng.IntN(40) {
			pending[fmt.Sprint("w", rng.IntN(80))] = int64(rng.IntN(10)) // 0: fell out
		}
		cell := list.encode()
		merged, ok := mergeTopCell(cell, pending)
		v, viewOK := newTopView(cell, pending)
		if viewOK != ok {
			t.Fatalf("round %d: view of %v over a list of %d (complete %v): ok %v, the merge's %v", round, pending, len(list.words), list.complete, viewOK, ok)
		}
		if !ok {
			continue
		}
		answered++
		want, _, _ := decodeTopList(merged, topListKeep)
		for _, n := range []int{1, 7, 100, MaxTopWords} {
			if got, w := v.page(n), want.words[:min(n, len(want.words))]; !slices.Equal(got, w) {
				t.Fatalf("round %d: page of %d: %v, the merge's %v", round, n, got, w)
			}
		}
	}
	if answered < 1000 {
		t.Fatalf("%d of 4000 views answered: the test tries too few lists that answer", answered)
	}
}
