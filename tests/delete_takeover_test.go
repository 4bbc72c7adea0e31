package tests

import (
	"strings"
	"testing"
)

// takeoverView is everything a node's new owner could see of what its
// id had before: its connections, articles, word counts, the old
// relationships by key and an old article by id.
const takeoverView = `query($n: ID!, $x: ID!, $article: ID!) {
	n: node(id: $n) { id owner
		fo: relationships(type: "follows", direction: OUTGOING) { totalCount edges { node { id } } }
		fi: relationships(type: "follows", direction: INCOMING) { totalCount edges { node { id } } }
		articles { totalCount edges { node { id title } } }
		diary: articles(category: "diary") { totalCount edges { node { id title } } }
		wordCounts(first: 100) { word count }
	}
	x: node(id: $x) { id
		fo: relationships(type: "follows", direction: OUTGOING) { totalCount edges { node { id } } }
		fi: relationships(type: "follows", direction: INCOMING) { totalCount edges { node { id } } }
	}
	nx: relationship(startNodeId: $n, type: "follows", endNodeId: $x) { id properties }
	xn: relationship(startNodeId: $x, type: "follows", endNodeId: $n) { id properties }
	article(id: $article) { id title body }
}`

type takeoverConn struct {
	TotalCount int `json:"totalCount"`
	Edges      []struct {
		Node struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"node"`
	} `json:"edges"`
}

type takeoverOut struct {
	N *struct {
		Owner                   *string
		Fo, Fi, Articles, Diary takeoverConn
		WordCounts              []wordCount
	}
	X *struct {
		Fo, Fi takeoverConn
	}
	NX, XN  *relOut
	Article *articleOut
}

// TestDeletedNodeIsNotTakenOver: alice's node, deleted with detach, takes
// its articles, word counts and relationships (carol's to it too) with
// it, so that bob, creating a node of the same id, owns none of them and
// can act on none of them. Without detach, a node with articles is
// refused like one with relationships.
func TestDeletedNodeIsNotTakenOver(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, p.args()...)
	alice, bob, carol := p.user("alice"), p.user("bob"), p.user("carol")

	s.as(t, alice, `mutation { createNode(id: "n", properties: {who: "alice"}) { id } }`, nil).ok(t, nil)
	s.as(t, carol, `mutation { createNode(id: "x") { id } }`, nil).ok(t, nil)
	s.as(t, alice, `mutation { createNode(id: "writer") { id } }`, nil).ok(t, nil)
	var post struct{ PostArticle articleOut }
	s.as(t, alice, `mutation { postArticle(authorId: "n", title: "secret plans", body: "alice alone knows", category: "diary") { id } }`, nil).ok(t, &post)
	article := post.PostArticle.ID
	s.as(t, alice, `mutation { postArticle(authorId: "n", title: "recipes", body: "bread", category: "food") { id } }`, nil).ok(t, nil)
	s.as(t, alice, `mutation { postArticle(authorId: "writer", title: "only words", body: "no edges", category: "c") { id } }`, nil).ok(t, nil)
	s.as(t, alice, `mutation { createRelationship(startNodeId: "n", type: "follows", endNodeId: "x") { id } }`, nil).ok(t, nil)
	s.as(t, carol, `mutation { createRelationship(startNodeId: "x", type: "follows", endNodeId: "n") { id } }`, nil).ok(t, nil)
	vars := map[string]any{"n": "n", "x": "x", "article": article}

	// Without detach: refused, for articles as for relationships, and
	// nothing changes.
	before := s.snapshot(t, alice, "n", "writer")
	for _, id := range []string{"n", "writer"} {
		r := s.as(t, alice, `mutation($id: ID!) { deleteNode(id: $id) }`, map[string]any{"id": id})
		if r.wantError(t, "CONFLICT", "deleteNode") && !strings.Contains(r.Errors[0].Message, "detach") {
			t.Errorf("deleteNode(%s) without detach: %q does not say to delete with detach", id, r.Errors[0].Message)
		}
	}
	if after := s.snapshot(t, alice, "n", "writer"); after != before {
		t.Errorf("a refused deleteNode changed the data:\nbefore %s\nafter  %s", before, after)
	}

	s.as(t, alice, `mutation { deleteNode(id: "n", detach: true) }`, nil).ok(t, nil)
	var created struct{ CreateNode struct{ Owner string } }
	s.as(t, bob, `mutation { createNode(id: "n") { id owner } }`, nil).ok(t, &created)
	if created.CreateNode.Owner != "bob" {
		t.Fatalf("bob's n is owned by %q", created.CreateNode.Owner)
	}

	var v takeoverOut
	s.as(t, bob, takeoverView, vars).ok(t, &v)
	if v.N == nil || v.X == nil {
		t.Fatalf("n or x missing: %+v", v)
	}
	for name, c := range map[string]takeoverConn{
		"n's articles": v.N.Articles, "n's diary": v.N.Diary, "n follows": v.N.Fo, "n's followers": v.N.Fi,
		"x follows": v.X.Fo, "x's followers": v.X.Fi,
	} {
		if c.TotalCount != 0 || len(c.Edges) != 0 {
			t.Errorf("%s after bob took the id: totalCount %d, %+v", name, c.TotalCount, c.Edges)
		}
	}
	if len(v.N.WordCounts) != 0 {
		t.Errorf("bob's n counts alice's words: %+v", v.N.WordCounts)
	}
	if v.NX != nil || v.XN != nil {
		t.Errorf("relationships of alice's n: %+v, %+v", v.NX, v.XN)
	}
	if v.Article != nil {
		t.Errorf("alice's article is still there: %+v", v.Article)
	}

	// Nothing of alice's can be acted on by bob through the id.
	for _, m := range []struct{ field, query string }{
		{"updateArticle", `mutation($id: ID!) { updateArticle(id: $id, title: "bob's now") { id } }`},
		{"deleteArticle", `mutation($id: ID!) { deleteArticle(id: $id) }`},
		{"updateRelationshipProperties", `mutation { updateRelationshipProperties(startNodeId: "n", type: "follows", endNodeId: "x", set: {by: "bob"}) { id } }`},
		{"deleteRelationship", `mutation { deleteRelationship(startNodeId: "n", type: "follows", endNodeId: "x") }`},
	} {
		s.as(t, bob, m.query, map[string]any{"id": article}).wantError(t, "NOT_FOUND", m.field)
	}
	// His own node works as any new one: counters from zero.
	s.as(t, bob, `mutation { postArticle(authorId: "n", title: "mine", body: "bob writes", category: "diary") { id } }`, nil).ok(t, nil)
	s.as(t, bob, takeoverView, vars).ok(t, &v)
	if v.N.Articles.TotalCount != 1 || len(v.N.Articles.Edges) != 1 || v.N.Articles.Edges[0].Node.Title != "mine" {
		t.Errorf("bob's articles: %+v", v.N.Articles)
	}
	if len(v.N.WordCounts) != 3 {
		t.Errorf("bob's word counts: %+v, want bob, mine and writes", v.N.WordCounts)
	}
}

// TestDetachTakesOthersRelationships: the rule for detach is that an edge
// never outlives either of its ends, so deleting a node with detach deletes
// the relationships that others' nodes have to it; they may not delete
// such a relationship otherwise.
func TestDetachTakesOthersRelationships(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, p.args()...)
	alice, bob := p.user("alice"), p.user("bob")
	s.as(t, alice, `mutation { createNode(id: "aliceN") { id } }`, nil).ok(t, nil)
	s.as(t, bob, `mutation { createNode(id: "bobN") { id } }`, nil).ok(t, nil)
	s.as(t, alice, `mutation { createRelationship(startNodeId: "aliceN", type: "follows", endNodeId: "bobN") { id } }`, nil).ok(t, nil)
	s.as(t, bob, `mutation { deleteRelationship(startNodeId: "aliceN", type: "follows", endNodeId: "bobN") }`, nil).
		wantError(t, "FORBIDDEN", "deleteRelationship")
	s.as(t, bob, `mutation { deleteNode(id: "bobN") }`, nil).wantError(t, "CONFLICT", "deleteNode")
	s.as(t, bob, `mutation { deleteNode(id: "bobN", detach: true) }`, nil).ok(t, nil)
	var got struct {
		Node struct {
			Relationships struct{ TotalCount int }
		}
		Relationship *relOut
	}
	s.as(t, alice, `{ node(id: "aliceN") { relationships(type: "follows", direction: OUTGOING) { totalCount } }
		relationship(startNodeId: "aliceN", type: "follows", endNodeId: "bobN") { id } }`, nil).ok(t, &got)
	if got.Node.Relationships.TotalCount != 0 || got.Relationship != nil {
		t.Errorf("alice's relationship to the deleted bobN outlived it: %+v", got)
	}
}
