package store

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// newFeedStore is a store keeping "follows" feeds, over a fresh engine.
func newFeedStore(t testing.TB, clk *fakeClock, o FeedOptions) *Store {
	t.Helper()
	if o.Types == nil {
		o.Types = []string{"follows"}
	}
	s, err := New(openTestEngine(t, clk), Options{Clock: clk.Now, Feed: o})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustPost(t testing.TB, s *Store, author, title string) Article {
	t.Helper()
	a, err := s.PostArticle(bg, author, title, "body of "+title, "c")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// feedTitles pages through reader's feed with pages of size, forward or
// backward, and returns the titles newest first.
func feedTitles(t testing.TB, s *Store, reader string, size int, backward bool) []string {
	t.Helper()
	var out []string
	cursor := ""
	for range 1000 {
		p, err := s.Feed(bg, reader, "follows", PageRequest{Size: size, Cursor: cursor, Backward: backward})
		if err != nil {
			t.Fatal(err)
		}
		titles := make([]string, len(p.Articles))
		for i, a := range p.Articles {
			titles[i] = a.Title
		}
		if backward {
			out = append(titles, out...)
			if !p.HasPrevious {
				return out
			}
			cursor, _ = p.Cursors.Start()
		} else {
			out = append(out, titles...)
			if !p.HasNext {
				return out
			}
			cursor, _ = p.Cursors.End()
		}
	}
	t.Fatal("the feed does not end")
	return nil
}

func TestFeedFanOutAndPaging(t *testing.T) {
	for _, wide := range []bool{false, true} {
		t.Run(fmt.Sprintf("wide=%v", wide), func(t *testing.T) {
			clk := newFakeClock()
			o := FeedOptions{}
			if wide {
				o.FanoutMax = 1 // a and b have two followers: both wide
			}
			s := newFeedStore(t, clk, o)
			for _, id := range []string{"r", "q", "a", "b", "z"} {
				mustNode(t, s, id, nil)
			}
			for _, f := range []string{"r", "q"} {
				mustRel(t, s, f, "follows", "a", nil)
				mustRel(t, s, f, "follows", "b", nil)
			}
			mustRel(t, s, "r", "likes", "z", nil)
			for i := range 7 {
				author := "a"
				if i%2 == 1 {
					author = "b"
				}
				if i == 3 || i == 5 {
					mustPost(t, s, "z", fmt.Sprintf("z%d", i)) // not followed
				}
				title := fmt.Sprintf("%s%d", author, i)
				mustPost(t, s, author, title)
				if i != 4 {
					clk.Advance(time.Millisecond) // a4 and b5 in one millisecond
				}
			}
			// Newest first; in one millisecond by author.
			want := []string{"a6", "a4", "b5", "b3", "a2", "b1", "a0"}
			for _, size := range []int{1, 2, 3, 20} {
				for _, backward := range []bool{false, true} {
					if got := feedTitles(t, s, "r", size, backward); !slices.Equal(got, want) {
						t.Errorf("size %d backward %v: %v, want %v", size, backward, got, want)
					}
				}
			}
			if got := feedTitles(t, s, "z", 5, false); len(got) != 0 {
				t.Errorf("z follows nobody, its feed: %v", got)
			}
		})
	}
}

// An author that becomes wide: its earlier posts were fanned out, its
// later ones are merged; each shows once.
func TestFeedAuthorBecomesWide(t *testing.T) {
	clk := newFakeClock()
	s := newFeedStore(t, clk, FeedOptions{FanoutMax: 1})
	for _, id := range []string{"r", "q", "a"} {
		mustNode(t, s, id, nil)
	}
	mustRel(t, s, "r", "follows", "a", nil)
	mustPost(t, s, "a", "early")
	clk.Advance(time.Millisecond)
	mustRel(t, s, "q", "follows", "a", nil)
	mustPost(t, s, "a", "late")
	for _, reader := range []string{"r", "q"} {
		if got := feedTitles(t, s, reader, 1, false); !slices.Equal(got, []string{"late", "early"}) {
			t.Errorf("%s: %v", reader, got)
		}
	}
}

func TestFeedNotKept(t *testing.T) {
	s := newFeedStore(t, newFakeClock(), FeedOptions{})
	mustNode(t, s, "r", nil)
	_, err := s.Feed(bg, "r", "likes", PageRequest{Size: 5})
	if !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("feed of likes: %v", err)
	}
	off := newTestStoreWithClock(t, newFakeClock())
	if _, err := off.Feed(bg, "r", "follows", PageRequest{Size: 5}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("feed of a store keeping none: %v", err)
	}
}

// A cursor held across follows, unfollows, edits and deletions never
// skips or repeats an article still there.
func TestFeedUnderChange(t *testing.T) {
	clk := newFakeClock()
	s := newFeedStore(t, clk, FeedOptions{Backfill: 2})
	for _, id := range []string{"r", "a", "b", "c"} {
		mustNode(t, s, id, nil)
	}
	mustRel(t, s, "r", "follows", "a", nil)
	mustRel(t, s, "r", "follows", "b", nil)
	var byTitle = map[string]Article{}
	for i := range 6 {
		author := []string{"a", "b"}[i%2]
		title := fmt.Sprintf("%s%d", author, i)
		byTitle[title] = mustPost(t, s, author, title)
		clk.Advance(time.Millisecond)
	}
	for i := range 3 {
		title := fmt.Sprintf("c%d", i)
		byTitle[title] = mustPost(t, s, "c", title)
		clk.Advance(time.Millisecond)
	}
	// b5 a4 b3 | a2 b1 a0
	p, err := s.Feed(bg, "r", "follows", PageRequest{Size: 3})
	if err != nil {
		t.Fatal(err)
	}
	held := p.Cursors.At(2)
	if feedPageTitles(p.Articles) != "b5 a4 b3" {
		t.Fatalf("page 1: %s", feedPageTitles(p.Articles))
	}
	// Changes: edit a2, delete a0, unfollow b, follow c (backfill 2:
	// c2 c1, newer than everything above).
	newTitle := "a2 edited"
	if _, err := s.UpdateArticle(bg, byTitle["a2"].ID, &newTitle, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteArticle(bg, byTitle["a0"].ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRelationship(bg, RelationshipKey{"r", "follows", "b"}); err != nil {
		t.Fatal(err)
	}
	mustRel(t, s, "r", "follows", "c", nil)
	p, err = s.Feed(bg, "r", "follows", PageRequest{Size: 3, Cursor: held})
	if err != nil {
		t.Fatal(err)
	}
	if got := feedPageTitles(p.Articles); got != "a2 edited" || p.HasNext {
		t.Errorf("after the held cursor: %q, hasNext %v", got, p.HasNext)
	}
	if got := feedTitles(t, s, "r", 2, false); !slices.Equal(got, []string{"c2", "c1", "a4", "a2 edited"}) {
		t.Errorf("the whole feed: %v", got)
	}
	// Backward from the held cursor: what is newer and still there.
	p, err = s.Feed(bg, "r", "follows", PageRequest{Size: 10, Cursor: held, Backward: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := feedPageTitles(p.Articles); got != "c2 c1 a4" {
		t.Errorf("before the held cursor: %q", got)
	}
	// Following b again brings its newest 2 back, not what it had before.
	mustRel(t, s, "r", "follows", "b", nil)
	if got := feedTitles(t, s, "r", 2, false); !slices.Equal(got, []string{"c2", "c1", "b5", "a4", "b3", "a2 edited"}) {
		t.Errorf("after following b again: %v", got)
	}
	// Deleting c with detach leaves no article of it that a read returns.
	if err := s.DeleteNode(bg, "c", true); err != nil {
		t.Fatal(err)
	}
	if got := feedTitles(t, s, "r", 2, false); !slices.Equal(got, []string{"b5", "a4", "b3", "a2 edited"}) {
		t.Errorf("after deleting c: %v", got)
	}
}

func feedPageTitles(as []Article) string {
	out := ""
	for i, a := range as {
		if i > 0 {
			out += " "
		}
		out += a.Title
	}
	return out
}

// Stale rows past the read's bound leave a page short, and its end cursor
// goes on from where it stopped: paging never gets stuck, nor skips.
func TestFeedManyStaleRows(t *testing.T) {
	clk := newFakeClock()
	s := newFeedStore(t, clk, FeedOptions{})
	for _, id := range []string{"r", "a", "b"} {
		mustNode(t, s, id, nil)
	}
	mustRel(t, s, "r", "follows", "a", nil)
	mustRel(t, s, "r", "follows", "b", nil)
	mustPost(t, s, "a", "a0")
	clk.Advance(time.Millisecond)
	for i := range 150 {
		mustPost(t, s, "b", fmt.Sprintf("b%d", i))
		clk.Advance(time.Millisecond)
	}
	mustPost(t, s, "a", "a1")
	if err := s.DeleteRelationship(bg, RelationshipKey{"r", "follows", "b"}); err != nil {
		t.Fatal(err)
	}
	p, err := s.Feed(bg, "r", "follows", PageRequest{Size: 5})
	if err != nil {
		t.Fatal(err)
	}
	if feedPageTitles(p.Articles) != "a1" || !p.HasNext {
		t.Fatalf("first page: %q, hasNext %v", feedPageTitles(p.Articles), p.HasNext)
	}
	for _, backward := range []bool{false, true} {
		if got := feedTitles(t, s, "r", 5, backward); !slices.Equal(got, []string{"a1", "a0"}) {
			t.Errorf("backward %v: %v", backward, got)
		}
	}
}

// A reader that followed an author before it turned wide, unfollowed and
// followed again, sees the author's articles once, from its timeline.
func TestFeedRefollowWideAuthor(t *testing.T) {
	clk := newFakeClock()
	s := newFeedStore(t, clk, FeedOptions{FanoutMax: 1, Backfill: -1})
	for _, id := range []string{"r", "q", "a"} {
		mustNode(t, s, id, nil)
	}
	mustRel(t, s, "r", "follows", "a", nil)
	mustPost(t, s, "a", "a0") // fanned out to r
	clk.Advance(time.Millisecond)
	mustRel(t, s, "q", "follows", "a", nil)
	mustPost(t, s, "a", "a1") // wide
	if err := s.DeleteRelationship(bg, RelationshipKey{"r", "follows", "a"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Millisecond)
	mustRel(t, s, "r", "follows", "a", nil)
	if got := feedTitles(t, s, "r", 1, false); !slices.Equal(got, []string{"a1", "a0"}) {
		t.Errorf("feed: %v", got)
	}
}
