package store

import (
	"errors"
	"testing"

	"github.com/hbgraph/hbgraph/store/keys"
)

// TestSlowCreateNodeLeavesTheNextNodesRelationships: a CreateNode that
// finds what an earlier node of its id left writes its node marked and
// removes those remains. A deletion that finds the node marked finishes
// it (DeleteNode helps a deletion it finds under way), after which the id
// may be created again and given relationships. The slow create then
// went on removing "remains", its detach's scan finding the new node's
// relationships, and deleted them (the concurrent replica simulation,
// seed 20687: a relationship answered success, then deleted by a
// createNode that answered CONFLICT). It must stop once its node is no
// longer the marked one, as a slow deletion does.
func TestSlowCreateNodeLeavesTheNextNodesRelationships(t *testing.T) {
	clk := newFakeClock()
	clk.step = 1
	ss := storesOnOneEngine(t, clk, 2)
	slow, other := ss[0], ss[1]
	// Remains of an earlier a: the index rows of a relationship to c,
	// without their relationship row (a crash).
	stray := RelationshipKey{"a", "knows", "c"}
	created := clk.Now().UnixMilli()
	out, in, err := stray.index(created)
	if err != nil {
		t.Fatal(err)
	}
	for _, ix := range [][]byte{out, in} {
		if err := slow.put(bg, keys.TableGraph, keys.FamilyGraph, ix, cells{keys.QualProperties: []byte(`{}`)}, created); err != nil {
			t.Fatal(err)
		}
	}
	k := RelationshipKey{"a", "knows", "b"}
	mustNode(t, other, "b", nil)
	slow.fault = func(p string) error {
		if p != pointNodeRemains {
			return nil
		}
		// The slow create's node is written, marked. A deletion finishes
		// it; a is created again, with a relationship to b.
		if err := other.DeleteNode(bg, "a", false); err != nil {
			t.Errorf("delete a, found marked: %v", err)
		}
		mustNode(t, other, "a", Properties{"v": "2"})
		mustRel(t, other, "a", "knows", "b", nil)
		return nil
	}
	_, err = slow.CreateNode(bg, "a", "", Properties{"v": "1"})
	slow.fault = nil
	if !errors.Is(err, ErrConflict) {
		t.Errorf("the slow create answered %v, want conflict: its node was deleted meanwhile", err)
	}
	if _, err := other.GetRelationship(bg, k); err != nil {
		t.Errorf("the new a's relationship reads %v", err)
	}
	checkGraphInvariants(t, other)
}

// TestDeleteNodeOfANodeBeingCreated: CreateNode over what an earlier node
// of its id left writes its node marked, removes those remains, and then
// clears the mark. A DeleteNode that finds the mark takes it for a
// deletion under way and finishes it; if the create clears its mark in
// between, the node is live, and (here) given a relationship: the
// deletion stopped as "finished by another" and answered success with
// the node still there, or, a step later, deleted the live node's row
// under its relationship (the concurrent replica simulation, seed 30661:
// a deleteNode without detach answered success while a relationship of
// the node, created after the node's create, stayed). It must start
// again on the live node: CONFLICT without detach.
func TestDeleteNodeOfANodeBeingCreated(t *testing.T) {
	for _, at := range []string{pointNodeDetach, pointNodeRow} {
		t.Run(at, func(t *testing.T) {
			clk := newFakeClock()
			clk.step = 1
			ss := storesOnOneEngine(t, clk, 3)
			sc, sd, so := ss[0], ss[1], ss[2]
			mustNode(t, so, "b", nil)
			stray := RelationshipKey{"a", "knows", "c"}
			created := clk.Now().UnixMilli()
			out, in, err := stray.index(created)
			if err != nil {
				t.Fatal(err)
			}
			for _, ix := range [][]byte{out, in} {
				if err := so.put(bg, keys.TableGraph, keys.FamilyGraph, ix, cells{keys.QualProperties: []byte(`{}`)}, created); err != nil {
					t.Fatal(err)
				}
			}
			// The create, held once its node is written marked.
			atMark, resume, createDone := make(chan struct{}), make(chan struct{}), make(chan error)
			sc.fault = func(p string) error {
				if p == pointNodeRemains {
					close(atMark)
					<-resume
				}
				return nil
			}
			go func() {
				_, err := sc.CreateNode(bg, "a", "", nil)
				createDone <- err
			}()
			<-atMark
			// The deletion finds the mark; at its step at, the create
			// finishes (its mark cleared) and a gets a relationship.
			hooked := false
			sd.fault = func(p string) error {
				if p == at && !hooked {
					hooked = true
					close(resume)
					if err := <-createDone; err != nil {
						t.Errorf("create a: %v", err)
					}
					mustRel(t, so, "a", "knows", "b", nil)
				}
				return nil
			}
			err = sd.DeleteNode(bg, "a", false)
			sd.fault, sc.fault = nil, nil
			if !hooked {
				close(resume)
				<-createDone
				t.Fatalf("the deletion never reached %s (answered %v)", at, err)
			}
			if !errors.Is(err, ErrConflict) {
				t.Errorf("the deletion without detach answered %v, want conflict: a is live and has a relationship", err)
			}
			if _, err := so.GetRelationship(bg, RelationshipKey{"a", "knows", "b"}); err != nil {
				t.Errorf("a's relationship reads %v", err)
			}
			checkGraphInvariants(t, so)
		})
	}
}
