package tests

import "testing"

// TestCreateNodeSentAgainKeepsWhatHangsFromIt: a createNode sent again
// with its Idempotency-Key after relationships and articles of the node
// were written answers the node and deletes none of them. (The retry took
// them for what an earlier node of the id had left, and deleted them.)
func TestCreateNodeSentAgainKeepsWhatHangsFromIt(t *testing.T) {
	s := startServer(t)
	const create = `mutation { createNode(id: "ann", properties: {v: 1}) { id } }`
	s.withKey(t, create, nil, "key-1").ok(t, nil)
	s.mustDo(t, `mutation { createNode(id: "bob") { id } }`, nil, nil)
	s.mustDo(t, `mutation { createRelationship(startNodeId: "ann", type: "follows", endNodeId: "bob") { id } }`, nil, nil)
	s.mustDo(t, `mutation { postArticle(authorId: "ann", title: "Cats", body: "cats and dogs", category: "pets") { id } }`, nil, nil)

	var again struct{ CreateNode struct{ ID string } }
	s.withKey(t, create, nil, "key-1").ok(t, &again)
	if again.CreateNode.ID != "ann" {
		t.Errorf("createNode sent again with its key: %+v", again)
	}
	var got struct {
		Node struct {
			Relationships struct{ TotalCount int }
			Articles      struct{ TotalCount int }
		}
	}
	s.mustDo(t, `{ node(id: "ann") { relationships(type: "follows", direction: OUTGOING) { totalCount } articles(first: 10) { totalCount } } }`, nil, &got)
	if got.Node.Relationships.TotalCount != 1 || got.Node.Articles.TotalCount != 1 {
		t.Errorf("after createNode sent again: %d relationships, %d articles; want 1 and 1",
			got.Node.Relationships.TotalCount, got.Node.Articles.TotalCount)
	}
}
