package store

import (
	"errors"
	"fmt"
	"testing"
)

// A create retried with its op after what it created was deleted, created
// again by another op and deleted again (up to earlierDeletes times)
// recognises its own create in the residue's earlier deletions: success,
// and nothing created again. The concurrent simulation found a retry
// re-creating a relationship that two deletions had taken since.
func TestCreateRetryAfterItsRowWasCreatedAndDeletedAgain(t *testing.T) {
	for _, times := range []int{1, 2, earlierDeletes} {
		t.Run(fmt.Sprintf("created again %d times", times), func(t *testing.T) {
			s := newTestStore(t)
			mine := WithOp(bg, DeriveOpID("alice", "key-1"))
			mustNode(t, s, "a", nil)
			mustNode(t, s, "b", nil)
			k := RelationshipKey{"a", "r", "b"}
			if _, err := s.CreateRelationship(mine, k, Properties{"v": 1}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CreateNode(mine, "n", "", Properties{"v": 1}); err != nil {
				t.Fatal(err)
			}
			for i := range times + 1 {
				if i > 0 {
					if _, err := s.CreateRelationship(bg, k, Properties{"v": 2}); err != nil {
						t.Fatal(err)
					}
					if _, err := s.CreateNode(bg, "n", "", Properties{"v": 2}); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.DeleteRelationship(bg, k); err != nil {
					t.Fatal(err)
				}
				if err := s.DeleteNode(bg, "n", true); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.CreateRelationship(mine, k, Properties{"v": 1}); err != nil {
				t.Errorf("the relationship's create retried: %v; want success", err)
			}
			if _, err := s.GetRelationship(bg, k); !errors.Is(err, ErrNotFound) {
				t.Errorf("the relationship after its create's retry: %v; want not found (created once, and deleted)", err)
			}
			if _, err := s.CreateNode(mine, "n", "", Properties{"v": 1}); err != nil {
				t.Errorf("the node's create retried: %v; want success", err)
			}
			if _, err := s.getNode(bg, "n"); !errors.Is(err, ErrNotFound) {
				t.Errorf("the node after its create's retry: %v; want not found (created once, and deleted)", err)
			}
			checkGraphInvariants(t, s)
		})
	}
}
