package tests

import (
	"fmt"
	"slices"
	"testing"
)

// TestFeedPageChecksFifteenTimesItsSize: a page reads past stale rows up
// to about 15 times its size (4 rounds, each twice the one before), as the
// README says: 40 posts of an unfollowed author above two live ones, and a
// page of 2 still finds both.
func TestFeedPageChecksFifteenTimesItsSize(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	for _, id := range []string{"r", "a", "b"} {
		s.createNode(t, id, nil)
	}
	s.createRel(t, "r", "follows", "a", nil)
	s.createRel(t, "r", "follows", "b", nil)
	s.postArticle(t, "a", "a0", "x", "k")
	s.postArticle(t, "a", "a1", "x", "k")
	var posts []string
	for i := range 40 {
		posts = append(posts, fmt.Sprintf(`postArticle(authorId: "b", title: "b%d", body: "x", category: "k") { id }`, i))
	}
	s.bulk(t, posts)
	s.mustDo(t, `mutation { deleteRelationship(startNodeId: "r", type: "follows", endNodeId: "b") }`, nil, nil)
	var p feedPage
	s.mustDo(t, feedQuery, map[string]any{"id": "r", "via": "follows", "first": 2}, &p)
	if got := p.titles(); !slices.Equal(got, []string{"a1", "a0"}) || p.Node.Feed.PageInfo.HasNextPage {
		t.Errorf("first page: %v, hasNextPage %v", got, p.Node.Feed.PageInfo.HasNextPage)
	}
}
