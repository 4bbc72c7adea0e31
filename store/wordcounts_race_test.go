package store

import (
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
			counts, err := s.wordCountsOf(ctx, wrow, []string{"w"})
			if err != nil {
				t.Fatal(err)
			}
			list := have.list
			if !have.usable() || !list.apply(counts) {
				if list, err = s.recountTopList(ctx, wrow); err != nil {
					t.Fatal(err)
				}
			}
			// Writer B takes the word back, Increment and merge.
			if err := s.addWordCounts(ctx, author, map[string]int64{"w": -1}, "b"); err != nil {
				t.Fatal(err)
			}
			// A's compare-and-set, on what it read before B.
			if _, won, err := s.putTopList(ctx, trow, have, list, true); err != nil {
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
