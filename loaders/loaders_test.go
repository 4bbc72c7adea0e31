package loaders

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/store"
)

// TestLoadersBatchOneLevel is what gqlgen's executor does with Loaders:
// the resolvers of one level, each in its goroutine, ask for a node, a
// page of its relationships and its degree; the rows go out as one
// SendBatch and the pages as one group of scans, whatever the order the
// goroutines run in. Every goroutine the loaders started is gone after.
func TestLoadersBatchOneLevel(t *testing.T) {
	st, _ := memstore.New(t)
	ctx := context.Background()
	for i := range 8 {
		id := fmt.Sprintf("n%d", i)
		if _, err := st.CreateNode(ctx, id, "", nil); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			if _, err := st.CreateRelationship(ctx, store.RelationshipKey{Start: id, Type: "follows", End: "n0"}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	batchWorkers() // the pool lives as long as the process
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for run := range 5 {
		var log callLog
		tctx := store.WithTracer(ctx, &log)
		// The loads start together and the window is wide: on a busy
		// machine a goroutine started late missed a 5 ms window, and the
		// level went out as two batches.
		l := New(st, Config{Wait: 50 * time.Millisecond, BatchSize: 1000, ScanConcurrency: 1})
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, 24)
		for i := 1; i < 8; i++ {
			id := fmt.Sprintf("n%d", i)
			wg.Add(3)
			go func() {
				defer wg.Done()
				<-start
				if n, err := l.Node(tctx, id); err != nil || n == nil || n.ID != id {
					errs <- fmt.Errorf("node %s: %+v, %v", id, n, err)
				}
			}()
			go func() {
				defer wg.Done()
				<-start
				page, err := l.Adjacency(tctx, AdjacencyKey{Node: id, Type: "follows", Dir: store.Outgoing, Page: store.PageRequest{Size: 5}})
				if err != nil || len(page.Relationships) != 1 {
					errs <- fmt.Errorf("follows of %s: %+v, %v", id, page, err)
				}
			}()
			go func() {
				defer wg.Done()
				<-start
				g, _ := store.DegreeKey{Node: id, Dir: store.Outgoing, Type: "follows"}.Get()
				rows, err := l.Rows(tctx)([]store.Get{g})()
				var n int64
				if err == nil {
					n, err = rows[0].Degree()
				}
				if err != nil || n != 1 {
					errs <- fmt.Errorf("degree of %s: %d, %v", id, n, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		var batches, scans int
		for _, c := range log.calls {
			switch c.Op {
			case "Batch":
				batches++
			case "Scan":
				scans++
			}
		}
		// One SendBatch of the 7 node and 7 degree rows; 7 scans; their
		// far end (n0), read to check it, in that batch or one of its own.
		if batches < 1 || batches > 2 || scans != 7 {
			t.Errorf("run %d: %d batches and %d scans, want 1 or 2 and 7: %+v", run, batches, scans, log.calls)
		}
	}
}

// TestLoadersStopWithTheirContext: a load whose context is done returns
// its error, and leaves no goroutine behind.
func TestLoadersStopWithTheirContext(t *testing.T) {
	st, _ := memstore.New(t)
	batchWorkers()
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l := New(st, Config{Wait: time.Millisecond, BatchSize: 1000, ScanConcurrency: 4})
	if _, err := l.Node(ctx, "n1"); !errors.Is(err, context.Canceled) {
		t.Errorf("Node: %v, want context.Canceled", err)
	}
	if _, err := l.ArticlePage(ctx, ArticlesKey{Author: "n1", Page: store.PageRequest{Size: 3}}); !errors.Is(err, context.Canceled) {
		t.Errorf("ArticlePage: %v, want context.Canceled", err)
	}
}
