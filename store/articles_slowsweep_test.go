package store

import (
	"testing"
)

// A node's deletion that another deletion finished while it swept the
// node's articles stops there: the articles of a node created since under
// the same id are not its to delete. The concurrent simulation found a
// slow sweep deleting an article acknowledged to a node created after the
// node it was deleting.
func TestSlowNodeDeletionLeavesTheNextNodesArticles(t *testing.T) {
	ctx := t.Context()
	db := openTestEngine(t, nil)
	slow, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustArticleAuthor(t, slow, "ann")
	mustPostArticle(t, slow, "ann", "old", "old words", "c")
	var next Article
	fired := false
	slow.fault = func(p string) error {
		if p != pointArticleMark || fired {
			return nil
		}
		fired = true
		// While the slow deletion is about to mark the old article:
		// another finishes the deletion, and the id is created again,
		// with an article.
		if err := other.DeleteNode(ctx, "ann", true); err != nil {
			t.Errorf("the other deletion: %v", err)
		}
		mustArticleAuthor(t, other, "ann")
		next = mustPostArticle(t, other, "ann", "new", "new words", "c")
		return nil
	}
	if err := slow.DeleteNode(ctx, "ann", true); err != nil {
		t.Fatalf("the slow deletion: %v", err)
	}
	slow.fault = nil
	if !fired {
		t.Fatal("the slow deletion never marked an article")
	}
	if _, err := other.getNode(ctx, "ann"); err != nil {
		t.Fatalf("the node created again: %v", err)
	}
	if _, err := other.getArticle(ctx, next.ID); err != nil {
		t.Fatalf("the article posted to the node created again: %v", err)
	}
	counts, err := other.ArticleCounts(ctx, []string{"ann"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if counts[0] != 1 {
		t.Errorf("article count %d; want 1", counts[0])
	}
}
