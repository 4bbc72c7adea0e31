package store

import (
	"errors"
	"testing"
)

// A create whose first try wrote its relationship (others may have read
// it) and whose answer was lost, retried once a deletion with detach has
// marked an end (the node it was made for) and not yet reached the
// relationship, came before that mark: success, and the deletion (or the
// retry) takes the relationship. The concurrent simulation found a reader
// that saw the relationship before the deletion began, and the retry
// answering NOT_FOUND.
func TestCreateRelationshipRetryAfterItsEndWasMarked(t *testing.T) {
	s := newTestStore(t)
	mustNode(t, s, "a", nil)
	mustNode(t, s, "b", nil)
	k := RelationshipKey{"a", "r", "b"}
	mine := WithOp(bg, DeriveOpID("alice", "key-1"))
	s.fault = crashAtPoint(pointRelationshipRecheck)
	if _, err := s.CreateRelationship(mine, k, nil); !errors.Is(err, errCrash) {
		t.Fatalf("the create cut short: %v", err)
	}
	if _, err := s.GetRelationship(bg, k); err != nil {
		t.Fatalf("the relationship, before the deletion: %v", err)
	}
	s.fault = crashAtPoint(pointNodeDetach)
	if err := s.DeleteNode(bg, "a", true); !errors.Is(err, errCrash) {
		t.Fatalf("the deletion cut short after its mark: %v", err)
	}
	s.fault = nil
	if _, err := s.CreateRelationship(mine, k, nil); err != nil {
		t.Errorf("the create retried: %v; want success (it came before the mark)", err)
	}
	if err := s.DeleteNode(bg, "a", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRelationship(bg, k); !errors.Is(err, ErrNotFound) {
		t.Errorf("the relationship after the deletion: %v", err)
	}
	checkGraphInvariants(t, s)
}
