package embedded_test

// Concurrency tests: DESIGN.md "Mutations to one row are atomic, and so is
// CheckAndMutate ... Increment adds to a big-endian int64 cell atomically".
// Run them with -race. They assert on outcomes only, never on timing.

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/hbgraph/hbgraph/store/embedded"
)

const racers = 64

// concurrencyEngines runs f on an in-memory engine and on an on-disk one
// (Sync off: durability is not what these tests are about).
func concurrencyEngines(t *testing.T, f func(t *testing.T, cl gohbase.Client)) {
	t.Helper()
	t.Run("mem", func(t *testing.T) {
		t.Parallel()
		f(t, openSpec(t, embedded.Options{}))
	})
	t.Run("disk", func(t *testing.T) {
		t.Parallel()
		f(t, openSpec(t, embedded.Options{Dir: t.TempDir()}))
	})
}

// [HRegion.checkAndMutate] The check and the mutation happen under the row
// lock: of 64 goroutines that all try to swap the cell from the same old
// value to their own new one, exactly one succeeds, every round.
func TestConcurrentCheckAndMutateOneWinnerPerRound(t *testing.T) {
	t.Parallel()
	concurrencyEngines(t, func(t *testing.T, cl gohbase.Client) {
		const rounds = 50
		var prev []byte // nil: absent, for the first round
		for round := range rounds {
			var (
				wins   atomic.Int32
				winner atomic.Value
				wg     sync.WaitGroup
				errs   = make(chan error, racers)
				start  = make(chan struct{})
			)
			for g := range racers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					mine := fmt.Sprintf("round%d-g%d", round, g)
					p, err := hrpc.NewPutStr(context.Background(), specTable, "cas", vals("f", "v", mine))
					if err != nil {
						errs <- err
						return
					}
					cam := newCAMNoFatal(p, prev)
					<-start
					ok, err := cl.CheckAndMutate(cam)
					if err != nil {
						errs <- fmt.Errorf("g%d: %w", g, err)
						return
					}
					if ok {
						wins.Add(1)
						winner.Store(mine)
					}
				}()
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatalf("round %d: CheckAndMutate: %v", round, err)
			}
			if n := wins.Load(); n != 1 {
				t.Fatalf("round %d: %d CheckAndMutate calls succeeded, want exactly 1", round, n)
			}
			w := winner.Load().(string)
			if got := cellsKV(mustGet(t, cl, "cas").Cells); !slices.Equal(got, []string{"f:v=" + w}) {
				t.Fatalf("round %d: cell = %q, want the winner's value %q", round, got, w)
			}
			prev = []byte(w)
		}
	})
}

// newCAMNoFatal is newCAM for goroutines other than the test's: an EQUAL
// check of f:v against expected. NewCheckAndMutate only fails for a broken
// comparator, which BinaryComparator is not.
func newCAMNoFatal(m *hrpc.Mutate, expected []byte) *hrpc.CheckAndMutate {
	cam, err := hrpc.NewCheckAndMutate(m, "f", "v", pb.CompareType_EQUAL, binaryComparator(expected))
	if err != nil {
		panic(err)
	}
	return cam
}

// [HRegion.increment] Increments are atomic read-modify-writes: 64
// goroutines adding 1 a thousand times each end at exactly 64,000, and,
// since every call returns the sum it produced, the returned sums are
// exactly 1..64,000, each once.
func TestConcurrentIncrementsAreAtomic(t *testing.T) {
	t.Parallel()
	concurrencyEngines(t, func(t *testing.T, cl gohbase.Client) {
		const each = 1000
		seen := make([]atomic.Bool, racers*each+1)
		var wg sync.WaitGroup
		errs := make(chan error, racers)
		for g := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					inc, err := hrpc.NewIncStrSingle(context.Background(), specTable, "counter", "f", "n", 1)
					if err != nil {
						errs <- err
						return
					}
					n, err := cl.Increment(inc)
					if err != nil {
						errs <- fmt.Errorf("g%d: %w", g, err)
						return
					}
					if n < 1 || n > racers*each {
						errs <- fmt.Errorf("g%d: Increment returned %d, outside 1..%d", g, n, racers*each)
						return
					}
					if seen[n].Swap(true) {
						errs <- fmt.Errorf("g%d: Increment returned %d twice", g, n)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		res := mustGet(t, cl, "counter")
		if len(res.Cells) != 1 || string(res.Cells[0].Value) != string(be64(racers*each)) {
			t.Fatalf("counter = %q, want one cell holding %d", cellsTS(res.Cells), racers*each)
		}
	})
}

// [book "Put"] Puts of different columns of one row do not overwrite each
// other: 64 goroutines each writing its own qualifier leave 64 cells.
func TestConcurrentPutsToOneRowKeepEveryColumn(t *testing.T) {
	t.Parallel()
	concurrencyEngines(t, func(t *testing.T, cl gohbase.Client) {
		var wg sync.WaitGroup
		errs := make(chan error, racers)
		for g := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				q := fmt.Sprintf("q%02d", g)
				p, err := hrpc.NewPutStr(context.Background(), specTable, "row", vals("f", q, q))
				if err == nil {
					_, err = cl.Put(p)
				}
				if err != nil {
					errs <- fmt.Errorf("g%d: %w", g, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		want := make([]string, racers)
		for g := range want {
			want[g] = fmt.Sprintf("f:q%02d=q%02d", g, g)
		}
		if got := cellsKV(mustGet(t, cl, "row").Cells); !slices.Equal(got, want) {
			t.Fatalf("row has %d cells %q, want all %d", len(got), got, racers)
		}
	})
}

// DESIGN.md "Reads see a row before or after a mutation, never half of it":
// while writers rewrite rows with two cells that always carry the same
// value, scans and gets running beside them see both cells agree, rows in
// order, and never an error.
func TestConcurrentReadsSeeWholeRowMutations(t *testing.T) {
	t.Parallel()
	concurrencyEngines(t, func(t *testing.T, cl gohbase.Client) {
		const rows, writes = 20, 200
		rowKey := func(i int) string { return fmt.Sprintf("w%02d", i) }
		for i := range rows {
			mustPut(t, cl, rowKey(i), map[string]map[string][]byte{"f": {"a": []byte("0")}, "g": {"b": []byte("0")}})
		}
		var (
			wg   sync.WaitGroup
			done = make(chan struct{})
			errs = make(chan error, 16)
		)
		report := func(err error) {
			select {
			case errs <- err:
			default:
			}
		}
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range writes {
					v := []byte(fmt.Sprint(w, "-", n))
					p, err := hrpc.NewPutStr(context.Background(), specTable, rowKey((w*7+n)%rows),
						map[string]map[string][]byte{"f": {"a": v}, "g": {"b": v}})
					if err == nil {
						_, err = cl.Put(p)
					}
					if err != nil {
						report(err)
						return
					}
				}
			}()
		}
		var readers sync.WaitGroup
		for range 2 {
			readers.Add(1)
			go func() {
				defer readers.Done()
				for {
					select {
					case <-done:
						return
					default:
					}
					s, err := hrpc.NewScanStr(context.Background(), specTable, hrpc.NumberOfRows(3))
					if err != nil {
						report(err)
						return
					}
					sc := cl.Scan(s)
					var last string
					for {
						r, err := sc.Next()
						if err != nil {
							if err != io.EOF {
								report(fmt.Errorf("scan: %w", err))
							}
							break
						}
						if len(r.Cells) != 2 || string(r.Cells[0].Value) != string(r.Cells[1].Value) {
							report(fmt.Errorf("scan saw a half-written row: %q", cellsKV(r.Cells)))
						}
						row := string(r.Cells[0].Row)
						if row <= last {
							report(fmt.Errorf("scan rows out of order: %q after %q", row, last))
						}
						last = row
					}
					sc.Close()
					g, _ := hrpc.NewGetStr(context.Background(), specTable, rowKey(3))
					res, err := cl.Get(g)
					if err != nil {
						report(fmt.Errorf("get: %w", err))
						return
					}
					if len(res.Cells) != 2 || string(res.Cells[0].Value) != string(res.Cells[1].Value) {
						report(fmt.Errorf("get saw a half-written row: %q", cellsKV(res.Cells)))
					}
				}
			}()
		}
		wg.Wait()
		close(done)
		readers.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}
