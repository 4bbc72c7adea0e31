package store

import (
	"testing"

	"github.com/hbgraph/hbgraph/store/keys"
)

// TestEventCursorsAreThePagesCursors: the cursor an event carries
// (ArticleCursor, RelationshipCursor) is the one a page gives its item, for articles (several in one
// millisecond) and relationships seen from either end, a loop's too, and
// ids that need escaping in a row key.
func TestEventCursorsAreThePagesCursors(t *testing.T) {
	st := newTestStore(t)
	ctx := bg
	ids := []string{"a", "b\x00c", "ünï côdé", "a.b"}
	for _, id := range ids {
		if _, err := st.CreateNode(ctx, id, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	var rels []Relationship
	for _, start := range ids {
		for _, end := range ids {
			r, err := st.CreateRelationship(ctx, RelationshipKey{Start: start, Type: "knows", End: end}, nil)
			if err != nil {
				t.Fatal(err)
			}
			rels = append(rels, r)
		}
	}
	cursorIn := func(node string, dir keys.Direction) map[string]string {
		page, err := st.Adjacent(ctx, node, "knows", dir, PageRequest{Size: 100})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for i, r := range page.Relationships {
			out[r.Start+"\x01"+r.End] = page.Cursors.At(i)
		}
		return out
	}
	for _, r := range rels {
		for _, side := range []struct {
			node string
			dir  keys.Direction
		}{{r.Start, keys.Outgoing}, {r.End, keys.Incoming}} {
			got, err := RelationshipCursor(r, side.node, side.dir)
			if err != nil {
				t.Fatal(err)
			}
			if want := cursorIn(side.node, side.dir)[r.Start+"\x01"+r.End]; got != want {
				t.Errorf("%q-%q seen from %q %v: cursor %s, page %s", r.Start, r.End, side.node, side.dir, got, want)
			}
		}
	}

	var posted []Article
	for i := range 5 {
		a, err := st.PostArticle(ctx, ids[1], "t", "b", string(rune('a'+i%2)))
		if err != nil {
			t.Fatal(err)
		}
		posted = append(posted, a)
	}
	page, err := st.Articles(ctx, ids[1], ArticleQuery{}, PageRequest{Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i, a := range page.Articles {
		want[a.ID] = page.Cursors.At(i)
	}
	for _, a := range posted {
		got, err := ArticleCursor(a)
		if err != nil {
			t.Fatal(err)
		}
		if got != want[a.ID] {
			t.Errorf("article %s: cursor %s, page %s", a.ID, got, want[a.ID])
		}
	}
}
