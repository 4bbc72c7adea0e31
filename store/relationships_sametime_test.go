package store

import (
	"errors"
	"testing"
)

// Two creates of one relationship by different ops that chose the same
// creation time (both read the row before either wrote xp: on a replica
// whose clock is behind, both take the residue's time + 1; or the same
// millisecond) write the same index rows. One create's retry then took
// the rows of its earlier try's time for its own and deleted them, after
// the other create had written them and before its row won: a live
// relationship left with no index rows (the concurrent replica
// simulation, seed 4430 among others: "relationship ... has no outgoing
// index row"):
//
//  1. A reads the row (absent);
//  2. B's first try reads the row (absent), chooses the same time T,
//     writes xp and its index rows of T, and is cut short before its row;
//  3. A places its intents, writes xp and its index rows of T (the
//     same rows);
//  4. B's retry reads the row, A's xp, chooses T+1, and deletes the index
//     rows of its earlier try's time T (its intents name it): A's; and is
//     cut short again before its xp;
//  5. A's row wins, with T: its index rows are gone (deleted at T, which
//     hides them for good); A answers success.
func TestCreateRelationshipSameTimeAsAnother(t *testing.T) {
	k := RelationshipKey{"a", "knows", "b"}
	opA := createOp("alice", "key-A", k)
	opB := createOp("bob", "key-B", k)
	clk := newFakeClock() // frozen: every create chooses the same time
	ss := storesOnOneEngine(t, clk, 2)
	sa, sb := ss[0], ss[1]
	mustNode(t, sa, "a", nil)
	mustNode(t, sa, "b", nil)

	var bErrs []error
	aPending := 0
	sa.fault = func(p string) error {
		switch p {
		case "relationship-claim", pointRelationshipIntent:
			// A has read the row, and claimed nothing yet.
			aPending++
			if aPending == 1 {
				// 2. B's first try, cut short before its row.
				sb.fault = crashAtPoint(pointRelationshipRow)
				_, err := sb.CreateRelationship(opB, k, Properties{"by": "b"})
				bErrs = append(bErrs, err)
			}
		case pointRelationshipRow:
			if len(bErrs) == 1 {
				// 4. B's retry, cut short before its xp.
				sb.fault = crashAtPoint(pointRelationshipPending)
				_, err := sb.CreateRelationship(opB, k, Properties{"by": "b"})
				bErrs = append(bErrs, err)
			}
		}
		return nil
	}
	_, aerr := sa.CreateRelationship(opA, k, Properties{"by": "a"})
	sa.fault, sb.fault = nil, nil
	for i, err := range bErrs {
		if err != nil && !errors.Is(err, errCrash) {
			t.Logf("B's try %d: %v", i+1, err)
		}
	}
	// B's last retry, faults over.
	_, berr := sb.CreateRelationship(opB, k, Properties{"by": "b"})
	if (aerr == nil) == (berr == nil) {
		t.Errorf("A answered %v, B %v: want exactly one success", aerr, berr)
	}
	if _, err := sa.GetRelationship(bg, k); err != nil {
		t.Errorf("the relationship reads %v", err)
	}
	for _, dir := range []Direction{Outgoing, Incoming} {
		node := k.Start
		if dir == Incoming {
			node = k.End
		}
		page, err := sa.Adjacent(bg, node, k.Type, dir, PageRequest{Size: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Relationships) != 1 {
			t.Errorf("%s's %v index lists %d relationships, want 1", node, dir, len(page.Relationships))
		}
	}
	checkGraphInvariants(t, sa)
}
