package embedded_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/embedded"
)

// TestRowCacheKeptAcrossWritesReadsAsPebble applies the same random writes
// (puts at the clock, older and newer timestamps, column and family
// deletes, increments, compare-and-sets) to an engine with the result
// cache and one without, reading every row after each write (whole rows,
// one family, one column: so that a cached row is there to be kept across
// the next write), rows growing past the 64 KiB the cache keeps and
// shrinking again: every read answers the same, cells, values and
// timestamps.
func TestRowCacheKeptAcrossWritesReadsAsPebble(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clockC, clockP := newFakeClock(1000), newFakeClock(1000)
	cached := openSpec(t, embedded.Options{Clock: clockC.Now})
	plain := openSpec(t, embedded.Options{Clock: clockP.Now, ResultCacheBytes: -1})
	rng := rand.New(rand.NewPCG(1, 24))
	rows := []string{"r1", "r2", "r3"}
	quals := []string{"a", "b", "c", "xu", "\x00z"}
	fams := []string{"f", "g"}
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	read := func(step int, what string, opts ...func(hrpc.Call) error) {
		t.Helper()
		for _, row := range rows {
			want := cellsTS(mustGet(t, plain, row, opts...).Cells)
			for range 2 { // the second from the cache, if the first kept it
				if got := cellsTS(mustGet(t, cached, row, opts...).Cells); !slices.Equal(got, want) {
					t.Fatalf("step %d (%s), %s: cached engine read %q, Pebble %q", step, what, row, got, want)
				}
			}
		}
	}
	both := func(f func(cl *embedded.Client) error) {
		t.Helper()
		errC, errP := f(cached), f(plain)
		if (errC == nil) != (errP == nil) {
			t.Fatalf("cached engine: %v, plain: %v", errC, errP)
		}
	}
	for step := range 1500 {
		row, fam, qual := pick(rows), pick(fams), pick(quals)
		value := []byte(fmt.Sprint(rng.IntN(1000)))
		if rng.IntN(20) == 0 { // rows grow past what the cache keeps (64 KiB)
			value = append(value, bytes.Repeat([]byte("v"), 70<<10)...)
		}
		var opts []func(hrpc.Call) error
		var what string
		switch rng.IntN(4) {
		case 0: // the clock
		case 1:
			opts, what = append(opts, at(clockC.Millis()-uint64(rng.IntN(5)))), "older "
		case 2:
			opts, what = append(opts, at(clockC.Millis()+uint64(rng.IntN(5)))), "newer "
		}
		switch op := rng.IntN(8); op {
		case 0, 1, 2:
			what += "put"
			values := map[string]map[string][]byte{fam: {qual: value}}
			if rng.IntN(2) == 0 {
				values[pick(fams)] = map[string][]byte{pick(quals): []byte("second")}
			}
			both(func(cl *embedded.Client) error {
				p, _ := hrpc.NewPutStr(ctx, specTable, row, values, opts...)
				_, err := cl.Put(p)
				return err
			})
		case 3:
			what += "delete column"
			both(func(cl *embedded.Client) error {
				d, _ := hrpc.NewDelStr(ctx, specTable, row, map[string]map[string][]byte{fam: {qual: nil}}, opts...)
				_, err := cl.Delete(d)
				return err
			})
		case 4:
			what += "delete family"
			both(func(cl *embedded.Client) error {
				d, _ := hrpc.NewDelStr(ctx, specTable, row, map[string]map[string][]byte{fam: nil}, opts...)
				_, err := cl.Delete(d)
				return err
			})
		case 5:
			what = "increment"
			amount := int64(rng.IntN(3))
			both(func(cl *embedded.Client) error {
				inc, _ := hrpc.NewIncStrSingle(ctx, specTable, row, fam, "n", amount)
				_, err := cl.Increment(inc)
				return err
			})
		case 6, 7:
			what += "compare-and-set"
			expected := []byte(fmt.Sprint(rng.IntN(1000)))
			if rng.IntN(2) == 0 { // the current value: the put applies
				for _, c := range mustGet(t, plain, row).Cells {
					if string(c.Family) == fam && string(c.Qualifier) == qual {
						expected = c.Value
					}
				}
			}
			values := map[string]map[string][]byte{fam: {qual: value, pick(quals): []byte("cas")}}
			both(func(cl *embedded.Client) error {
				p, _ := hrpc.NewPutStr(ctx, specTable, row, values, opts...)
				_, err := cl.CheckAndPut(p, fam, qual, expected)
				return err
			})
		}
		// The last read's selection is the one the cache holds at the next
		// write: mostly whole rows, as the store reads them.
		whole := func() { read(step, what) }
		family := func() { read(step, what+", family "+fam, hrpc.Families(map[string][]string{fam: nil})) }
		read(step, what+", one column", hrpc.Families(map[string][]string{fam: {qual}}))
		if step%3 == 0 {
			whole()
			family()
		} else {
			family()
			whole()
		}
		if rng.IntN(3) == 0 {
			clockC.Advance(1e6)
			clockP.Advance(1e6)
		}
	}
}
