package store

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// A crash at every fault point of a post's fan-out and of a follow's
// backfill leaves what Repair completes; a second Repair finds nothing.
func TestFeedRepairAfterCrash(t *testing.T) {
	for _, point := range []string{pointFeedFanout, pointFeedDone, pointArticleRecheck} {
		t.Run(point, func(t *testing.T) {
			clk := newFakeClock()
			s := newFeedStore(t, clk, FeedOptions{})
			for _, id := range []string{"r", "q", "a"} {
				mustNode(t, s, id, nil)
			}
			mustRel(t, s, "r", "follows", "a", nil)
			mustRel(t, s, "q", "follows", "a", nil)
			clk.Advance(time.Millisecond)
			s.fault = crashAtPoint(point)
			if _, err := s.PostArticle(bg, "a", "crashed", "b", "c"); !errors.Is(err, errCrash) {
				t.Fatalf("post: %v", err)
			}
			s.fault = nil
			report, err := s.Repair(bg)
			if err != nil {
				t.Fatal(err)
			}
			if report[fixFeedFanouts] != 1 {
				t.Errorf("repair: %v", report)
			}
			for _, reader := range []string{"r", "q"} {
				if got := feedTitles(t, s, reader, 5, false); !slices.Equal(got, []string{"crashed"}) {
					t.Errorf("%s's feed after repair: %v", reader, got)
				}
			}
			if again, err := s.Repair(bg); err != nil || len(again) != 0 {
				t.Errorf("a second repair: %v %v", again, err)
			}
		})
	}
	t.Run(pointFeedBackfill, func(t *testing.T) {
		clk := newFakeClock()
		s := newFeedStore(t, clk, FeedOptions{})
		for _, id := range []string{"r", "a"} {
			mustNode(t, s, id, nil)
		}
		mustPost(t, s, "a", "old")
		clk.Advance(time.Millisecond)
		ctx := WithOp(bg, DeriveOpID("feed test", "follow"))
		s.fault = crashAtPoint(pointFeedBackfill)
		_, err := s.CreateRelationship(ctx, RelationshipKey{"r", "follows", "a"}, nil)
		s.fault = nil
		if !errors.Is(err, errCrash) {
			t.Fatalf("follow: %v", err)
		}
		// The retry (same op) finds the relationship made, answers
		// success and backfills.
		if _, err := s.CreateRelationship(ctx, RelationshipKey{"r", "follows", "a"}, nil); err != nil {
			t.Fatal(err)
		}
		if got := feedTitles(t, s, "r", 5, false); !slices.Equal(got, []string{"old"}) {
			t.Errorf("feed after the retried follow: %v", got)
		}
	})
}

// Repair deletes the feed rows no read returns once they are a minute
// old, and no other.
func TestFeedRepairDeletesStaleRows(t *testing.T) {
	clk := newFakeClock()
	s := newFeedStore(t, clk, FeedOptions{})
	for _, id := range []string{"r", "a", "b"} {
		mustNode(t, s, id, nil)
	}
	mustRel(t, s, "r", "follows", "a", nil)
	mustRel(t, s, "r", "follows", "b", nil)
	gone := mustPost(t, s, "a", "a0")
	mustPost(t, s, "a", "a1")
	mustPost(t, s, "b", "b0")
	if err := s.DeleteArticle(bg, gone.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRelationship(bg, RelationshipKey{"r", "follows", "b"}); err != nil {
		t.Fatal(err)
	}
	if report, err := s.Repair(bg); err != nil || report[fixFeedStale] != 0 {
		t.Fatalf("repair of young rows: %v %v", report, err)
	}
	clk.Advance(2 * time.Minute)
	report, err := s.Repair(bg)
	if err != nil || report[fixFeedStale] != 2 {
		t.Fatalf("repair: %v %v", report, err)
	}
	if got := feedTitles(t, s, "r", 5, false); !slices.Equal(got, []string{"a1"}) {
		t.Errorf("feed: %v", got)
	}
	if again, err := s.Repair(bg); err != nil || len(again) != 0 {
		t.Errorf("a second repair: %v %v", again, err)
	}
}

// Imported articles enter their author's followers' feeds once
// FinishFanouts (the import command's last step) has run.
func TestFeedOfImportedArticles(t *testing.T) {
	clk := newFakeClock()
	s := newFeedStore(t, clk, FeedOptions{})
	for _, id := range []string{"r", "q", "a", "b"} {
		mustNode(t, s, id, nil)
	}
	mustRel(t, s, "r", "follows", "a", nil)
	mustRel(t, s, "r", "follows", "b", nil)
	mustRel(t, s, "q", "follows", "b", nil)
	at := time.UnixMilli(testClockStart - 5000)
	outs, err := s.ImportArticles(bg, []ArticleImport{{Author: "a", Seq: 3, Title: "i3", Category: "c", Posted: at},
		{Author: "a", Seq: 4, Title: "i4", Category: "c", Posted: at.Add(time.Millisecond)},
		{Author: "b", Seq: 1, Title: "j1", Category: "c", Posted: at.Add(2 * time.Millisecond)}})
	if err != nil || outs[0].Err != nil || outs[1].Err != nil || outs[2].Err != nil {
		t.Fatal(outs, err)
	}
	if n, err := s.FinishFanouts(bg); err != nil || n != 3 {
		t.Fatalf("FinishFanouts: %d %v", n, err)
	}
	if got := feedTitles(t, s, "r", 1, false); !slices.Equal(got, []string{"j1", "i4", "i3"}) {
		t.Errorf("r's feed: %v", got)
	}
	if got := feedTitles(t, s, "q", 1, false); !slices.Equal(got, []string{"j1"}) {
		t.Errorf("q's feed: %v", got)
	}
	if n, err := s.FinishFanouts(bg); err != nil || n != 0 {
		t.Errorf("FinishFanouts again: %d %v", n, err)
	}
}
