package store

import (
	"strings"
	"testing"
	"time"
)

// nodeImportSetup writes what the node imports below meet: node a, and
// node d created and deleted at the frozen clock's time, so that its
// residue hides an import stamped before it.
func nodeImportSetup(t *testing.T, s *Store) {
	t.Helper()
	if ok, err := s.ImportNode(bg, "a", "alice", Properties{"old": true}, time.UnixMilli(100), time.UnixMilli(200)); err != nil || !ok {
		t.Fatalf("import node a: %v %v", ok, err)
	}
	mustNode(t, s, "d", nil)
	if err := s.DeleteNode(bg, "d", false); err != nil {
		t.Fatal(err)
	}
}

// nodeImportInput is a batch with every case a line can be: new,
// existing, repeated within the batch, invalid input, and hidden by a
// deletion (then imported again after it).
func nodeImportInput() []NodeImport {
	at := time.UnixMilli
	after := at(testClockStart + 10) // past d's deletion
	node := func(id, owner string, props Properties, c, u time.Time) NodeImport {
		return NodeImport{ID: id, Owner: owner, Properties: props, Created: c, Updated: u}
	}
	return []NodeImport{
		node("a", "", Properties{"new": 1}, at(1000), at(2000)),               // exists: skipped
		node("n1", "bob", Properties{"w": 1}, at(1000), at(2000)),             // created
		node("n1", "", Properties{"w": 2}, at(1500), at(2500)),                // repeated: skipped
		node("n2", "", nil, at(1000), at(1000)),                               // created, no owner
		node("", "", nil, at(1000), at(1000)),                                 // bad id
		node("n3", strings.Repeat("o", MaxOwnerBytes+1), nil, at(5), at(6)),   // bad owner
		node("n3", "", nil, at(5), at(4)),                                     // updated before created
		node("n3", "", Properties{"": 1}, at(5), at(6)),                       // bad properties
		node("n3", "carol", Properties{"ok": "yes"}, at(5), at(6)),            // created after three bad tries
		node("d", "", Properties{"hidden": true}, at(10), at(20)),             // under the deletion: conflict
		node("d", "dave", Properties{"late": true}, after, after),             // the same, after it: created
		node("n4", "", Properties{"list": []any{1, "x"}}, at(3000), at(4000)), // created
		node("n4", "", nil, at(3000), at(4000)),                               // identical id again
	}
}

// nodeBatch is ImportNodes of nodeImportInput.
func nodeBatch() batchImport[NodeImport] {
	return batchImport[NodeImport]{
		input: nodeImportInput(),
		setup: nodeImportSetup,
		one: func(s *Store, n NodeImport) (bool, error) {
			return s.ImportNode(bg, n.ID, n.Owner, n.Properties, n.Created, n.Updated)
		},
		batch:  (*Store).ImportNodes,
		done:   func(t *testing.T, s *Store) { checkGraphInvariants(t, s) },
		repair: repairTwice,
		rows:   graphRows,
	}
}

func TestImportNodesMatchesOneAtATime(t *testing.T) {
	b := nodeBatch()
	testMatchesOneAtATime(t, b, len(b.input), 5, 2, 1)
}

// A crash between a batch's creates leaves what Repair accepts, and a
// rerun completes the import.
func TestImportNodesRepairAfterCrashAtEveryPoint(t *testing.T) {
	testCrashAtEveryPoint(t, nodeBatch(), "import-node-create")
}

// Whatever prefix of the batch import's writes reaches the store, Repair
// restores the invariants and a rerun completes the import.
func TestImportNodesRepairAfterCrashAfterEveryWrite(t *testing.T) {
	testCrashAfterEveryWrite(t, nodeBatch())
}
