package store

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/hbasefault"
)

// splitReadClient runs a hook inside a batch of Gets, before the Get of a
// given row: a create's one batch of reads (its ends, then its row) is
// not one atomic read, and a writer may come in between. onGet runs one
// before a single Get of a row.
type splitReadClient struct {
	gohbase.Client
	mu     sync.Mutex
	before []byte // the row whose Get waits for hook
	hook   func()

	getRow  []byte
	getHook func()
}

// onGet runs hook once, before the next single Get of row.
func (c *splitReadClient) onGet(row []byte, hook func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.getRow, c.getHook = row, hook
}

func (c *splitReadClient) Get(g *hrpc.Get) (*hrpc.Result, error) {
	c.mu.Lock()
	hook := c.getHook
	if hook != nil && bytes.Equal(g.Key(), c.getRow) {
		c.getRow, c.getHook = nil, nil
	} else {
		hook = nil
	}
	c.mu.Unlock()
	if hook != nil {
		hook()
	}
	return c.Client.Get(g)
}

// onRead runs hook once, in the next batch that reads row, before row's
// Get and after the Gets before it.
func (c *splitReadClient) onRead(row []byte, hook func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.before, c.hook = row, hook
}

func (c *splitReadClient) SendBatch(ctx context.Context, batch []hrpc.Call) ([]hrpc.RPCResult, bool) {
	c.mu.Lock()
	hook, row := c.hook, c.before
	at := -1
	if hook != nil {
		for i, call := range batch {
			if _, isGet := call.(*hrpc.Get); isGet && i > 0 && bytes.Equal(call.Key(), row) {
				at = i
				break
			}
		}
		if at >= 0 {
			c.hook, c.before = nil, nil
		}
	}
	c.mu.Unlock()
	if at < 0 {
		return c.Client.SendBatch(ctx, batch)
	}
	head, allOK := c.Client.SendBatch(ctx, batch[:at])
	hook()
	tail, ok := c.Client.SendBatch(ctx, batch[at:])
	return append(head, tail...), allOK && ok
}

// splitReadStores opens n Stores over one engine behind one splitReadClient
// (over a fault injector).
func splitReadStores(t *testing.T, clk *fakeClock, n int) (*splitReadClient, []*Store) {
	c, _, ss := splitReadFaultStores(t, clk, n)
	return c, ss
}

func splitReadFaultStores(t *testing.T, clk *fakeClock, n int) (*splitReadClient, *hbasefault.Client, []*Store) {
	t.Helper()
	fc := hbasefault.New(openTestEngine(t, clk))
	c := &splitReadClient{Client: fc}
	out := make([]*Store, n)
	for i := range out {
		s, err := New(c, Options{Clock: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		out[i] = s
	}
	return c, fc, out
}

// TestCreateRelationshipRetryOverTheDetachOfAnEnd: a create's retry that
// reads its ends live (its intents of the earlier try still on them, so
// it places none) and, in the same batch but after an end's deletion with
// detach has marked the end and deleted the relationship another create
// made meanwhile, the row as that detach's residue, writes its row over
// that residue, and its recheck finds the end marked by that deletion.
// The key was taken up to the mark, so the create came after it:
// NOT_FOUND. It answered success (the concurrent replica simulation,
// seed 1847: two overlapping creates both answered success around an
// end's deletion).
func TestCreateRelationshipRetryOverTheDetachOfAnEnd(t *testing.T) {
	k := RelationshipKey{"a", "knows", "b"}
	opC := createOp("carol", "key-C", k)
	opD := createOp("dave", "key-D", k)
	clk := newFakeClock()
	clk.step = 1
	rc, ss := splitReadStores(t, clk, 2)
	sc, sd := ss[0], ss[1]
	mustNode(t, sd, "a", nil)
	mustNode(t, sd, "b", nil)

	// C's first try: its intents and index rows, cut short before its row.
	sc.fault = crashAtPoint(pointRelationshipRow)
	// C's first try answers NOT_FOUND when it re-stamps its intents
	// (restampIntent: b is gone); a try that goes on to write its row
	// is cut short after it.
	if _, err := sc.CreateRelationship(opC, k, Properties{"by": "c"}); !errors.Is(err, errCrash) && !errors.Is(err, ErrNotFound) {
		t.Fatalf("C's first try: %v", err)
	}
	sc.fault = nil
	// D creates it: success.
	if _, err := sd.CreateRelationship(opD, k, Properties{"by": "d"}); err != nil {
		t.Fatalf("D's create: %v", err)
	}
	// C's retry reads a and b live; then a is deleted with detach (D's
	// relationship with it); then C reads the row: the detach's residue.
	rc.onRead(k.row(), func() {
		if err := sd.DeleteNode(bg, "a", true); err != nil {
			t.Errorf("delete a: %v", err)
		}
	})
	_, err := sc.CreateRelationship(opC, k, Properties{"by": "c"})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("C's retry answered %v, want not found: D's relationship was there until a's deletion", err)
	}
	if _, err := sc.GetRelationship(bg, k); !errors.Is(err, ErrNotFound) {
		t.Errorf("the relationship reads %v, want not found", err)
	}
	checkGraphInvariants(t, sc)
}

// TestCreateRelationshipRowDeletedBeforeItsReadBack: a create whose row's
// compare-and-set applied but answered false (gohbase re-sent it) reads
// the row back; if an end's deletion with detach has deleted the row in
// between (counting it down), the create finds its creation in the
// residue. It answered NOT_FOUND without counting its relationship up, so
// both degrees were left at -1 (the concurrent replica simulation, seeds
// 1294, 10131, 10556: "degree of n1 OUTGOING knows is -1, with 0 index
// rows"). It must answer as its retry would, with its counts made.
func TestCreateRelationshipRowDeletedBeforeItsReadBack(t *testing.T) {
	for _, detach := range []string{"start", "end"} {
		t.Run(detach, func(t *testing.T) {
			k := RelationshipKey{"a", "knows", "b"}
			op := WithOp(bg, DeriveOpID("carol", "key", "0", "createRelationship", k.ID(), detach))
			clk := newFakeClock()
			clk.step = 1
			rc, fc, ss := splitReadFaultStores(t, clk, 2)
			sc, sd := ss[0], ss[1]
			mustNode(t, sd, "a", nil)
			mustNode(t, sd, "b", nil)
			gone := k.Start
			if detach == "end" {
				gone = k.End
			}
			// The row's compare-and-sets: the claim (xp), then the row.
			fc.Add(hbasefault.Rule{Kind: hbasefault.CheckAndMutate, Nth: 2, Mode: hbasefault.ApplyTwice,
				Match: func(_ string, row []byte) bool { return bytes.Equal(row, k.row()) }})
			sc.fault = func(p string) error {
				if p == pointRelationshipRow {
					// The row's read-back comes after the end's deletion.
					rc.onGet(k.row(), func() {
						if err := sd.DeleteNode(bg, gone, true); err != nil {
							t.Errorf("delete %s: %v", gone, err)
						}
					})
				}
				return nil
			}
			_, err := sc.CreateRelationship(op, k, Properties{"by": "c"})
			fc.Clear()
			sc.fault = nil
			if err != nil && !errors.Is(err, ErrNotFound) {
				t.Errorf("the create answered %v, want success or not found", err)
			}
			for _, d := range []DegreeKey{{k.Start, Outgoing, k.Type}, {k.End, Incoming, k.Type}} {
				n, err := sc.Degrees(bg, []DegreeKey{d})
				if err != nil {
					t.Fatal(err)
				}
				if n[0] != 0 {
					t.Errorf("degree %v is %d, want 0", d, n[0])
				}
			}
			checkGraphInvariants(t, sc)
		})
	}
}

// TestCreateRelationshipOverTheDetachOfTheOtherEnd: a create that placed
// its intents on both ends, whose row then went to another create, which
// the end's deletion with detach took, writes its row over that residue;
// by its recheck the start is marked by another deletion with detach (the
// mark the recheck reports, the start's) and the end is gone. The key was
// taken up to the end's mark, so the create came after that mark:
// NOT_FOUND. It answered success, since it compared the residue's
// deletion with the start's mark only (the concurrent replica simulation,
// seed 11645: two overlapping creates both answered success).
func TestCreateRelationshipOverTheDetachOfTheOtherEnd(t *testing.T) {
	k := RelationshipKey{"a", "knows", "b"}
	opC := createOp("carol", "key-C", k)
	opD := createOp("dave", "key-D", k)
	ss := steppedStores(t, 2)
	sc, sd := ss[0], ss[1]
	mustNode(t, sd, "a", nil)
	mustNode(t, sd, "b", nil)
	done := false
	sc.fault = func(p string) error {
		if p != pointRelationshipRow || done {
			return nil
		}
		done = true
		// C has its intents and index rows. D creates the relationship,
		// b is deleted with detach (D's relationship with it), and a's
		// deletion with detach marks a, its detach still to come.
		if _, err := sd.CreateRelationship(opD, k, Properties{"by": "d"}); err != nil {
			t.Errorf("D's create: %v", err)
		}
		if err := sd.DeleteNode(bg, "b", true); err != nil {
			t.Errorf("delete b: %v", err)
		}
		sd.fault = crashAtPoint(pointNodeDetach)
		if err := sd.DeleteNode(bg, "a", true); !errors.Is(err, errCrash) {
			t.Errorf("delete a, cut short after its mark: %v", err)
		}
		sd.fault = nil
		return nil
	}
	_, err := sc.CreateRelationship(opC, k, Properties{"by": "c"})
	sc.fault = nil
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("C answered %v, want not found: D's relationship was there until b's deletion", err)
	}
	if err := sd.DeleteNode(bg, "a", true); err != nil {
		t.Fatalf("delete a, finished: %v", err)
	}
	checkGraphInvariants(t, sc)
}

// TestCreateRelationshipRetriedAfterBothEndsWent: a create whose row
// replaced the residue of an end's deletion's detach (the relationship
// there was there up to that end's mark), cut short before its recheck,
// whose row the other end's detach then took: its retry finds its
// creation deleted by another, and answered success, as after a
// deletion of the relationship. Its row came after the first end's mark:
// NOT_FOUND, as its recheck would have answered (the concurrent replica
// simulation, seed 20425).
func TestCreateRelationshipRetriedAfterBothEndsWent(t *testing.T) {
	k := RelationshipKey{"a", "knows", "b"}
	opC := createOp("carol", "key-C", k)
	opD := createOp("dave", "key-D", k)
	ss := steppedStores(t, 2)
	sc, sd := ss[0], ss[1]
	mustNode(t, sd, "a", nil)
	mustNode(t, sd, "b", nil)
	hooked := false
	sc.fault = func(p string) error {
		switch {
		case p == pointRelationshipRow && !hooked:
			hooked = true
			// C has its intents and index rows. D creates the
			// relationship, and b is deleted with detach (D's
			// relationship with it).
			if _, err := sd.CreateRelationship(opD, k, Properties{"by": "d"}); err != nil {
				t.Errorf("D's create: %v", err)
			}
			if err := sd.DeleteNode(bg, "b", true); err != nil {
				t.Errorf("delete b: %v", err)
			}
		case p == pointRelationshipRecheck:
			return errCrash // C's row is written over b's detach's residue, and counted
		}
		return nil
	}
	// C's first try answers NOT_FOUND when it re-stamps its intents
	// (restampIntent: b is gone); a try that goes on to write its row
	// is cut short after it.
	if _, err := sc.CreateRelationship(opC, k, Properties{"by": "c"}); !errors.Is(err, errCrash) && !errors.Is(err, ErrNotFound) {
		t.Fatalf("C's first try: %v", err)
	}
	sc.fault = nil
	// a's deletion with detach takes C's row.
	if err := sd.DeleteNode(bg, "a", true); err != nil {
		t.Fatalf("delete a: %v", err)
	}
	if _, err := sc.CreateRelationship(opC, k, Properties{"by": "c"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("C's retry answered %v, want not found: D's relationship was there until b's deletion", err)
	}
	checkGraphInvariants(t, sc)
}

// TestCreateRelationshipRetryOverATakenBackRow: a create whose row
// replaced the residue of another create that took its own row back
// having answered success (its recheck found an end marked by a deletion
// with detach: it was there up to the mark), cut short before its own
// recheck, is retried while that end is still marked. The retry answered
// success, as for a row written before the mark, beside the other
// create's success; its row came after the other's, so after the mark:
// NOT_FOUND, as its recheck would have answered (the concurrent replica
// simulation, seed 30168).
func TestCreateRelationshipRetryOverATakenBackRow(t *testing.T) {
	k := RelationshipKey{"a", "knows", "b"}
	opC := createOp("carol", "key-C", k)
	opD := createOp("dave", "key-D", k)
	ss := steppedStores(t, 3)
	sc, sd, se := ss[0], ss[1], ss[2]
	mustNode(t, sd, "a", nil)
	mustNode(t, sd, "b", nil)
	hooked := false
	sc.fault = func(p string) error {
		switch {
		case p == pointRelationshipRow && !hooked:
			hooked = true
			// C has its intents and index rows. D creates the
			// relationship; before D's recheck, a's deletion with detach
			// marks a (its detach cut short): D takes its row back and
			// answers success.
			sd.fault = detachCutShortAtRecheck(t, se, "a")
			if _, err := sd.CreateRelationship(opD, k, Properties{"by": "d"}); err != nil {
				t.Errorf("D's create: %v", err)
			}
			sd.fault = nil
		case p == pointRelationshipRecheck:
			return errCrash // C's row is written over D's, and counted
		}
		return nil
	}
	_, first := sc.CreateRelationship(opC, k, Properties{"by": "c"})
	sc.fault = nil
	switch {
	case errors.Is(first, ErrNotFound):
		// (Found before its row: checkEndsOverTakenBack.)
	case !errors.Is(first, errCrash):
		t.Fatalf("C's first try: %v", first)
	default:
		if _, err := sc.CreateRelationship(opC, k, Properties{"by": "c"}); !errors.Is(err, ErrNotFound) {
			t.Errorf("C's retry answered %v, want not found: D's relationship was there until a's mark", err)
		}
	}
	if err := sd.DeleteNode(bg, "a", true); err != nil {
		t.Fatalf("delete a, finished: %v", err)
	}
	checkGraphInvariants(t, sc)
}

// TestCreateRelationshipRetryOverAnOldUndo: a create whose row replaced
// the residue of another create's undo (its recheck had found an end
// deleted and created again: NOT_FOUND), written while both its ends were
// live and read by others, then cut short before its recheck, is retried
// once an end is marked by a deletion with detach. The row came before
// that mark: success. (Taking every residue of a create that took its own
// row back for one after the mark made it NOT_FOUND, though the
// relationship had been read: the concurrent replica simulation, seed
// 60548.)
func TestCreateRelationshipRetryOverAnOldUndo(t *testing.T) {
	k := RelationshipKey{"a", "knows", "b"}
	opC := createOp("carol", "key-C", k)
	opD := createOp("dave", "key-D", k)
	ss := steppedStores(t, 3)
	sc, sd, se := ss[0], ss[1], ss[2]
	mustNode(t, se, "a", nil)
	mustNode(t, se, "b", nil)
	// D's create: before its index rows, b is deleted and created again;
	// D's recheck takes its row back (NOT_FOUND).
	recreated := false
	sd.fault = func(p string) error {
		if p == "index-outgoing" && !recreated {
			recreated = true
			if err := se.DeleteNode(bg, "b", true); err != nil {
				t.Errorf("delete b: %v", err)
			}
			mustNode(t, se, "b", nil)
		}
		return nil
	}
	if _, err := sd.CreateRelationship(opD, k, Properties{"by": "d"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("D's create answered %v, want not found", err)
	}
	sd.fault = nil
	// C writes its row over D's undo, is read, and is cut short before
	// its recheck.
	sc.fault = crashAtPoint(pointRelationshipRecheck)
	// C's first try answers NOT_FOUND when it re-stamps its intents
	// (restampIntent: b is gone); a try that goes on to write its row
	// is cut short after it.
	if _, err := sc.CreateRelationship(opC, k, Properties{"by": "c"}); !errors.Is(err, errCrash) && !errors.Is(err, ErrNotFound) {
		t.Fatalf("C's first try: %v", err)
	}
	sc.fault = nil
	if _, err := se.GetRelationship(bg, k); err != nil {
		t.Fatalf("C's relationship reads %v", err)
	}
	// a's deletion with detach marks a, its detach still to come.
	se.fault = crashAtPoint(pointNodeDetach)
	if err := se.DeleteNode(bg, "a", true); !errors.Is(err, errCrash) {
		t.Fatalf("delete a, cut short: %v", err)
	}
	se.fault = nil
	if _, err := sc.CreateRelationship(opC, k, Properties{"by": "c"}); err != nil {
		t.Errorf("C's retry answered %v, want success: its relationship was read before a's mark", err)
	}
	if err := se.DeleteNode(bg, "a", true); err != nil {
		t.Fatalf("delete a, finished: %v", err)
	}
	checkGraphInvariants(t, sc)
}

// TestCreateRelationshipConflictRemovesItsIndexRows: a create cut short
// after its index rows whose retry finds the key taken by a row made for
// an earlier node of an end's id (being taken away: CONFLICT) left the
// index rows of its earlier try for good: an index row listing the
// relationship with no row of its creation (the concurrent replica
// simulation, seed 66646: "index row n1 likes n3 lists a missing node";
// seed 2081: a relationship with two pairs of index rows). Every definite
// answer but success deletes the index rows an earlier try wrote, as
// ALREADY_EXISTS does.
func TestCreateRelationshipConflictRemovesItsIndexRows(t *testing.T) {
	k := RelationshipKey{"a", "knows", "b"}
	opC := createOp("carol", "key-C", k)
	opD := createOp("dave", "key-D", k)
	ss := steppedStores(t, 3)
	sc, sd, se := ss[0], ss[1], ss[2]
	mustNode(t, se, "a", nil)
	mustNode(t, se, "b", nil)
	var cErr error
	rowed, rechecked := false, false
	sd.fault = func(p string) error {
		switch {
		case p == pointRelationshipRow && !rowed:
			rowed = true
			// D has its intents and index rows. b is deleted (its detach
			// takes D's index rows) and created again; C's first try
			// writes its index rows and is cut short.
			if err := se.DeleteNode(bg, "b", true); err != nil {
				t.Errorf("delete b: %v", err)
			}
			mustNode(t, se, "b", nil)
			sc.fault = crashAtPoint(pointRelationshipRow)
			if _, err := sc.CreateRelationship(opC, k, Properties{"by": "c"}); !errors.Is(err, errCrash) {
				t.Errorf("C's first try: %v", err)
			}
			sc.fault = nil
		case p == pointRelationshipRecheck && !rechecked:
			rechecked = true
			// D's row, made for the b deleted, is there: C's retry.
			_, cErr = sc.CreateRelationship(opC, k, Properties{"by": "c"})
		}
		return nil
	}
	_, dErr := sd.CreateRelationship(opD, k, Properties{"by": "d"})
	sd.fault = nil
	if !rechecked {
		t.Fatalf("D never reached its recheck: %v", dErr)
	}
	if !errors.Is(dErr, ErrNotFound) || !errors.Is(cErr, ErrConflict) {
		t.Fatalf("D answered %v, C's retry %v: want not found (b was replaced) and conflict", dErr, cErr)
	}
	checkGraphInvariants(t, sc)
}

// detachCutShortAtRecheck is a fault hook for a create: at its recheck,
// se deletes node id with detach and is cut short in its detach, so the
// node is marked and the create takes its row back.
func detachCutShortAtRecheck(t *testing.T, se *Store, id string) func(string) error {
	return func(p string) error {
		if p == pointRelationshipRecheck {
			se.fault = crashAtPoint(pointNodeDetach)
			if err := se.DeleteNode(bg, id, true); !errors.Is(err, errCrash) {
				t.Errorf("delete %s, cut short: %v", id, err)
			}
			se.fault = nil
		}
		return nil
	}
}
