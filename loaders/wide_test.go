package loaders

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/store"
)

// callLog records the store calls of a context.
type callLog struct {
	mu    sync.Mutex
	calls []store.Call
}

func (l *callLog) StoreCall(c store.Call) {
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
}

// TestWideBatchIsOneCall loads more rows than the channel that carries a
// batch's keys holds: the loads that find it full wait for its goroutine to
// drain it, and every row still goes out in one SendBatch, answered.
func TestWideBatchIsOneCall(t *testing.T) {
	st, _ := memstore.New(t)
	const n = 5*inputCapacity + 3
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("n%03d", i)
		if i%2 == 0 { // every other node exists
			if _, err := st.CreateNode(t.Context(), ids[i], "", store.Properties{"i": i}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var log callLog
	ctx := store.WithTracer(context.Background(), &log)
	// No scheduler in ctx: the batch goes when it is full or Wait passes.
	l := New(st, Config{Wait: 20 * time.Millisecond, BatchSize: 1000, ScanConcurrency: 1})
	nodes, errs := l.Nodes(ctx, ids)
	for i, node := range nodes {
		switch {
		case errs[i] != nil:
			t.Errorf("%s: %v", ids[i], errs[i])
		case i%2 == 0 && (node == nil || node.ID != ids[i]):
			t.Errorf("%s: got %+v", ids[i], node)
		case i%2 == 1 && node != nil:
			t.Errorf("%s does not exist, got %+v", ids[i], node)
		}
	}
	if len(log.calls) != 1 || len(log.calls[0].Rows) != n {
		var got []string
		for _, c := range log.calls {
			got = append(got, fmt.Sprintf("%s of %d rows", c.Op, len(c.Rows)))
		}
		t.Fatalf("store calls %v, want one of %d rows", got, n)
	}
}
