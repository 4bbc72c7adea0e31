package store

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hbgraph/hbgraph/store/keys"
)

// A writer that merges counts it read before another writer's Increment
// must lose its compare-and-set, even when the other writer's merge left
// the list as it was (the version moves all the same): otherwise the
// stale counts win. The concurrent simulation found it: a post's +1 merged
// after its undo's -1 had found the list already without the words, so
// the list kept an article that was gone.
func TestTopWordsStaleMergeLoses(t *testing.T) {
	ctx := t.Context()
	for _, name := range []string{"no row yet", "row unchanged"} {
		t.Run(name, func(t *testing.T) {
			s := newTestStore(t)
			author := "ann"
			trow, wrow := keys.TopWords(author), keys.WordCounts(author)
			if name == "row unchanged" {
				// A list that the merges below leave as it is.
				if err := s.addWordCounts(ctx, author, map[string]int64{"other": 1}, "seed"); err != nil {
					t.Fatal(err)
				}
			}
			// Writer A: its Increment, then its merge's reads.
			if err := s.incrementColumnsFor(ctx, "a", keys.TableWordCounts, keys.FamilyWordCounts, wrow, map[string]int64{"w": 1}); err != nil {
				t.Fatal(err)
			}
			c, err := s.get(ctx, keys.TableWordCounts, keys.FamilyWordCounts, trow)
			if err != nil {
				t.Fatal(err)
			}
			have := decodeTopRow(c, topListKeep)
			snap, err := s.wordCountsOf(ctx, wrow, []string{"w"})
			if err != nil {
				t.Fatal(err)
			}
			cell, ok := mergeTopCell(have.listCell, snap.counts)
			serial := snap.serial
			if !have.usable() || !ok {
				var list topList
				if list, serial, err = s.recountTopList(ctx, wrow); err != nil {
					t.Fatal(err)
				}
				cell = list.encode()
			}
			// Writer B takes the word back, Increment and merge.
			if err := s.addWordCounts(ctx, author, map[string]int64{"w": -1}, "b"); err != nil {
				t.Fatal(err)
			}
			// A's compare-and-set, on what it read before B.
			if _, won, err := s.putTopList(ctx, trow, have, cell, true, serial); err != nil {
				t.Fatal(err)
			} else if won {
				t.Fatalf("a merge of counts read before another writer's Increment won")
			}
			top, err := s.TopWords(ctx, author, 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range top {
				if w.Word == "w" {
					t.Fatalf("top words %v list a word whose count is 0", top)
				}
			}
		})
	}
}

// A writer's own snapshot (its Increment's answer) stands in for reading
// the counts again only when it is newer than every snapshot merged into
// the list. Here another writer's Increment and merge of the same word
// come between this writer's Increment and its merge: its snapshot is
// older than the list's, so it reads the counts again. Taking its own
// would put back the count from before the other's Increment.
func TestTopWordsOwnSnapshotOlderThanTheList(t *testing.T) {
	ctx := t.Context()
	for _, name := range []string{"serial as written", "serial gone back"} {
		t.Run(name, func(t *testing.T) {
			s := newTestStore(t)
			author := "ann"
			wrow := keys.WordCounts(author)
			if err := s.addWordCounts(ctx, author, map[string]int64{"w": 1, "other": 1}, "seed"); err != nil {
				t.Fatal(err)
			}
			if name == "serial gone back" {
				// As a repair by an hbgraph before serials leaves it: the
				// serial brought to 0 like a word no article has.
				if err := s.put(ctx, keys.TableWordCounts, keys.FamilyWordCounts, wrow,
					cells{keys.QualWordSerial: encodeMs(0)}, s.nowMs()); err != nil {
					t.Fatal(err)
				}
				for i := range 3 { // the list's serial is now above the row's
					if err := s.addWordCounts(ctx, author, map[string]int64{"other": 1}, fmt.Sprint("more", i)); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.put(ctx, keys.TableWordCounts, keys.FamilyWordCounts, wrow,
					cells{keys.QualWordSerial: encodeMs(0)}, s.nowMs()); err != nil {
					t.Fatal(err)
				}
			}
			between := false
			s.fault = func(point string) error {
				if point == pointTopWords && !between {
					between = true
					return s.addWordCounts(ctx, author, map[string]int64{"w": 1}, "b")
				}
				return nil
			}
			if err := s.addWordCounts(ctx, author, map[string]int64{"w": 1}, "a"); err != nil {
				t.Fatal(err)
			}
			s.fault = nil
			top, err := s.TopWords(ctx, author, 10)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(top, WordCount{"w", 3}) {
				t.Fatalf("top words %v, want w: 3 (a merge put back a count older than the list's)", top)
			}
		})
	}
}

// The serial is a cell of the word count row, never a word: not in the
// top words a dirty list falls back to the row for, not in a rebuild.
func TestWordSerialIsNotAWord(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	mustPostArticle(t, s, "ann", "red", "red green", "news")
	trow := keys.TopWords("ann")
	if _, err := s.increment(ctx, keys.TableWordCounts, keys.FamilyWordCounts, trow, keys.QualTopDirty, 1); err != nil {
		t.Fatal(err)
	}
	top, err := s.TopWords(ctx, "ann", MaxTopWords) // from the word count row
	if err != nil {
		t.Fatal(err)
	}
	if want := []WordCount{{"red", 2}, {"green", 1}}; !slices.Equal(top, want) {
		t.Fatalf("top words of a dirty list: %v, want %v", top, want)
	}
	if err := s.RebuildWordCounts(ctx, "ann"); err != nil {
		t.Fatal(err)
	}
	c, err := s.get(ctx, keys.TableWordCounts, keys.FamilyWordCounts, keys.WordCounts("ann"))
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := decodeMs(c[keys.QualWordSerial]); !ok || n != serialStep(2) {
		t.Fatalf("the serial after a rebuild: %v, %v; want %d (left as it is)", n, ok, serialStep(2))
	}
}
