package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// TestAttachedKeys: every relationship of a node, both directions, every
// type, once each (a self-loop too), across more than one scan page, and
// none of another node's.
func TestAttachedKeys(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	var want []string
	for _, id := range []string{"a", "b", "c"} {
		if _, err := s.CreateNode(ctx, id, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	rel := func(k RelationshipKey) {
		t.Helper()
		if _, err := s.CreateRelationship(ctx, k, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range attachedPage + 10 {
		k := RelationshipKey{Start: "a", Type: fmt.Sprintf("t%03d", i), End: "b"}
		rel(k)
		want = append(want, fmt.Sprint(k))
	}
	for _, k := range []RelationshipKey{{Start: "c", Type: "likes", End: "a"}, {Start: "a", Type: "self", End: "a"}} {
		rel(k)
		want = append(want, fmt.Sprint(k))
	}
	rel(RelationshipKey{Start: "b", Type: "follows", End: "c"})
	var got []string
	if err := s.AttachedKeys(ctx, "a", func(k RelationshipKey) error {
		got = append(got, fmt.Sprint(k))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("AttachedKeys(a): %d keys, want %d\ngot  %v\nwant %v", len(got), len(want), got, want)
	}
}
