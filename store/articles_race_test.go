package store

import (
	"errors"
	"testing"
)

// Article writes cut short, then met by another writer before their
// retry: what the replica simulation found (issue 23).

// An update cut short after its compare-and-set, then another update,
// then the first's retry: the second finishes the first's writes before
// replacing its xp, so the word counts hold both.
func TestArticleUpdateCutShortThenAnotherUpdate(t *testing.T) {
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	a := mustPostArticle(t, s, "ann", "t", "cats", "c")
	first := WithOp(bg, DeriveOpID("test", "first update"))
	body := "dogs"
	s.fault = crashAtPoint(pointWordCount)
	if _, err := s.UpdateArticle(first, a.ID, nil, &body, nil); !errors.Is(err, errCrash) {
		t.Fatalf("update: %v, want the crash", err)
	}
	s.fault = nil
	other := "birds"
	if _, err := s.UpdateArticle(bg, a.ID, nil, &other, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateArticle(first, a.ID, nil, &body, nil); err != nil {
		t.Fatalf("the retried update: %v", err)
	}
	checkArticleWordCounts(t, s, "ann")
	checkArticleInvariants(t, s)
}

// An update cut short after its compare-and-set, then the article's
// deletion: the deletion finishes the update's writes first, so the word
// counts go to zero.
func TestArticleUpdateCutShortThenDeleted(t *testing.T) {
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	a := mustPostArticle(t, s, "ann", "t", "cats", "c")
	body := "dogs"
	s.fault = crashAtPoint(pointWordCount)
	if _, err := s.UpdateArticle(WithOp(bg, DeriveOpID("test", "update")), a.ID, nil, &body, nil); !errors.Is(err, errCrash) {
		t.Fatalf("update: %v, want the crash", err)
	}
	s.fault = nil
	if err := s.DeleteArticle(bg, a.ID); err != nil {
		t.Fatal(err)
	}
	if got := nonzero(storedWordCounts(t, s, "ann")); len(got) != 0 {
		t.Errorf("word counts %v after the article's deletion, want none", got)
	}
	checkArticleInvariants(t, s)
}

// A deletion cut short after its mark, then another deletion: NOT_FOUND,
// and from then on no read finds the article (the second finishes the
// first before answering).
func TestArticleDeletionUnderWayNotFoundMeansGone(t *testing.T) {
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	a := mustPostArticle(t, s, "ann", "t", "cats", "c")
	s.fault = crashAtPoint(pointArticleCount)
	if err := s.DeleteArticle(WithOp(bg, DeriveOpID("test", "delete")), a.ID); !errors.Is(err, errCrash) {
		t.Fatalf("delete: %v, want the crash", err)
	}
	s.fault = nil
	body := "dogs"
	if _, err := s.UpdateArticle(bg, a.ID, nil, &body, nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("update of an article being deleted: %v, want NOT_FOUND", err)
	}
	if _, ok := articleExists(t, s, a.ID); ok {
		t.Fatal("the article reads as there after an update answered NOT_FOUND")
	}
	checkArticleWordCounts(t, s, "ann")
	checkArticleInvariants(t, s)
}

// A post cut short after its timeline row, its author deleted (the
// deletion sweeps the row and decrements counts never incremented), then
// the post's retry: NOT_FOUND, and the counts add up to nothing.
func TestArticlePostRetriedAfterItsAuthorsDeletion(t *testing.T) {
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	ctx := WithOp(bg, DeriveOpID("test", "post"))
	s.fault = crashAtPoint(pointArticleCount)
	if _, err := s.PostArticle(ctx, "ann", "t", "cats", "c"); !errors.Is(err, errCrash) {
		t.Fatalf("post: %v, want the crash", err)
	}
	s.fault = nil
	if err := s.DeleteNode(bg, "ann", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PostArticle(ctx, "ann", "t", "cats", "c"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the retried post: %v, want NOT_FOUND", err)
	}
	if got := nonzero(storedWordCounts(t, s, "ann")); len(got) != 0 {
		t.Errorf("word counts %v of a deleted author, want none", got)
	}
	if n, err := s.ArticleCounts(bg, []string{"ann"}, ""); err != nil || n[0] != 0 {
		t.Errorf("article count %v, %v of a deleted author, want 0", n, err)
	}
}

// A post whose author is deleted and created again before its timeline
// row is written undoes the row; the undo is cut short after its mark.
// The post's retry finds its own row marked: it finishes the deletion,
// leaving no marked row and no count of it.
func TestArticlePostRetryFinishesItsUndo(t *testing.T) {
	s := newTestStore(t)
	other, err := New(s.hc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustArticleAuthor(t, s, "ann")
	replaced := false
	s.fault = func(p string) error {
		switch {
		case p == pointArticleTimeline && !replaced:
			replaced = true
			if err := other.DeleteNode(bg, "ann", true); err != nil {
				t.Fatal(err)
			}
			mustArticleAuthor(t, other, "ann")
		case p == pointArticleRowGone:
			return errCrash
		}
		return nil
	}
	ctx := WithOp(bg, DeriveOpID("test", "post"))
	if _, err := s.PostArticle(ctx, "ann", "t", "cats", "c"); !errors.Is(err, errCrash) {
		t.Fatalf("post: %v, want the crash in its undo", err)
	}
	s.fault = nil
	if _, err := s.PostArticle(ctx, "ann", "t", "cats", "c"); err != nil && !errors.Is(err, ErrNotFound) {
		t.Fatalf("the retried post: %v", err)
	}
	checkArticleWordCounts(t, s, "ann")
	checkArticleInvariants(t, s)
}
