package tests

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// deleteSnapshot reads everything the deletes below may touch, as one JSON
// text: the nodes, every connection of theirs with its count, the
// relationships by key, and hub's articles.
const deleteSnapshot = `fragment C on RelationshipConnection { totalCount edges { cursor node { id properties updatedAt } neighbor { id } } }
fragment N on Node {
	id properties updatedAt
	fo: relationships(type: "follows", direction: OUTGOING) { ...C }
	fi: relationships(type: "follows", direction: INCOMING) { ...C }
	lo: relationships(type: "likes", direction: OUTGOING) { ...C }
	li: relationships(type: "likes", direction: INCOMING) { ...C }
	articles { totalCount edges { cursor node { id title category updatedAt } } }
	tech: articles(category: "tech") { totalCount edges { node { id } } }
	wordCounts(first: 100) { word count }
}
query($hub: ID!, $a: ID!, $b: ID!, $c: ID!, $article: ID!) {
	hub: node(id: $hub) { ...N }
	a: node(id: $a) { ...N }
	b: node(id: $b) { ...N }
	c: node(id: $c) { ...N }
	hubA: relationship(startNodeId: $hub, type: "follows", endNodeId: $a) { id properties }
	cHub: relationship(startNodeId: $c, type: "follows", endNodeId: $hub) { id properties }
	aB: relationship(startNodeId: $a, type: "follows", endNodeId: $b) { id properties }
	article(id: $article) { id title }
}`

// counts is the part of the snapshot the checks below look at.
type counts struct {
	Hub, A, B, C *struct {
		Fo, Fi, Lo, Li relConn
		Articles       articleConn
		Tech           articleConn
		WordCounts     []wordCount
	}
	HubA, CHub, AB *relOut
	Article        *articleOut
}

func neighbors(c relConn) []string {
	out := []string{}
	for _, e := range c.Edges {
		out = append(out, e.Neighbor.ID)
	}
	return out
}

// checkConn checks a connection's totalCount and its neighbors, in order.
func checkConn(t *testing.T, what string, c relConn, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := neighbors(c); c.TotalCount != len(want) || !slices.Equal(got, want) {
		t.Errorf("%s: totalCount %d, neighbors %q; want %d, %q", what, c.TotalCount, got, len(want), want)
	}
}

// deleteFixture is one copy of the graph the deletes work on, its node ids
// prefixed so that subtests do not share data.
type deleteFixture struct {
	s            *server
	hub, a, b, c string
	kept, gone   articleOut
	vars         map[string]any
}

func newDeleteFixture(t *testing.T, s *server, prefix string) *deleteFixture {
	f := &deleteFixture{s: s, hub: prefix + "hub", a: prefix + "a", b: prefix + "b", c: prefix + "c"}
	for _, id := range []string{f.hub, f.a, f.b, f.c} {
		s.createNode(t, id, map[string]any{"name": id})
	}
	// Created oldest first, so connections list them in reverse.
	s.createRel(t, f.hub, "follows", f.a, map[string]any{"w": 1})
	s.createRel(t, f.hub, "follows", f.b, nil)
	s.createRel(t, f.c, "follows", f.hub, nil)
	s.createRel(t, f.hub, "likes", f.a, nil)
	s.createRel(t, f.a, "follows", f.b, nil)
	s.createRel(t, f.b, "follows", f.a, nil)
	s.createRel(t, f.hub, "likes", f.hub, nil) // a self-loop: two index rows of one node
	f.kept = s.postArticle(t, f.a, "Kept article", "kept words", "tech")
	f.gone = s.postArticle(t, f.a, "Deleted article", "gone words gone", "tech")
	f.vars = map[string]any{"hub": f.hub, "a": f.a, "b": f.b, "c": f.c, "article": f.gone.ID}
	return f
}

// snapshot reads deleteSnapshot: as compact JSON, and decoded.
func (f *deleteFixture) snapshot(t *testing.T) (string, counts) {
	t.Helper()
	r := f.s.do(t, deleteSnapshot, f.vars)
	var c counts
	r.ok(t, &c)
	if c.A == nil || c.B == nil || c.C == nil {
		t.Fatalf("a, b or c is missing: %s", r.Data)
	}
	return compactJSON(t, r.Data), c
}

// TestDeletes deletes a node with relationships (refused, then with
// detach), a relationship and an article, and reads that they are gone
// from everywhere.
func TestDeletes(t *testing.T) {
	parallelTest(t)
	s := startServer(t)

	t.Run("node without detach is refused", func(t *testing.T) {
		f := newDeleteFixture(t, s, "refused-")
		before, _ := f.snapshot(t)
		for _, q := range []string{
			`mutation($id: ID!) { deleteNode(id: $id) }`,
			`mutation($id: ID!) { deleteNode(id: $id, detach: false) }`,
		} {
			s.do(t, q, map[string]any{"id": f.hub}).wantError(t, "CONFLICT", "deleteNode")
			if after, _ := f.snapshot(t); after != before {
				t.Errorf("%s changed the data:\nbefore %s\nafter  %s", q, before, after)
			}
		}
	})

	t.Run("node with detach", func(t *testing.T) {
		f := newDeleteFixture(t, s, "detach-")
		var got struct{ DeleteNode string }
		s.mustDo(t, `mutation($id: ID!) { deleteNode(id: $id, detach: true) }`, map[string]any{"id": f.hub}, &got)
		if got.DeleteNode != f.hub {
			t.Errorf("deleteNode returned %q, want %q", got.DeleteNode, f.hub)
		}
		_, c := f.snapshot(t)
		if c.Hub != nil {
			t.Errorf("node(hub) after the delete = %+v, want null", c.Hub)
		}
		if c.HubA != nil || c.CHub != nil {
			t.Errorf("hub's relationships after the delete: %+v, %+v; want null", c.HubA, c.CHub)
		}
		checkConn(t, "a follows incoming", c.A.Fi, f.b)
		checkConn(t, "a likes incoming", c.A.Li)
		checkConn(t, "a follows outgoing", c.A.Fo, f.b)
		checkConn(t, "b follows incoming", c.B.Fi, f.a)
		checkConn(t, "b follows outgoing", c.B.Fo, f.a)
		checkConn(t, "c follows outgoing", c.C.Fo)

		// The id is free again, with no relationships and counters from 0.
		s.createNode(t, f.hub, nil)
		s.createRel(t, f.hub, "follows", f.c, nil)
		_, c = f.snapshot(t)
		if c.Hub == nil {
			t.Fatalf("node(hub) after creating it again = null")
		}
		checkConn(t, "new hub follows outgoing", c.Hub.Fo, f.c)
		checkConn(t, "new hub follows incoming", c.Hub.Fi)
		checkConn(t, "new hub likes outgoing", c.Hub.Lo)
		checkConn(t, "new hub likes incoming", c.Hub.Li)
		checkConn(t, "c follows incoming", c.C.Fi, f.hub)
	})

	t.Run("relationship", func(t *testing.T) {
		f := newDeleteFixture(t, s, "rel-")
		var got struct{ DeleteRelationship string }
		q := `mutation($a: ID!, $b: ID!) { deleteRelationship(startNodeId: $a, type: "follows", endNodeId: $b) }`
		ab := map[string]any{"a": f.a, "b": f.b}
		s.mustDo(t, q, ab, &got)
		_, c := f.snapshot(t)
		if c.AB != nil {
			t.Errorf("relationship(a follows b) after the delete = %+v, want null", c.AB)
		}
		if got.DeleteRelationship == "" {
			t.Errorf("deleteRelationship returned an empty id")
		}
		checkConn(t, "a follows outgoing", c.A.Fo)
		checkConn(t, "b follows incoming", c.B.Fi, f.hub)
		checkConn(t, "b follows outgoing", c.B.Fo, f.a) // the other direction stays
		checkConn(t, "a follows incoming", c.A.Fi, f.b, f.hub)
		s.do(t, q, ab).wantError(t, "NOT_FOUND", "deleteRelationship")
	})

	t.Run("cursor of a deleted edge", func(t *testing.T) {
		// A cursor names a position, not a row: paging goes on from it
		// after its relationship is gone.
		s.createNode(t, "p-star", nil)
		var fans []string // newest first
		for i := range 9 {
			fan := fmt.Sprintf("p-fan%d", i)
			s.createNode(t, fan, nil)
			s.createRel(t, fan, "follows", "p-star", nil)
			fans = append([]string{fan}, fans...)
			time.Sleep(2 * time.Millisecond) // distinct creation times: newest first is creation order
		}
		q := `query($first: Int, $after: String, $last: Int, $before: String) { node(id: "p-star") {
			relationships(type: "follows", direction: INCOMING, first: $first, after: $after, last: $last, before: $before) { ` + relConnFields + ` } } }`
		var page struct {
			Node struct{ Relationships relConn }
		}
		s.mustDo(t, q, map[string]any{"first": 3}, &page)
		if got, want := neighbors(page.Node.Relationships), fans[:3]; !slices.Equal(got, want) || page.Node.Relationships.TotalCount != 9 {
			t.Fatalf("first page: %q (totalCount %d), want %q (9)", got, page.Node.Relationships.TotalCount, want)
		}
		after := page.Node.Relationships.PageInfo.EndCursor
		s.mustDo(t, `mutation($s: ID!) { deleteRelationship(startNodeId: $s, type: "follows", endNodeId: "p-star") }`, map[string]any{"s": fans[2]}, nil)
		s.mustDo(t, `mutation($s: ID!) { deleteRelationship(startNodeId: $s, type: "follows", endNodeId: "p-star") }`, map[string]any{"s": fans[3]}, nil)

		var next struct {
			Node struct{ Relationships relConn }
		}
		s.mustDo(t, q, map[string]any{"first": 3, "after": *after}, &next)
		if got, want := neighbors(next.Node.Relationships), fans[4:7]; !slices.Equal(got, want) || next.Node.Relationships.TotalCount != 7 {
			t.Errorf("after the deleted edge's cursor: %q (totalCount %d), want %q (7)", got, next.Node.Relationships.TotalCount, want)
		}
		s.mustDo(t, q, map[string]any{"last": 3, "before": *after}, &next)
		if got, want := neighbors(next.Node.Relationships), fans[:2]; !slices.Equal(got, want) || next.Node.Relationships.PageInfo.HasPreviousPage {
			t.Errorf("before the deleted edge's cursor: %q, pageInfo %+v; want %q and no previous page", got, next.Node.Relationships.PageInfo, want)
		}
	})

	t.Run("article", func(t *testing.T) {
		f := newDeleteFixture(t, s, "article-")
		var got struct{ DeleteArticle string }
		q := `mutation($id: ID!) { deleteArticle(id: $id) }`
		s.mustDo(t, q, map[string]any{"id": f.gone.ID}, &got)
		if got.DeleteArticle != f.gone.ID {
			t.Errorf("deleteArticle returned %q, want %q", got.DeleteArticle, f.gone.ID)
		}
		_, c := f.snapshot(t)
		if c.Article != nil {
			t.Errorf("article(deleted) = %+v, want null", c.Article)
		}
		for _, conn := range []articleConn{c.A.Articles, c.A.Tech} {
			if conn.TotalCount != 1 || len(conn.Edges) != 1 || conn.Edges[0].Node.ID != f.kept.ID {
				t.Errorf("a's articles after the delete: %+v, want only %q, totalCount 1", conn, f.kept.ID)
			}
		}
		if want := topWords([]string{f.kept.Title, f.kept.Body}, 100); !slices.Equal(c.A.WordCounts, want) {
			t.Errorf("a's wordCounts after the delete = %v, want %v", c.A.WordCounts, want)
		}
		s.do(t, q, map[string]any{"id": f.gone.ID}).wantError(t, "NOT_FOUND", "deleteArticle")
	})
}
