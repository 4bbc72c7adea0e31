package store

import (
	"errors"
	"maps"
	"testing"
	"time"
)

// skewedArticleStores opens one engine on clk and two stores over it whose clocks
// are 5 s ahead of it and 5 s behind: two replicas (or a replica and the
// machine Repair runs on) as far apart as NTP is trusted to keep them.
func skewedArticleStores(t *testing.T) (ahead, behind *Store, clk *fakeClock) {
	t.Helper()
	clk = newFakeClock()
	clk.step = 1
	db := openTestEngine(t, clk)
	open := func(skew time.Duration) *Store {
		s, err := New(db, Options{Clock: func() time.Time { return clk.Now().Add(skew) }})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return open(5 * time.Second), open(-5 * time.Second), clk
}

// Repair run from a machine whose clock is ahead must write nothing that
// hides the Increments a replica whose clock is behind makes next: word
// count cells and counters stay exact. (Before, a rebuild deleted the words
// no article had any more with a marker stamped by its clock, and the next
// post's Increment of such a word, stamped by the region server 5 s before
// it, was hidden: the word counted 0.)
func TestArticleCountsSurviveRepairFromAClockAhead(t *testing.T) {
	ahead, behind, _ := skewedArticleStores(t)
	mustArticleAuthor(t, behind, "ann")
	gone := mustPostArticle(t, behind, "ann", "ghost", "ghost words", "c")
	mustPostArticle(t, behind, "ann", "kept", "words cat", "c")
	// A crash between a deletion's writes, and one between a post's,
	// leave counts for Repair to fix.
	behind.fault = crashAtPoint(pointWordCount)
	if err := behind.DeleteArticle(bg, gone.ID); !errors.Is(err, errCrash) {
		t.Fatalf("delete: %v, want the crash", err)
	}
	if _, err := behind.PostArticle(bg, "ann", "lost", "cat cat", "c"); !errors.Is(err, errCrash) {
		t.Fatalf("post: %v, want the crash", err)
	}
	behind.fault = nil
	if _, err := ahead.Repair(bg); err != nil {
		t.Fatal(err)
	}
	checkArticleWordCounts(t, behind, "ann")
	checkArticleInvariants(t, behind)
	// The replica behind writes at once: every word and counter it
	// touches must count.
	mustPostArticle(t, behind, "ann", "ghost again", "ghost cat", "d")
	a := mustPostArticle(t, behind, "ann", "more", "words", "c")
	if err := behind.DeleteArticle(bg, a.ID); err != nil {
		t.Fatal(err)
	}
	checkArticleWordCounts(t, behind, "ann")
	checkArticleInvariants(t, behind)
	if got := storedWordCounts(t, behind, "ann")["ghost"]; got != 2 {
		t.Errorf("ghost counts %d, want 2 (the title and body of the new article)", got)
	}
	// And the other way round: Repair from behind, writes from ahead.
	if _, err := behind.Repair(bg); err != nil {
		t.Fatal(err)
	}
	mustPostArticle(t, ahead, "ann", "ahead", "ghost", "c")
	checkArticleWordCounts(t, ahead, "ann")
	checkArticleInvariants(t, ahead)
	if again, err := ahead.Repair(bg); err != nil || len(again) != 0 {
		t.Errorf("a last repair fixed %v, %v", again, err)
	}
}

// A node's deletion that resumes after a crash recounts its author's
// counters and word counts (recountAuthor) while writers may still post
// to it; run from a replica whose clock is ahead, the recount must not
// hide the counts the replica behind makes next.
func TestAuthorRecountFromAClockAhead(t *testing.T) {
	ahead, behind, _ := skewedArticleStores(t)
	mustArticleAuthor(t, behind, "ann")
	gone := mustPostArticle(t, behind, "ann", "t", "old words", "c")
	mustPostArticle(t, behind, "ann", "t", "other words", "c")
	behind.fault = crashAtPoint(pointArticleCount)
	if err := behind.DeleteArticle(bg, gone.ID); !errors.Is(err, errCrash) {
		t.Fatalf("delete: %v, want the crash", err)
	}
	behind.fault = nil
	if err := ahead.deleteArticlesOf(bg, "ann", gone.Posted.UnixMilli()+1); err != nil {
		t.Fatal(err)
	}
	// As if the deletion had been finished without its counts (its mark
	// older than nonceRecent), the one case recountAuthor recounts.
	ahead.uncountedAuthors.Store("ann", struct{}{})
	if err := ahead.recountAuthor(bg, "ann"); err != nil {
		t.Fatal(err)
	}
	mustPostArticle(t, behind, "ann", "t", "old words again", "d")
	checkArticleWordCounts(t, behind, "ann")
	checkArticleInvariants(t, behind)
	want := map[string]int64{"t": 2, "old": 1, "other": 1, "words": 2, "again": 1}
	if got := nonzero(storedWordCounts(t, behind, "ann")); !maps.Equal(got, want) {
		t.Errorf("word counts %v, want %v", got, want)
	}
}
