package store

import (
	"errors"
	"testing"
)

// TestRelationshipDeletionCutShortIsFinishedByAnEndsDetach: a deletion of
// a relationship cut short at either of its counts, and never retried, is
// finished by the detach of an end's deletion; the end, created again,
// counts only what it has. Before, the index rows went before the counts,
// so the detach found nothing and the end's counter kept the count for
// good, adopted by the node created again (the replica simulation, seeds
// 887016, a node's detach cut short, and 892694, a deleteRelationship).
func TestRelationshipDeletionCutShortIsFinishedByAnEndsDetach(t *testing.T) {
	k := RelationshipKey{Start: "a", Type: "t", End: "b"}
	deletions := map[string]func(s *Store) error{
		"deleteRelationship": func(s *Store) error { return s.DeleteRelationship(WithOp(bg, DeriveOpID("test", "cut")), k) },
		"detach of b":        func(s *Store) error { return s.DeleteNode(WithOp(bg, DeriveOpID("test", "cut")), "b", true) },
	}
	for name, cutShort := range deletions {
		for _, cut := range []string{"degree-outgoing", "degree-incoming"} {
			for _, finisher := range []string{"a", "b"} {
				t.Run(name+"/"+cut+"/detach of "+finisher, func(t *testing.T) {
					s := newTestStore(t)
					mustNode(t, s, "a", nil)
					mustNode(t, s, "b", nil)
					mustRel(t, s, "a", "t", "b", nil)
					s.fault = crashAtPoint(cut)
					if err := cutShort(s); !errors.Is(err, errCrash) {
						t.Fatalf("%s, cut short at %s: %v", name, cut, err)
					}
					s.fault = nil
					if err := s.DeleteNode(bg, finisher, true); err != nil {
						t.Fatalf("delete %s with detach: %v", finisher, err)
					}
					// The finisher comes back and is related again, to c,
					// while the deletion cut short is left as it is.
					mustNode(t, s, finisher, nil)
					mustNode(t, s, "c", nil)
					d := DegreeKey{Node: "a", Dir: Outgoing, Type: "t"}
					if finisher == "a" {
						mustRel(t, s, "a", "t", "c", nil)
					} else {
						mustRel(t, s, "c", "t", "b", nil)
						d = DegreeKey{Node: "b", Dir: Incoming, Type: "t"}
					}
					if n, err := s.Degrees(bg, []DegreeKey{d}); err != nil || n[0] != 1 {
						t.Errorf("%+v = %v after one relationship, want 1 (%v)", d, n, err)
					}
					// Another client finishes whatever is left (b's
					// deletion, marked).
					if err := s.DeleteNode(bg, "b", true); err != nil {
						t.Fatalf("delete b: %v", err)
					}
					checkGraphInvariants(t, s)
				})
			}
		}
	}
}
