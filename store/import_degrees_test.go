package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/store/hbasefault"
	"github.com/hbgraph/hbgraph/store/keys"
)

// talliedBatch is relationshipBatch counting as the importer does: into
// one DegreeTally per store over all of an import's batches, flushed by
// done (the end of the file), past limit pending counters (0: the
// default) by a batch. A batch that stops early (a crash) drops its
// store's tally, as the crashed process would.
func talliedBatch(limit int) batchImport[RelationshipImport] {
	b := relationshipBatch()
	var mu sync.Mutex
	tallies := map[*Store]*DegreeTally{}
	tallyOf := func(s *Store, drop bool) *DegreeTally {
		mu.Lock()
		defer mu.Unlock()
		t := tallies[s]
		if t == nil {
			t = NewDegreeTally(limit)
			tallies[s] = t
		}
		if drop {
			delete(tallies, s)
		}
		return t
	}
	b.batch = func(s *Store, ctx context.Context, rels []RelationshipImport) ([]ImportOutcome, error) {
		outs, err := s.ImportRelationshipsTallied(ctx, rels, tallyOf(s, false))
		if err != nil {
			tallyOf(s, true)
		}
		return outs, err
	}
	b.done = func(t *testing.T, s *Store) {
		t.Helper()
		if err := s.FlushDegreeTally(bg, tallyOf(s, true)); err != nil {
			t.Fatal(err)
		}
		checkGraphInvariants(t, s)
	}
	return b
}

// Counted over all of an import's batches and written at its end, the
// relationships leave the rows and counters, and get the outcomes, of an
// import a line at a time; so they do when the tally flushes after a
// batch (a limit of one counter).
func TestImportRelationshipsTalliedMatchesOneAtATime(t *testing.T) {
	for _, limit := range []int{0, 1} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			b := talliedBatch(limit)
			testMatchesOneAtATime(t, b, len(b.input), 5, 2, 1)
		})
	}
}

// A crash at any point of a tallied batch loses the tally; Repair counts
// what it held, and a rerun completes the import.
func TestImportRelationshipsTalliedRepairAfterCrashAtEveryPoint(t *testing.T) {
	testCrashAtEveryPoint(t, talliedBatch(0), "import-create", "import-index", "import-degrees")
}

// importAllTallied imports importInput in batches of 5 into tally.
func importAllTallied(t *testing.T, s *Store, tally *DegreeTally) {
	t.Helper()
	for batch := range slices.Chunk(importInput(), 5) {
		if _, err := s.ImportRelationshipsTallied(bg, batch, tally); err != nil {
			t.Fatal(err)
		}
	}
}

// A flush cut short, at its fault point or after any of its writes,
// fails saying what to do, and Repair completes the counts it did not
// write; a rerun of the import then changes nothing.
func TestFlushDegreeTallyRepairAfterCrash(t *testing.T) {
	clean := newTestStoreWithClock(t, newFakeClock())
	importSetup(t, clean)
	tally := NewDegreeTally(0)
	importAllTallied(t, clean, tally)
	if err := clean.FlushDegreeTally(bg, tally); err != nil {
		t.Fatal(err)
	}
	checkGraphInvariants(t, clean)
	want := graphRows(t, clean)
	writes := tally.Flushed()
	if writes < 5 {
		t.Fatalf("the flush wrote %d counters; the input has more", writes)
	}
	check := func(t *testing.T, s *Store, err error) {
		t.Helper()
		if !errors.Is(err, errCrash) || !strings.Contains(err.Error(), "run repair") {
			t.Fatalf("flush cut short: %v, want the crash and what to do", err)
		}
		repairTwice(t, s)
		rerun := NewDegreeTally(0)
		importAllTallied(t, s, rerun)
		if err := s.FlushDegreeTally(bg, rerun); err != nil || rerun.Flushed() != 0 {
			t.Fatalf("the rerun's flush wrote %d counters, %v; it found every relationship", rerun.Flushed(), err)
		}
		if got := graphRows(t, s); !maps.Equal(got, want) {
			t.Errorf("after the cut flush, Repair and a rerun the rows differ from an import never cut:\n got %v\nwant %v", got, want)
		}
	}
	t.Run("at its fault point", func(t *testing.T) {
		s := newTestStoreWithClock(t, newFakeClock())
		importSetup(t, s)
		tally := NewDegreeTally(0)
		importAllTallied(t, s, tally)
		s.fault = func(p string) error {
			if p == "import-degrees-flush" {
				return errCrash
			}
			return nil
		}
		err := s.FlushDegreeTally(bg, tally)
		s.fault = nil
		check(t, s, err)
	})
	for n := range writes {
		t.Run(fmt.Sprintf("after %d writes", n), func(t *testing.T) {
			clk := newFakeClock()
			db := openTestEngine(t, clk)
			s, err := New(db, Options{Clock: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			importSetup(t, s)
			tally := NewDegreeTally(0)
			importAllTallied(t, s, tally)
			crash := &crashingClient{Client: db}
			crash.budget.Store(int64(n))
			crashing, err := New(crash, Options{Clock: s.clock})
			if err != nil {
				t.Fatal(err)
			}
			crashing.flushBackoff = time.Millisecond
			err = crashing.FlushDegreeTally(bg, tally)
			if tally.Flushed() != n {
				t.Errorf("the flush says it wrote %d counters, the crash let %d through", tally.Flushed(), n)
			}
			check(t, s, err)
		})
	}
}

// talliedOverFaults is a store over a fault injector with importInput
// imported into a tally not yet flushed.
func talliedOverFaults(t *testing.T) (*Store, *hbasefault.Client, *DegreeTally) {
	t.Helper()
	clk := newFakeClock()
	fc := hbasefault.New(openTestEngine(t, clk))
	s, err := New(fc, Options{Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	importSetup(t, s)
	tally := NewDegreeTally(0)
	importAllTallied(t, s, tally)
	return s, fc, tally
}

// Each of the flush's Increments, failed before or after it applies or
// applied twice (gohbase's re-send), counts once: the flush sends what
// was not acknowledged again with the same nonces.
func TestFlushDegreeTallyCountsOnceUnderFaults(t *testing.T) {
	for _, mode := range hbasefault.Modes {
		for _, nth := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s of Increment %d", mode, nth), func(t *testing.T) {
				s, fc, tally := talliedOverFaults(t)
				fc.Record(true)
				fc.Add(hbasefault.Rule{Kind: hbasefault.Increment, Table: keys.TableGraph, Nth: nth, Mode: mode})
				if err := s.FlushDegreeTally(bg, tally); err != nil {
					t.Fatal(err)
				}
				if !slices.ContainsFunc(fc.Calls(), func(c hbasefault.Call) bool { return c.Mode == mode }) {
					t.Fatalf("the fault never fired")
				}
				fc.Clear()
				checkGraphInvariants(t, s)
				if report, err := s.Repair(bg); err != nil || len(report) != 0 {
					t.Fatalf("repair after the flush fixed %v, %v", report, err)
				}
			})
		}
	}
}

// A fault on every attempt leaves the counters it names to Repair, and the
// tally says so at every flush after it.
func TestFlushDegreeTallyGivesUp(t *testing.T) {
	s, fc, tally := talliedOverFaults(t)
	fc.Add(hbasefault.Rule{Kind: hbasefault.Increment, Table: keys.TableGraph,
		Match: func(_ string, row []byte) bool { d, err := keys.DecodeDegree(row); return err == nil && d.Node == "c" },
		Mode:  hbasefault.FailBefore})
	s.flushBackoff = time.Millisecond
	err := s.FlushDegreeTally(bg, tally)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "run repair") {
		t.Fatalf("flush: %v, want UNAVAILABLE and what to do", err)
	}
	if err := s.FlushDegreeTally(bg, tally); err == nil {
		t.Fatal("a later flush forgot the failure")
	}
	fc.Clear()
	repairTwice(t, s)
}

// Many batches importing at once into one tally that flushes itself as
// they go (a limit of a few counters) lose no count and count none twice.
func TestDegreeTallyConcurrentBatches(t *testing.T) {
	s := newTestStore(t)
	const nodes, workers, batches, perBatch = 12, 8, 6, 40
	for i := range nodes {
		mustNode(t, s, fmt.Sprint("n", i), nil)
	}
	tally := NewDegreeTally(4)
	want := map[DegreeKey]int64{}
	var inputs [][]RelationshipImport
	seen := map[RelationshipKey]bool{}
	for w := range workers * batches {
		var batch []RelationshipImport
		for i := range perBatch {
			// Every batch ends on the same few nodes: their counters are
			// added to by every worker.
			k := RelationshipKey{fmt.Sprint("n", (w+i)%nodes), fmt.Sprint("t", w%3), fmt.Sprint("n", i%4)}
			batch = append(batch, RelationshipImport{Key: k, Created: time.UnixMilli(int64(w*perBatch + i + 1)),
				Updated: time.UnixMilli(int64(w*perBatch + i + 1))})
			if !seen[k] {
				seen[k] = true
				want[DegreeKey{k.Start, Outgoing, k.Type}]++
				want[DegreeKey{k.End, Incoming, k.Type}]++
			}
		}
		inputs = append(inputs, batch)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := w; b < len(inputs); b += workers {
				outs, err := s.ImportRelationshipsTallied(bg, inputs[b], tally)
				mu.Lock()
				errs = append(errs, err)
				for _, o := range outs {
					errs = append(errs, o.Err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if err := s.FlushDegreeTally(bg, tally); err != nil {
		t.Fatal(err)
	}
	if tally.Flushed() <= len(want) {
		t.Errorf("%d counter writes for %d counters: the batches never flushed the tally", tally.Flushed(), len(want))
	}
	checkDegrees(t, s, want)
	checkGraphInvariants(t, s)
}
