package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/hbasefault"
)

// skewedStores are two gateway replicas over one engine (real time): one
// whose clock is 5 s ahead, one 5 s behind.
func skewedStores(t *testing.T) (ahead, behind *Store) {
	t.Helper()
	db := openTestEngine(t, nil)
	var err error
	if ahead, err = New(db, Options{Clock: func() time.Time { return time.Now().Add(5 * time.Second) }}); err != nil {
		t.Fatal(err)
	}
	if behind, err = New(db, Options{Clock: func() time.Time { return time.Now().Add(-5 * time.Second) }}); err != nil {
		t.Fatal(err)
	}
	return ahead, behind
}

// TestSkewRecreateAfterDelete: a node or relationship that a replica whose
// clock is 5 s ahead deleted is created again at once by one 5 s behind
// (no CONFLICT while the first one's timestamps are in the future), and
// the other way round; what is created reads back from both, counters
// included, and can be updated and deleted again.
func TestSkewRecreateAfterDelete(t *testing.T) {
	for _, deleterAhead := range []bool{true, false} {
		name := "deleter ahead"
		if !deleterAhead {
			name = "deleter behind"
		}
		t.Run(name, func(t *testing.T) {
			ahead, behind := skewedStores(t)
			deleter, creator := ahead, behind
			if !deleterAhead {
				deleter, creator = behind, ahead
			}
			for _, id := range []string{"a", "b", "n"} {
				if _, err := deleter.CreateNode(bg, id, "", Properties{"v": 1}); err != nil {
					t.Fatal(err)
				}
			}
			k := RelationshipKey{"a", "r", "b"}
			if _, err := deleter.CreateRelationship(bg, k, nil); err != nil {
				t.Fatal(err)
			}
			if err := deleter.DeleteRelationship(bg, k); err != nil {
				t.Fatal(err)
			}
			// n's degree counters go with it, deleted at their own
			// timestamps: none hides the next count.
			if _, err := deleter.CreateRelationship(bg, RelationshipKey{"n", "r", "b"}, nil); err != nil {
				t.Fatal(err)
			}
			if err := deleter.DeleteNode(bg, "n", true); err != nil {
				t.Fatal(err)
			}
			if _, err := creator.CreateNode(bg, "n", "", Properties{"v": 2}); err != nil {
				t.Fatalf("create again what the other replica deleted: %v", err)
			}
			if _, err := creator.CreateRelationship(bg, k, Properties{"w": 2}); err != nil {
				t.Fatalf("create again the relationship the other replica deleted: %v", err)
			}
			if _, err := creator.CreateRelationship(bg, RelationshipKey{"n", "r", "a"}, nil); err != nil {
				t.Fatal(err)
			}
			for _, s := range []*Store{ahead, behind} {
				n, err := s.getNode(bg, "n")
				if err != nil || !propertyIs(t, n.Properties, "v", 2) {
					t.Errorf("node n read back: %+v, %v", n, err)
				}
				r, err := s.GetRelationship(bg, k)
				if err != nil || !propertyIs(t, r.Properties, "w", 2) {
					t.Errorf("relationship read back: %+v, %v", r, err)
				}
				page, err := s.Adjacent(bg, "a", "r", Outgoing, PageRequest{Size: 10})
				if err != nil || len(page.Relationships) != 1 {
					t.Errorf("a's outgoing: %+v, %v", page.Relationships, err)
				}
				deg, err := s.Degrees(bg, []DegreeKey{{"a", Outgoing, "r"}, {"b", Incoming, "r"}, {"n", Outgoing, "r"}, {"a", Incoming, "r"}})
				if err != nil || deg[0] != 1 || deg[1] != 1 || deg[2] != 1 || deg[3] != 1 {
					t.Errorf("degrees: %v, %v", deg, err)
				}
			}
			// And once more, the other way round.
			if _, err := deleter.UpdateNodeProperties(bg, "n", Properties{"v": 3}, nil); err != nil {
				t.Fatal(err)
			}
			if err := deleter.DeleteNode(bg, "n", true); err != nil {
				t.Fatal(err)
			}
			if _, err := creator.CreateNode(bg, "n", "", nil); err != nil {
				t.Fatalf("create again: %v", err)
			}
			checkGraphInvariants(t, ahead)
			if report, err := behind.Repair(bg); err != nil || len(report) != 0 {
				t.Errorf("repair: %v, %v", report, err)
			}
		})
	}
}

// casHook is a client that runs before, once, ahead of the next
// CheckAndMutate: another writer's work between a write's read and its
// compare-and-set.
type casHook struct {
	gohbase.Client
	before func()
}

func (h *casHook) CheckAndMutate(cam *hrpc.CheckAndMutate) (bool, error) {
	if f := h.before; f != nil {
		h.before = nil
		f()
	}
	return h.Client.CheckAndMutate(cam)
}

// TestOwnershipInsideCAS: alice's update or delete of her node, racing its
// deletion and creation again by bob (between the write's read and its
// compare-and-set), is FORBIDDEN and leaves bob's node as bob made it;
// so is a relationship from it.
func TestOwnershipInsideCAS(t *testing.T) {
	alice := WithWriter(bg, Writer{Subject: "alice"})
	bob := WithWriter(bg, Writer{Subject: "bob"})
	for _, write := range []string{"update", "delete"} {
		t.Run(write, func(t *testing.T) {
			db := openTestEngine(t, nil)
			hook := &casHook{Client: db}
			viaHook, err := New(hook, Options{})
			if err != nil {
				t.Fatal(err)
			}
			direct, err := New(db, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := direct.CreateNode(bg, "n", "alice", Properties{"v": "alice's"}); err != nil {
				t.Fatal(err)
			}
			hook.before = func() {
				if err := direct.DeleteNode(bg, "n", true); err != nil { // an admin
					t.Error(err)
				}
				if _, err := direct.CreateNode(bob, "n", "bob", Properties{"v": "bob's"}); err != nil {
					t.Error(err)
				}
			}
			switch write {
			case "update":
				_, err = viaHook.UpdateNodeProperties(alice, "n", Properties{"v": "alice writes"}, nil)
			case "delete":
				err = viaHook.DeleteNode(alice, "n", true)
			}
			if !errors.Is(err, ErrForbidden) {
				t.Errorf("alice's %s of bob's node: %v, want forbidden", write, err)
			}
			n, err := direct.getNode(bg, "n")
			if err != nil || n.Owner != "bob" || !propertyIs(t, n.Properties, "v", "bob's") {
				t.Errorf("bob's node: %+v, %v", n, err)
			}
			if _, err := direct.CreateNode(bg, "m", "", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := direct.CreateRelationship(alice, RelationshipKey{"n", "r", "m"}, nil); !errors.Is(err, ErrForbidden) {
				t.Errorf("alice's relationship from bob's node: %v, want forbidden", err)
			}
			if _, err := direct.UpdateNodeProperties(bob, "n", Properties{"v": 2}, nil); err != nil {
				t.Errorf("bob's own update: %v", err)
			}
		})
	}
}

// TestRetryAfterUnavailable: a create whose CheckAndMutate was applied but
// answered UNAVAILABLE, retried with the same op (the same Idempotency-Key),
// answers the node it created, once; another op is ALREADY_EXISTS. A
// delete likewise answers success on its retry, never NOT_FOUND.
func TestRetryAfterUnavailable(t *testing.T) {
	fc := hbasefault.New(openTestEngine(t, nil))
	s, err := New(fc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	retry := WithOp(bg, DeriveOpID("alice", "key-1", "0", "createNode", `{"id":"n"}`))
	fc.Add(hbasefault.Rule{Kind: hbasefault.CheckAndMutate, Nth: 1, Mode: hbasefault.FailAfter})
	if _, err := s.CreateNode(retry, "n", "alice", Properties{"v": 1}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("the create with its answer lost: %v", err)
	}
	fc.Clear()
	first, err := s.CreateNode(retry, "n", "alice", Properties{"v": 1})
	if err != nil {
		t.Fatalf("its retry: %v", err)
	}
	again, err := s.CreateNode(retry, "n", "alice", Properties{"v": 1})
	if err != nil || !again.Created.Equal(first.Created) {
		t.Fatalf("a second retry: %+v, %v (first %+v)", again, err, first)
	}
	other := WithOp(bg, DeriveOpID("alice", "key-2", "0", "createNode", `{"id":"n"}`))
	if _, err := s.CreateNode(other, "n", "alice", nil); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("another key: %v, want already exists", err)
	}

	mustNode(t, s, "m", nil)
	k := RelationshipKey{"n", "r", "m"}
	if _, err := s.CreateRelationship(bg, k, nil); err != nil {
		t.Fatal(err)
	}
	del := WithOp(context.Background(), DeriveOpID("alice", "key-3"))
	// The last Increment applied, its answer lost: the retries repeat
	// both Increments, which count once (nonces).
	fc.Add(hbasefault.Rule{Kind: hbasefault.Increment, Nth: 2, Mode: hbasefault.FailAfter})
	if err := s.DeleteRelationship(del, k); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("the delete cut short: %v", err)
	}
	fc.Clear()
	for range 2 {
		if err := s.DeleteRelationship(del, k); err != nil {
			t.Fatalf("its retry: %v", err)
		}
	}
	if err := s.DeleteRelationship(bg, k); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another delete: %v, want not found", err)
	}
	checkGraphInvariants(t, s)
}
