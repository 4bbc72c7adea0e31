package tests

import (
	"strings"
	"testing"
)

// TestSubscriptionFeedOfPerCaller: one caller watches at most
// --subscriptions-feeds-per-caller distinct home feeds, across its
// sockets, so that it cannot take all of the replica's
// --subscriptions-feeds (review finding 3); another caller still can; a
// feed of an id with no node is refused with NOT_FOUND and takes no place.
func TestSubscriptionFeedOfPerCaller(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, append(p.args(), "--subscriptions-feeds", "4", "--subscriptions-feeds-per-caller", "2")...)
	for _, id := range []string{"r", "q", "o", "n"} {
		s.as(t, p.user("alice"), `mutation($id: ID!) { createNode(id: $id) { id } }`, map[string]any{"id": id}).ok(t, nil)
	}
	alice := map[string]any{"Authorization": "Bearer " + p.user("alice")}
	a1, a2 := connectWS(t, s, alice), connectWS(t, s, alice)
	a1.subscribe(feedOfSub, map[string]any{"r": "r"})
	a2.subscribe(feedOfSub, map[string]any{"r": "q"})
	a2.subscribe(feedOfSub, map[string]any{"r": "r"}) // a watched one: free
	waitSubscribed(t, s, 3)
	if errs := a1.errorsOf(a1.subscribe(feedOfSub, map[string]any{"r": "o"})); errs[0].Code() != "RATE_LIMITED" || !strings.Contains(errs[0].Message, "feeds-per-caller") {
		t.Errorf("alice's third feed: %+v", errs)
	}

	// Bob has room: a feed of no node is refused, and takes none of his
	// places nor the replica's (4: r, q, then o and n).
	bob := connectWS(t, s, map[string]any{"Authorization": "Bearer " + p.user("bob")})
	if errs := bob.errorsOf(bob.subscribe(feedOfSub, map[string]any{"r": "ghost"})); errs[0].Code() != "NOT_FOUND" {
		t.Errorf("the feed of no node: %+v", errs)
	}
	bob.subscribe(feedOfSub, map[string]any{"r": "o"})
	waitSubscribed(t, s, 4)
	n := bob.subscribe(feedOfSub, map[string]any{"r": "n"})
	waitSubscribed(t, s, 5)
	s.as(t, p.user("alice"), `mutation { createRelationship(startNodeId: "n", type: "follows", endNodeId: "q") { id } }`, nil).ok(t, nil)
	s.as(t, p.user("alice"), `mutation { postArticle(authorId: "q", title: "for n", body: "b", category: "k") { id } }`, nil).ok(t, nil)
	if title, _ := bob.feedEvent(n); title != "for n" {
		t.Errorf("n's feed got %q", title)
	}
}
