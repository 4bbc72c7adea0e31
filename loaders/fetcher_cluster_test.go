package loaders

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/store"
)

// meetingClient is a client without the embedded engine's page scans (as
// gohbase's, a cluster's, is): once armed, each Scan of table waits until
// n of them are in flight at once, or until a long wait ends, and met
// says whether they met.
type meetingClient struct {
	gohbase.Client
	table string
	n     int
	armed atomic.Bool
	met   atomic.Bool

	mu       sync.Mutex
	inFlight int
	all      chan struct{}
}

func (c *meetingClient) Scan(s *hrpc.Scan) hrpc.Scanner {
	if c.armed.Load() && string(s.Table()) == c.table {
		c.mu.Lock()
		if c.inFlight++; c.inFlight == c.n {
			close(c.all)
		}
		c.mu.Unlock()
		select {
		case <-c.all:
			c.met.Store(true)
		case <-time.After(10 * time.Second): // one after another: they never meet
		}
	}
	return c.Client.Scan(s)
}

// TestFetcherSendsArticlePagesAtOnceThroughGohbase: on a client that
// answers one page per call, a wave's article pages go out together
// (--scan-concurrency at a time), not one after another: one round trip
// for the wave on a cluster, not one per page.
func TestFetcherSendsArticlePagesAtOnceThroughGohbase(t *testing.T) {
	const authors = 3
	c := &meetingClient{Client: memstore.Engine(t), table: "articles", n: authors, all: make(chan struct{})}
	st, err := store.New(c, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.PagesInOneCall() {
		t.Fatal("the test's client answers pages in one call: it tests nothing")
	}
	ctx := t.Context()
	var w Wave
	for i := range authors {
		id := fmt.Sprintf("a%d", i)
		if _, err := st.CreateNode(ctx, id, "", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := st.PostArticle(ctx, id, "t", "b", "c"); err != nil {
			t.Fatal(err)
		}
		w.Articles(ArticlesKey{Author: id, Page: store.PageRequest{Size: 3}})
	}
	c.armed.Store(true)
	NewFetcher(st, Config{BatchSize: 1000, ScanConcurrency: 16}).Run(ctx, 1, &w)
	for i := range authors {
		if p, err := w.ArticlePage(i); err != nil || len(p.Articles) != 1 {
			t.Fatalf("page %d: %d articles, %v", i, len(p.Articles), err)
		}
	}
	if !c.met.Load() {
		t.Errorf("the wave's %d article pages were never in flight at once: sent one after another", authors)
	}
}
