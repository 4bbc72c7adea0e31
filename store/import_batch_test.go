package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/keys"
)

// importSetup writes what the batch imports below meet: nodes a-d, a
// relationship a-t->b that exists already, and a relationship a-t->d that
// was created and deleted at the frozen clock's time, so that its delete
// marker hides an import stamped before it.
func importSetup(t *testing.T, s *Store) {
	t.Helper()
	for _, id := range []string{"a", "b", "c", "d"} {
		if ok, err := s.ImportNode(bg, id, "", Properties{"id": id}, time.UnixMilli(100), time.UnixMilli(200)); err != nil || !ok {
			t.Fatalf("import node %s: %v %v", id, ok, err)
		}
	}
	if ok, err := s.ImportRelationship(bg, RelationshipKey{"a", "t", "b"}, Properties{"old": true}, time.UnixMilli(300), time.UnixMilli(400)); err != nil || !ok {
		t.Fatalf("import a-t->b: %v %v", ok, err)
	}
	if _, err := s.CreateRelationship(bg, RelationshipKey{"a", "t", "d"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRelationship(bg, RelationshipKey{"a", "t", "d"}); err != nil {
		t.Fatal(err)
	}
}

// importInput is a batch with every case a line can be: new, existing,
// repeated within the batch, a self-loop, missing nodes, invalid input, and
// hidden by a delete marker (then imported again after it).
func importInput() []RelationshipImport {
	at := time.UnixMilli
	after := at(testClockStart + 10) // past the marker of a-t->d
	rel := func(start, typ, end string, props Properties, c, u time.Time) RelationshipImport {
		return RelationshipImport{Key: RelationshipKey{start, typ, end}, Properties: props, Created: c, Updated: u}
	}
	return []RelationshipImport{
		rel("a", "t", "b", Properties{"new": 1}, at(1000), at(2000)),   // exists: skipped
		rel("a", "t", "c", Properties{"w": 1}, at(1000), at(2000)),     // created
		rel("a", "t", "c", Properties{"w": 2}, at(1500), at(2500)),     // repeated: skipped
		rel("c", "t", "c", nil, at(1000), at(1000)),                    // self-loop
		rel("a", "t", "ghost", nil, at(1000), at(1000)),                // missing end node
		rel("ghost", "t", "a", nil, at(1000), at(1000)),                // missing start node
		rel("", "t", "a", nil, at(1000), at(1000)),                     // bad id
		rel("b", "t", "a", nil, at(5), at(4)),                          // updated before created
		rel("b", "t", "a", Properties{"": 1}, at(5), at(6)),            // bad properties
		rel("b", "t", "a", Properties{"ok": "yes"}, at(5), at(6)),      // created after two bad tries
		rel("a", "t", "d", Properties{"hidden": true}, at(10), at(20)), // under the marker: conflict
		rel("a", "t", "d", Properties{"late": true}, after, after),     // the same, after it: created
		rel("a", "t", "ghost", nil, at(1000), at(1000)),                // missing again
		rel("b", "t", "c", nil, at(3000), at(3000)),                    // c counts three incoming
		rel("d", "t", "c", nil, at(3000), at(4000)),
		rel("b", "u", "c", nil, at(3000), at(3000)), // another type
		rel("b", "u", "c", nil, at(3000), at(3000)), // identical repeat
	}
}

// outcomeString describes an outcome for comparison: created, skipped, or
// the error's text.
func outcomeString(created bool, err error) string {
	switch {
	case err != nil:
		return "error: " + err.Error()
	case created:
		return "created"
	}
	return "skipped"
}

// graphRows dumps the graph table: every row's cells and timestamp, except
// that degree counters keep only their value (Increment stamps each
// addition, so n additions of 1 and one of n differ in timestamp only).
func graphRows(t *testing.T, s *Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := s.scanAll(bg, scanRange{table: keys.TableGraph, family: keys.FamilyGraph}, func(rw row) (bool, error) {
		if isResidue(rw) {
			return true, nil // a deleted row's: absent
		}
		var b strings.Builder
		for _, q := range slices.Sorted(maps.Keys(rw.cells)) {
			if opColumns[q] {
				continue // which op wrote it
			}
			fmt.Fprintf(&b, "%s=%x ", q, rw.cells[q])
		}
		if _, err := keys.DecodeDegree(rw.key); err != nil {
			fmt.Fprintf(&b, "@%d", rw.ts)
		}
		out[fmt.Sprintf("%x", rw.key)] = b.String()
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestImportRelationshipsMatchesOneAtATime(t *testing.T) {
	b := relationshipBatch()
	testMatchesOneAtATime(t, b, len(b.input), 5, 2, 1)
}

func TestImportRelationshipsErrorsKeepTheirKind(t *testing.T) {
	s := newTestStoreWithClock(t, newFakeClock())
	importSetup(t, s)
	outs, err := s.ImportRelationships(bg, importInput())
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int]error{4: ErrNotFound, 5: ErrNotFound, 6: ErrInvalidInput, 7: ErrInvalidInput,
		8: ErrInvalidInput, 10: ErrConflict, 12: ErrNotFound} {
		if !errors.Is(outs[i].Err, want) {
			t.Errorf("line %d: %v, want %v", i, outs[i].Err, want)
		}
	}
}

// relationshipBatch is ImportRelationships of importInput.
func relationshipBatch() batchImport[RelationshipImport] {
	input := importInput()
	return batchImport[RelationshipImport]{
		input: input,
		setup: importSetup,
		one: func(s *Store, r RelationshipImport) (bool, error) {
			return s.ImportRelationship(bg, r.Key, r.Properties, r.Created, r.Updated)
		},
		batch:  (*Store).ImportRelationships,
		done:   func(t *testing.T, s *Store) { checkGraphInvariants(t, s) },
		repair: repairTwice,
		rows:   graphRows,
	}
}

// The batch import writes relationship rows, then index rows, then
// counters; a crash at any point between them leaves what Repair fixes,
// and a rerun of the import then completes it.
func TestImportRelationshipsRepairAfterCrashAtEveryPoint(t *testing.T) {
	testCrashAtEveryPoint(t, relationshipBatch(), "import-create", "import-index", "import-degrees")
}

// Whatever prefix of the batch import's writes reaches the store, inside a
// SendBatch or between them, Repair restores the invariants.
func TestImportRelationshipsRepairAfterCrashAfterEveryWrite(t *testing.T) {
	testCrashAfterEveryWrite(t, relationshipBatch())
}

// batchImport is a batch import of input, with what its tests need.
type batchImport[T any] struct {
	input []T
	setup func(t *testing.T, s *Store) // the rows the import meets
	// one imports an item a line at a time, batch many at once.
	one   func(s *Store, item T) (created bool, err error)
	batch func(s *Store, ctx context.Context, items []T) ([]ImportOutcome, error)
	// done finishes an import that ran to its end (as the importer does)
	// and checks the invariants.
	done func(t *testing.T, s *Store)
	// repair restores the invariants after a crash and checks them.
	repair func(t *testing.T, s *Store)
	// rows dumps what the import writes, for comparison.
	rows func(t *testing.T, s *Store) map[string]string
	// checkCreated, if set, checks after a crash, before any repair, that
	// the items reported created have all their writes.
	checkCreated func(t *testing.T, s *Store, outs []ImportOutcome)
	// clock is the clock of the stores; nil: newFakeClock.
	clock func() *fakeClock
}

func (b batchImport[T]) newClock() *fakeClock {
	if b.clock == nil {
		return newFakeClock()
	}
	return b.clock()
}

// run imports all of b.input as one batch.
func (b batchImport[T]) run(s *Store) ([]ImportOutcome, error) {
	return b.batch(s, bg, b.input)
}

// testMatchesOneAtATime imports b.input in batches of each size and checks
// that every line has the outcome, and the store the rows, that importing
// it a line at a time gives; then that a rerun skips every line not in
// error and changes nothing.
func testMatchesOneAtATime[T any](t *testing.T, b batchImport[T], sizes ...int) {
	one := newTestStoreWithClock(t, b.newClock())
	b.setup(t, one)
	want := make([]string, len(b.input))
	for i, item := range b.input {
		want[i] = outcomeString(b.one(one, item))
		t.Logf("line %d: %s", i, want[i])
	}
	b.done(t, one)
	wantRows := b.rows(t, one)

	for _, size := range sizes {
		t.Run(fmt.Sprintf("batches of %d", size), func(t *testing.T) {
			s := newTestStoreWithClock(t, b.newClock())
			b.setup(t, s)
			var got []string
			for batch := range slices.Chunk(b.input, size) {
				outs, err := b.batch(s, bg, batch)
				if err != nil || len(outs) != len(batch) {
					t.Fatalf("batch import: %d outcomes for %d, %v", len(outs), len(batch), err)
				}
				for _, o := range outs {
					got = append(got, outcomeString(o.Created, o.Err))
				}
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("line %d: batch says %q, one at a time %q", i, got[i], want[i])
				}
			}
			b.done(t, s)
			gotRows := b.rows(t, s)
			for k, w := range wantRows {
				if g, ok := gotRows[k]; !ok || g != w {
					t.Errorf("row %s: batch wrote %q, one at a time %q", k, g, w)
				}
			}
			for k, g := range gotRows {
				if _, ok := wantRows[k]; !ok {
					t.Errorf("row %s: batch wrote %q, one at a time nothing", k, g)
				}
			}

			// A rerun skips every line that is not in error.
			outs, err := b.run(s)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range outs {
				if o.Created || (o.Err != nil && !strings.HasPrefix(want[i], "error")) {
					t.Errorf("rerun, line %d: %s (first run: %s)", i, outcomeString(o.Created, o.Err), want[i])
				}
			}
			if after := b.rows(t, s); !maps.Equal(after, gotRows) {
				t.Errorf("a rerun changed rows")
			}
		})
	}
}

// testCrashAtEveryPoint crashes b at each fault point it passes, which
// must include points, then repairs and reruns it (see rerunMatches).
func testCrashAtEveryPoint[T any](t *testing.T, b batchImport[T], points ...string) {
	clean := newTestStoreWithClock(t, b.newClock())
	b.setup(t, clean)
	passed := faultPoints(t, clean, func() error {
		_, err := b.run(clean)
		return err
	})
	t.Logf("fault points: %v", passed)
	for _, p := range points {
		if !slices.Contains(passed, p) {
			t.Fatalf("no fault point %s in %v", p, passed)
		}
	}
	b.done(t, clean)
	wantRows := b.rows(t, clean)
	for i, point := range passed {
		t.Run(fmt.Sprintf("%d-%s", i, point), func(t *testing.T) {
			s := newTestStoreWithClock(t, b.newClock())
			b.setup(t, s)
			seen := 0
			s.fault = func(string) error {
				if seen == i {
					return errCrash
				}
				seen++
				return nil
			}
			outs, err := b.run(s)
			if !errors.Is(err, errCrash) {
				t.Fatalf("import did not crash at %s: %v", point, err)
			}
			checkSomeLineCrashed(t, outs)
			s.fault = nil
			if b.checkCreated != nil {
				b.checkCreated(t, s, outs)
			}
			b.repair(t, s)
			rerunMatches(t, s, b, wantRows)
		})
	}
}

// repairTwice runs Repair, checks the invariants, and checks that a second
// Repair finds nothing.
func repairTwice(t *testing.T, s *Store) {
	t.Helper()
	report, err := s.Repair(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("repair: %v", report)
	checkGraphInvariants(t, s)
	again, err := s.Repair(bg)
	if err != nil || len(again) != 0 {
		t.Fatalf("second repair still fixed %v, %v", again, err)
	}
}

// rerunMatches reruns the import and checks that the rows are those of an
// import that never crashed.
func rerunMatches[T any](t *testing.T, s *Store, b batchImport[T], want map[string]string) {
	t.Helper()
	if _, err := b.run(s); err != nil {
		t.Fatal(err)
	}
	b.done(t, s)
	got := b.rows(t, s)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("after a crash, Repair and a rerun, row %s = %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("after a crash, Repair and a rerun: %d rows, want %d", len(got), len(want))
	}
}

// crashingClient passes calls on until it has let budget writes through,
// then fails every write as a killed process would never make them. It
// splits a SendBatch into its calls, so a crash can fall inside a batch
// (HBase applies a batch's mutations independently).
type crashingClient struct {
	gohbase.Client
	budget atomic.Int64
}

func (c *crashingClient) write() error {
	if c.budget.Add(-1) < 0 {
		return errCrash
	}
	return nil
}

func (c *crashingClient) Put(p *hrpc.Mutate) (*hrpc.Result, error) {
	if err := c.write(); err != nil {
		return nil, err
	}
	return c.Client.Put(p)
}

func (c *crashingClient) Delete(d *hrpc.Mutate) (*hrpc.Result, error) {
	if err := c.write(); err != nil {
		return nil, err
	}
	return c.Client.Delete(d)
}

func (c *crashingClient) Increment(i *hrpc.Mutate) (int64, error) {
	if err := c.write(); err != nil {
		return 0, err
	}
	return c.Client.Increment(i)
}

func (c *crashingClient) CheckAndMutate(cam *hrpc.CheckAndMutate) (bool, error) {
	if err := c.write(); err != nil {
		return false, err
	}
	return c.Client.CheckAndMutate(cam)
}

func (c *crashingClient) SendBatch(ctx context.Context, batch []hrpc.Call) ([]hrpc.RPCResult, bool) {
	res := make([]hrpc.RPCResult, len(batch))
	allOK := true
	for i, call := range batch {
		// Every call but a Get writes: a Mutate, or the store's Increment
		// with a nonce, which embeds one (a client without SendRPC gets
		// it as a batch of one).
		if _, ok := call.(*hrpc.Get); !ok {
			if err := c.write(); err != nil {
				res[i].Error, allOK = err, false
				continue
			}
		}
		r, ok := c.Client.SendBatch(ctx, []hrpc.Call{call})
		res[i], allOK = r[0], allOK && ok
	}
	return res, allOK
}

// testCrashAfterEveryWrite lets b make n of its writes, for each n short
// of all of them, failing the rest as a killed process would never make
// them, then repairs and reruns it (see rerunMatches).
func testCrashAfterEveryWrite[T any](t *testing.T, b batchImport[T]) {
	open := func(t *testing.T) (*embedded.Client, *Store) {
		clk := b.newClock()
		db := openTestEngine(t, clk)
		s, err := New(db, Options{Clock: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		b.setup(t, s)
		return db, s
	}
	const unlimited = 1 << 30
	db, clean := open(t)
	counter := &crashingClient{Client: db}
	counter.budget.Store(unlimited)
	counting, err := New(counter, Options{Clock: clean.clock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.run(counting); err != nil {
		t.Fatal(err)
	}
	writes := int(unlimited - counter.budget.Load())
	b.done(t, clean)
	wantRows := b.rows(t, clean)
	t.Logf("the import makes %d writes", writes)
	for n := range writes {
		t.Run(fmt.Sprintf("after %d writes", n), func(t *testing.T) {
			db, s := open(t)
			crash := &crashingClient{Client: db}
			crash.budget.Store(int64(n))
			crashing, err := New(crash, Options{Clock: s.clock})
			if err != nil {
				t.Fatal(err)
			}
			outs, err := b.run(crashing)
			if err != nil {
				t.Fatal(err) // the store cannot tell a crash from a failed write
			}
			checkSomeLineCrashed(t, outs)
			if b.checkCreated != nil {
				b.checkCreated(t, s, outs)
			}
			b.repair(t, s)
			rerunMatches(t, s, b, wantRows)
		})
	}
}

// A batch larger than writeChunk sends its writes in several SendBatches,
// each at most writeChunk calls, and still imports every relationship.
func TestImportRelationshipsChunksLargeBatches(t *testing.T) {
	s := newTestStore(t)
	const nodes, rels = 40, 1500
	for i := range nodes {
		mustNode(t, s, fmt.Sprint("n", i), nil)
	}
	var input []RelationshipImport
	want := map[DegreeKey]int64{}
	for i := range rels {
		k := RelationshipKey{fmt.Sprint("n", i%nodes), fmt.Sprint("t", i/(nodes*nodes)), fmt.Sprint("n", (i/nodes)%nodes)}
		input = append(input, RelationshipImport{Key: k, Created: time.UnixMilli(int64(i)), Updated: time.UnixMilli(int64(i))})
		want[DegreeKey{k.Start, Outgoing, k.Type}]++
		want[DegreeKey{k.End, Incoming, k.Type}]++
	}
	rec := &callLog{}
	outs, err := s.ImportRelationships(WithTracer(bg, rec), input)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		if !o.Created || o.Err != nil {
			t.Fatalf("relationship %d: %+v", i, o)
		}
	}
	// The 3000 index Puts go out as 1024 + 1024 + 952; the reads (40
	// nodes, 1500 rows read back) and the Increments are not split.
	var sizes []int
	for _, c := range rec.take() {
		if c.Op == "Batch" {
			sizes = append(sizes, len(c.Rows))
		}
	}
	for _, n := range []int{writeChunk, writeChunk, 2*rels - 2*writeChunk, nodes, rels} {
		i := slices.Index(sizes, n)
		if i < 0 {
			t.Fatalf("no SendBatch of %d rows in %v", n, sizes)
		}
		sizes = slices.Delete(sizes, i, i+1)
	}
	if len(sizes) != 1 || sizes[0] > writeChunk {
		t.Fatalf("SendBatches besides the reads and index Puts: %v, want one of Increments", sizes)
	}
	checkGraphInvariants(t, s)
	checkDegrees(t, s, want)
}

// checkDegrees checks the degree counters against want.
func checkDegrees(t *testing.T, s *Store, want map[DegreeKey]int64) {
	t.Helper()
	ks := slices.Collect(maps.Keys(want))
	got, err := s.Degrees(bg, ks)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range ks {
		if got[i] != want[k] {
			t.Errorf("degree %v = %d, want %d", k, got[i], want[k])
		}
	}
}

// checkSomeLineCrashed fails the test unless an outcome carries the crash.
func checkSomeLineCrashed(t *testing.T, outs []ImportOutcome) {
	t.Helper()
	for _, o := range outs {
		if errors.Is(o.Err, errCrash) {
			return
		}
	}
	t.Errorf("no line reports the crash")
}
