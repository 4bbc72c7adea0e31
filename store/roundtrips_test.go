package store

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
)

// writeRoundTrips is how many store calls (round trips: a batch of Gets
// counts once) each write makes on a quiet store, with and without the
// caller's op (an Idempotency-Key): bench/RESULTS.md, "Writes cost more
// round trips"; deleteNode is of a node with nothing attached, with
// detach of one with one relationship. TestWriteRoundTrips fails when a
// write makes more, so that a change that adds one says so (and updates
// this table and the paragraph).
var writeRoundTrips = map[string][2]int{ // without an op, with one
	"createNode":                    {3, 3},
	"updateNodeProperties":          {2, 2},
	"createRelationship":            {10, 10},
	"updateRelationship":            {3, 3},
	"deleteRelationship":            {5, 8},
	"postArticle":                   {9, 11},
	"postArticle, not the first":    {8, 10},
	"postArticle, counts pending":   {7, 9}, // (wordcounts_pending.go)
	"updateArticle":                 {8, 8},
	"deleteArticle":                 {7, 8},
	"updateArticle, counts pending": {7, 7},
	"deleteArticle, counts pending": {6, 7},
	"deleteNode":                    {9, 11},  // confirmMark reads the row afresh, and deletes it (see it)
	"deleteNode (detach)":           {18, 20}, // on the embedded engine a probe comes before each listing (detachMarked)
}

var roundTripCalls = flag.Bool("roundtrips.calls", false, "TestWriteRoundTrips: log each call's table and rows")

// TestWriteRoundTrips counts the store calls of each write with a tracer
// (-v prints them, call by call with -roundtrips.calls).
func TestWriteRoundTrips(t *testing.T) {
	for _, withOp := range []bool{false, true} {
		got := measureWriteRoundTrips(t, withOp)
		for _, name := range sortedKeys(got) {
			calls := got[name]
			want := writeRoundTrips[name][0]
			if withOp {
				want = writeRoundTrips[name][1]
			}
			t.Logf("op=%v %-22s %2d calls: %s", withOp, name, len(calls), describeCalls(calls))
			if len(calls) > want {
				t.Errorf("op=%v %s: %d store calls, want at most %d", withOp, name, len(calls), want)
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func describeCalls(calls []Call) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = c.Op
		if c.Op == "Batch" {
			parts[i] = fmt.Sprintf("Batch(%d)", len(c.Rows))
		}
		if *roundTripCalls {
			rows := make([]string, len(c.Rows))
			for j, r := range c.Rows {
				rows[j] = fmt.Sprintf("%q", r[min(len(r), 4):])
			}
			if c.Op == "Scan" {
				rows = []string{fmt.Sprintf("%q", c.StartRow[min(len(c.StartRow), 4):])}
			}
			parts[i] = fmt.Sprintf("\n\t%s %s %s", parts[i], c.Table, strings.Join(rows, " "))
		}
	}
	return strings.Join(parts, " ")
}

// measureWriteRoundTrips runs each write once on a store warmed by the
// same writes (the article layout checked, authors migrated) and returns
// its calls.
func measureWriteRoundTrips(t *testing.T, withOp bool) map[string][]Call {
	t.Helper()
	s := newTestStore(t)
	log := &callLog{}
	n := 0
	ctxOf := func(name string) context.Context {
		ctx := WithTracer(bg, log)
		if withOp {
			n++
			ctx = WithOp(ctx, DeriveOpID("roundtrips", name, fmt.Sprint(n)))
		}
		return ctx
	}
	out := map[string][]Call{}
	measure := func(name string, write func(ctx context.Context) error) {
		t.Helper()
		log.take()
		if err := write(ctxOf(name)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = log.take()
	}
	for round := range 2 { // the first warms the store; the second counts
		p := fmt.Sprintf("r%d", round)
		a, b, c := p+"a", p+"b", p+"c"
		measure("createNode", func(ctx context.Context) error {
			_, err := s.CreateNode(ctx, a, "", Properties{"name": "a"})
			return err
		})
		mustNode(t, s, b, nil)
		mustNode(t, s, c, nil)
		measure("updateNodeProperties", func(ctx context.Context) error {
			_, err := s.UpdateNodeProperties(ctx, a, Properties{"name": "A"}, nil)
			return err
		})
		k := RelationshipKey{Start: a, Type: "knows", End: b}
		measure("createRelationship", func(ctx context.Context) error {
			_, err := s.CreateRelationship(ctx, k, Properties{"w": 1})
			return err
		})
		measure("updateRelationship", func(ctx context.Context) error {
			_, err := s.UpdateRelationshipProperties(ctx, k, Properties{"w": 2}, nil)
			return err
		})
		measure("deleteRelationship", func(ctx context.Context) error {
			return s.DeleteRelationship(ctx, k)
		})
		var art Article
		measure("postArticle", func(ctx context.Context) error {
			var err error
			art, err = s.PostArticle(ctx, a, "Title", "red green blue", "news")
			return err
		})
		// An author with a top-words list: the post's own Increment
		// answers the counts the list needs (wordSnapshot).
		w := p + "w"
		mustNode(t, s, w, nil)
		mustPostArticle(t, s, w, "Title", "red green blue", "news")
		measure("postArticle, not the first", func(ctx context.Context) error {
			_, err := s.PostArticle(ctx, w, "Title", "red green blue", "news")
			return err
		})
		// Past an author's first topFoldEvery writes, most posts leave
		// their counts pending (wordcounts_pending.go).
		for range topFoldEvery {
			mustPostArticle(t, s, w, "Title", "red green blue", "news")
		}
		measure("postArticle, counts pending", func(ctx context.Context) error {
			_, err := s.PostArticle(ctx, w, "Title", "red green blue", "news")
			return err
		})
		wart := mustPostArticle(t, s, w, "Title", "red green blue", "news")
		measure("updateArticle, counts pending", func(ctx context.Context) error {
			_, err := s.UpdateArticle(ctx, wart.ID, nil, articleRef("red red cyan"), articleRef("opinion"))
			return err
		})
		measure("deleteArticle, counts pending", func(ctx context.Context) error {
			return s.DeleteArticle(ctx, wart.ID)
		})
		measure("updateArticle", func(ctx context.Context) error {
			var err error
			art, err = s.UpdateArticle(ctx, art.ID, nil, articleRef("red red cyan"), articleRef("opinion"))
			return err
		})
		measure("deleteArticle", func(ctx context.Context) error {
			return s.DeleteArticle(ctx, art.ID)
		})
		measure("deleteNode", func(ctx context.Context) error {
			return s.DeleteNode(ctx, c, false)
		})
		// A node with one relationship, deleted with detach.
		mustRel(t, s, a, "knows", b, nil)
		measure("deleteNode (detach)", func(ctx context.Context) error {
			return s.DeleteNode(ctx, a, true)
		})
	}
	return out
}
