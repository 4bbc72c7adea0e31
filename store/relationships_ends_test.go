package store

import (
	"errors"
	"testing"
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
			deleting := false
			s.fault = func(point string) error {
				if point == "unindex-outgoing" {
					deleting = true
				}
				if deleting && point == cut {
					return errCrash
				}
				return nil
			}
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
