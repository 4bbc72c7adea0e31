package tests

import (
	"strings"
	"testing"
)

// TestIdempotencyKeyDeleteSentAgainLate: a deleteNode or
// deleteRelationship sent again with its Idempotency-Key (a client whose
// answer was lost) after the id was created and deleted again many times
// since (more than a deleted row remembers: 8) answers success and deletes
// nothing more: never the node or relationship created since, someone
// else's. Before, the late retry took the live one for its own and
// deleted it.
func TestIdempotencyKeyDeleteSentAgainLate(t *testing.T) {
	s := startServer(t)
	const cycles = 9
	for _, tc := range []struct {
		name, create, del, read string
	}{
		{
			name:   "deleteNode",
			create: `mutation($v: Int!) { createNode(id: "n", properties: {v: $v}) { id } }`,
			del:    `mutation { deleteNode(id: "n", detach: true) }`,
			read:   `{ node(id: "n") { properties } }`,
		},
		{
			name:   "deleteRelationship",
			create: `mutation($v: Int!) { createRelationship(startNodeId: "a", type: "knows", endNodeId: "b", properties: {v: $v}) { id } }`,
			del:    `mutation { deleteRelationship(startNodeId: "a", type: "knows", endNodeId: "b") }`,
			read:   `{ node(id: "a") { relationships(type: "knows", direction: OUTGOING) { edges { node { properties } } } } }`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.mustDo(t, `mutation { a: createNode(id: "a") { id } b: createNode(id: "b") { id } }`, nil, nil)
			t.Cleanup(func() {
				s.mustDo(t, `mutation { a: deleteNode(id: "a", detach: true) b: deleteNode(id: "b", detach: true) }`, nil, nil)
			})
			s.mustDo(t, tc.create, map[string]any{"v": 0}, nil)
			key := "late-" + tc.name
			s.withKey(t, tc.del, nil, key).ok(t, nil)
			for i := 1; i <= cycles; i++ {
				s.mustDo(t, tc.create, map[string]any{"v": i}, nil)
				s.mustDo(t, tc.del, nil, nil)
			}
			s.mustDo(t, tc.create, map[string]any{"v": 100}, nil)
			s.withKey(t, tc.del, nil, key).ok(t, nil)
			var got map[string]any
			s.mustDo(t, tc.read, nil, &got)
			if want := `"v":100`; !strings.Contains(string(mustJSON(t, got)), want) {
				t.Errorf("after %s sent again late with its key: %s; want the one created last (%s) still there", tc.name, mustJSON(t, got), want)
			}
		})
	}
}
