package store

import (
	"errors"
	"slices"
	"strconv"
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
	// Fewer readers than ann's followers: each reader is read, not ann's
	// index; the same answers.
	for _, tc := range []struct {
		reader string
		want   bool
	}{{"r", true}, {"q", false}, {"gone", false}, {"nobody", false}} {
		got, err := s.Following(bg, "follows", "ann", []string{tc.reader})
		if err != nil || got[0] != tc.want {
			t.Fatalf("Following(%s) %v %v", tc.reader, got, err)
		}
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

// BenchmarkFollowing is one post's check against 1,000 watched feeds
// (--subscriptions-feeds' default), by an author with 10 followers among
// them (its index is scanned) and with 2,000 (each reader is read).
func BenchmarkFollowing(b *testing.B) {
	for _, followers := range []int{10, 2000} {
		b.Run(strconv.Itoa(followers)+"-followers", func(b *testing.B) {
			clk := newFakeClock()
			s := newFeedStore(b, clk, FeedOptions{})
			if _, err := s.CreateNode(bg, "ann", "", nil); err != nil {
				b.Fatal(err)
			}
			var readers []string
			for i := range max(followers, 1000) {
				id := "r" + strconv.Itoa(i)
				if _, err := s.CreateNode(bg, id, "", nil); err != nil {
					b.Fatal(err)
				}
				if i < followers {
					if _, err := s.CreateRelationship(bg, RelationshipKey{Start: id, Type: "follows", End: "ann"}, nil); err != nil {
						b.Fatal(err)
					}
				}
				if i%max(1, followers/1000) == 0 && len(readers) < 1000 {
					readers = append(readers, id)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.Following(bg, "follows", "ann", readers); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
