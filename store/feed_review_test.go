package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/store/keys"
)

// A wide author's articles leave a reader's feed as soon as a detach
// deletion of the author, or of the reader, has marked its node, and stay
// out when that deletion crashed there (review finding 8): the merge
// checks each wide follow with both its ends, as a feed row's check does.
func TestFeedWideFollowWithEndBeingDeleted(t *testing.T) {
	for _, victim := range []string{"a", "r"} {
		t.Run("deleting "+victim, func(t *testing.T) {
			clk := newFakeClock()
			s := newFeedStore(t, clk, FeedOptions{FanoutMax: 1})
			for _, id := range []string{"r", "q", "a"} {
				mustNode(t, s, id, nil)
			}
			mustRel(t, s, "r", "follows", "a", nil)
			mustRel(t, s, "q", "follows", "a", nil) // a is wide
			mustPost(t, s, "a", "wide post")
			if got := feedTitles(t, s, "r", 5, false); len(got) != 1 {
				t.Fatalf("before: %v", got)
			}
			s.fault = crashAtPoint(pointNodeDetach)
			if err := s.DeleteNode(bg, victim, true); !errors.Is(err, errCrash) {
				t.Fatalf("delete %s: %v", victim, err)
			}
			s.fault = nil
			if got := feedTitles(t, s, "r", 5, false); len(got) != 0 {
				t.Errorf("r's feed while %s is being deleted: %v", victim, got)
			}
		})
	}
}

// A repair by a store that keeps fewer feed types than the serving one
// (hbgraph repair without its --feed-types) keeps the rows of the others
// that a read would return (review finding 9): nothing writes them again.
func TestFeedRepairKeepsRowsOfOtherTypes(t *testing.T) {
	clk := newFakeClock()
	db := openTestEngine(t, clk)
	serving, err := New(db, Options{Clock: clk.Now, Feed: FeedOptions{Types: []string{"follows", "likes"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"r", "a"} {
		mustNode(t, serving, id, nil)
	}
	mustRel(t, serving, "r", "likes", "a", nil)
	mustPost(t, serving, "a", "liked")
	clk.Advance(2 * time.Minute)
	repairer, err := New(db, Options{Clock: clk.Now, Feed: FeedOptions{Types: []string{"follows"}}})
	if err != nil {
		t.Fatal(err)
	}
	if report, err := repairer.Repair(bg); err != nil || report[fixFeedStale] != 0 {
		t.Fatalf("repair: %v %v", report, err)
	}
	p, err := serving.Feed(bg, "r", "likes", PageRequest{Size: 5})
	if err != nil || len(p.Articles) != 1 {
		t.Fatalf("r's likes feed after the repair: %v %v", p.Articles, err)
	}
	// A stale row of that type still goes.
	if err := serving.DeleteRelationship(bg, RelationshipKey{"r", "likes", "a"}); err != nil {
		t.Fatal(err)
	}
	if report, err := repairer.Repair(bg); err != nil || report[fixFeedStale] != 1 {
		t.Fatalf("repair of a stale row: %v %v", report, err)
	}
}

// A follow of a wide author writes no feed rows (review finding 10): a
// read merges its timeline, so a backfill would only duplicate it.
func TestFeedNoBackfillOfWideAuthor(t *testing.T) {
	clk := newFakeClock()
	s := newFeedStore(t, clk, FeedOptions{FanoutMax: 1})
	for _, id := range []string{"r", "q", "z", "a"} {
		mustNode(t, s, id, nil)
	}
	mustRel(t, s, "r", "follows", "a", nil)
	mustRel(t, s, "q", "follows", "a", nil)
	mustPost(t, s, "a", "wide post") // a is wide
	clk.Advance(time.Millisecond)
	mustRel(t, s, "z", "follows", "a", nil)
	prefix := keys.FeedPrefix("z", "follows")
	rows, err := s.scan(bg, scanRange{table: keys.TableGraph, family: keys.FamilyGraph, start: prefix,
		stop: keys.PrefixEnd(prefix), keyOnly: true})
	if err != nil || len(rows) != 0 {
		t.Errorf("z's feed rows after following a wide author: %d %v", len(rows), err)
	}
	if got := feedTitles(t, s, "z", 5, false); len(got) != 1 {
		t.Errorf("z's feed: %v", got)
	}
}

// A page checks up to 15 times its size+1 candidates before it ends short
// (review finding 7): 4 rounds, each twice the one before. 20 deleted
// articles above 2 live ones: a page of 2 finds both.
func TestFeedStaleRoundsDouble(t *testing.T) {
	clk := newFakeClock()
	s := newFeedStore(t, clk, FeedOptions{})
	for _, id := range []string{"r", "a"} {
		mustNode(t, s, id, nil)
	}
	mustRel(t, s, "r", "follows", "a", nil)
	mustPost(t, s, "a", "live0")
	mustPost(t, s, "a", "live1")
	for i := range 20 {
		clk.Advance(time.Millisecond)
		gone := mustPost(t, s, "a", fmt.Sprintf("gone%d", i))
		if err := s.DeleteArticle(bg, gone.ID); err != nil {
			t.Fatal(err)
		}
	}
	p, err := s.Feed(bg, "r", "follows", PageRequest{Size: 2})
	if err != nil || len(p.Articles) != 2 || p.HasNext {
		t.Fatalf("first page: %d articles, hasNext %v, %v", len(p.Articles), p.HasNext, err)
	}
	// Past the bound the page ends short and goes on where it stopped.
	for i := range 60 {
		clk.Advance(time.Millisecond)
		gone := mustPost(t, s, "a", fmt.Sprintf("more%d", i))
		if err := s.DeleteArticle(bg, gone.ID); err != nil {
			t.Fatal(err)
		}
	}
	if got := feedTitles(t, s, "r", 2, false); !slices.Equal(got, []string{"live1", "live0"}) {
		t.Errorf("paged: %v", got)
	}
}

// bytesCounter sums what a request's reads returned.
type bytesCounter struct {
	mu    sync.Mutex
	bytes int
}

func (c *bytesCounter) StoreCall(call Call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bytes += call.BytesRead
}

// A page merging k wide authors reads their timelines keys only, and the
// articles of the candidates it takes alone (review finding 2): not k
// chunks of article bodies.
func TestFeedWideTimelinesReadKeysOnly(t *testing.T) {
	clk := newFakeClock()
	s := newFeedStore(t, clk, FeedOptions{FanoutMax: 1})
	body := strings.Repeat("x", 10_000)
	mustNode(t, s, "r", nil)
	mustNode(t, s, "q", nil)
	for i := range 5 {
		a := fmt.Sprintf("a%d", i)
		mustNode(t, s, a, nil)
		mustRel(t, s, "r", "follows", a, nil)
		mustRel(t, s, "q", "follows", a, nil) // wide
		for j := range 3 {
			clk.Advance(time.Millisecond)
			if _, err := s.PostArticle(bg, a, fmt.Sprintf("%s-%d", a, j), body, "c"); err != nil {
				t.Fatal(err)
			}
		}
	}
	var c bytesCounter
	p, err := s.Feed(WithTracer(bg, &c), "r", "follows", PageRequest{Size: 1})
	if err != nil || len(p.Articles) != 1 || p.Articles[0].Title != "a4-2" {
		t.Fatalf("page: %v %v", p.Articles, err)
	}
	// The page's candidate and its lookahead: two bodies, and keys.
	if c.bytes > 3*len(body) {
		t.Errorf("a page of 1 over 5 wide authors read %d bytes, bodies of %d", c.bytes, len(body))
	}
}
