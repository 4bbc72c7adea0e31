package store

import (
	"errors"
	"testing"

	"github.com/hbgraph/hbgraph/store/hbasefault"
	"github.com/hbgraph/hbgraph/store/keys"
)

// An update whose compare-and-set gohbase re-sent after it applied (the
// re-send answers false) reads the row again to see whether its op is in
// xu. A deletion that marked the node in between made it answer
// NOT_FOUND, though it had applied before the mark and a read had seen
// it: node n3's history of seed 108 of the concurrent simulation (on
// 6f813ac), update -> NOT_FOUND after a read of its value. Its own op
// in the row is checked first: success, then the deletion.
func TestUpdateReSentAcrossADeletionsMark(t *testing.T) {
	db := openTestEngine(t, nil)
	fc := hbasefault.New(db)
	s, err := New(fc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustNode(t, s, "n", Properties{"v": 1})
	row := keys.Node("n")
	gets := 0
	fc.Add(hbasefault.Rule{Kind: hbasefault.CheckAndMutate, Table: keys.TableGraph, Nth: 1, Mode: hbasefault.ApplyTwice})
	fc.Add(hbasefault.Rule{Kind: hbasefault.Get, Table: keys.TableGraph, Match: func(_ string, r []byte) bool {
		if string(r) == string(row) {
			gets++
			if gets == 2 {
				// The re-read after the re-sent compare-and-set: a
				// deletion marks the node first (cut short after it).
				other.fault = crashAtPoint(pointNodeDetach)
				if err := other.DeleteNode(bg, "n", true); !errors.Is(err, errCrash) {
					t.Errorf("the deletion, cut short after its mark: %v", err)
				}
			}
		}
		return false
	}})
	op := WithOp(bg, DeriveOpID("alice", "key-1", "0", "updateNode", "n"))
	if _, err := s.UpdateNodeProperties(op, "n", Properties{"v": 2}, nil); err != nil {
		t.Errorf("the update, applied before the mark: %v, want success", err)
	}
	if gets < 2 {
		t.Fatalf("the update read the row %d times; the test needs its re-read", gets)
	}
	fc.Clear()
	// The caller's retry answers the same.
	if _, err := s.UpdateNodeProperties(op, "n", Properties{"v": 2}, nil); err != nil {
		t.Errorf("the update retried: %v, want success", err)
	}
}
