package store

import (
	"testing"
)

// A node's create retried with its op after it applied (its answer lost)
// while relationships or articles of the node were written meanwhile:
// the retry found them (hasRemains), took them for an earlier node's
// remains and deleted them, though the row it found was its own, live
// node's. The concurrent replica simulation (seed 407 of a run on
// 50470e9, node n2) saw the retry then answer CONFLICT, a deletion of
// the node having marked it meanwhile; without one it answered success,
// the node's relationships and articles gone.
//
// Remains are removed only under a create's own mark: the one it wrote,
// or its earlier try's.
func TestCreateNodeRetriedKeepsWhatWasWrittenSince(t *testing.T) {
	s := newTestStore(t)
	op := WithOp(bg, DeriveOpID("alice", "key-1", "0", "createNode", "n"))
	if _, err := s.CreateNode(op, "n", "", Properties{"v": 1}); err != nil {
		t.Fatal(err)
	}
	mustNode(t, s, "a", nil)
	k := RelationshipKey{"a", "knows", "n"}
	if _, err := s.CreateRelationship(bg, k, nil); err != nil {
		t.Fatal(err)
	}
	art := mustPostArticle(t, s, "n", "hello", "hello world", "diary")

	// The caller's retry (its first answer lost).
	n, err := s.CreateNode(op, "n", "", Properties{"v": 1})
	if err != nil {
		t.Fatalf("the retry: %v, want success", err)
	}
	if n.ID != "n" {
		t.Errorf("the retry answered %+v", n)
	}
	if _, err := s.GetRelationship(bg, k); err != nil {
		t.Errorf("the relationship written after the create, after its retry: %v", err)
	}
	if _, err := s.getArticle(bg, art.ID); err != nil {
		t.Errorf("the article written after the create, after its retry: %v", err)
	}
	checkGraphInvariants(t, s)
	checkArticleInvariants(t, s)
}
