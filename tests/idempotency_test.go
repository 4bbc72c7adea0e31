package tests

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// withKey posts query with the given Idempotency-Key header values (none:
// no header).
func (s *server) withKey(t *testing.T, query string, vars map[string]any, keys ...string) *gqlResponse {
	t.Helper()
	body, err := json.Marshal(gqlRequest{Query: query, Variables: vars})
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	for _, k := range keys {
		h.Add("Idempotency-Key", k)
	}
	return s.postRaw(t, body, h)
}

// TestIdempotencyKey: a mutation sent again with the same Idempotency-Key
// is the same write, applied once: createNode answers the node it created
// (not ALREADY_EXISTS), createRelationship the relationship, and the
// deletes success (not NOT_FOUND); under another key, or none, it is
// another write. Each field of an operation is its own write. A key that
// is not 1-255 printable ASCII characters is BAD_USER_INPUT and writes
// nothing; queries ignore the header.
func TestIdempotencyKey(t *testing.T) {
	s := startServer(t)
	const create = `mutation($id: ID!) { createNode(id: $id, properties: {v: 1}) { id createdAt properties } }`
	var first, again struct {
		CreateNode struct {
			ID, CreatedAt string
			Properties    map[string]any
		}
	}
	s.withKey(t, create, map[string]any{"id": "n1"}, "key-1").ok(t, &first)
	s.withKey(t, create, map[string]any{"id": "n1"}, "key-1").ok(t, &again)
	if again.CreateNode.ID != first.CreateNode.ID || again.CreateNode.CreatedAt != first.CreateNode.CreatedAt {
		t.Errorf("createNode sent again with its key: %+v, first %+v", again, first)
	}
	s.withKey(t, create, map[string]any{"id": "n1"}, "key-2").wantError(t, "ALREADY_EXISTS", "createNode")
	s.withKey(t, create, map[string]any{"id": "n1"}).wantError(t, "ALREADY_EXISTS", "createNode")

	// Two fields under one key are two writes; the operation sent again
	// is the same two.
	const two = `mutation { a: createNode(id: "x1") { id } b: createNode(id: "x2") { id } }`
	s.withKey(t, two, nil, "key-3").ok(t, nil)
	s.withKey(t, two, nil, "key-3").ok(t, nil)

	const rel = `mutation { createRelationship(startNodeId: "n1", type: "follows", endNodeId: "x1") { id } }`
	s.withKey(t, rel, nil, "key-4").ok(t, nil)
	s.withKey(t, rel, nil, "key-4").ok(t, nil)
	s.withKey(t, rel, nil, "key-5").wantError(t, "ALREADY_EXISTS", "createRelationship")
	// The edges, and the degree counter (its Increments carry nonces,
	// which the retry repeats).
	var deg struct {
		Node struct {
			Relationships struct {
				TotalCount int
				Edges      []any
			}
		}
	}
	const follows = `{ node(id: "n1") { relationships(type: "follows", direction: OUTGOING) { totalCount edges { node { id } } } } }`
	s.mustDo(t, follows, nil, &deg)
	if len(deg.Node.Relationships.Edges) != 1 || deg.Node.Relationships.TotalCount != 1 {
		t.Errorf("n1 follows %+v after one create sent twice", deg.Node.Relationships)
	}

	const unrel = `mutation { deleteRelationship(startNodeId: "n1", type: "follows", endNodeId: "x1") }`
	s.withKey(t, unrel, nil, "key-6").ok(t, nil)
	s.withKey(t, unrel, nil, "key-6").ok(t, nil)
	s.withKey(t, unrel, nil, "key-7").wantError(t, "NOT_FOUND", "deleteRelationship")
	deg.Node.Relationships.Edges = nil
	s.mustDo(t, follows, nil, &deg)
	if len(deg.Node.Relationships.Edges) != 0 || deg.Node.Relationships.TotalCount != 0 {
		t.Errorf("n1 follows %+v after the delete sent twice", deg.Node.Relationships)
	}

	const del = `mutation { deleteNode(id: "x2", detach: true) }`
	s.withKey(t, del, nil, "key-8").ok(t, nil)
	s.withKey(t, del, nil, "key-8").ok(t, nil)
	s.withKey(t, del, nil, "key-9").wantError(t, "NOT_FOUND", "deleteNode")

	for name, keys := range map[string][]string{
		"empty":      {""},
		"too long":   {strings.Repeat("k", 256)},
		"not ASCII":  {"clé"},
		"two values": {"key-a", "key-b"},
	} {
		r := s.withKey(t, create, map[string]any{"id": "bad"}, keys...)
		if !r.wantError(t, "BAD_USER_INPUT", "createNode") {
			t.Errorf("key %s", name)
		}
	}
	// A query: the header is the mutations'.
	s.withKey(t, `{ node(id: "bad") { id } }`, nil, strings.Repeat("k", 300)).ok(t, nil)
	var gone struct{ Node *struct{ ID string } }
	s.mustDo(t, `{ node(id: "bad") { id } }`, nil, &gone)
	if gone.Node != nil {
		t.Error("a refused key's createNode wrote the node")
	}
	s.withKey(t, create, map[string]any{"id": "ok"}, strings.Repeat("k", 255)).ok(t, nil)
}
