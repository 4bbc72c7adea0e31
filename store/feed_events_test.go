package store

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// TestFollowingAndFeedCursor: Following answers whether each reader
// follows the author now (a deleted follow or reader does not; a bad id
// follows nobody), and FeedCursor is the cursor Feed gives the article.
func TestFollowingAndFeedCursor(t *testing.T) {
	clk := newFakeClock()
	s := newFeedStore(t, clk, FeedOptions{})
	for _, id := range []string{"ann", "r", "q", "gone", "p"} {
		if _, err := s.CreateNode(bg, id, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []string{"r", "q", "gone", "p"} {
		if _, err := s.CreateRelationship(bg, RelationshipKey{Start: r, Type: "follows", End: "ann"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteRelationship(bg, RelationshipKey{Start: "q", Type: "follows", End: "ann"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteNode(bg, "gone", true); err != nil {
		t.Fatal(err)
	}
	got, err := s.Following(bg, "follows", "ann", []string{"r", "q", "gone", "", "nobody", "p"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, false, false, false, false, true}; !slices.Equal(got, want) {
		t.Fatalf("Following %v, want %v", got, want)
	}

	a := mustPost(t, s, "ann", "one")
	clk.Advance(time.Millisecond)
	mustPost(t, s, "ann", "two")
	p, err := s.Feed(bg, "r", "follows", PageRequest{Size: 5})
	if err != nil {
		t.Fatal(err)
	}
	cursor, err := FeedCursor("r", "follows", a)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Articles) != 2 || p.Articles[1].ID != a.ID || p.Cursors.At(1) != cursor {
		t.Fatalf("feed %+v, cursor %s", p.Articles, cursor)
	}
	if err := s.CheckFeedKept("follows"); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckFeedKept("likes"); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("likes: %v", err)
	}
}
