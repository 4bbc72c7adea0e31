package store

import (
	"errors"
	"testing"
)

// A relationship create C racing the deletion with detach of its start
// node a (D) and the creation of a new node of the same id (N), both run
// between C's first read of the ends and its intents (issue 23). When a
// was itself created over the residue of an earlier deletion, its mark x
// is the same before D and after N (cleared: zero), so the intent's
// compare-and-set on x applied to the new a, as if no deletion had marked
// the node C read; C then wrote its index rows under the new a, which
// listed them (Adjacent checks that the ends are live, not which nodes
// they are) until C's recheck took them back.
// The intent now compares the node's u, which every mark, deletion and
// creation moves on: C finds a created again and answers NOT_FOUND
// without writing anything.
func TestCreateRelationshipIntentOnANodeCreatedAgain(t *testing.T) {
	k := RelationshipKey{"a", "knows", "n"}
	opC := WithOp(bg, DeriveOpID("carol", "key-C", "0", "createRelationship", k.ID()))
	clk := newFakeClock()
	clk.step = 1
	ss := storesOnOneEngine(t, clk, 3)
	sc, sd, sn := ss[0], ss[1], ss[2]
	// a, created over the residue of an earlier a: its x is cleared.
	mustNode(t, sc, "a", nil)
	if err := sc.DeleteNode(bg, "a", false); err != nil {
		t.Fatal(err)
	}
	mustNode(t, sc, "a", nil)
	mustNode(t, sc, "n", nil)

	interleaved := false
	listed := 0
	sc.fault = func(p string) error {
		switch {
		case p == pointRelationshipClaim && !interleaved:
			interleaved = true
			if err := sd.DeleteNode(bg, "a", true); err != nil {
				t.Fatalf("D: %v", err)
			}
			if _, err := sn.CreateNode(bg, "a", "", nil); err != nil {
				t.Fatalf("N: %v", err)
			}
		case p == pointRelationshipRecheck:
			listed += adjacentCount(t, sn, "a", Outgoing) + adjacentCount(t, sn, "n", Incoming)
		}
		return nil
	}
	_, err := sc.CreateRelationship(opC, k, Properties{"by": "c"})
	sc.fault = nil
	if !interleaved {
		t.Fatal("the interleaving did not happen")
	}
	if listed > 0 {
		t.Errorf("the new a listed C's relationship %d times while C ran (C answered %v)", listed, err)
	}
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("C: %v, want NOT_FOUND (the a it read was deleted before its intent)", err)
	}
	if _, err := sn.GetRelationship(bg, k); !errors.Is(err, ErrNotFound) {
		t.Errorf("C's relationship read after all: %v, want NOT_FOUND", err)
	}
	checkGraphInvariants(t, sc)
	repairTwice(t, sc)
}

// adjacentCount is how many relationships of type knows node lists in
// direction dir.
func adjacentCount(t *testing.T, s *Store, node string, dir Direction) int {
	t.Helper()
	p, err := s.Adjacent(bg, node, "knows", dir, PageRequest{Size: 10})
	if err != nil {
		t.Fatalf("adjacent %s: %v", node, err)
	}
	return len(p.Relationships)
}
