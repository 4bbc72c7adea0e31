package store

import (
	"errors"
	"fmt"
	"testing"
)

// A relationship's create racing the deletion without detach of one of
// its ends, the create cut short (UNAVAILABLE) and retried with its op.
// The concurrent replica simulation found (seed 44 of a run on 7fadaa6):
//
//  1. the create reads both ends live;
//  2. the deletion of the end finds nothing hanging from it, marks it
//     tentatively, finds nothing again, confirms its mark, and is cut
//     short before its detach;
//  3. the create writes its index rows and its row, and is cut short
//     before it reads its ends again (which would have found the mark
//     and taken the relationship back);
//  4. the deletion is finished (DeleteNode again): its detach finds the
//     relationship's index rows and deletes it, as its own op;
//  5. the create's retry finds its relationship deleted by somebody, and
//     answered success: a relationship created while its end had no
//     relationships, by the deletion's own answer.
//
// Now the create places intents on both ends before it writes, and a
// deletion without detach does not confirm its mark while one is there:
// either the deletion answers CONFLICT and the relationship is created,
// or the deletion comes first and the create answers NOT_FOUND. The test
// runs the deletion at every fault point of the create.
func TestCreateRelationshipRacesDeletionWithoutDetach(t *testing.T) {
	k := RelationshipKey{"a", "knows", "n"}
	op := WithOp(bg, DeriveOpID("alice", "key-1", "0", "createRelationship", k.ID()))
	create := func(s *Store) error {
		_, err := s.CreateRelationship(op, k, Properties{"v": 1})
		return err
	}
	probe := newTestStore(t)
	mustNode(t, probe, "a", nil)
	mustNode(t, probe, "n", nil)
	points := faultPoints(t, probe, func() error { return create(probe) })
	for i, point := range points {
		t.Run(fmt.Sprintf("%d-%s", i, point), func(t *testing.T) {
			s := newTestStore(t)
			mustNode(t, s, "a", nil)
			mustNode(t, s, "n", nil)
			seen, deleted := 0, false
			var deleteErr error
			s.fault = func(p string) error {
				seen++
				switch {
				case seen == i+1:
					// The deletion, cut short before its detach.
					hook := s.fault
					s.fault = crashAtPoint(pointNodeDetach)
					deleteErr = s.DeleteNode(bg, "n", false)
					s.fault = hook
					deleted = true
				case deleted && p == "degree-outgoing":
					return errCrash // the create, cut short
				}
				return nil
			}
			first := create(s)
			s.fault = nil
			if deleteErr != nil && !errors.Is(deleteErr, errCrash) && !errors.Is(deleteErr, ErrConflict) {
				t.Fatalf("the deletion: %v", deleteErr)
			}
			marked := errors.Is(deleteErr, errCrash)
			if marked {
				// Finished by another DeleteNode.
				if err := s.DeleteNode(bg, "n", false); err != nil {
					t.Fatalf("the deletion finished: %v", err)
				}
			}
			err := first
			if errors.Is(first, errCrash) {
				err = create(s) // the caller's retry
			}
			_, nerr := s.getNode(bg, "n")
			_, rerr := s.GetRelationship(bg, k)
			switch {
			case nerr == nil && (err != nil || rerr != nil):
				t.Errorf("n is there (the deletion: %v), and the create answered %v, the relationship reads %v; want success, and there", deleteErr, err, rerr)
			case nerr != nil && !errors.Is(err, ErrNotFound):
				t.Errorf("n was deleted without detach (first try: %v), and the create answered %v; want NOT_FOUND: it came after", first, err)
			}
			checkGraphInvariants(t, s)
			repairTwice(t, s)
			checkGraphInvariants(t, s)
		})
	}
}

// A relationship's create that wrote its row over the residue of another
// relationship of the key, which an end's deletion with detach had
// deleted (so after that deletion's mark), and whose row the same
// deletion then deleted too, came after the mark: NOT_FOUND, though
// somebody else deleted its row. The concurrent replica simulation found
// (seed 48, with the intents):
//
//  1. the create C reads both ends live and its row absent;
//  2. another create X of the key succeeds (and takes C's index rows
//     away: its row won);
//  3. the deletion D of the start with detach marks it, and its detach
//     deletes X (the row becomes X's residue, by D's op), and D is cut
//     short there;
//  4. C writes its index rows again, and its row over X's residue;
//  5. D is finished: its detach finds C's index rows and deletes C;
//  6. (the start is created again, or not;)
//  7. C reads its ends again, finds the start gone, and its row deleted by
//     somebody: it answered success, as if it had been there before D's
//     mark, which X's success and deletion by D rule out.
func TestCreateRelationshipOverAResidueOfItsEndsDeletion(t *testing.T) {
	for _, recreate := range []bool{false, true} {
		t.Run(fmt.Sprintf("recreate=%v", recreate), func(t *testing.T) {
			s := newTestStore(t)
			mustNode(t, s, "a", nil)
			mustNode(t, s, "b", nil)
			k := RelationshipKey{"a", "knows", "b"}
			var xErr, dErr error
			rowSeen := false
			s.fault = func(p string) error {
				hook := s.fault
				defer func() { s.fault = hook }()
				switch {
				case p == pointRelationshipRow && !rowSeen:
					rowSeen = true
					s.fault = nil
					_, xErr = s.CreateRelationship(bg, k, Properties{"v": 1})
					s.fault = crashAtPoint("unindex-outgoing")
					dErr = s.DeleteNode(bg, "a", true)
				case p == pointRelationshipRecheck:
					s.fault = nil
					if err := s.DeleteNode(bg, "a", true); err != nil {
						t.Errorf("the deletion finished: %v", err)
					}
					if recreate {
						mustNode(t, s, "a", nil)
					}
				}
				return nil
			}
			_, err := s.CreateRelationship(bg, k, Properties{"v": 2})
			s.fault = nil
			if xErr != nil || !errors.Is(dErr, errCrash) {
				t.Fatalf("the other create: %v; the deletion, cut short: %v", xErr, dErr)
			}
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("the create over X's residue, deleted by a's deletion: %v; want NOT_FOUND", err)
			}
			if _, err := s.GetRelationship(bg, k); !errors.Is(err, ErrNotFound) {
				t.Errorf("the relationship after: %v; want not found", err)
			}
			checkGraphInvariants(t, s)
			repairTwice(t, s)
		})
	}
}
