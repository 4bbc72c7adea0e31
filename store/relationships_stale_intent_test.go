package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/hbgraph/hbgraph/store/hbasefault"
	"github.com/hbgraph/hbgraph/store/keys"
)

// A create's first try claims its row at a time, places its intents
// naming that time, and writes one index row of it before its other one
// fails; meanwhile its start was deleted and created again. Its second
// try, after another create's claim, claims a new time and places its
// intent on the new start over the first try's (which names the node
// deleted since): that intent named the first index row's time, and with
// it overwritten nothing did. The other create then makes the
// relationship, and the first one's retry, finding it, deleted only the
// index rows of the time its start's intent named: the first try's index
// row stayed, indexing nothing (the concurrent simulation, seed 822689;
// repair removed it). A create placing its intent over one of its own that
// names another time deletes that time's index rows first; and a retry
// that finds its relationship made by another deletes the index rows of
// the times both its intents name. With both ends deleted and created
// again, both intents are placed over, and the first alone saves it.
func TestCreateRelationshipPlacedOverItsStaleIntentLeavesNoIndexRow(t *testing.T) {
	for _, ends := range [][]string{{"a"}, {"a", "b"}} {
		t.Run(fmt.Sprint(ends), func(t *testing.T) { testPlacedOverStaleIntent(t, ends) })
	}
}

func testPlacedOverStaleIntent(t *testing.T, recreate []string) {
	s, fc, other := faultedStores(t)
	mustNode(t, s, "a", nil)
	mustNode(t, s, "b", nil)
	k := RelationshipKey{"a", "likes", "b"}
	mine := WithOp(bg, DeriveOpID("alice", "key-1"))
	theirs := WithOp(bg, DeriveOpID("bob", "key-1"))

	// The first try: its intents placed, the ends deleted and created
	// again, then its index row under b fails.
	recreated := false
	s.fault = func(point string) error {
		if point == pointRelationshipPending && !recreated {
			recreated = true
			for _, id := range recreate {
				if err := other.DeleteNode(bg, id, true); err != nil {
					return err
				}
				if _, err := other.CreateNode(bg, id, "", nil); err != nil {
					return err
				}
			}
		}
		return nil
	}
	bRow := keys.Node("b")
	fc.Add(hbasefault.Rule{Kind: hbasefault.Put, Nth: 1, Mode: hbasefault.FailBefore,
		Match: func(table string, row []byte) bool {
			a, err := keys.DecodeAdjacency(row)
			return err == nil && a.Node == "b" && string(row) != string(bRow)
		}})
	if _, err := s.CreateRelationship(mine, k, nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("the first try: %v, want UNAVAILABLE", err)
	}
	fc.Clear()
	s.fault = nil

	// The other create claims the row, and is cut short there.
	other.fault = crashAtPoint(pointRelationshipIntent)
	if _, err := other.CreateRelationship(theirs, k, nil); !errors.Is(err, errCrash) {
		t.Fatalf("the other create, cut short: %v", err)
	}
	other.fault = nil

	// The second try claims a new time and places its intent on the new
	// a; it is cut short before its index rows.
	s.fault = crashAtPoint(pointRelationshipPending)
	if _, err := s.CreateRelationship(mine, k, nil); !errors.Is(err, errCrash) {
		t.Fatalf("the second try, cut short: %v", err)
	}
	s.fault = nil

	// The other create's retry makes the relationship; the first one's
	// retry finds it.
	if _, err := other.CreateRelationship(theirs, k, nil); err != nil {
		t.Fatalf("the other create's retry: %v", err)
	}
	if _, err := s.CreateRelationship(mine, k, nil); !errors.Is(err, ErrAlreadyExists) {
		t.Errorf("the third try: %v, want ALREADY_EXISTS", err)
	}
	checkGraphInvariants(t, s)
	if report, err := s.Repair(bg); err != nil || len(report) != 0 {
		t.Errorf("repair: %v %v, want nothing to fix", report, err)
	}
}
