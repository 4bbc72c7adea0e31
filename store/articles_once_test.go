package store

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/store/hbasefault"
	"github.com/hbgraph/hbgraph/store/keys"
)

// The caller's retry of a write with the same op (what a mutation derives
// from its idempotency key) converges on one effect: a post retried after
// it succeeded gives the same article, not a second; an update and a
// deletion retried succeed without applying again.
func TestArticleWritesRetriedWithTheSameOp(t *testing.T) {
	clk := newFakeClock()
	clk.step = 1
	s := newTestStoreWithClock(t, clk)
	mustArticleAuthor(t, s, "ann")
	ctx := WithOp(bg, DeriveOpID("test", "post"))
	first, err := s.PostArticle(ctx, "ann", "t", "cats and dogs", "c")
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.PostArticle(ctx, "ann", "t", "cats and dogs", "c")
	if err != nil || again.ID != first.ID {
		t.Fatalf("the retry posted %+v, %v; want the first article %s", again, err, first.ID)
	}
	if n := timelineTitles(t, s, "ann")["t"]; n != 1 {
		t.Fatalf("%d articles after a post and its retry, want 1", n)
	}

	body := "cats cats"
	uctx := WithOp(bg, DeriveOpID("test", "update"))
	if _, err := s.UpdateArticle(uctx, first.ID, nil, &body, nil); err != nil {
		t.Fatal(err)
	}
	// Another client's update in between: the retry must not undo it.
	other := "birds"
	if _, err := s.UpdateArticle(bg, first.ID, nil, &other, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.UpdateArticle(uctx, first.ID, nil, &body, nil)
	if err != nil || got.Body != "birds" {
		t.Fatalf("the retried update answered %+v, %v; want success with the article as it is (body birds)", got, err)
	}
	checkArticleWordCounts(t, s, "ann")
	checkArticleInvariants(t, s)

	dctx := WithOp(bg, DeriveOpID("test", "delete"))
	if err := s.DeleteArticle(dctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteArticle(dctx, first.ID); err != nil {
		t.Fatalf("the retried deletion: %v, want success", err)
	}
	if err := s.DeleteArticle(bg, first.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another deletion: %v, want NOT_FOUND", err)
	}
	// The post retried after its article was deleted writes nothing
	// that shows.
	if _, err := s.PostArticle(ctx, "ann", "t", "cats and dogs", "c"); err != nil {
		t.Fatal(err)
	}
	if _, ok := articleExists(t, s, first.ID); ok {
		t.Fatal("a post retried after its article's deletion brought it back")
	}
	checkArticleWordCounts(t, s, "ann")
	checkArticleInvariants(t, s)

	// A day later Repair expires the op rows, and only then.
	if report, err := s.Repair(bg); err != nil || len(report) != 0 {
		t.Fatalf("repair: %v, %v", report, err)
	}
	clk.Advance(articleOpRowTTL + time.Minute)
	report, err := s.Repair(bg)
	if err != nil || report[fixArticleOpRowExpired] != 2 {
		t.Fatalf("repair a day later: %v, %v; want the post's and the deletion's op rows expired", report, err)
	}
	err = s.scanAll(bg, scanRange{table: keys.TableArticles, family: keys.FamilyArticles}, func(rw row) (bool, error) {
		if _, _, err := keys.DecodeArticleOp(rw.key); err == nil {
			t.Errorf("op row %x left", rw.key)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A re-sent deletion mark, or a crash after it, leaves the row marked with
// the deletion's op: the deletion's retry finishes it, and so do a node
// deletion and Repair, each counting it once.
func TestArticleDeletionMarkIsFinishedOnce(t *testing.T) {
	for _, finisher := range []string{"retry", "repair", "node deletion"} {
		t.Run(finisher, func(t *testing.T) {
			s := newSteppingStore(t)
			mustArticleAuthor(t, s, "ann")
			a := mustPostArticle(t, s, "ann", "t", "gone words", "c")
			mustPostArticle(t, s, "ann", "t", "kept words", "c")
			ctx := WithOp(bg, DeriveOpID("test", "delete"))
			s.fault = crashAtPoint(pointArticleCategory)
			if err := s.DeleteArticle(ctx, a.ID); !errors.Is(err, errCrash) {
				t.Fatalf("delete: %v, want the crash", err)
			}
			s.fault = nil
			if _, ok := articleExists(t, s, a.ID); !ok {
				t.Fatal("the article went before its other rows")
			}
			switch finisher {
			case "retry":
				if err := s.DeleteArticle(ctx, a.ID); err != nil {
					t.Fatal(err)
				}
			case "repair":
				report, err := s.Repair(bg)
				if err != nil || report[fixArticleDeletion] != 1 {
					t.Fatalf("repair: %v, %v; want the deletion finished", report, err)
				}
			case "node deletion":
				if err := s.DeleteNode(bg, "ann", true); err != nil {
					t.Fatal(err)
				}
				if n := len(timelineTitles(t, s, "ann")); n != 0 {
					t.Fatalf("%d articles outlive their node", n)
				}
				return
			}
			if _, ok := articleExists(t, s, a.ID); ok {
				t.Fatal("the article is still there")
			}
			checkArticleWordCounts(t, s, "ann")
			checkArticleInvariants(t, s)
			if report, err := s.Repair(bg); err != nil || len(report) != 0 {
				t.Fatalf("a last repair fixed %v, %v", report, err)
			}
		})
	}
}

// The store checks, inside the write, that the writer may write the
// author the resolver authorised: a node it does not own (deleted and
// created again by someone else since the check) takes no article, and
// its articles are neither updated nor deleted.
func TestArticleWritesCheckTheAuthorsOwner(t *testing.T) {
	s := newSteppingStore(t)
	if _, err := s.CreateNode(bg, "ann", "alice", nil); err != nil {
		t.Fatal(err)
	}
	a := mustPostArticle(t, s, "ann", "t", "words", "c") // as an admin
	mallory := WithWriter(bg, Writer{Subject: "mallory"})
	if _, err := s.PostArticle(mallory, "ann", "t", "mine now", "c"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a post to another's node: %v, want NOT_FOUND", err)
	}
	body := "mine"
	if _, err := s.UpdateArticle(mallory, a.ID, nil, &body, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("an update of another's article: %v, want NOT_FOUND", err)
	}
	if err := s.DeleteArticle(mallory, a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("a deletion of another's article: %v, want NOT_FOUND", err)
	}
	if n := timelineTitles(t, s, "ann")["t"]; n != 1 {
		t.Errorf("%d articles, want the one", n)
	}
	alice := WithWriter(bg, Writer{Subject: "alice"})
	if _, err := s.UpdateArticle(alice, a.ID, nil, &body, nil); err != nil {
		t.Errorf("the owner's update: %v", err)
	}
	checkArticleWordCounts(t, s, "ann")
	checkArticleInvariants(t, s)
}

// An import batch retried with the same op after a fault that failed some
// of an author's articles (one applied but answered an error, one not
// applied, one whose counts failed) imports each once and counts each
// once, however the articles of the author fell between the attempts, and
// so does a second retry.
func TestImportArticlesRetriedWithTheSameOpCountsOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule hbasefault.Rule
	}{
		{"a timeline row applied, then an error", hbasefault.Rule{Kind: hbasefault.CheckAndMutate, Table: keys.TableArticles, Nth: 2, Mode: hbasefault.FailAfter}},
		{"a timeline row not applied", hbasefault.Rule{Kind: hbasefault.CheckAndMutate, Table: keys.TableArticles, Nth: 2, Mode: hbasefault.FailBefore}},
		{"the counts applied, then an error", hbasefault.Rule{Kind: hbasefault.Increment, Table: keys.TableArticles, Nth: 1, Mode: hbasefault.FailAfter}},
		{"the word counts not applied", hbasefault.Rule{Kind: hbasefault.Increment, Table: keys.TableWordCounts, Nth: 1, Mode: hbasefault.FailBefore}},
		{"a category row not applied", hbasefault.Rule{Kind: hbasefault.Put, Table: keys.TableArticles, Nth: 3, Mode: hbasefault.FailBefore}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			clk.step = 1
			fc := hbasefault.New(openTestEngine(t, clk))
			s, err := New(fc, Options{Clock: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			mustArticleAuthor(t, s, "ann")
			mustPostArticle(t, s, "ann", "live", "live words", "c")
			var arts []ArticleImport
			for i := range 4 {
				arts = append(arts, ArticleImport{Author: "ann", Seq: uint64(100 + i), Title: fmt.Sprint("imported ", i),
					Body: "old words", Category: fmt.Sprint("c", i%2), Posted: time.UnixMilli(testClockStart - 1000 + int64(i))})
			}
			ctx := WithOp(bg, DeriveOpID("test", "import"))
			fc.Add(tc.rule)
			fc.Record(true)
			if _, err := s.ImportArticles(ctx, arts); err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(fc.Calls(), func(c hbasefault.Call) bool { return c.Mode != hbasefault.Pass }) {
				t.Fatal("the fault never fired")
			}
			fc.Record(false)
			for range 2 {
				outs, err := s.ImportArticles(ctx, arts)
				if err != nil {
					t.Fatal(err)
				}
				for i, o := range outs {
					if !o.Created || o.Err != nil {
						t.Fatalf("the retry's article %d: %+v, want created (the batch's own)", i, o)
					}
				}
			}
			if err := s.AdvanceArticleSeq(bg, "ann", 103); err != nil {
				t.Fatal(err)
			}
			if n := len(timelineTitles(t, s, "ann")); n != 5 {
				t.Fatalf("%d articles, want 5", n)
			}
			checkArticleWordCounts(t, s, "ann")
			checkArticleInvariants(t, s)
			if report, err := s.Repair(bg); err != nil || len(report) != 0 {
				t.Fatalf("repair fixed %v, %v", report, err)
			}
		})
	}
}

// A sequence number handed out twice (a duplicate Increment answered with
// the counter's current value, a counters row lost) collides with another
// post's row in the same millisecond: the compare-and-set "u absent"
// catches it, the op row is moved to a fresh number, and a retry with the
// same op finds that one.
func TestPostArticleSeqCollision(t *testing.T) {
	clk := newFakeClock() // frozen: every post in the same millisecond
	s := newTestStoreWithClock(t, clk)
	mustArticleAuthor(t, s, "ann")
	first := mustPostArticle(t, s, "ann", "first", "one", "c")
	// The counter goes back, as a lost row would: the next post is
	// handed first's number.
	if err := s.put(bg, keys.TableArticles, keys.FamilyArticles, keys.Counters("ann"),
		cells{keys.QualSeq: encodeMs(0)}, s.nowMs()+1); err != nil {
		t.Fatal(err)
	}
	ctx := WithOp(bg, DeriveOpID("test", "collision"))
	second, err := s.PostArticle(ctx, "ann", "second", "two", "c")
	if err != nil {
		t.Fatal(err)
	}
	if second.ID == first.ID {
		t.Fatal("the second post took the first's row")
	}
	again, err := s.PostArticle(ctx, "ann", "second", "two", "c")
	if err != nil || again.ID != second.ID {
		t.Fatalf("the retry: %+v, %v; want %s", again, err, second.ID)
	}
	if got := timelineTitles(t, s, "ann"); got["first"] != 1 || got["second"] != 1 {
		t.Fatalf("articles %v, want one of each", got)
	}
	if a, ok := articleExists(t, s, first.ID); !ok || a.Title != "first" {
		t.Fatalf("the first article is %+v, %v", a, ok)
	}
}
