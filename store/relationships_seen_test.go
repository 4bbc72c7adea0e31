package store

import (
	"errors"
	"testing"
)

// A relationship create whose row replaced the residue of another
// relationship of the key (created and deleted by others after the
// create's first read), and was read by somebody, before an end's
// deletion with detach marked it: the create came before the mark, and
// answers success. Its recheck answered NOT_FOUND for any row written
// over another residue than the one its first read found ("not fresh"),
// though only a residue that the marking deletion itself left says the
// row came after the mark: relationship n2-knows->n3 of seed 558 of the
// concurrent simulation (on 6f813ac): create -> NOT_FOUND after a read
// had returned it, before the end's deletion began.
//
//  1. C reads both ends live and its row absent;
//  2. X creates the relationship, R deletes it (both succeed);
//  3. C writes its row over X's residue; a reader reads it;
//  4. D, a deletion of the end n with detach, marks n (and is cut short);
//  5. C reads its ends again and finds n marked by D.
func TestCreateRelationshipSeenBeforeItsEndsMark(t *testing.T) {
	k := RelationshipKey{"a", "knows", "n"}
	clk := newFakeClock()
	clk.step = 1
	db := openTestEngine(t, clk)
	newStore := func() *Store {
		s, err := New(db, Options{Clock: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sc, so := newStore(), newStore()
	mustNode(t, sc, "a", nil)
	mustNode(t, sc, "n", nil)
	interleaved := false
	var seen error
	var deleteErr error
	sc.fault = func(p string) error {
		switch {
		case p == pointRelationshipClaim && !interleaved:
			interleaved = true
			if _, err := so.CreateRelationship(bg, k, Properties{"by": "x"}); err != nil {
				t.Fatalf("X: %v", err)
			}
			if err := so.DeleteRelationship(bg, k); err != nil {
				t.Fatalf("R: %v", err)
			}
		case p == pointRelationshipRecheck:
			_, seen = so.GetRelationship(bg, k)
			so.fault = crashAtPoint(pointNodeDetach)
			deleteErr = so.DeleteNode(bg, "n", true)
			so.fault = nil
		}
		return nil
	}
	_, err := sc.CreateRelationship(bg, k, Properties{"by": "c"})
	sc.fault = nil
	if seen != nil {
		t.Fatalf("the relationship read before the mark: %v", seen)
	}
	if !errors.Is(deleteErr, errCrash) {
		t.Fatalf("D, cut short after its mark: %v", deleteErr)
	}
	if err != nil {
		t.Errorf("C, read by another before n's mark: %v; want success", err)
	}
	if err := so.DeleteNode(bg, "n", true); err != nil {
		t.Fatalf("D finished: %v", err)
	}
	checkGraphInvariants(t, sc)
	repairTwice(t, sc)
}
