package tests

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
)

// postKeyed posts query with an Idempotency-Key header.
func (s *server) postKeyed(t *testing.T, query string, vars map[string]any, key string) *gqlResponse {
	t.Helper()
	body, err := json.Marshal(gqlRequest{Query: query, Variables: vars})
	if err != nil {
		t.Fatal(err)
	}
	return s.postRaw(t, body, http.Header{"Idempotency-Key": {key}})
}

// TestIdempotencyKeyArticles: an article mutation sent again with the same
// Idempotency-Key (a client's retry after UNAVAILABLE) is the same write,
// applied once: postArticle answers the article it posted, with the same
// id, and the author has one article, counted once, its words once;
// updateArticle answers success without applying again over a later
// update; deleteArticle answers success, not NOT_FOUND. Under another key
// each is another write.
func TestIdempotencyKeyArticles(t *testing.T) {
	s := startServer(t)
	s.mustDo(t, `mutation { createNode(id: "ann") { id } }`, nil, nil)

	const post = `mutation { postArticle(authorId: "ann", title: "Cats", body: "cats and dogs", category: "pets") { id title } }`
	var first, again struct{ PostArticle struct{ ID, Title string } }
	s.postKeyed(t, post, nil, "post-1").ok(t, &first)
	s.postKeyed(t, post, nil, "post-1").ok(t, &again)
	if again.PostArticle.ID != first.PostArticle.ID {
		t.Fatalf("postArticle sent again with its key posted %s, the first %s", again.PostArticle.ID, first.PostArticle.ID)
	}
	type authorView struct {
		Node struct {
			Articles struct {
				TotalCount int
				Edges      []struct {
					Node struct{ ID, Body, Category string }
				}
			}
			WordCounts []struct {
				Word  string
				Count int
			}
		}
	}
	const view = `{ node(id: "ann") { articles(first: 10) { totalCount edges { node { id body category } } } wordCounts(first: 10) { word count } } }`
	check := func(wantArticles int, wantWords map[string]int) authorView {
		t.Helper()
		var v authorView
		s.mustDo(t, view, nil, &v)
		if n := len(v.Node.Articles.Edges); n != wantArticles || v.Node.Articles.TotalCount != wantArticles {
			t.Errorf("ann has %d articles, counted %d; want %d", n, v.Node.Articles.TotalCount, wantArticles)
		}
		got := map[string]int{}
		for _, w := range v.Node.WordCounts {
			got[w.Word] = w.Count
		}
		for w, n := range wantWords {
			if got[w] != n {
				t.Errorf("word %q counts %d, want %d (all: %v)", w, got[w], n, got)
			}
		}
		return v
	}
	check(1, map[string]int{"cats": 2, "dogs": 1})

	// An update sent again after someone else's update does not undo it.
	vars := map[string]any{"id": first.PostArticle.ID}
	const update = `mutation($id: ID!) { updateArticle(id: $id, body: "dogs only", category: "dogs") { id body } }`
	s.postKeyed(t, update, vars, "update-1").ok(t, nil)
	s.mustDo(t, `mutation($id: ID!) { updateArticle(id: $id, body: "birds") { id } }`, vars, nil)
	s.postKeyed(t, update, vars, "update-1").ok(t, nil)
	v := check(1, map[string]int{"cats": 1, "birds": 1, "dogs": 0})
	if e := v.Node.Articles.Edges; len(e) == 1 && (e[0].Node.Body != "birds" || e[0].Node.Category != "dogs") {
		t.Errorf("after the update sent again: %+v, want body birds in category dogs", e[0].Node)
	}
	var inDogs struct {
		Node struct{ Articles struct{ TotalCount int } }
	}
	s.mustDo(t, `{ node(id: "ann") { articles(category: "dogs") { totalCount } } }`, nil, &inDogs)
	if inDogs.Node.Articles.TotalCount != 1 {
		t.Errorf("category dogs counts %d, want 1", inDogs.Node.Articles.TotalCount)
	}

	const del = `mutation($id: ID!) { deleteArticle(id: $id) }`
	s.postKeyed(t, del, vars, "delete-1").ok(t, nil)
	s.postKeyed(t, del, vars, "delete-1").ok(t, nil)
	s.postKeyed(t, del, vars, "delete-2").wantError(t, "NOT_FOUND", "deleteArticle")
	v = check(0, nil)
	if i := slices.IndexFunc(v.Node.WordCounts, func(w struct {
		Word  string
		Count int
	}) bool {
		return w.Count != 0
	}); i >= 0 {
		t.Errorf("word counts left after the deletion: %v", v.Node.WordCounts)
	}

	// Another key is another post.
	s.postKeyed(t, post, nil, "post-2").ok(t, nil)
	check(1, map[string]int{"cats": 2})
}
