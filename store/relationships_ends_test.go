package store

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/keys"
)

// TestCreateRelationshipRetryFinishesItsUndo: a create whose recheck finds
// an end deleted and created again meanwhile (so that the deletion's
// detach did not see it) takes its relationship back; if that is cut short
// after the row's deletion (UNAVAILABLE), the retry with the same op must
// finish it (index rows, degrees) before it answers NOT_FOUND, not leave
// the degrees counting a relationship whose index rows the next detach
// deletes alone (the replica simulation, seed 12).
func TestCreateRelationshipRetryFinishesItsUndo(t *testing.T) {
	for _, cut := range []string{"unindex-outgoing", "unindex-incoming", "degree-outgoing", "degree-incoming"} {
		t.Run(cut, func(t *testing.T) {
			s := newTestStore(t)
			mustNode(t, s, "a", nil)
			mustNode(t, s, "b", nil)
			k := RelationshipKey{Start: "a", Type: "t", End: "b"}
			ctx := WithOp(bg, DeriveOpID("test", "create", cut))
			recreated, undoing := false, false
			s.fault = func(point string) error {
				switch {
				case point == "index-outgoing" && !recreated:
					// Before the index rows: b deleted (nothing to detach
					// yet) and created again.
					recreated = true
					hook := s.fault
					s.fault = nil
					defer func() { s.fault = hook }()
					if err := s.DeleteNode(bg, "b", true); err != nil {
						t.Fatal(err)
					}
					mustNode(t, s, "b", nil)
				case point == pointRelationshipRecheck:
					undoing = true
				case undoing && point == cut:
					return errCrash
				}
				return nil
			}
			if _, err := s.CreateRelationship(ctx, k, nil); !errors.Is(err, errCrash) {
				t.Fatalf("create, cut short while undoing: %v", err)
			}
			s.fault = nil
			if _, err := s.CreateRelationship(ctx, k, nil); !errors.Is(err, ErrNotFound) {
				t.Fatalf("create retried: %v, want not found", err)
			}
			checkGraphInvariants(t, s)
			if _, err := s.GetRelationship(bg, k); !errors.Is(err, ErrNotFound) {
				t.Errorf("the relationship reads %v, want not found", err)
			}
		})
	}
}

// TestRelationshipDeletionFinishedByTheNextCreate: a deletion cut short
// after its row became a residue (its index rows and degree decrements
// still to do), whose residue a create and another deletion then replace,
// is finished by that create; its retry answers success, and the index
// rows and degrees agree (before: the old creation's index rows stayed,
// counted, and a detach later deleted them without counting them down;
// the replica simulation, seed 2).
func TestRelationshipDeletionFinishedByTheNextCreate(t *testing.T) {
	for _, cut := range []string{"unindex-outgoing", "unindex-incoming", "degree-outgoing", "degree-incoming"} {
		t.Run(cut, func(t *testing.T) {
			s := newTestStore(t)
			mustNode(t, s, "a", nil)
			mustNode(t, s, "b", nil)
			k := RelationshipKey{Start: "a", Type: "t", End: "b"}
			mustRel(t, s, "a", "t", "b", nil)
			del := WithOp(bg, DeriveOpID("test", "delete", cut))
			s.fault = crashAtPoint(cut)
			if err := s.DeleteRelationship(del, k); !errors.Is(err, errCrash) {
				t.Fatalf("delete, cut short: %v", err)
			}
			s.fault = nil
			mustRel(t, s, "a", "t", "b", nil)
			if err := s.DeleteRelationship(bg, k); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteRelationship(del, k); err != nil {
				t.Errorf("the first delete retried: %v, want success", err)
			}
			checkGraphInvariants(t, s)
			if err := s.DeleteNode(bg, "b", true); err != nil {
				t.Fatal(err)
			}
			checkGraphInvariants(t, s)
		})
	}
}

// TestRelationshipGoesWithItsEndsMark: a node's deletion takes its
// relationships with it when it marks the node, before its detach reaches
// them. From the mark on, the relationship reads as absent (read, both
// ends' pages) and its update and deletion are NOT_FOUND; the deletion,
// finished, leaves nothing. Before, all of them found it until the detach
// came (the replica simulation: histories not linearizable).
func TestRelationshipGoesWithItsEndsMark(t *testing.T) {
	for _, marked := range []string{"a", "b"} {
		t.Run("marked="+marked, func(t *testing.T) {
			s := newTestStore(t)
			mustNode(t, s, "a", nil)
			mustNode(t, s, "b", nil)
			mustNode(t, s, "c", nil)
			k := RelationshipKey{Start: "a", Type: "t", End: "b"}
			mustRel(t, s, "a", "t", "b", nil)
			mustRel(t, s, "c", "t", "b", nil) // b's other relationship
			s.fault = crashAtPoint(pointNodeDetach)
			if err := s.DeleteNode(bg, marked, true); !errors.Is(err, errCrash) {
				t.Fatalf("delete %s, cut short after its mark: %v", marked, err)
			}
			s.fault = nil
			if _, err := s.GetRelationship(bg, k); !errors.Is(err, ErrNotFound) {
				t.Errorf("read: %v, want not found", err)
			}
			for _, p := range []struct {
				node string
				dir  Direction
			}{{"a", Outgoing}, {"b", Incoming}} {
				page, err := s.Adjacent(bg, p.node, "t", p.dir, PageRequest{Size: 10})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range page.Relationships {
					if r.Key() == k {
						t.Errorf("%s's page lists %v", p.node, k)
					}
				}
			}
			if marked == "a" {
				// b's page keeps its relationship from c.
				page, err := s.Adjacent(bg, "b", "t", Incoming, PageRequest{Size: 10})
				if err != nil || len(page.Relationships) != 1 || page.Relationships[0].Start != "c" {
					t.Errorf("b's page: %+v, %v; want c's relationship", page.Relationships, err)
				}
			}
			if _, err := s.UpdateRelationshipProperties(bg, k, Properties{"x": "1"}, nil); !errors.Is(err, ErrNotFound) {
				t.Errorf("update: %v, want not found", err)
			}
			if err := s.DeleteRelationship(bg, k); !errors.Is(err, ErrNotFound) {
				t.Errorf("delete: %v, want not found", err)
			}
			if err := s.DeleteNode(bg, marked, true); err != nil {
				t.Fatalf("delete %s again: %v", marked, err)
			}
			checkGraphInvariants(t, s)
		})
	}
}

// TestCreateRelationshipLoserLeavesNoIndexRows: a create cut short after
// its index rows (UNAVAILABLE), before its row, whose relationship another
// create then makes, leaves no index rows behind, whether its retry comes
// before or after another create would overwrite its xp (before: its
// index rows stayed, counted by nothing; the replica simulation, seed 24).
func TestCreateRelationshipLoserLeavesNoIndexRows(t *testing.T) {
	for _, retried := range []bool{false, true} {
		t.Run(fmt.Sprintf("retried=%v", retried), func(t *testing.T) {
			clk := newFakeClock()
			clk.step = 1 // (the two creates' times differ, and so their index rows)
			s := newTestStoreWithClock(t, clk)
			mustNode(t, s, "a", nil)
			mustNode(t, s, "b", nil)
			k := RelationshipKey{Start: "a", Type: "t", End: "b"}
			loser := WithOp(bg, DeriveOpID("test", "loser"))
			s.fault = crashAtPoint(pointRelationshipRow)
			if _, err := s.CreateRelationship(loser, k, nil); !errors.Is(err, errCrash) {
				t.Fatalf("create, cut short before its row: %v", err)
			}
			s.fault = nil
			mustRel(t, s, "a", "t", "b", nil)
			if retried {
				if _, err := s.CreateRelationship(loser, k, nil); !errors.Is(err, ErrAlreadyExists) {
					t.Errorf("the first create retried: %v, want already exists", err)
				}
			}
			checkGraphInvariants(t, s)
		})
	}
}

// casAfter is a client that runs after, once, behind the next
// CheckAndMutate that succeeds.
type casAfter struct {
	gohbase.Client
	after func()
}

func (h *casAfter) CheckAndMutate(cam *hrpc.CheckAndMutate) (bool, error) {
	ok, err := h.Client.CheckAndMutate(cam)
	if f := h.after; f != nil && ok && err == nil {
		h.after = nil
		f()
	}
	return ok, err
}

// TestDeleteWithoutDetachSeenLiveUntilConfirmed: a deletion without
// detach marks its node tentatively: until it has checked again that
// nothing hangs from the node, the node reads as live and takes
// relationships; one created then (its create takes the tentative mark
// back) makes the deletion CONFLICT, and the node was never seen gone.
// Before, the mark hid the node at once, and a deletion that then found a
// relationship answered CONFLICT after readers and writers had found the
// node gone (the replica simulation: node and relationship histories not
// linearizable).
func TestDeleteWithoutDetachSeenLiveUntilConfirmed(t *testing.T) {
	db := openTestEngine(t, nil)
	hook := &casAfter{Client: db}
	deleter, err := New(hook, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustNode(t, s, "n", nil)
	mustNode(t, s, "m", nil)
	k := RelationshipKey{Start: "m", Type: "t", End: "n"}
	hook.after = func() { // right after the deletion's mark
		if _, err := s.getNode(bg, "n"); err != nil {
			t.Errorf("n read while its deletion checks it: %v, want live", err)
		}
		if _, err := s.CreateRelationship(bg, k, nil); err != nil {
			t.Errorf("a relationship to n while its deletion checks it: %v, want success", err)
		}
	}
	if err := deleter.DeleteNode(bg, "n", false); !errors.Is(err, ErrConflict) {
		t.Errorf("delete n without detach: %v, want conflict", err)
	}
	if _, err := s.getNode(bg, "n"); err != nil {
		t.Errorf("n after the deletion that failed: %v", err)
	}
	if _, err := s.GetRelationship(bg, k); err != nil {
		t.Errorf("the relationship after the deletion that failed: %v", err)
	}
	checkGraphInvariants(t, s)
	// Without anything hanging from it, the deletion confirms its mark.
	if err := s.DeleteRelationship(bg, k); err != nil {
		t.Fatal(err)
	}
	if err := deleter.DeleteNode(bg, "n", false); err != nil {
		t.Errorf("delete n: %v", err)
	}
	if _, err := s.getNode(bg, "n"); !errors.Is(err, ErrNotFound) {
		t.Errorf("n after its deletion: %v, want not found", err)
	}
}

// TestCreateRelationshipRetryAfterItsEndWasReplaced: a create cut short
// after its row, whose end was deleted (its detach deleting the index
// rows, written before the row) and created again meanwhile, is retried
// with the same op: the retry must not adopt the row for the new node (a
// relationship without index rows, or made for the old node: xe); it
// takes it back, NOT_FOUND. With the end replaced before the index rows
// (no detach finds them), the row records the old node (xe).
func TestCreateRelationshipRetryAfterItsEndWasReplaced(t *testing.T) {
	for _, replaced := range []string{pointRelationshipRow, "index-outgoing"} {
		t.Run(replaced, func(t *testing.T) { testCreateRetryAfterEndReplaced(t, replaced) })
	}
}

func testCreateRetryAfterEndReplaced(t *testing.T, replaced string) {
	s := newTestStore(t)
	mustNode(t, s, "a", nil)
	mustNode(t, s, "b", nil)
	k := RelationshipKey{Start: "a", Type: "t", End: "b"}
	ctx := WithOp(bg, DeriveOpID("test", "create"))
	done := false
	s.fault = func(point string) error {
		switch {
		case point == replaced && !done:
			done = true
			hook := s.fault
			s.fault = nil
			defer func() { s.fault = hook }()
			if err := s.DeleteNode(bg, "b", true); err != nil {
				t.Fatal(err)
			}
			mustNode(t, s, "b", nil)
		case point == pointRelationshipRecheck:
			return errCrash
		}
		return nil
	}
	if _, err := s.CreateRelationship(ctx, k, nil); !errors.Is(err, errCrash) {
		t.Fatalf("create, cut short before its recheck: %v", err)
	}
	s.fault = nil
	if _, err := s.CreateRelationship(ctx, k, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("create retried: %v, want not found", err)
	}
	checkGraphInvariants(t, s)
	if _, err := s.GetRelationship(bg, k); !errors.Is(err, ErrNotFound) {
		t.Errorf("the relationship reads %v, want not found", err)
	}
}

// TestDetachFinishesADeletionCutShort: a relationship's deletion by an
// end's detach, cut short after its row became a residue and before its
// decrements, whose index row another sweep then finds (removeIndexed, as
// another detach does), is finished there (its decrements, as its op),
// not only unindexed: nothing else would count it down once its index
// rows are gone (the replica simulation, seed 110).
func TestDetachFinishesADeletionCutShort(t *testing.T) {
	s := newTestStore(t)
	mustNode(t, s, "a", nil)
	mustNode(t, s, "b", nil)
	mustRel(t, s, "a", "t", "b", nil)
	s.fault = crashAtPoint("degree-incoming")
	if err := s.DeleteNode(bg, "b", true); !errors.Is(err, errCrash) {
		t.Fatalf("delete b, cut short in its detach: %v", err)
	}
	s.fault = nil
	r := adjacencyOf("b")
	rows, err := s.scan(bg, r)
	if err != nil || len(rows) != 1 {
		t.Fatalf("b's index rows: %d, %v; want the one left", len(rows), err)
	}
	a, err := keys.DecodeAdjacency(rows[0].key)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.removeIndexed(WithOp(bg, DeriveOpID("test", "sweep")), a, rows[0].ts); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteNode(bg, "b", true); err != nil {
		t.Fatalf("delete b again: %v", err)
	}
	checkGraphInvariants(t, s)
}

// TestRelationshipOfAReplacedEndReadsAbsent: a create whose end is deleted
// and created again between its first read and its row writes a row for
// the old node; until its recheck takes it back, that row must not read as
// a relationship of the new node (xe, the ends' creation times).
func TestRelationshipOfAReplacedEndReadsAbsent(t *testing.T) {
	s := newTestStore(t)
	mustNode(t, s, "a", nil)
	mustNode(t, s, "b", nil)
	k := RelationshipKey{Start: "a", Type: "t", End: "b"}
	s.fault = func(point string) error {
		hook := s.fault
		s.fault = nil
		defer func() { s.fault = hook }()
		switch point {
		case pointRelationshipRow:
			if err := s.DeleteNode(bg, "b", true); err != nil {
				t.Fatal(err)
			}
			mustNode(t, s, "b", nil)
		case pointRelationshipRecheck:
			if _, err := s.GetRelationship(bg, k); !errors.Is(err, ErrNotFound) {
				t.Errorf("the old b's relationship read with the new b: %v, want not found", err)
			}
			if _, err := s.UpdateRelationshipProperties(bg, k, Properties{"x": "1"}, nil); !errors.Is(err, ErrNotFound) {
				t.Errorf("its update: %v, want not found", err)
			}
		}
		return nil
	}
	if _, err := s.CreateRelationship(bg, k, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("create: %v, want not found", err)
	}
	s.fault = nil
	checkGraphInvariants(t, s)
}

// TestCreateAfterAPendingCreateOfTheSameTime: a create cut short after its
// index rows, which an end's detach then deletes (a delete marker at their
// time or later), is followed by another create in the same millisecond:
// that one's index rows must not take the same key, which the marker
// would hide (a relationship without index rows).
func TestCreateAfterAPendingCreateOfTheSameTime(t *testing.T) {
	clk := newFakeClock() // frozen: every create is in the same millisecond
	s := newTestStoreWithClock(t, clk)
	s.clockWait = 10 * time.Millisecond
	mustNode(t, s, "a", nil)
	mustNode(t, s, "b", nil)
	k := RelationshipKey{Start: "a", Type: "t", End: "b"}
	s.fault = crashAtPoint(pointRelationshipRow)
	if _, err := s.CreateRelationship(WithOp(bg, DeriveOpID("test", "first")), k, nil); !errors.Is(err, errCrash) {
		t.Fatalf("create, cut short before its row: %v", err)
	}
	s.fault = nil
	if err := s.DeleteNode(bg, "b", true); err != nil {
		t.Fatal(err)
	}
	mustNode(t, s, "b", nil)
	mustRel(t, s, "a", "t", "b", nil)
	checkGraphInvariants(t, s)
}
