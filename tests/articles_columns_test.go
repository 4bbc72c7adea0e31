package tests

import (
	"strings"
	"testing"
)

// Issue 27: a page of articles whose selection needs no body reads none.
// Every way of selecting the body (directly, through inline and named
// fragments, in an alias beside a page without it, in the same request
// as such a page, after one was read and cached, after an update) must
// still answer it, on both executors.
func TestArticlePagesAnswerTheBodyWheneverSelected(t *testing.T) {
	parallelTest(t)
	body := strings.Repeat("a long body ", 200)
	for _, executor := range []string{"plan", "gqlgen"} {
		s := startServer(t, "--executor", executor)
		id := postArticleOf(t, s, "", "Cols-a", body)
		type page struct {
			Edges []struct {
				Node struct {
					ID, Title string
					Body      *string
				}
			}
		}
		check := func(name string, p page, wantBody string) {
			t.Helper()
			if len(p.Edges) != 1 || p.Edges[0].Node.ID != id || p.Edges[0].Node.Title != "big" {
				t.Fatalf("%s, %s: page %+v", executor, name, p)
			}
			got := p.Edges[0].Node.Body
			if wantBody == "" && got != nil {
				t.Errorf("%s, %s: body %q not selected", executor, name, *got)
			}
			if wantBody != "" && (got == nil || *got != wantBody) {
				t.Errorf("%s, %s: body %v, want %d bytes", executor, name, got, len(wantBody))
			}
		}
		const thin = `node(id: "Cols-a") { articles(first: 3) { edges { node { id title } } } }`
		queries := []struct{ name, query string }{
			{"direct", `{ n: node(id: "Cols-a") { articles(first: 3) { edges { node { id title body } } } } }`},
			{"inline fragment", `{ n: node(id: "Cols-a") { articles(first: 3) { edges { node { id title ... on Article { body } } } } } }`},
			{"named fragment", `query { n: node(id: "Cols-a") { articles(first: 3) { edges { ...E } } } } fragment E on ArticleEdge { node { id title body } }`},
			{"beside a page without it", `{ t: ` + thin + ` n: node(id: "Cols-a") { articles(first: 3) { edges { node { id title body } } } } }`},
			{"category page", `{ n: node(id: "Cols-a") { articles(category: "c", first: 3) { edges { node { id title body } } } } }`},
		}
		for round, want := range []string{body, "changed"} {
			if round == 1 {
				s.mustDo(t, `mutation($i: ID!) { updateArticle(id: $i, body: "changed") { id } }`, map[string]any{"i": id}, nil)
			}
			var thinOut struct{ T struct{ Articles page } }
			s.mustDo(t, `{ t: `+thin+` }`, nil, &thinOut)
			check("without the body", thinOut.T.Articles, "")
			for _, q := range queries {
				var out struct {
					T, N struct{ Articles page }
				}
				s.mustDo(t, q.query, nil, &out)
				check(q.name, out.N.Articles, want)
				if strings.HasPrefix(q.name, "beside") {
					check(q.name+" (the page without)", out.T.Articles, "")
				}
			}
			var both struct {
				T       struct{ Articles page }
				Article struct{ Body string }
			}
			s.mustDo(t, `query($i: ID!) { t: `+thin+` article(id: $i) { body } }`, map[string]any{"i": id}, &both)
			if both.Article.Body != want {
				t.Errorf("%s: article(id) beside a page without bodies: body of %d bytes, want %d", executor, len(both.Article.Body), len(want))
			}
		}
	}
}
