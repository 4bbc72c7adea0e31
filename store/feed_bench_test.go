package store

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/store/hbasefault"
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
				benchFeedPage(b, s, page)
			})
		}
	}
}

// BenchmarkFeedPageWide is a page of a reader following 10 authors whose
// posts fan out and 0, 10 or 100 wide ones (two followers each, over a
// --feed-fanout-max of 1), posts spread over all of them: the cost a page
// pays for each wide followee's timeline it merges, on the embedded engine
// as it is and with a round trip of 1 ms added to every call (rtt=1ms, as
// on a cluster: the scans of the timelines overlap).
func BenchmarkFeedPageWide(b *testing.B) {
	for _, wide := range []int{0, 10, 100} {
		clk := newFakeClock()
		fc := hbasefault.New(openTestEngine(b, clk))
		s, err := New(fc, Options{Clock: clk.Now, Feed: FeedOptions{Types: []string{"follows"}, FanoutMax: 1}})
		if err != nil {
			b.Fatal(err)
		}
		var authors, wideAuthors []string
		for i := range 10 {
			authors = append(authors, fmt.Sprintf("author%05d", i))
		}
		for i := range wide {
			wideAuthors = append(wideAuthors, fmt.Sprintf("wide%05d", i))
		}
		importFollows(b, s, []string{"reader"}, authors)
		importFollows(b, s, []string{"other"}, wideAuthors)
		var rels []RelationshipImport
		at := time.UnixMilli(testClockStart - 60_000)
		for _, w := range wideAuthors {
			rels = append(rels, RelationshipImport{Key: RelationshipKey{"reader", "follows", w}, Created: at, Updated: at})
		}
		if outs, err := s.ImportRelationships(bg, rels); err != nil {
			b.Fatal(err)
		} else {
			for _, o := range outs {
				if o.Err != nil {
					b.Fatal(o.Err)
				}
			}
		}
		all := append(append([]string(nil), authors...), wideAuthors...)
		for i := range max(120, 2*len(all)) {
			if _, err := s.PostArticle(bg, all[i%len(all)], fmt.Sprintf("t%d", i), "a body", "c"); err != nil {
				b.Fatal(err)
			}
		}
		for _, rtt := range []time.Duration{0, time.Millisecond} {
			fc.SetLatency(rtt)
			for _, page := range []int{1, 5} {
				b.Run(fmt.Sprintf("wide=%d/rtt=%v/page=%d", wide, rtt, page), func(b *testing.B) {
					benchFeedPage(b, s, page)
				})
			}
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

// benchFeedPage measures page (1-based, of 20) of reader's follows feed,
// reached by paging from the first, with the store calls and scans it
// makes.
func benchFeedPage(b *testing.B, s *Store, page int) {
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
}
