package store

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
)

// hidePageScan is an engine seen without its pagescan.Scanner, as a
// cluster client is: the store scans each page through hrpc.
type hidePageScan struct{ gohbase.Client }

// TestArticlesBatchAnswersAsArticles asks ArticlesBatch for many pages at
// once (timelines and categories, both directions, sizes 0-4 with and
// without lookahead, cursors, windows, an empty window, bad input) and
// checks each answer against Articles for that request alone, over the
// engine's ScanPages and over hrpc scans.
func TestArticlesBatchAnswersAsArticles(t *testing.T) {
	clk := newFakeClock()
	direct, viaHrpc := storesWithAndWithoutPageScans(t, clk)
	arts := postTies(t, direct, clk, "tie")
	postTies(t, direct, clk, "other")
	ctx := t.Context()
	var reqs []ArticlesRequest
	for _, author := range []string{"tie", "other", "nobody", ""} {
		for _, cat := range []string{"", "c", "d", "zz", "bad category!"} {
			for size := range 5 {
				for _, backward := range []bool{false, true} {
					for _, noLook := range []bool{false, true} {
						req := PageRequest{Size: size, Backward: backward, NoLookahead: noLook}
						reqs = append(reqs, ArticlesRequest{Author: author, Query: ArticleQuery{Category: cat}, Page: req})
						if p, err := direct.Articles(ctx, author, ArticleQuery{Category: cat}, req); err == nil && p.Cursors.Len() > 1 {
							req.Cursor = p.Cursors.At(1)
							reqs = append(reqs, ArticlesRequest{Author: author, Query: ArticleQuery{Category: cat}, Page: req})
						}
					}
				}
			}
		}
	}
	posted := arts[4].Posted
	before, long := posted.Add(time.Millisecond), posted.Add(-time.Hour)
	reqs = append(reqs,
		ArticlesRequest{Author: "tie", Query: ArticleQuery{PostedAfter: &posted}, Page: PageRequest{Size: 3}},
		ArticlesRequest{Author: "tie", Query: ArticleQuery{PostedBefore: &posted}, Page: PageRequest{Size: 3, Backward: true}},
		ArticlesRequest{Author: "tie", Query: ArticleQuery{Category: "c", PostedAfter: &long, PostedBefore: &before}, Page: PageRequest{Size: 9}},
		ArticlesRequest{Author: "tie", Query: ArticleQuery{PostedAfter: &before, PostedBefore: &posted}, Page: PageRequest{Size: 2}},
		ArticlesRequest{Author: "tie", Page: PageRequest{Size: 2, Cursor: "bogus"}},
		ArticlesRequest{Author: "tie", Page: PageRequest{Size: MaxPageSize + 1}},
	)
	full, failed := 0, 0
	for _, s := range []*Store{direct, viaHrpc} {
		for _, batch := range [][]ArticlesRequest{reqs, reqs[:1], reqs[len(reqs)-7:]} {
			pages, errs := s.ArticlesBatch(ctx, batch)
			for i, rq := range batch {
				want, wantErr := s.Articles(ctx, rq.Author, rq.Query, rq.Page)
				if fmt.Sprint(errs[i]) != fmt.Sprint(wantErr) || !reflect.DeepEqual(pages[i], want) {
					t.Fatalf("request %d %+v:\nbatch %+v, %v\nalone %+v, %v", i, rq, pages[i], errs[i], want, wantErr)
				}
				if len(want.Articles) > 0 {
					full++
				}
				if wantErr != nil {
					failed++
				}
			}
		}
	}
	if full < 100 || failed < 100 {
		t.Errorf("%d pages held articles, %d failed: the requests test too little", full, failed)
	}
}

// storesWithAndWithoutPageScans opens one engine and two stores over it:
// one that scans pages through the engine's ScanPages, one through hrpc
// scans.
func storesWithAndWithoutPageScans(t *testing.T, clk *fakeClock) (direct, viaHrpc *Store) {
	t.Helper()
	db := openTestEngine(t, clk)
	direct, err := New(db, Options{Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	viaHrpc, err = New(hidePageScan{db}, Options{Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return direct, viaHrpc
}
