package store

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/store/keys"
)

func TestImportKeepsTimesAndSkipsExisting(t *testing.T) {
	s := newTestStore(t)
	at := func(ms int64) time.Time { return time.UnixMilli(ms) }
	for i, id := range []string{"a", "b"} {
		ok, err := s.ImportNode(bg, id, "", Properties{"i": i}, at(1000), at(2000))
		if err != nil || !ok {
			t.Fatalf("import %s: %v %v", id, ok, err)
		}
	}
	if ok, err := s.ImportNode(bg, "a", "", Properties{"i": 99}, at(5), at(6)); err != nil || ok {
		t.Fatalf("re-import of a: created=%v err=%v, want skipped", ok, err)
	}
	n, err := s.getNode(bg, "a")
	if err != nil || n.Created.UnixMilli() != 1000 || n.Updated.UnixMilli() != 2000 || fmt.Sprint(propsOf(t, n.Properties)["i"]) != "0" {
		t.Fatalf("node a: %+v, %v", n, err)
	}
	k := RelationshipKey{"a", "follow", "b"}
	if ok, err := s.ImportRelationship(bg, k, Properties{"w": 1}, at(3000), at(4000)); err != nil || !ok {
		t.Fatalf("import relationship: %v %v", ok, err)
	}
	if ok, err := s.ImportRelationship(bg, k, nil, at(1), at(1)); err != nil || ok {
		t.Fatalf("re-import relationship: %v %v", ok, err)
	}
	if _, err := s.ImportRelationship(bg, RelationshipKey{"a", "follow", "ghost"}, nil, at(1), at(1)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("relationship to a missing node: %v", err)
	}
	page, err := s.Adjacent(bg, "b", "follow", Incoming, PageRequest{Size: 5})
	if err != nil || len(page.Relationships) != 1 || page.Relationships[0].Created.UnixMilli() != 3000 ||
		page.Relationships[0].Updated.UnixMilli() != 4000 {
		t.Fatalf("incoming page of b: %+v, %v", page, err)
	}
	checkGraphInvariants(t, s)

	id, ok, err := s.ImportArticle(bg, "a", 42, "Imported", "imported words words", "tech", at(5000))
	if err != nil || !ok {
		t.Fatalf("import article: %v %v", ok, err)
	}
	if _, ok, err := s.ImportArticle(bg, "a", 42, "Again", "other", "tech", at(5000)); err != nil || ok {
		t.Fatalf("re-import article: %v %v", ok, err)
	}
	a, err := s.getArticle(bg, id)
	if err != nil || a.Title != "Imported" || a.Posted.UnixMilli() != 5000 {
		t.Fatalf("article: %+v, %v", a, err)
	}
	k42, _ := keys.ParseArticleID(id)
	if k42.Seq != 42 {
		t.Fatalf("article id kept seq %d, want 42", k42.Seq)
	}
	if err := s.AdvanceArticleSeq(bg, "a", 42); err != nil {
		t.Fatal(err)
	}
	posted, err := s.PostArticle(bg, "a", "Live", "live words", "tech")
	if err != nil {
		t.Fatal(err)
	}
	if kp, _ := keys.ParseArticleID(posted.ID); kp.Seq <= 42 {
		t.Fatalf("live post got seq %d after an import of 42", kp.Seq)
	}
	words, err := s.TopWords(bg, "a", 3)
	if err != nil || len(words) == 0 || words[0].Word != "words" || words[0].Count != 3 {
		t.Fatalf("word counts after import and post: %v, %v", words, err)
	}
	checkArticleInvariants(t, s)
}

func TestImportRejectsBadInputWritingNothing(t *testing.T) {
	s := newTestStore(t)
	before := storedRows(t, s)
	at := time.UnixMilli
	cases := map[string]error{}
	_, cases["updated before created"] = s.ImportNode(bg, "x", "", nil, at(10), at(5))
	_, cases["negative time"] = s.ImportNode(bg, "x", "", nil, at(-5), at(-5))
	_, cases["bad id"] = s.ImportNode(bg, "", "", nil, at(1), at(1))
	_, _, cases["article id 0"] = s.ImportArticle(bg, "x", 0, "t", "b", "c", at(1))
	for name, err := range cases {
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: %v, want ErrInvalidInput", name, err)
		}
	}
	if after := storedRows(t, s); len(after) != len(before) {
		t.Fatalf("bad imports wrote %d rows", len(after)-len(before))
	}
}

// An article deleted after the time it is imported at stays deleted: its
// delete marker hides the timeline row that CheckAndMutate writes, so the
// import fails rather than index and count an article no one can read.
func TestImportArticleUnderDeleteMarkerConflicts(t *testing.T) {
	s := newTestStoreWithClock(t, newFakeClock())
	mustArticleAuthor(t, s, "a")
	posted := time.UnixMilli(1000)
	id, ok, err := s.ImportArticle(bg, "a", 5, "Title", "some words", "c", posted)
	if err != nil || !ok {
		t.Fatalf("import: %v %v", ok, err)
	}
	if err := s.DeleteArticle(bg, id); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.ImportArticle(bg, "a", 5, "Title", "some words", "c", posted); !errors.Is(err, ErrConflict) || ok {
		t.Fatalf("import under the delete marker: created=%v err=%v, want ErrConflict", ok, err)
	}
	if _, err := s.getArticle(bg, id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("article after the import: %v, want ErrNotFound", err)
	}
	checkArticleInvariants(t, s)
	checkArticleWordCounts(t, s, "a")
}
