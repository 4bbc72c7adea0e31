package tests

import (
	"encoding/json"
	"testing"
	"time"
)

// TestSubscriptionDetachDeletesRelationships: deleteNode(detach: true)
// publishes relationshipChanged DELETED for every relationship it takes
// with it, to the subscribers of both ends, once per relationship (a
// relationship from the node to itself too), with the cursor each had,
// and only once the deletion succeeded: a deletion refused publishes
// nothing, and relationships that do not touch the node are not reported.
func TestSubscriptionDetachDeletesRelationships(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	s.mustDo(t, `mutation {
		a: createNode(id: "a") { id } b: createNode(id: "b") { id } c: createNode(id: "c") { id }
		r1: createRelationship(startNodeId: "a", type: "follows", endNodeId: "b", properties: {w: 1}) { id }
		r2: createRelationship(startNodeId: "c", type: "likes", endNodeId: "a") { id }
		r3: createRelationship(startNodeId: "a", type: "follows", endNodeId: "a") { id }
		r4: createRelationship(startNodeId: "b", type: "follows", endNodeId: "c") { id }
	}`, nil, nil)
	c := connectWS(t, s, nil)
	relSub := `subscription($n: ID!, $t: String!, $d: Direction!) { relationshipChanged(nodeId: $n, type: $t, direction: $d) { kind cursor relationship { startNode { id } type endNode { id } properties } } }`
	type watch struct{ node, typ, dir string }
	watches := []watch{
		{"a", "follows", "OUTGOING"}, // a->b, a->a
		{"b", "follows", "INCOMING"}, // a->b
		{"a", "follows", "INCOMING"}, // a->a
		{"c", "likes", "OUTGOING"},   // c->a
		{"a", "likes", "INCOMING"},   // c->a
		{"b", "follows", "OUTGOING"}, // b->c: not a's, nothing
	}
	ids := map[string]watch{}
	// Each watch's cursors before the deletion, by relationship.
	cursors := map[string]map[string]string{}
	for _, w := range watches {
		id := c.subscribe(relSub, map[string]any{"n": w.node, "t": w.typ, "d": w.dir})
		ids[id] = w
		var page struct {
			Node struct {
				Relationships struct {
					Edges []struct {
						Cursor string
						Node   struct {
							StartNode struct{ ID string }
							EndNode   struct{ ID string }
						}
					}
				}
			}
		}
		s.mustDo(t, `query($n: ID!, $t: String!, $d: Direction!) { node(id: $n) { relationships(type: $t, direction: $d) { edges { cursor node { startNode { id } endNode { id } } } } } }`,
			map[string]any{"n": w.node, "t": w.typ, "d": w.dir}, &page)
		cursors[id] = map[string]string{}
		for _, e := range page.Node.Relationships.Edges {
			cursors[id][e.Node.StartNode.ID+">"+e.Node.EndNode.ID] = e.Cursor
		}
	}
	sentinel := c.subscribe(`subscription { nodeChanged(id: "c") { kind } }`, nil)
	waitSubscribed(t, s, len(watches)+1)

	// Refused (a has relationships): nothing published.
	if r := s.do(t, `mutation { deleteNode(id: "a") }`, nil); len(r.Errors) == 0 || r.Errors[0].Code() != "CONFLICT" {
		t.Fatalf("deleteNode without detach: %s", r.Body)
	}
	s.mustDo(t, `mutation { deleteNode(id: "a", detach: true) }`, nil, nil)
	s.mustDo(t, `mutation { updateNodeProperties(id: "c", set: {after: true}) { id } }`, nil, nil)

	want := map[string]map[string]bool{} // subscription id -> relationships it must see
	for id, w := range ids {
		want[id] = map[string]bool{}
		for rel := range cursors[id] {
			if w.node == "b" && w.dir == "OUTGOING" {
				continue // b->c survives
			}
			want[id][rel] = true
		}
	}
	for {
		m := c.read(10 * time.Second)
		if m.ID == sentinel {
			break
		}
		var p struct {
			Data struct {
				RelationshipChanged struct {
					Kind, Cursor string
					Relationship struct {
						StartNode  struct{ ID string }
						Type       string
						EndNode    struct{ ID string }
						Properties map[string]any
					}
				}
			}
		}
		if m.Type != "next" || json.Unmarshal(m.Payload, &p) != nil {
			t.Fatalf("message %s %s %s", m.Type, m.ID, m.Payload)
		}
		e := p.Data.RelationshipChanged
		rel := e.Relationship.StartNode.ID + ">" + e.Relationship.EndNode.ID
		if !want[m.ID][rel] {
			t.Fatalf("subscription %v got %s %s (not wanted, or twice): %s", ids[m.ID], e.Kind, rel, m.Payload)
		}
		delete(want[m.ID], rel)
		if e.Kind != "DELETED" || e.Cursor != cursors[m.ID][rel] {
			t.Errorf("subscription %v: %s %s cursor %s, want DELETED with %s", ids[m.ID], e.Kind, rel, e.Cursor, cursors[m.ID][rel])
		}
		if rel == "a>b" && e.Relationship.Properties["w"] != float64(1) {
			t.Errorf("a>b's properties: %v", e.Relationship.Properties)
		}
	}
	for id, rels := range want {
		if len(rels) > 0 {
			t.Errorf("subscription %v missed %v", ids[id], rels)
		}
	}
	if len(cursors) == 0 || len(cursors[firstID(ids, watch{"a", "follows", "OUTGOING"})]) != 2 {
		t.Fatalf("set-up: a's outgoing follows %v", cursors)
	}
}

func firstID[W comparable](ids map[string]W, w W) string {
	for id, v := range ids {
		if v == w {
			return id
		}
	}
	return ""
}
