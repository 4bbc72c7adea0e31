package store

import (
	"errors"
	"strings"
	"testing"
	"time"

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

// A create's first try writes its row over the residue an end's deletion
// with detach left (that deletion marked the end first: the row comes
// after the mark), and is cut short at a count. Its retry finds the end
// marked and its row live; the other end's detach deletes the row before
// the retry takes it back. The create came after the mark, and nobody
// could read the row (an end marked): NOT_FOUND, whoever deleted the row.
// The concurrent simulation found the retry answering success (seed
// 847387), in this order:
//   - another create claims the key's creation time and pauses;
//   - this create reads the ends and the row (the other's claim in it),
//     claims a later time, places its intent on a;
//   - the other create finishes, and a's deletion with detach, on a
//     replica whose clock is behind, takes its relationship;
//   - this create places its intent on b, writes its row over that
//     residue (its time after the residue's), and its count fails.
func TestCreateRelationshipRetryOverADetachResidueDeletedByTheOtherEnd(t *testing.T) {
	clk := newFakeClock()
	clk.step = 1
	s, fc, other := faultedStoresOn(t, clk)
	// A replica whose clock is 5 s behind: its deletion's residue is
	// stamped before this create's time, which therefore writes over it.
	behind, err := New(fc.Inner(), Options{Clock: func() time.Time { return clk.Now().Add(-5 * time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	mustNode(t, s, "a", nil)
	mustNode(t, s, "b", nil)
	k := RelationshipKey{"a", "likes", "b"}
	mine := WithOp(bg, DeriveOpID("alice", "key-1"))

	claimed, resume := make(chan struct{}), make(chan struct{})
	var paused bool
	other.fault = func(point string) error {
		if point == pointRelationshipIntent && !paused {
			paused = true
			close(claimed)
			<-resume
		}
		return nil
	}
	otherDone := make(chan error, 1)
	go func() {
		_, err := other.CreateRelationship(bg, k, nil)
		otherDone <- err
	}()
	<-claimed

	var created, aDeleted error
	intents, incoming := 0, 0
	s.fault = func(point string) error {
		switch point {
		case pointRelationshipIntent:
			if intents++; intents == 2 {
				close(resume)
				created = <-otherDone
				aDeleted = behind.DeleteNode(bg, "a", true)
			}
		case "degree-incoming":
			if incoming++; incoming == 2 { // (the first: the residue's count)
				return ErrUnavailable
			}
		}
		return nil
	}
	_, err = s.CreateRelationship(mine, k, nil)
	s.fault = nil
	if intents != 2 || created != nil || aDeleted != nil {
		t.Fatalf("%d intents; the other create: %v; deleting a with detach: %v", intents, created, aDeleted)
	}
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("the first try: %v, want UNAVAILABLE (b's degree not counted)", err)
	}

	// The retry; at its first count, b goes with detach, taking the row.
	var bDeleted error
	deleteB := true
	s.fault = func(point string) error {
		if strings.HasPrefix(point, "degree-") && deleteB {
			deleteB = false
			bDeleted = other.DeleteNode(bg, "b", true)
		}
		return nil
	}
	_, err = s.CreateRelationship(mine, k, nil)
	s.fault = nil
	if bDeleted != nil || deleteB {
		t.Fatalf("deleting b with detach: %v (done: %v)", bDeleted, !deleteB)
	}
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("the retry: %v; want NOT_FOUND (its row came after a's mark)", err)
	}
	checkGraphInvariants(t, s)
}
