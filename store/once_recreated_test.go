package store

import (
	"testing"

	"github.com/hbgraph/hbgraph/store/hbasefault"
)

// A node's create whose answer was lost (UNAVAILABLE after its
// CheckAndMutate applied), retried with its op after somebody deleted
// that node and another op created the id again, answers success: its
// create happened, once. The row is live again (another's node), or
// marked by a deletion of that node still under way; either way the
// residue in the row keeps this op's creation. The concurrent replica
// simulation (seed 30) found the retry answering ALREADY_EXISTS for the
// live row and CONFLICT for the marked one.
func TestCreateNodeRetryAfterItsNodeWasDeletedAndCreatedAgain(t *testing.T) {
	for _, tc := range []struct {
		name   string
		marked bool // the other's node is being deleted when the retry comes
		detach bool // (that deletion's)
	}{
		{name: "created again by another"},
		{name: "created again and being deleted", marked: true, detach: true},
		{name: "created again and being deleted without detach", marked: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := hbasefault.New(openTestEngine(t, nil))
			s, err := New(fc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			mine := WithOp(bg, DeriveOpID("alice", "key-1", "0", "createNode", `{"id":"n"}`))
			fc.Add(hbasefault.Rule{Kind: hbasefault.CheckAndMutate, Nth: 1, Mode: hbasefault.FailAfter})
			if _, err := s.CreateNode(mine, "n", "", Properties{"v": 1}); err == nil {
				t.Fatal("the create with its answer lost: success, want UNAVAILABLE")
			}
			fc.Clear()
			if n, err := s.getNode(bg, "n"); err != nil || !propertyIs(t, n.Properties, "v", 1) {
				t.Fatalf("the node its first try created: %+v, %v", n, err)
			}
			if err := s.DeleteNode(bg, "n", true); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CreateNode(bg, "n", "", Properties{"v": 2}); err != nil {
				t.Fatal(err)
			}
			if tc.marked {
				// The deletion marks the node, and stops there (a crash).
				s.fault = crashAtPoint(pointNodeDetach)
				if err := s.DeleteNode(bg, "n", tc.detach); err == nil {
					t.Fatal("the deletion cut short: success")
				}
				s.fault = nil
			}
			n, err := s.CreateNode(mine, "n", "", Properties{"v": 1})
			if err != nil {
				t.Fatalf("the create retried: %v; want success (its first try applied)", err)
			}
			if !propertyIs(t, n.Properties, "v", 1) {
				t.Errorf("the create retried answered %+v; want its own node (v=1)", n)
			}
			// Nothing was created again: the other's node is as it was.
			got, err := s.getNode(bg, "n")
			switch {
			case tc.marked:
				if err == nil {
					t.Errorf("the node being deleted reads as %+v; want not found", got)
				}
				if err := s.DeleteNode(bg, "n", true); err != nil {
					t.Fatalf("the deletion finished: %v", err)
				}
			case err != nil || !propertyIs(t, got.Properties, "v", 2):
				t.Errorf("the other's node after the retry: %+v, %v; want v=2", got, err)
			}
			checkGraphInvariants(t, s)
		})
	}
}
