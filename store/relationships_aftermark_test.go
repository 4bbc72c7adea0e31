package store

import (
	"errors"
	"testing"
)

// A relationship create cut short after it wrote its row over the residue
// that an end's deletion with detach left (it took another relationship
// of the key, after its mark), and whose row the same deletion then took
// too, came after that mark: its retry, which finds the end gone, answers
// NOT_FOUND, as its recheck would have (CreateRelationship's afterMark).
// It answered success: the concurrent replica simulation (seed 629 of a
// run on db7b75a, relationship n0-knows->n2) found
//
//  1. C reads both ends live and its row absent, claims a time and
//     places its intents;
//  2. X creates the relationship, and succeeds;
//  3. D deletes the end n with detach: marks it, its detach deletes X,
//     and it is cut short;
//  4. C's row, hidden behind X's residue, is written at a later time,
//     over it; C is cut short before it reads its ends again;
//  5. D is finished: its detach finds C's index rows, and deletes C;
//  6. C's retry finds n gone and its row created by its op and deleted by
//     another: success. But X succeeded between C's first read and D's
//     mark, and C's row came after X's deletion: C cannot be placed
//     before the mark, and n was never live again after it.
func TestCreateRelationshipRetriedAfterItsEndsDetach(t *testing.T) {
	k := RelationshipKey{"a", "knows", "n"}
	opC := createOp("carol", "key-C", k)
	ss := steppedStores(t, 3)
	sc, sx, sd := ss[0], ss[1], ss[2]
	mustNode(t, sc, "a", nil)
	mustNode(t, sc, "n", nil)

	interleaved := false
	var deleteErr error
	sc.fault = func(p string) error {
		switch {
		case p == pointRelationshipPending && !interleaved:
			interleaved = true
			// 2. X, then 3. D cut short after its detach.
			if _, err := sx.CreateRelationship(bg, k, Properties{"by": "x"}); err != nil {
				t.Fatalf("X: %v", err)
			}
			sd.fault = crashAtPoint(pointNodeArticles)
			deleteErr = sd.DeleteNode(bg, "n", true)
			sd.fault = nil
		case p == pointRelationshipRecheck:
			return errCrash // 4. C cut short after its row
		}
		return nil
	}
	_, first := sc.CreateRelationship(opC, k, Properties{"by": "c"})
	sc.fault = nil
	if !errors.Is(deleteErr, errCrash) {
		t.Fatalf("D, cut short after its detach: %v", deleteErr)
	}
	// C's first try answers NOT_FOUND when it re-stamps its intents
	// (restampIntent: n is marked), before step 4; a try that goes on to
	// write its row is cut short after it.
	if !errors.Is(first, errCrash) && !errors.Is(first, ErrNotFound) {
		t.Fatalf("C's first try: %v, want NOT_FOUND, or cut short after its row", first)
	}
	// 5. D finished.
	if err := sd.DeleteNode(bg, "n", true); err != nil {
		t.Fatalf("D finished: %v", err)
	}
	// 6. C's retry.
	if _, err := sc.CreateRelationship(opC, k, Properties{"by": "c"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("C retried: %v; want NOT_FOUND (its row came after n's mark)", err)
	}
	checkGraphInvariants(t, sc)
	repairTwice(t, sc)
}
