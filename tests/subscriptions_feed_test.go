package tests

import (
	"slices"
	"strings"
	"testing"
	"time"
)

const feedOfSub = `subscription($r: ID!) { articlePosted(feedOf: $r) { cursor node { id title author { id } } } }`

// feedEvent reads the next articlePosted(feedOf:) event of id: its title
// and cursor.
func (c *wsClient) feedEvent(id string) (title, cursor string) {
	c.t.Helper()
	var ev articlePostedData
	c.event(id, &ev)
	return ev.ArticlePosted.Node.Title, ev.ArticlePosted.Cursor
}

// TestSubscriptionFeedOf: articlePosted(feedOf: r) delivers the posts of
// the authors r follows when each is posted: fanned out or wide, followed
// before or after the subscription began, and no more after an unfollow;
// not those of others. Each event's cursor is the article's in r's
// Node.feed, and pages on from there as after:.
func TestSubscriptionFeedOf(t *testing.T) {
	parallelTest(t)
	// fan-out max 1: w, with two followers, is wide (merged at read
	// time, no feed rows); a and l are fanned out.
	s := startServer(t, "--feed-fanout-max", "1")
	for _, id := range []string{"r", "q", "a", "w", "l", "x"} {
		s.createNode(t, id, nil)
	}
	s.createRel(t, "r", "follows", "a", nil)
	s.createRel(t, "r", "follows", "w", nil)
	s.createRel(t, "q", "follows", "w", nil)
	s.createRel(t, "x", "follows", "r", nil) // the other way: not r's feed

	c := connectWS(t, s, nil)
	id := c.subscribe(feedOfSub, map[string]any{"r": "r"})
	waitSubscribed(t, s, 1)

	// One worker checks posts in order: an event that is missing shows
	// as the next one being a later post's.
	s.postArticle(t, "a", "a1", "b", "k")
	s.postArticle(t, "x", "x1", "b", "k") // x is not followed
	s.postArticle(t, "w", "w1", "b", "k") // wide
	s.createRel(t, "r", "follows", "l", nil)
	s.postArticle(t, "l", "l1", "b", "k") // followed after subscribing
	var cursors = map[string]string{}
	for _, want := range []string{"a1", "w1", "l1"} {
		title, cursor := c.feedEvent(id)
		if title != want {
			t.Fatalf("event %q, want %q", title, want)
		}
		cursors[title] = cursor
	}

	// Each cursor is the one Node.feed gives the article, and as after:
	// it returns what the feed has past it.
	var full feedPage
	s.mustDo(t, feedQuery, map[string]any{"id": "r", "via": "follows", "first": 20}, &full)
	for i, e := range full.Node.Feed.Edges {
		if cursors[e.Node.Title] != e.Cursor {
			t.Errorf("feed's cursor of %s differs from its event's", e.Node.Title)
		}
		var rest feedPage
		s.mustDo(t, feedQuery, map[string]any{"id": "r", "via": "follows", "first": 20, "after": cursors[e.Node.Title]}, &rest)
		if !slices.Equal(rest.titles(), full.titles()[i+1:]) {
			t.Errorf("feed after %s's event cursor: %v, want %v", e.Node.Title, rest.titles(), full.titles()[i+1:])
		}
	}
	if got := full.titles(); len(got) != 3 {
		t.Fatalf("feed %v", got)
	}

	// Unfollowed: no more of a's.
	s.mustDo(t, `mutation { deleteRelationship(startNodeId: "r", type: "follows", endNodeId: "a") }`, nil, nil)
	s.postArticle(t, "a", "a2", "b", "k")
	s.postArticle(t, "l", "l2", "b", "k")
	if title, _ := c.feedEvent(id); title != "l2" {
		t.Fatalf("after unfollowing a: event %q, want l2", title)
	}
	// A second subscriber of the same feed, and q's: each gets its own.
	id2 := c.subscribe(feedOfSub, map[string]any{"r": "r"})
	idQ := c.subscribe(feedOfSub, map[string]any{"r": "q"})
	waitSubscribed(t, s, 3)
	s.postArticle(t, "w", "w2", "b", "k")
	got := map[string]string{}
	for range 3 {
		m := c.read(10 * time.Second)
		if m.Type != "next" || !strings.Contains(string(m.Payload), `"w2"`) {
			t.Fatalf("want w2's event, got %s %s %s", m.Type, m.ID, m.Payload)
		}
		got[m.ID] = m.Type
	}
	if len(got) != 3 || got[id] == "" || got[id2] == "" || got[idQ] == "" {
		t.Fatalf("w2 delivered to %v, want %s, %s, %s", got, id, id2, idQ)
	}
	if m, err := c.tryRead(300 * time.Millisecond); err == nil {
		t.Fatalf("unexpected %+v", m)
	}
}

// TestSubscriptionFeedOfRefusals: exactly one of authorId and feedOf; a
// bad id; and feedOf on a server that keeps no feed of follows names the
// kept types. Each is BAD_USER_INPUT.
func TestSubscriptionFeedOfRefusals(t *testing.T) {
	parallelTest(t)
	s := startServer(t, "--feed-types", "likes")
	c := connectWS(t, s, nil)
	for _, tc := range []struct {
		query string
		vars  map[string]any
		says  string
	}{
		{`subscription { articlePosted(authorId: "a", feedOf: "b") { cursor } }`, nil, "exactly one"},
		{`subscription { articlePosted { cursor } }`, nil, "exactly one"},
		{feedOfSub, map[string]any{"r": ""}, "id"},
		{feedOfSub, map[string]any{"r": "r"}, "likes"},
	} {
		errs := c.errorsOf(c.subscribe(tc.query, tc.vars))
		if errs[0].Code() != "BAD_USER_INPUT" || !strings.Contains(errs[0].Message, tc.says) {
			t.Errorf("%s %v: %+v", tc.query, tc.vars, errs)
		}
		if strings.Contains(errs[0].Message, "store.") || strings.Contains(errs[0].Message, "events.") {
			t.Errorf("message in Go's words: %s", errs[0].Message)
		}
	}
	// The socket lives on: authorId alone still works.
	id := c.subscribe(articlePostedSub, map[string]any{"a": "ann"})
	waitSubscribed(t, s, 1)
	s.createNode(t, "ann", nil)
	s.postArticle(t, "ann", "one", "b", "k")
	var ev articlePostedData
	c.event(id, &ev)
}

// TestSubscriptionFeedOfAcrossReplicas: a post written on one replica
// reaches a feedOf subscriber on another over NATS; the receiving replica
// checks the follow in its own store (one each here, so b holds it).
func TestSubscriptionFeedOfAcrossReplicas(t *testing.T) {
	parallelTest(t)
	ns := startNATS(t)
	a := startServer(t, "--events-nats", ns.ClientURL())
	b := startServer(t, "--events-nats", ns.ClientURL())
	a.waitMetric(t, "hbgraph_events_nats_connected", 1)
	b.waitMetric(t, "hbgraph_events_nats_connected", 1)
	a.createNode(t, "ann", nil)
	for _, id := range []string{"ann", "rae"} {
		b.createNode(t, id, nil)
	}
	b.createRel(t, "rae", "follows", "ann", nil)
	onB := connectWS(t, b, nil)
	id := onB.subscribe(feedOfSub, map[string]any{"r": "rae"})
	waitSubscribed(t, b, 1)
	a.postArticle(t, "ann", "from a", "b", "k")
	if title, cursor := onB.feedEvent(id); title != "from a" || cursor == "" {
		t.Fatalf("on b: %q %q", title, cursor)
	}
}

// TestSubscriptionFeedOfLimits: feedOf is a subscription like the others
// for --auth-read=required (no token: 4401) and the caps, and past
// --subscriptions-feeds distinct feeds on the replica one more is refused
// with RATE_LIMITED (a second subscriber of a watched feed is not), and
// frees its place when it ends.
func TestSubscriptionFeedOfLimits(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, append(p.args(), "--auth-read", "required", "--subscriptions-feeds", "1", "--subscriptions-per-connection", "3")...)
	c := openWS(t, s, nil)
	c.subscribe(feedOfSub, map[string]any{"r": "r"})
	if code := c.closeStatus(10 * time.Second); code != 4401 {
		t.Fatalf("no token: closed with %d, want 4401", code)
	}
	for _, id := range []string{"r", "q"} { // a feed is a node's
		s.as(t, p.user("alice"), `mutation($id: ID!) { createNode(id: $id) { id } }`, map[string]any{"id": id}).ok(t, nil)
	}
	auth := map[string]any{"Authorization": "Bearer " + p.user("alice")}
	c = connectWS(t, s, auth)
	first := c.subscribe(feedOfSub, map[string]any{"r": "r"})
	second := c.subscribe(feedOfSub, map[string]any{"r": "r"})
	waitSubscribed(t, s, 2)
	if errs := c.errorsOf(c.subscribe(feedOfSub, map[string]any{"r": "q"})); errs[0].Code() != "RATE_LIMITED" {
		t.Fatalf("a second feed past --subscriptions-feeds 1: %+v", errs)
	}
	c.subscribe(articlePostedSub, map[string]any{"a": "ann"})
	waitSubscribed(t, s, 3)
	// The connection's cap counts feedOf too.
	if errs := c.errorsOf(c.subscribe(articlePostedSub, map[string]any{"a": "bob"})); errs[0].Code() != "RATE_LIMITED" {
		t.Fatalf("past --subscriptions-per-connection: %+v", errs)
	}
	// Both of r's end: q's feed may be watched.
	c.send(map[string]any{"id": first, "type": "complete"})
	c.send(map[string]any{"id": second, "type": "complete"})
	waitSubscribed(t, s, 1)
	c.subscribe(feedOfSub, map[string]any{"r": "q"})
	waitSubscribed(t, s, 2)
}
