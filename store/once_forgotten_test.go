package store

import (
	"context"
	"errors"
	"testing"

	"github.com/hbgraph/hbgraph/store/hbasefault"
	"github.com/hbgraph/hbgraph/store/keys"
)

// A deletion whose answer was lost (UNAVAILABLE), retried with its op
// after more deletions of its key than a residue keeps (8), deletes the
// creation it set out to delete only: never a node or relationship
// created since, someone else's. The residue no longer names the op, so
// what tells the retry is the op row the deletion wrote before its
// compare-and-set (graphOpRecord). Before it, the retry found a live node
// and deleted it.
func TestDeleteRetriedAfterMoreDeletionsThanAResidueKeeps(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rel    bool
		mode   hbasefault.Mode
		cycles int   // creations and deletions of the key before the retry
		want   error // the retry's answer
	}{
		{name: "node, its mark applied", mode: hbasefault.FailAfter, cycles: earlierDeletes + 1},
		// Another client's deletion deleted it: the retry finds the node
		// it set out to delete gone, a success (it finishes a deletion
		// it finds under way, too).
		{name: "node, its mark not applied", mode: hbasefault.FailBefore, cycles: earlierDeletes + 1},
		{name: "relationship, applied", rel: true, mode: hbasefault.FailAfter, cycles: earlierDeletes + 1},
		// Not applied, and deleted by another meanwhile, which the
		// residue still says: this op did not delete it.
		{name: "relationship, not applied", rel: true, mode: hbasefault.FailBefore, cycles: earlierDeletes - 2, want: ErrNotFound},
		// Not applied, and the residue no longer says who deleted it: the
		// retry cannot tell, and answers success (the README's limit);
		// the relationship there now is not touched.
		{name: "relationship, not applied, forgotten", rel: true, mode: hbasefault.FailBefore, cycles: earlierDeletes + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := hbasefault.New(openTestEngine(t, nil))
			s, err := New(fc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			k := RelationshipKey{"a", "knows", "b"}
			mustNode(t, s, "a", nil)
			mustNode(t, s, "b", nil)
			create := func(v int) {
				t.Helper()
				if tc.rel {
					mustRel(t, s, k.Start, k.Type, k.End, Properties{"v": v})
				} else {
					mustNode(t, s, "n", Properties{"v": v})
				}
			}
			del := func(ctx context.Context) error {
				if tc.rel {
					return s.DeleteRelationship(ctx, k)
				}
				return s.DeleteNode(ctx, "n", true)
			}
			mine := WithOp(bg, DeriveOpID("alice", "key-1", "0", "delete", "n"))
			create(0)
			// The first CheckAndMutate of the deletion: a node's mark, a
			// relationship's compare-and-set.
			fc.Add(hbasefault.Rule{Kind: hbasefault.CheckAndMutate, Table: keys.TableGraph, Nth: 1, Mode: tc.mode})
			if err := del(mine); err == nil {
				t.Fatal("the deletion with its answer lost: success, want UNAVAILABLE")
			}
			fc.Clear()
			// Another client finishes it (a node's deletion, marked) or
			// makes it (not applied).
			if err := del(bg); err != nil && !errors.Is(err, ErrNotFound) {
				t.Fatal(err)
			}
			for i := 1; i <= tc.cycles; i++ {
				create(i)
				if err := del(bg); err != nil {
					t.Fatal(err)
				}
			}
			create(100)
			err = del(mine)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("the deletion retried: %v; want %v", err, tc.want)
			}
			if tc.rel {
				if r, err := s.GetRelationship(bg, k); err != nil || !propertyIs(t, r.Properties, "v", 100) {
					t.Errorf("the relationship created last, after the retry: %+v, %v; want v=100", r, err)
				}
			} else if n, err := s.getNode(bg, "n"); err != nil || !propertyIs(t, n.Properties, "v", 100) {
				t.Errorf("the node created last, after the retry: %+v, %v; want v=100", n, err)
			}
			// And again: the retry is still nothing more.
			if err := del(mine); tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("the deletion retried again: %v; want %v", err, tc.want)
			}
			checkGraphInvariants(t, s)
		})
	}
}
