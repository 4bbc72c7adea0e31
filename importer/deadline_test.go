package importer

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/store"
	"github.com/hbgraph/hbgraph/store/hbasefault"
)

// busyClient is a loaded machine or cluster: every round trip takes the
// fault injector's latency, and a batch also perRow for each call it
// carries, as a region server works through them.
type busyClient struct {
	*hbasefault.Client
	perRow time.Duration
}

func (c busyClient) SendBatch(ctx context.Context, batch []hrpc.Call) ([]hrpc.RPCResult, bool) {
	select {
	case <-time.After(time.Duration(len(batch)) * c.perRow):
	case <-ctx.Done():
		res := make([]hrpc.RPCResult, len(batch))
		for i := range res {
			res[i].Error = ctx.Err()
		}
		return res, false
	}
	return c.Client.SendBatch(ctx, batch)
}

// TestBatchUnderLatencyDoesNotTimeOut: a batch of relationships whose
// batched calls each take longer than one call's timeout (their 400 node
// Gets, 800 index Puts) is imported whole when the store gives a batch
// BatchRowTimeout per row, as hbgraph import does; under one call's
// timeout, as before, every line of it failed.
func TestBatchUnderLatencyDoesNotTimeOut(t *testing.T) {
	const n = 400
	files := relationshipFiles(t, n, func(i int) int { return i + 1 })
	for _, tc := range []struct {
		name       string
		perRow     time.Duration
		wantFailed bool
	}{
		{"one call's timeout", 0, true},
		{"scaled to the batch", BatchRowTimeout, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fault := hbasefault.New(memstore.Engine(t))
			fault.SetLatency(time.Millisecond)
			// The store's call timeout stands for the server's 5 s; a
			// batch's row takes 1 ms, half of BatchRowTimeout.
			st, err := store.New(busyClient{fault, time.Millisecond}, store.Options{CallTimeout: 100 * time.Millisecond, BatchRowTimeout: tc.perRow})
			if err != nil {
				t.Fatal(err)
			}
			results, err := Run(context.Background(), st, files, Options{Workers: 1, BatchSize: n, Log: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			r := results[1]
			if failed := r.Failed > 0; failed != tc.wantFailed {
				t.Fatalf("relationships: %d imported, %d failed (%v); want failures: %v", r.Imported, r.Failed, r.Errors, tc.wantFailed)
			}
			if !tc.wantFailed && r.Imported != n {
				t.Fatalf("relationships: %d imported, want %d", r.Imported, n)
			}
		})
	}
}
