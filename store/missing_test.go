package store

import (
	"context"
	"testing"
)

// TestMissingRowsDecodeToNothing is the one rule for a missing row: every
// Row decoder answers nil or zero and no error, whatever the row's kind.
func TestMissingRowsDecodeToNothing(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	mustNode(t, s, "alice", nil)
	a, err := s.PostArticle(ctx, "alice", "Title", "words", "tech")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteArticle(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	rel := RelationshipKey{Start: "alice", Type: "follows", End: "bob"}
	nodeGet, _ := NodeGet("nobody")
	relGet, _ := rel.Get()
	articleGet, _ := ArticleGet(a.ID) // deleted
	degreeGet, _ := DegreeKey{Node: "nobody", Dir: Outgoing, Type: "follows"}.Get()
	countGet, _ := ArticleCountKey{Author: "nobody"}.Get()
	wordsGet, _ := WordCountsGet("nobody")
	rows, err := s.Read(ctx, []Get{nodeGet, relGet, articleGet, degreeGet, countGet, wordsGet})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := rows[0].Node("nobody"); n != nil || err != nil {
		t.Errorf("Node: %v, %v", n, err)
	}
	if r, err := rows[1].Relationship(rel, rows[0], rows[0]); r != nil || err != nil {
		t.Errorf("Relationship: %v, %v", r, err)
	}
	if got, err := rows[2].Article(a.ID); got != nil || err != nil {
		t.Errorf("Article: %v, %v", got, err)
	}
	if d, err := rows[3].Degree(); d != 0 || err != nil {
		t.Errorf("Degree: %d, %v", d, err)
	}
	if c, err := rows[4].ArticleCount(""); c != 0 || err != nil {
		t.Errorf("ArticleCount: %d, %v", c, err)
	}
	if w, err := rows[5].TopWords(5); len(w) != 0 || err != nil {
		t.Errorf("TopWords: %v, %v", w, err)
	}
}
