package store

import (
	"errors"
	"testing"
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
