package store

import (
	"errors"
	"testing"

	"github.com/hbgraph/hbgraph/store/hbasefault"
	"github.com/hbgraph/hbgraph/store/keys"
)

// A create whose first try made its relationship, counted it and cleared
// one of its intents, then lost the other's clearing (UNAVAILABLE), is
// retried; the retry finds its relationship live, and before its recheck
// another client deletes the relationship and then the end whose intent
// was cleared, without detach. That deletion found nothing hanging from
// the node because the relationship was deleted first, so the create came
// before both: success. The concurrent simulation (seed 804968) found the
// retry answering NOT_FOUND, as for a create that came after a deletion
// without detach, beside the deleteRelationship that had found the
// relationship there.
func TestCreateRelationshipRetryOfALiveRowDeletedThenItsEnd(t *testing.T) {
	s, fc, other := faultedStores(t)
	mustNode(t, s, "a", nil)
	mustNode(t, s, "b", nil)
	k := RelationshipKey{"a", "likes", "b"}
	mine := WithOp(bg, DeriveOpID("alice", "key-1"))

	// The first try: every write but the clearing of a's intent.
	aRow := keys.Node("a")
	fc.Add(hbasefault.Rule{Kind: hbasefault.Delete, Nth: 1, Mode: hbasefault.FailBefore,
		Match: func(table string, row []byte) bool { return string(row) == string(aRow) }})
	if _, err := s.CreateRelationship(mine, k, nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("the first try: %v, want UNAVAILABLE (a's intent not cleared)", err)
	}
	fc.Clear()

	// The retry; at its recheck, the relationship and then b go.
	var deleted, endDeleted error
	s.fault = func(point string) error {
		if point == pointRelationshipRecheck {
			deleted = other.DeleteRelationship(bg, k)
			endDeleted = other.DeleteNode(bg, "b", false)
		}
		return nil
	}
	_, err := s.CreateRelationship(mine, k, nil)
	s.fault = nil
	if deleted != nil || endDeleted != nil {
		t.Fatalf("deleting the relationship: %v; then b without detach: %v", deleted, endDeleted)
	}
	if err != nil {
		t.Errorf("the retry: %v; want success (the relationship was there until another client deleted it)", err)
	}
	if _, err := s.GetRelationship(bg, k); !errors.Is(err, ErrNotFound) {
		t.Errorf("the relationship afterwards: %v", err)
	}
	if err := other.DeleteNode(bg, "a", false); err != nil {
		t.Errorf("deleting a without detach afterwards (no intent left): %v", err)
	}
	checkGraphInvariants(t, s)
}
