package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hbgraph/hbgraph/store/hbasefault"
	"github.com/hbgraph/hbgraph/store/keys"
)

// The fault matrix of the writes that touch feeds (see faultmatrix_test.go,
// whose judging it shares): posting with fan-out, following (with its
// backfill) and unfollowing, with a fault at every RPC in every mode and
// the caller retrying once after UNAVAILABLE, on a store keeping follows
// feeds. A case holds when every answer is true of the store, the feeds
// show what the answer says (after success: the article in every
// follower's feed; the followee's articles in the new follower's; none
// of the unfollowed author's), and Repair then finds nothing more than
// after the same write without a fault. No case may fail: there is no
// golden list.

// The feed fixture: nodes a, f1, f2, f3; f1 and f2 follow a; a posted a1.
func setUpFeedMatrix(t *testing.T, s *Store) matrixFixture {
	t.Helper()
	for _, id := range []string{"a", "f1", "f2", "f3"} {
		mustNode(t, s, id, nil)
	}
	mustRel(t, s, "f1", "follows", "a", nil)
	mustRel(t, s, "f2", "follows", "a", nil)
	a1, err := s.PostArticle(bg, "a", "a1", "x y", "cat1")
	if err != nil {
		t.Fatal(err)
	}
	return matrixFixture{a1: a1.ID}
}

func openFeedMatrixStore(t *testing.T) (*Store, *hbasefault.Client, matrixFixture) {
	t.Helper()
	clk := newFakeClock()
	clk.step = 1
	fc := hbasefault.New(openTestEngine(t, clk))
	s, err := New(fc, Options{Clock: clk.Now, Feed: FeedOptions{Types: []string{"follows"}}})
	if err != nil {
		t.Fatal(err)
	}
	f := setUpFeedMatrix(t, s)
	fc.Record(true)
	return s, fc, f
}

// inFeed reports whether reader's follows feed lists an article titled title.
func inFeed(t *testing.T, s *Store, reader, title string) bool {
	t.Helper()
	p, err := s.Feed(bg, reader, "follows", PageRequest{Size: MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(p.Articles, func(a Article) bool { return a.Title == title })
}

func feedMatrixWrites() []matrixWrite {
	return []matrixWrite{{
		name: "PostArticleFanout",
		run: func(ctx context.Context, s *Store, _ matrixFixture) []error {
			_, err := s.PostArticle(ctx, "a", "new", "p q", "cat2")
			return one(err)
		},
		observe: func(t *testing.T, s *Store, _ matrixFixture) []int {
			n := min(timelineTitles(t, s, "a")["new"], appliedTwice)
			if n == appliedOnce && !(inFeed(t, s, "f1", "new") && inFeed(t, s, "f2", "new")) {
				// The article is there, its fan-out not (yet): only
				// UNAVAILABLE may leave that, and Repair finishes it.
				return []int{partlyApplied}
			}
			return []int{n}
		},
	}, {
		name: "FollowBackfill",
		run: func(ctx context.Context, s *Store, _ matrixFixture) []error {
			_, err := s.CreateRelationship(ctx, RelationshipKey{"f3", "follows", "a"}, nil)
			return one(err)
		},
		observe: func(t *testing.T, s *Store, _ matrixFixture) []int {
			rel, feed := relationshipExists(t, s, RelationshipKey{"f3", "follows", "a"}), inFeed(t, s, "f3", "a1")
			switch {
			case rel && feed:
				return []int{appliedOnce}
			case !rel && !feed:
				return []int{notApplied}
			}
			return []int{partlyApplied}
		},
	}, {
		name: "Unfollow",
		run: func(ctx context.Context, s *Store, _ matrixFixture) []error {
			return one(s.DeleteRelationship(ctx, RelationshipKey{"f1", "follows", "a"}))
		},
		observe: func(t *testing.T, s *Store, _ matrixFixture) []int {
			rel, feed := relationshipExists(t, s, RelationshipKey{"f1", "follows", "a"}), inFeed(t, s, "f1", "a1")
			switch {
			case !rel && !feed:
				return []int{appliedOnce}
			case rel && feed:
				return []int{notApplied}
			}
			return []int{partlyApplied}
		},
	}}
}

// runFeedMatrixCase is runMatrixCase over the feed fixture.
func runFeedMatrixCase(t *testing.T, w matrixWrite, pos rpcPosition, mode hbasefault.Mode, baseline string) string {
	s, fc, f := openFeedMatrixStore(t)
	fc.Add(hbasefault.Rule{Kind: pos.kind, Nth: pos.n, Mode: mode,
		Match: func(table string, row []byte) bool { return feedRowRole(pos.kind, table, row) == pos.role }})
	ctx := WithOp(bg, DeriveOpID("feed fault matrix", w.name))
	first := w.run(ctx, s, f)
	if !slices.ContainsFunc(fc.Calls(), func(c hbasefault.Call) bool { return c.Mode != hbasefault.Pass }) {
		t.Fatalf("the fault at %s never fired", pos)
	}
	fc.Clear()
	final := first
	if slices.ContainsFunc(first, func(err error) bool { return errors.Is(err, ErrUnavailable) }) {
		retry := w.run(ctx, s, f)
		final = slices.Clone(first)
		for i, err := range first {
			if errors.Is(err, ErrUnavailable) {
				final[i] = retry[i]
			}
		}
	}
	fc.Record(false)
	var wrong []string
	for i, state := range w.observe(t, s, f) {
		if msg := judgeAnswer(final[i], state); msg != "" {
			if errors.Is(first[i], ErrUnavailable) {
				msg = "UNAVAILABLE, then on the retry " + msg
			}
			wrong = append(wrong, msg)
		}
	}
	wrong = append(wrong, orphans(t, s)...)
	report, err := s.Repair(bg)
	if err != nil {
		wrong = append(wrong, fmt.Sprintf("repair failed: %v", err))
	} else if got := reportLine(report); got != baseline {
		wrong = append(wrong, "repair fixed "+got)
	}
	return strings.Join(slices.Compact(wrong), "; ")
}

// feedRowRole is rowRole, knowing the feed's rows too.
func feedRowRole(kind hbasefault.Kind, table string, row []byte) string {
	if kind != hbasefault.Scan && table == keys.TableGraph {
		if _, err := keys.DecodeFeed(row); err == nil {
			return "feed"
		}
		if _, _, err := keys.DecodeWideAuthor(row); err == nil {
			return "wideauthor"
		}
	}
	return rowRole(kind, table, row)
}

func feedPositions(calls []hbasefault.Call) []rpcPosition {
	seen := map[[2]string]int{}
	out := make([]rpcPosition, len(calls))
	for i, c := range calls {
		role := feedRowRole(c.Kind, c.Table, c.Row)
		key := [2]string{string(c.Kind), role}
		seen[key]++
		out[i] = rpcPosition{kind: c.Kind, role: role, n: seen[key]}
	}
	return out
}

func TestFeedFaultMatrix(t *testing.T) {
	total, failed := 0, 0
	for _, w := range feedMatrixWrites() {
		s, fc, f := openFeedMatrixStore(t)
		for i, err := range w.run(bg, s, f) {
			if err != nil {
				t.Fatalf("%s without faults, item %d: %v", w.name, i+1, err)
			}
		}
		calls := fc.Calls()
		fc.Record(false)
		for i, state := range w.observe(t, s, f) {
			if state != appliedOnce {
				t.Fatalf("%s without faults, item %d: %s", w.name, i+1, stateNames[state])
			}
		}
		report, err := s.Repair(bg)
		if err != nil {
			t.Fatal(err)
		}
		baseline := reportLine(report)
		for _, pos := range feedPositions(calls) {
			modes := hbasefault.Modes
			if pos.kind.IsRead() {
				modes = []hbasefault.Mode{hbasefault.FailBefore}
			}
			for _, mode := range modes {
				total++
				t.Run(fmt.Sprintf("%s/%s/%s", w.name, pos, mode), func(t *testing.T) {
					if msg := runFeedMatrixCase(t, w, pos, mode, baseline); msg != "" {
						failed++
						t.Error(msg)
					}
				})
			}
		}
	}
	t.Logf("%d of %d cases fail", failed, total)
}
