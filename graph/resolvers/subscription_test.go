package resolvers

import (
	"context"
	"testing"

	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/store"
	"github.com/hbgraph/hbgraph/store/keys"
)

// TestEventCursorsAreThePagesCursors: the cursor an event carries is the
// one the store's page gives its item, for articles (several in one
// millisecond) and relationships seen from either end, a loop's too, and
// ids that need escaping in a row key.
func TestEventCursorsAreThePagesCursors(t *testing.T) {
	st, _ := memstore.New(t)
	ctx := context.Background()
	ids := []string{"a", "b\x00c", "ünï côdé", "a.b"}
	for _, id := range ids {
		if _, err := st.CreateNode(ctx, id, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	var rels []store.Relationship
	for _, start := range ids {
		for _, end := range ids {
			r, err := st.CreateRelationship(ctx, store.RelationshipKey{Start: start, Type: "knows", End: end}, nil)
			if err != nil {
				t.Fatal(err)
			}
			rels = append(rels, r)
		}
	}
	cursorIn := func(node string, dir keys.Direction) map[string]string {
		page, err := st.Adjacent(ctx, node, "knows", dir, store.PageRequest{Size: 100})
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
			got, err := RelationshipCursor(&r, side.node, side.dir)
			if err != nil {
				t.Fatal(err)
			}
			if want := cursorIn(side.node, side.dir)[r.Start+"\x01"+r.End]; got != want {
				t.Errorf("%q-%q seen from %q %v: cursor %s, page %s", r.Start, r.End, side.node, side.dir, got, want)
			}
		}
	}

	var posted []store.Article
	for i := range 5 {
		a, err := st.PostArticle(ctx, ids[1], "t", "b", string(rune('a'+i%2)))
		if err != nil {
			t.Fatal(err)
		}
		posted = append(posted, a)
	}
	page, err := st.Articles(ctx, ids[1], store.ArticleQuery{}, store.PageRequest{Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i, a := range page.Articles {
		want[a.ID] = page.Cursors.At(i)
	}
	for _, a := range posted {
		got, err := ArticleCursor(&a)
		if err != nil {
			t.Fatal(err)
		}
		if got != want[a.ID] {
			t.Errorf("article %s: cursor %s, page %s", a.ID, got, want[a.ID])
		}
	}
}
