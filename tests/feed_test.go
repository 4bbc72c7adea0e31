package tests

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// feedPage is one page of Node.feed as the tests select it.
type feedPage struct {
	Node struct {
		Feed struct {
			Edges []struct {
				Cursor string
				Node   struct {
					ID, Title string
					Author    struct{ ID string }
				}
			}
			PageInfo struct {
				HasNextPage, HasPreviousPage bool
				StartCursor, EndCursor       *string
			}
		}
	}
}

const feedQuery = `query($id: ID!, $via: String!, $first: Int, $after: String, $last: Int, $before: String) {
	node(id: $id) { feed(via: $via, first: $first, after: $after, last: $last, before: $before) {
		edges { cursor node { id title author { id } } }
		pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`

func (p feedPage) titles() []string {
	var out []string
	for _, e := range p.Node.Feed.Edges {
		out = append(out, e.Node.Title)
	}
	return out
}

// feedAll pages through reader's feed, size at a time, forward.
func (s *server) feedAll(t *testing.T, reader string, size int) []string {
	t.Helper()
	var out []string
	vars := map[string]any{"id": reader, "via": "follows", "first": size}
	for range 100 {
		var p feedPage
		s.mustDo(t, feedQuery, vars, &p)
		out = append(out, p.titles()...)
		if !p.Node.Feed.PageInfo.HasNextPage {
			return out
		}
		if p.Node.Feed.PageInfo.EndCursor == nil {
			t.Fatalf("hasNextPage without an endCursor, after %v", out)
		}
		vars["after"] = *p.Node.Feed.PageInfo.EndCursor
	}
	t.Fatal("the feed does not end")
	return nil
}

// TestFeedOverHTTP: Node.feed lists the followees' articles newest first,
// pages both ways with cursors that hold across unfollows, edits and
// deletions, on both executors, with authors fanned out and wide.
func TestFeedOverHTTP(t *testing.T) {
	parallelTest(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"plan", nil},
		{"gqlgen", []string{"--executor", "gqlgen"}},
		{"wide authors", []string{"--feed-fanout-max", "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, tc.args...)
			for _, id := range []string{"r", "q", "a", "b", "c"} {
				s.createNode(t, id, nil)
			}
			for _, f := range []string{"r", "q"} {
				s.createRel(t, f, "follows", "a", nil)
				s.createRel(t, f, "follows", "b", nil)
			}
			s.createRel(t, "r", "likes", "c", nil)
			ids := map[string]string{}
			for i := range 6 {
				author := []string{"a", "b", "c"}[i%3]
				title := fmt.Sprintf("%s%d", author, i)
				ids[title] = s.postArticle(t, author, title, "body", "k").ID
			}
			// The order within a millisecond is by author: compare sets
			// of what lies in one page where posts may share one.
			got := s.feedAll(t, "r", 2)
			want := []string{"b4", "a3", "b1", "a0"}
			if !sameOrderedByTime(got, want) {
				t.Fatalf("feed: %v, want %v", got, want)
			}
			var p feedPage
			s.mustDo(t, feedQuery, map[string]any{"id": "r", "via": "follows", "first": 1}, &p)
			held := *p.Node.Feed.PageInfo.EndCursor
			first := p.titles()[0]
			// Unfollow b, edit a3, delete a0: the held cursor goes on
			// with what is still there.
			s.mustDo(t, `mutation { deleteRelationship(startNodeId: "r", type: "follows", endNodeId: "b") }`, nil, nil)
			s.mustDo(t, `mutation($id: ID!) { updateArticle(id: $id, title: "a3 edited") { id } }`, map[string]any{"id": ids["a3"]}, nil)
			s.mustDo(t, `mutation($id: ID!) { deleteArticle(id: $id) }`, map[string]any{"id": ids["a0"]}, nil)
			s.mustDo(t, feedQuery, map[string]any{"id": "r", "via": "follows", "first": 10, "after": held}, &p)
			rest := p.titles()
			if first == "b4" && !slices.Equal(rest, []string{"a3 edited"}) || first == "a3" && len(rest) != 0 {
				t.Errorf("after %s, held across the changes: %v", first, rest)
			}
			if p.Node.Feed.PageInfo.HasNextPage || !p.Node.Feed.PageInfo.HasPreviousPage {
				t.Errorf("pageInfo after the held cursor: %+v", p.Node.Feed.PageInfo)
			}
			// Backward: the newest two of q's feed, by last.
			s.mustDo(t, feedQuery, map[string]any{"id": "q", "via": "follows", "last": 2}, &p)
			if got := p.titles(); len(got) != 2 || !p.Node.Feed.PageInfo.HasPreviousPage || p.Node.Feed.PageInfo.HasNextPage {
				t.Errorf("last 2 of q's feed: %v %+v", got, p.Node.Feed.PageInfo)
			}
			// Deleting an author with detach takes its articles out of
			// every feed.
			s.mustDo(t, `mutation { deleteNode(id: "a", detach: true) }`, nil, nil)
			if got := s.feedAll(t, "q", 3); !slices.Equal(got, []string{"b4", "b1"}) {
				t.Errorf("q's feed after deleting a: %v", got)
			}
		})
	}
}

// sameOrderedByTime reports whether got is want up to the order of
// articles posted in the same millisecond (which the feed orders by
// author): the same titles, each author's in want's order.
func sameOrderedByTime(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	byAuthor := func(l []string) map[byte][]string {
		m := map[byte][]string{}
		for _, s := range l {
			m[s[0]] = append(m[s[0]], s)
		}
		return m
	}
	g, w := byAuthor(got), byAuthor(want)
	for a := range w {
		if !slices.Equal(g[a], w[a]) {
			return false
		}
	}
	return len(g) == len(w)
}

// TestFeedRefusals: a type no feed is kept of, a malformed or foreign
// cursor, totalCount (which a feed has not) are the client's errors, in
// our words.
func TestFeedRefusals(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	s.createNode(t, "r", nil)
	s.createNode(t, "a", nil)
	s.createRel(t, "r", "follows", "a", nil)
	s.postArticle(t, "a", "t1", "b", "k")
	s.postArticle(t, "a", "t2", "b", "k")
	r := s.do(t, `{ node(id: "r") { feed(via: "likes") { edges { cursor } } } }`, nil)
	if r.wantError(t, "BAD_USER_INPUT", "node.feed") && !strings.Contains(r.Errors[0].Message, "follows") {
		t.Errorf("the refusal does not name the kept types: %s", r.Body)
	}
	var p feedPage
	s.mustDo(t, feedQuery, map[string]any{"id": "r", "via": "follows", "first": 1}, &p)
	r = s.do(t, feedQuery, map[string]any{"id": "a", "via": "follows", "first": 1, "after": *p.Node.Feed.PageInfo.EndCursor})
	r.wantError(t, "BAD_USER_INPUT", "node.feed")
	r = s.do(t, feedQuery, map[string]any{"id": "r", "via": "follows", "first": 1, "after": "bm90IGEgY3Vyc29y"})
	r.wantError(t, "BAD_USER_INPUT", "node.feed")
	r = s.do(t, feedQuery, map[string]any{"id": "r", "via": "follows", "first": 101})
	r.wantError(t, "BAD_USER_INPUT", "") // refused before it runs, as every page
	r = s.do(t, `{ node(id: "r") { feed { totalCount } } }`, nil)
	if r.Status == http.StatusOK && len(r.Errors) == 0 {
		t.Errorf("totalCount of a feed answered: %s", r.Body)
	}
	for _, e := range r.Errors {
		if strings.Contains(e.Message, "store.") || strings.Contains(e.Message, "keys.") {
			t.Errorf("a message names Go: %s", e.Message)
		}
	}

	off := startServer(t, "--feed-types", "")
	off.createNode(t, "r", nil)
	r = off.do(t, `{ node(id: "r") { feed { edges { cursor } } } }`, nil)
	r.wantError(t, "BAD_USER_INPUT", "node.feed")
}

// TestFeedNeedsTokenWhenReadsDo: --auth-read=required applies to feeds.
func TestFeedNeedsTokenWhenReadsDo(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, append(p.args(), "--auth-read", "required")...)
	q := `{ node(id: "r") { feed { edges { cursor } } } }`
	if r := s.as(t, "", q, nil); r.Status != http.StatusUnauthorized {
		t.Errorf("anonymous feed: %d %s", r.Status, r.Body)
	}
	s.as(t, p.user("alice"), q, nil).ok(t, nil)
}

// TestFeedPagesPastStaleRows: a page that meets more stale rows than one
// read checks (an unfollowed author's 150 posts) ends short, and paging on
// from its endCursor (or back from its startCursor) reaches the rest.
func TestFeedPagesPastStaleRows(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	for _, id := range []string{"r", "a", "b"} {
		s.createNode(t, id, nil)
	}
	s.createRel(t, "r", "follows", "a", nil)
	s.createRel(t, "r", "follows", "b", nil)
	s.postArticle(t, "a", "a0", "x", "k")
	var posts []string
	for i := range 150 {
		posts = append(posts, fmt.Sprintf(`postArticle(authorId: "b", title: "b%d", body: "x", category: "k") { id }`, i))
	}
	s.bulk(t, posts)
	s.postArticle(t, "a", "a1", "x", "k")
	s.mustDo(t, `mutation { deleteRelationship(startNodeId: "r", type: "follows", endNodeId: "b") }`, nil, nil)
	if got := s.feedAll(t, "r", 5); !slices.Equal(got, []string{"a1", "a0"}) {
		t.Errorf("forward: %v", got)
	}
	var got []string
	vars := map[string]any{"id": "r", "via": "follows", "last": 5}
	for range 100 {
		var p feedPage
		s.mustDo(t, feedQuery, vars, &p)
		got = append(p.titles(), got...)
		if !p.Node.Feed.PageInfo.HasPreviousPage {
			break
		}
		if p.Node.Feed.PageInfo.StartCursor == nil {
			t.Fatalf("hasPreviousPage without a startCursor, before %v", got)
		}
		vars["before"] = *p.Node.Feed.PageInfo.StartCursor
	}
	if !slices.Equal(got, []string{"a1", "a0"}) {
		t.Errorf("backward: %v", got)
	}
}
