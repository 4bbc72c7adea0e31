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
