package store

import (
	"bytes"
	"errors"
	"testing"

	"github.com/hbgraph/hbgraph/store/hbasefault"
	"github.com/hbgraph/hbgraph/store/keys"
)

// A post cut short after its timeline row (no counts yet) is retried with
// the same op while another writer deletes that row: the retry's
// compare-and-set "u absent" fails on the marked row, and the deletion
// finishes (decrementing the counts of the article, which the post never
// incremented) before the retry reads the row back, so the read finds
// nothing. That is the op's own row gone, not another post's: the retry
// must keep its key and make its Increments with the nonces of that row
// (balancing the deletion's), not take a new sequence number, whose row
// would be counted while the deleted one's decrement stays (seed 481 of
// the concurrent replica simulation).
func TestPostRetryFindsItsRowDeletedMeanwhile(t *testing.T) {
	clk := newFakeClock()
	clk.step = 1
	engine := openTestEngine(t, clk)
	fc := hbasefault.New(engine)
	s, err := New(fc, Options{Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(engine, Options{Clock: clk.Now}) // another replica, no faults
	if err != nil {
		t.Fatal(err)
	}
	mustArticleAuthor(t, s, "ann")
	mustPostArticle(t, s, "ann", "kept", "kept words", "c")

	// The first attempt makes its op row and timeline row, then stops.
	ctx := WithOp(bg, DeriveOpID("test", "post"))
	s.fault = crashAtPoint(pointArticleCategory)
	if _, err := s.PostArticle(ctx, "ann", "posted", "posted words", "c"); !errors.Is(err, errCrash) {
		t.Fatalf("the first attempt: %v, want the crash", err)
	}
	s.fault = nil
	rec, err := s.readArticleOp(bg, "ann", DeriveOpID("test", "post"))
	if err != nil {
		t.Fatal(err)
	}
	_, k, ok := decodeOpRecord("ann", rec)
	if !ok {
		t.Fatalf("op record %x", rec)
	}
	row, err := k.Key()
	if err != nil {
		t.Fatal(err)
	}
	id, err := k.ID()
	if err != nil {
		t.Fatal(err)
	}

	// Another writer marks the row for deletion, and stops.
	dctx := WithOp(bg, DeriveOpID("test", "delete"))
	other.fault = crashAtPoint(pointArticleCategory)
	if err := other.DeleteArticle(dctx, id); !errors.Is(err, errCrash) {
		t.Fatalf("the deletion's first attempt: %v, want the crash", err)
	}
	other.fault = nil

	// The retry's compare-and-set fails on the marked row; just before it
	// reads the row back, the deletion's retry finishes it.
	finished := false
	fc.Add(hbasefault.Rule{Kind: hbasefault.Get, Table: keys.TableArticles, Match: func(_ string, r []byte) bool {
		if !finished && bytes.Equal(r, row) {
			finished = true
			if err := other.DeleteArticle(dctx, id); err != nil {
				t.Errorf("the deletion's retry: %v", err)
			}
		}
		return false
	}})
	got, err := s.PostArticle(ctx, "ann", "posted", "posted words", "c")
	if err != nil {
		t.Fatal(err)
	}
	if !finished {
		t.Fatal("the retry never read its row back")
	}
	if got.ID != id {
		t.Errorf("the retry posted %s, want its first attempt's %s (deleted since)", got.ID, id)
	}
	if titles := timelineTitles(t, s, "ann"); len(titles) != 1 || titles["kept"] != 1 {
		t.Errorf("articles %v, want only kept", titles)
	}
	checkArticleInvariants(t, s)
	checkArticleWordCounts(t, s, "ann")
}
