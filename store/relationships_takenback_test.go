package store

import (
	"errors"
	"testing"
)

// A relationship create C whose row replaced the residue of another
// create D that took its own row back having answered success (its
// recheck found the start a marked by a deletion with detach, so D's
// relationship was there up to that mark), C cut short after its row,
// and retried once a's deletion has finished (its detach took C's row).
// C's row came after a's mark, the mark of the node C read: C answers
// NOT_FOUND. It answered success beside D's (the concurrent replica
// simulation, seed 452, traced on 7034650: relationship n0-knows->n3,
// two creates answered success with no deletion between them): the
// retry, finding its row deleted by another, checked the residue its row
// replaced for an end's detach (overEndDeletion) but not for a create's
// taking back (TestCreateRelationshipRetryOverATakenBackRow is the same
// race retried while a is still marked: the recheck's byMarker).
//
// Now a create about to write over the residue of a create that took its
// row back reads its ends again first (checkEndsOverTakenBack): that
// create found an end marked or gone, and if it is one this create read,
// this one comes after the mark too: NOT_FOUND before it writes its row.
func TestCreateRelationshipOverATakenBackRowRetriedAfterTheDeletion(t *testing.T) {
	k := RelationshipKey{"a", "knows", "b"}
	opC := createOp("carol", "key-C", k)
	opD := createOp("dave", "key-D", k)
	ss := steppedStores(t, 3)
	sc, sd, se := ss[0], ss[1], ss[2]
	mustNode(t, sd, "a", nil)
	mustNode(t, sd, "b", nil)
	hooked := false
	var created error
	sc.fault = func(p string) error {
		switch {
		case p == pointRelationshipRow && !hooked:
			hooked = true
			// C has its intents and index rows. D creates the
			// relationship; before D's recheck, a's deletion with detach
			// marks a (its detach cut short): D takes its row back and
			// answers success.
			sd.fault = detachCutShortAtRecheck(t, se, "a")
			_, created = sd.CreateRelationship(opD, k, Properties{"by": "d"})
			sd.fault = nil
		case p == pointRelationshipRecheck:
			return errCrash // C's row is written over D's, and counted
		}
		return nil
	}
	_, first := sc.CreateRelationship(opC, k, Properties{"by": "c"})
	sc.fault = nil
	if created != nil {
		t.Fatalf("D's create: %v", created)
	}
	if first != nil && !errors.Is(first, errCrash) && !errors.Is(first, ErrNotFound) {
		t.Fatalf("C's first try: %v", first)
	}
	// a's deletion finished: its detach takes C's row, if C wrote it.
	if err := se.DeleteNode(bg, "a", true); err != nil {
		t.Fatalf("delete a, finished: %v", err)
	}
	if errors.Is(first, errCrash) {
		_, first = sc.CreateRelationship(opC, k, Properties{"by": "c"})
	}
	if !errors.Is(first, ErrNotFound) {
		t.Errorf("C answered %v, want NOT_FOUND: D's relationship was there until a's mark, and C's row came after it", first)
	}
	checkGraphInvariants(t, sc)
	repairTwice(t, sc)
}
