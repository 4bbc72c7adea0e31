package store

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"
)

// distinctWords returns n distinct words ("w0 w1 ..."), joined by spaces.
func distinctWords(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s%d ", prefix, i)
	}
	return b.String()
}

// An article over MaxArticleWords distinct words is refused by every
// writer with ErrInvalidInput and writes nothing; one at the bound goes.
func TestArticleWordBound(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	atBound := distinctWords("w", MaxArticleWords-1) // and the title's one word
	a := mustPostArticle(t, s, "ann", "title", atBound, "c")
	over := distinctWords("w", MaxArticleWords+1)
	before := storedRows(t, s)
	checkRefused := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "distinct words") {
			t.Errorf("%s: %v; want ErrInvalidInput about distinct words", name, err)
		}
		if after := storedRows(t, s); !maps.Equal(before, after) {
			t.Errorf("%s wrote rows", name)
		}
	}
	_, err := s.PostArticle(ctx, "ann", "title", over, "c")
	checkRefused("post", err)
	body := over
	_, err = s.UpdateArticle(ctx, a.ID, nil, &body, nil)
	checkRefused("update body", err)
	// The title's two words for one take the article past the bound.
	title := "two words"
	_, err = s.UpdateArticle(ctx, a.ID, &title, nil, nil)
	checkRefused("update title", err)
	out, err := s.ImportArticles(ctx, []ArticleImport{{Author: "ann", Seq: 99, Title: "t", Body: over, Category: "c", Posted: time.UnixMilli(5)}})
	if err != nil {
		t.Fatal(err)
	}
	checkRefused("import", out[0].Err)
}
