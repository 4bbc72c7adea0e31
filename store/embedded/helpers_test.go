package embedded_test

// Helpers of every test file of this package: the spec tables, a fake
// clock, an engine that closes with the test, and requests that fail it.

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/embedded"
)

// specT0 is the fake clock's start in milliseconds: above every explicit
// timestamp the tests use (1..10_000), and less than a day (the default
// DeleteMarkerHorizon) after them, so that no compaction, not even one the
// engine runs in the background, may purge their delete markers unless a
// test moves the clock on purpose.
const specT0 int64 = 50_000_000 // about 13.9h after the epoch

// specTable has two families so that family deletes can be told apart from
// row deletes; specOther exists so that "unknown family" is not "unknown
// table".
const (
	specTable = "t"
	specOther = "u"
)

func specTables() map[string][]string {
	return map[string][]string{specTable: {"f", "g"}, specOther: {"x"}}
}

// fakeClock is an injectable clock whose time only moves when a test says so.
// Safe for concurrent use.
type fakeClock struct{ ms atomic.Int64 }

func newFakeClock(ms int64) *fakeClock {
	c := &fakeClock{}
	c.ms.Store(ms)
	return c
}

func (c *fakeClock) Now() time.Time          { return time.UnixMilli(c.ms.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }
func (c *fakeClock) Millis() uint64          { return uint64(c.ms.Load()) }

// openSpec opens a fresh engine with opts, filling in the spec tables and a
// silent logger, and closes it when the test ends.
func openSpec(tb testing.TB, opts embedded.Options) *embedded.Client {
	tb.Helper()
	if opts.Tables == nil {
		opts.Tables = specTables()
	}
	opts.Logger = zerolog.Nop()
	c, err := embedded.Open(opts)
	if err != nil {
		tb.Fatalf("embedded.Open: %v", err)
	}
	tb.Cleanup(c.Close)
	return c
}

// newSpecClient is a fresh in-memory engine on clock, seen as the
// gohbase.Client that package store uses.
func newSpecClient(tb testing.TB, clock *fakeClock) gohbase.Client {
	tb.Helper()
	var cl gohbase.Client = openSpec(tb, embedded.Options{Clock: clock.Now})
	return cl
}

// vals builds the values map of a one-cell mutation.
func vals(family, qualifier, value string) map[string]map[string][]byte {
	return map[string]map[string][]byte{family: {qualifier: []byte(value)}}
}

func at(ms uint64) func(hrpc.Call) error { return hrpc.TimestampUint64(ms) }

func mustPut(tb testing.TB, cl gohbase.Client, row string, values map[string]map[string][]byte,
	opts ...func(hrpc.Call) error) {
	tb.Helper()
	p, err := hrpc.NewPutStr(context.Background(), specTable, row, values, opts...)
	if err != nil {
		tb.Fatalf("NewPutStr: %v", err)
	}
	if _, err := cl.Put(p); err != nil {
		tb.Fatalf("Put %s %v: %v", row, values, err)
	}
}

func mustDel(tb testing.TB, cl gohbase.Client, row string, values map[string]map[string][]byte,
	opts ...func(hrpc.Call) error) {
	tb.Helper()
	d, err := hrpc.NewDelStr(context.Background(), specTable, row, values, opts...)
	if err != nil {
		tb.Fatalf("NewDelStr: %v", err)
	}
	if _, err := cl.Delete(d); err != nil {
		tb.Fatalf("Delete %s %v: %v", row, values, err)
	}
}

func mustGet(tb testing.TB, cl gohbase.Client, row string, opts ...func(hrpc.Call) error) *hrpc.Result {
	tb.Helper()
	g, err := hrpc.NewGetStr(context.Background(), specTable, row, opts...)
	if err != nil {
		tb.Fatalf("NewGetStr: %v", err)
	}
	res, err := cl.Get(g)
	if err != nil {
		tb.Fatalf("Get %s: %v", row, err)
	}
	if res == nil {
		tb.Fatalf("Get %s: nil *hrpc.Result (gohbase always returns a Result)", row)
	}
	return res
}

func mustInc(tb testing.TB, cl gohbase.Client, row, family, qualifier string, amount int64) int64 {
	tb.Helper()
	inc, err := hrpc.NewIncStrSingle(context.Background(), specTable, row, family, qualifier, amount)
	if err != nil {
		tb.Fatalf("NewIncStrSingle: %v", err)
	}
	n, err := cl.Increment(inc)
	if err != nil {
		tb.Fatalf("Increment %s %s:%s: %v", row, family, qualifier, err)
	}
	return n
}

// cellsTS renders cells as "f:q=value@ts", in result order.
func cellsTS(cells []*hrpc.Cell) []string {
	out := make([]string, 0, len(cells))
	for _, c := range cells {
		ts := "nil"
		if c.Timestamp != nil {
			ts = fmt.Sprint(*c.Timestamp)
		}
		out = append(out, fmt.Sprintf("%s:%s=%s@%s", c.Family, c.Qualifier, c.Value, ts))
	}
	return out
}

// cellsKV renders cells as "f:q=value", in result order.
func cellsKV(cells []*hrpc.Cell) []string {
	out := make([]string, 0, len(cells))
	for _, c := range cells {
		out = append(out, fmt.Sprintf("%s:%s=%s", c.Family, c.Qualifier, c.Value))
	}
	return out
}

// rowsKV renders scan results as "row f:q=value", one string per cell.
func rowsKV(results []*hrpc.Result) []string {
	var out []string
	for _, r := range results {
		for _, c := range r.Cells {
			out = append(out, fmt.Sprintf("%s %s:%s=%s", c.Row, c.Family, c.Qualifier, c.Value))
		}
	}
	return out
}

// rowKeys returns the row of each result; a result whose cells disagree on
// the row is reported as "<mixed>".
func rowKeys(results []*hrpc.Result) []string {
	out := make([]string, 0, len(results))
	for _, r := range results {
		if len(r.Cells) == 0 {
			out = append(out, "<empty>")
			continue
		}
		row := string(r.Cells[0].Row)
		for _, c := range r.Cells[1:] {
			if string(c.Row) != row {
				row = "<mixed>"
				break
			}
		}
		out = append(out, row)
	}
	return out
}

// scanLimit bounds every scan loop so that an engine that never returns
// io.EOF fails the test instead of hanging it.
const scanLimit = 100_000

// scanAll runs scan to the end and returns its rows, or the first error other
// than io.EOF together with the rows read before it.
func scanAll(tb testing.TB, cl gohbase.Client, scan *hrpc.Scan) ([]*hrpc.Result, error) {
	tb.Helper()
	sc := cl.Scan(scan)
	defer sc.Close()
	var out []*hrpc.Result
	for range scanLimit {
		r, err := sc.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	tb.Fatalf("scan did not end after %d rows", scanLimit)
	return nil, nil
}

func mustScan(tb testing.TB, cl gohbase.Client, start, stop string, opts ...func(hrpc.Call) error) []*hrpc.Result {
	tb.Helper()
	s, err := hrpc.NewScanRangeStr(context.Background(), specTable, start, stop, opts...)
	if err != nil {
		tb.Fatalf("NewScanRangeStr: %v", err)
	}
	res, err := scanAll(tb, cl, s)
	if err != nil {
		tb.Fatalf("scan [%q, %q): %v", start, stop, err)
	}
	return res
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

func be64(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

func putRows(tb testing.TB, cl gohbase.Client, rows ...string) {
	tb.Helper()
	for _, r := range rows {
		mustPut(tb, cl, r, vals("f", "a", r))
	}
}

func rowNames(format string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}
