package store

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// The home feed's benchmarks (run them with
//
//	go test -run '^$' -bench 'BenchmarkFeed' -benchtime 200x ./store/
//
// ): a page of a reader's feed (page 1 and page 5 of 20) for a reader
// following 10 to 10,000 nodes, and postArticle by an author with 10 to
// 100,000 followers, each with its store calls (and rows written) per op
// beside Go's time per op. A page's figures are flat in the followees; a
// post's writes grow with its followers up to --feed-fanout-max (10,000),
// above which the author is wide and a post writes one row.

// callCounter counts a request's store calls and the rows they write.
type callCounter struct {
	mu                   sync.Mutex
	calls, rowsWritten   int
	scans, gets, batches int
}

func (c *callCounter) StoreCall(call Call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	switch call.Op {
	case "Scan":
		c.scans++
	case "Get":
		c.gets++
	case "Batch":
		c.batches++
	}
	switch call.Op {
	case "Put", "Delete", "Increment", "CheckAndMutate":
		c.rowsWritten += len(call.Rows)
	case "Batch":
		if call.RowsRead == 0 { // a batch of writes (Gets report the rows they read)
			c.rowsWritten += len(call.Rows)
		}
	}
}

// importFollowers makes nodes ids and a follows relationship from each to
// target, through the import's batches (quick to set up).
func importFollows(b *testing.B, s *Store, from []string, to []string) {
	b.Helper()
	at := time.UnixMilli(testClockStart - 60_000)
	for _, id := range append(append([]string(nil), from...), to...) {
		if _, err := s.ImportNode(bg, id, "", nil, at, at); err != nil {
			b.Fatal(err)
		}
	}
	var rels []RelationshipImport
	flush := func() {
		outs, err := s.ImportRelationships(bg, rels)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range outs {
			if o.Err != nil {
				b.Fatal(o.Err)
			}
		}
		rels = rels[:0]
	}
	for _, f := range from {
		for _, t := range to {
			rels = append(rels, RelationshipImport{Key: RelationshipKey{f, "follows", t}, Created: at, Updated: at})
			if len(rels) == 1000 {
				flush()
			}
		}
	}
	flush()
}

func BenchmarkFeedPage(b *testing.B) {
	for _, followees := range []int{10, 100, 1_000, 10_000} {
		s := newFeedStore(b, newFakeClock(), FeedOptions{})
		authors := make([]string, followees)
		for i := range authors {
			authors[i] = fmt.Sprintf("author%05d", i)
		}
		importFollows(b, s, []string{"reader"}, authors)
		for i := range 120 { // six pages and more
			if _, err := s.PostArticle(bg, authors[i%followees], fmt.Sprintf("t%d", i), "a body", "c"); err != nil {
				b.Fatal(err)
			}
		}
		for _, page := range []int{1, 5} {
			b.Run(fmt.Sprintf("followees=%d/page=%d", followees, page), func(b *testing.B) {
				req := PageRequest{Size: 20}
				for range page - 1 {
					p, err := s.Feed(bg, "reader", "follows", req)
					if err != nil || len(p.Articles) != 20 {
						b.Fatal(len(p.Articles), err)
					}
					req.Cursor = p.Cursors.At(19)
				}
				var c callCounter
				ctx := WithTracer(bg, &c)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					p, err := s.Feed(ctx, "reader", "follows", req)
					if err != nil || len(p.Articles) != 20 {
						b.Fatal(len(p.Articles), err)
					}
				}
				b.ReportMetric(float64(c.calls)/float64(b.N), "calls/op")
				b.ReportMetric(float64(c.scans)/float64(b.N), "scans/op")
			})
		}
	}
}

func BenchmarkFeedPost(b *testing.B) {
	for _, followers := range []int{10, 10_000, 100_000} {
		b.Run(fmt.Sprintf("followers=%d", followers), func(b *testing.B) {
			s := newFeedStore(b, newFakeClock(), FeedOptions{})
			from := make([]string, followers)
			for i := range from {
				from[i] = fmt.Sprintf("follower%06d", i)
			}
			importFollows(b, s, from, []string{"author"})
			var c callCounter
			ctx := WithTracer(bg, &c)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if _, err := s.PostArticle(ctx, "author", fmt.Sprintf("t%d", i), "a body", "c"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.calls)/float64(b.N), "calls/op")
			b.ReportMetric(float64(c.rowsWritten)/float64(b.N), "rows-written/op")
		})
	}
}
