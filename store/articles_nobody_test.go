package store

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestArticlesWithoutBodyAnswerTheSameFields reads pages of articles with
// and without their bodies (ArticleQuery.NoBody), one at a time and in
// batches, over the engine's ScanPages and over hrpc scans, and checks
// that they answer the same articles, cursors and page info, bodies
// aside; that a page read without bodies primes no row; and that the
// result cache keeps the two apart (a page read first without bodies does
// not answer one with them) and sees writes to either.
func TestArticlesWithoutBodyAnswerTheSameFields(t *testing.T) {
	clk := newFakeClock()
	direct, viaHrpc := storesWithAndWithoutPageScans(t, clk)
	mustArticleAuthor(t, direct, "writer")
	var posted []Article
	for i := range 7 {
		cat := []string{"c", "d"}[i%2]
		posted = append(posted, mustPostArticle(t, direct, "writer", fmt.Sprintf("T%d", i), strings.Repeat(fmt.Sprint(i), 100+i), cat))
	}
	ctx := t.Context()
	var reqs []ArticlesRequest
	for _, cat := range []string{"", "c", "d", "none"} {
		for size := range 4 {
			for _, backward := range []bool{false, true} {
				req := PageRequest{Size: size, Backward: backward}
				reqs = append(reqs, ArticlesRequest{Author: "writer", Query: ArticleQuery{Category: cat}, Page: req})
				if p, err := direct.Articles(ctx, "writer", ArticleQuery{Category: cat}, req); err == nil && p.Cursors.Len() > 1 {
					req.Cursor = p.Cursors.At(1)
					reqs = append(reqs, ArticlesRequest{Author: "writer", Query: ArticleQuery{Category: cat}, Page: req})
				}
			}
		}
	}
	noBody := make([]ArticlesRequest, len(reqs))
	for i, rq := range reqs {
		rq.Query.NoBody = true
		noBody[i] = rq
	}
	check := func(s *Store, round string) {
		t.Helper()
		// Without bodies first: a cache that kept pages by range alone
		// would answer the full pages with these.
		thin, thinErrs := s.ArticlesBatch(ctx, noBody)
		full, fullErrs := s.ArticlesBatch(ctx, reqs)
		bodies := 0
		for i, rq := range reqs {
			alone, aloneErr := s.Articles(ctx, rq.Author, noBody[i].Query, rq.Page)
			if fmt.Sprint(thinErrs[i]) != fmt.Sprint(aloneErr) || !reflect.DeepEqual(thin[i], alone) {
				t.Fatalf("%s: request %d %+v without bodies: batch %+v, %v; alone %+v, %v", round, i, rq, thin[i], thinErrs[i], alone, aloneErr)
			}
			if fmt.Sprint(thinErrs[i]) != fmt.Sprint(fullErrs[i]) {
				t.Fatalf("%s: request %d %+v: error %v without bodies, %v with", round, i, rq, thinErrs[i], fullErrs[i])
			}
			if len(thin[i].Primed()) != 0 {
				t.Errorf("%s: request %d: a page without bodies primes rows %v", round, i, thin[i].Primed())
			}
			want := full[i]
			if len(want.Primed()) != len(want.Articles) {
				t.Errorf("%s: request %d: a page with bodies primes %d rows of %d", round, i, len(want.Primed()), len(want.Articles))
			}
			stripped := make([]Article, len(want.Articles))
			for j, a := range want.Articles {
				if a.Body != "" {
					bodies++
				}
				a.Body = ""
				stripped[j] = a
			}
			got := thin[i]
			if !reflect.DeepEqual(got.Articles, stripped) || !reflect.DeepEqual(got.Cursors.All(), want.Cursors.All()) || got.PageInfo != want.PageInfo {
				t.Fatalf("%s: request %d %+v:\nwithout bodies %+v\nwith bodies    %+v", round, i, rq, got, want)
			}
		}
		if bodies < 20 {
			t.Errorf("%s: %d articles came with their bodies: the full pages lost them", round, bodies)
		}
	}
	for _, s := range []*Store{direct, viaHrpc} {
		check(s, "before")
	}
	title, body := "Retitled", "a new body"
	if _, err := direct.UpdateArticle(ctx, posted[3].ID, &title, &body, nil); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Store{direct, viaHrpc} {
		check(s, "after an update")
	}
	p, err := direct.Articles(ctx, "writer", ArticleQuery{NoBody: true}, PageRequest{Size: 7})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range p.Articles {
		found = found || a.Title == title
	}
	if !found {
		t.Errorf("a page without bodies read after an update: %+v, no title %q", p.Articles, title)
	}
}
