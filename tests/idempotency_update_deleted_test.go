package tests

import "testing"

// TestUpdateSentAgainAfterTheNodesDeletion: an updateNodeProperties sent
// again with its Idempotency-Key after the node was deleted (its first
// answer lost) applied before that deletion: it answers success, as the
// first did, not NOT_FOUND. (The store checked for a deletion before its
// own op in the row.)
func TestUpdateSentAgainAfterTheNodesDeletion(t *testing.T) {
	s := startServer(t)
	s.mustDo(t, `mutation { createNode(id: "ann", properties: {v: 1}) { id } }`, nil, nil)
	const update = `mutation { updateNodeProperties(id: "ann", set: {v: 2}) { id } }`
	s.withKey(t, update, nil, "key-1").ok(t, nil)
	s.mustDo(t, `mutation { deleteNode(id: "ann") }`, nil, nil)
	var again struct{ UpdateNodeProperties struct{ ID string } }
	s.withKey(t, update, nil, "key-1").ok(t, &again)
	if again.UpdateNodeProperties.ID != "ann" {
		t.Errorf("updateNodeProperties sent again with its key: %+v", again)
	}
	// Under another key it is another update, of a node that is gone.
	s.withKey(t, update, nil, "key-2").wantError(t, "NOT_FOUND", "updateNodeProperties")
}

// TestUpdateSentAgainAfterTheNodeWasCreatedAgain: the same update sent
// again after the node was deleted and created again by another request
// applies nothing to the new node (it applied to the old one).
func TestUpdateSentAgainAfterTheNodeWasCreatedAgain(t *testing.T) {
	s := startServer(t)
	s.mustDo(t, `mutation { createNode(id: "ann", properties: {v: 1}) { id } }`, nil, nil)
	const update = `mutation { updateNodeProperties(id: "ann", set: {v: 2}) { id } }`
	s.withKey(t, update, nil, "key-1").ok(t, nil)
	s.mustDo(t, `mutation { deleteNode(id: "ann") }`, nil, nil)
	s.mustDo(t, `mutation { createNode(id: "ann", properties: {v: 3}) { id } }`, nil, nil)
	s.withKey(t, update, nil, "key-1").ok(t, nil)
	var got struct {
		Node struct{ Properties map[string]any }
	}
	s.mustDo(t, `{ node(id: "ann") { properties } }`, nil, &got)
	if v := got.Node.Properties["v"]; v != float64(3) {
		t.Errorf("the node created again, after the update sent again: v = %v, want 3", v)
	}
}
