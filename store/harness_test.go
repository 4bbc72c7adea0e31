package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/hbasefault"
	"github.com/hbgraph/hbgraph/store/keys"
)

// fakeClock is a settable millisecond clock shared by a test's store and
// engine. Each reading advances it by step (0: frozen).
type fakeClock struct {
	ms   atomic.Int64
	step int64
}

func (c *fakeClock) Now() time.Time          { return time.UnixMilli(c.ms.Add(c.step) - c.step) }
func (c *fakeClock) Advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// testClockStart is 2026-01-01T00:00:00Z: far past the engine's delete
// marker horizon, so markers behave as in production.
const testClockStart = 1767225600000

// newTestStore opens a fresh in-memory engine and a Store over it that share
// a real-time clock; use newTestStoreWithClock to control time.
func newTestStore(t testing.TB) *Store {
	t.Helper()
	return newTestStoreWithClock(t, nil)
}

// newTestStoreWithClock is newTestStore with both the engine and the store
// reading clk (nil: time.Now).
func newTestStoreWithClock(t testing.TB, clk *fakeClock) *Store {
	t.Helper()
	var now func() time.Time
	if clk != nil {
		now = clk.Now
	}
	s, err := New(openTestEngine(t, clk), Options{Clock: now, EngineSharesClock: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// storesOnOneEngine opens n Stores over one fresh engine, all reading clk:
// replicas whose interleavings a test drives through their fault points.
// steppedStores are n stores over one engine on a fake clock that moves
// on a millisecond at every reading: the interleaving tests' replicas.
func steppedStores(t testing.TB, n int) []*Store {
	t.Helper()
	clk := newFakeClock()
	clk.step = 1
	return storesOnOneEngine(t, clk, n)
}

// createOp is a context with the op of who's createRelationship of k
// under the Idempotency-Key key.
func createOp(who, key string, k RelationshipKey) context.Context {
	return WithOp(bg, DeriveOpID(who, key, "0", "createRelationship", k.ID()))
}

// faultedStores are a store over the fault injector and another store
// over the same engine without it, on a clock that moves on a millisecond
// at every reading: a client whose calls fail, and another client.
func faultedStores(t testing.TB) (s *Store, fc *hbasefault.Client, other *Store) {
	t.Helper()
	clk := newFakeClock()
	clk.step = 1
	return faultedStoresOn(t, clk)
}

// faultedStoresOn is faultedStores on clk, for a test that reads it too.
func faultedStoresOn(t testing.TB, clk *fakeClock) (s *Store, fc *hbasefault.Client, other *Store) {
	t.Helper()
	fc = hbasefault.New(openTestEngine(t, clk))
	var err error
	if s, err = New(fc, Options{Clock: clk.Now}); err != nil {
		t.Fatal(err)
	}
	if other, err = New(fc.Inner(), Options{Clock: clk.Now}); err != nil {
		t.Fatal(err)
	}
	return s, fc, other
}

func storesOnOneEngine(t testing.TB, clk *fakeClock, n int) []*Store {
	t.Helper()
	db := openTestEngine(t, clk)
	out := make([]*Store, n)
	for i := range out {
		s, err := New(db, Options{Clock: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		out[i] = s
	}
	return out
}

// openTestEngine opens a fresh in-memory engine with hbgraph's tables,
// reading clk (nil: time.Now), closed when t ends: the one set-up of the
// package's tests, for those that wrap the engine in a client of their own.
func openTestEngine(t testing.TB, clk *fakeClock) *embedded.Client {
	t.Helper()
	var now func() time.Time
	if clk != nil {
		now = clk.Now
	}
	db, err := embedded.Open(embedded.Options{Tables: keys.Tables(), Logger: zerolog.Nop(), Clock: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ms.Store(testClockStart)
	return c
}

// storedRows returns every cell of every table, keyed by table and row,
// for checks that nothing changed or nothing is left.
func storedRows(t testing.TB, s *Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for table, fams := range keys.Tables() {
		err := s.scanAll(context.Background(), scanRange{table: table, family: fams[0]}, func(rw row) (bool, error) {
			if isResidue(rw) {
				return true, nil // a deleted row's: absent
			}
			qs := slices.Sorted(maps.Keys(rw.cells))
			var b strings.Builder
			for _, q := range qs {
				if table == keys.TableGraph && opColumns[q] {
					continue // which op wrote a row: random unless the test fixed it
				}
				fmt.Fprintf(&b, "%q=%x ", q, rw.cells[q])
			}
			out[table+"/"+string(rw.key)] = fmt.Sprint(b.String(), rw.ts)
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// opColumns are the exactly-once columns of graph rows (see once.go).
var opColumns = map[string]bool{keys.QualCreateOp: true, keys.QualUpdateOps: true, keys.QualDeleteOp: true,
	keys.QualPendingCreate: true, keys.QualGone: true}
