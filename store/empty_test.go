package store

import (
	"context"
	"testing"
)

func TestEmpty(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	empty := func() bool {
		t.Helper()
		e, err := s.Empty(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	if !empty() {
		t.Fatal("a fresh store is not empty")
	}
	if _, err := s.CreateNode(ctx, "a", "", nil); err != nil {
		t.Fatal(err)
	}
	if empty() {
		t.Fatal("a store with a node is empty")
	}
	if err := s.DeleteNode(ctx, "a", false); err != nil {
		t.Fatal(err)
	}
	if !empty() {
		t.Fatal("a store whose only node was deleted is not empty")
	}
}
