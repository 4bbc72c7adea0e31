package store

import (
	"context"
	"testing"

	"github.com/tsuna/gohbase"
)

// clusterLike hides the engine's CompactAll, as a cluster's client has none.
type clusterLike struct{ gohbase.Client }

func TestCompactOnTheEngineOnly(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	mustNode(t, s, "a", Properties{"k": 1})
	if compacted, err := s.Compact(ctx); err != nil || !compacted {
		t.Errorf("on the embedded engine: compacted %v, %v", compacted, err)
	}
	if n, err := s.getNode(ctx, "a"); err != nil || n.ID != "a" {
		t.Errorf("after compacting: %+v, %v", n, err)
	}
	other, err := New(clusterLike{s.hc}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if compacted, err := other.Compact(ctx); err != nil || compacted {
		t.Errorf("on a client without compaction: compacted %v, %v", compacted, err)
	}
}
