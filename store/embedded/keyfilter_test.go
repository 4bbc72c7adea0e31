package embedded_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/pagescan"
)

// A write that the key filter spares a read must find what a read would
// have: here every column the writes touch was written before the engine
// was opened again, so only the filter built from the files knows them.
func TestWritesAfterReopenSeeTheRecordsTheFilterWasBuiltFrom(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock(specT0)
	future := uint64(specT0 + 60_000)
	c := openSpec(t, embedded.Options{Dir: dir, Clock: clock.Now})
	mustPut(t, c, "r", vals("f", "a", "1"))
	mustDel(t, c, "r", vals("f", "b", ""), at(future)) // a column delete marker ahead of the clock
	mustInc(t, c, "r", "g", "n", 5)
	c.Close()

	c = openSpec(t, embedded.Options{Dir: dir, Clock: clock.Now})
	embedded.WaitKeyFilter(t, c)
	if c.MayHaveRecordOfColumn(specTable, "r", "f", "never") {
		t.Log("a column never written may be there (a false positive): this test then proves less")
	}
	want := []string{"f:a=1", "g:n=" + string(be64(5))}
	if got := cellsKV(mustGet(t, c, "r").Cells); !slices.Equal(got, want) {
		t.Errorf("Get after reopen: %q, want %q", got, want)
	}
	out := make([]pagescan.Row, 1)
	c.GetRows(context.Background(), specTable, [][]byte{[]byte("r")}, "f", out)
	if out[0].Err != nil || len(out[0].Cells) != 1 {
		t.Errorf("GetRows of family f after reopen: %d cells, %v; want f:a", len(out[0].Cells), out[0].Err)
	}
	for _, q := range [][2]string{{"f", "a"}, {"f", "b"}, {"g", "n"}} {
		if !c.MayHaveRecordOfColumn(specTable, "r", q[0], q[1]) {
			t.Errorf("the filter built at open does not know %s:%s", q[0], q[1])
		}
	}
	if n := mustInc(t, c, "r", "g", "n", 1); n != 6 {
		t.Errorf("Increment after reopen: %d, want 6 (5 stored before)", n)
	}
	mustPut(t, c, "r", vals("f", "b", "hidden")) // at the clock: under the marker
	p, err := hrpc.NewPutStr(context.Background(), specTable, "r", vals("f", "a", "2"))
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := c.CheckAndPut(p, "f", "a", nil); err != nil || ok {
		t.Errorf("CheckAndPut if f:a is absent: %v, %v; want false (it holds 1)", ok, err)
	}
	got := cellsKV(mustGet(t, c, "r").Cells)
	if want := []string{"f:a=1", "g:n=\x00\x00\x00\x00\x00\x00\x00\x06"}; !slices.Equal(got, want) {
		t.Errorf("row %q, want %q", got, want)
	}
}

// Filters built while writers add rows and columns miss none: every
// writer makes a new column and a new row, reads the row back and
// increments both a second time right after, while the filter is built
// again and again. A row missed would read as absent; a column missed
// would be read as absent by its second Increment, which would then
// count 1, not 2.
func TestKeyFilterBuiltDuringWritesMissesNoKey(t *testing.T) {
	ctx := context.Background()
	c := openSpec(t, embedded.Options{ResultCacheBytes: -1})
	mustPut(t, c, "seed", vals("f", "a", "x"))
	const writers, columns = 8, 1000
	stop := make(chan struct{})
	var builds sync.WaitGroup
	builds.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			embedded.RebuildKeyFilter(t, c)
		}
	})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			row := fmt.Sprintf("w%d", w)
			for i := range columns {
				q := fmt.Sprintf("c%05d", i)
				own := fmt.Sprintf("w%d-%05d", w, i)
				mustInc(t, c, row, "f", q, 1)
				mustInc(t, c, own, "f", "n", 1)
				if got := mustGet(t, c, own).Cells; len(got) != 1 {
					t.Errorf("Get of row %s after its Increment: %d cells", own, len(got))
				}
				out := make([]pagescan.Row, 1)
				c.GetRows(ctx, specTable, [][]byte{[]byte(own)}, "f", out)
				if out[0].Err != nil || len(out[0].Cells) != 1 {
					t.Errorf("GetRows of row %s after its Increment: %d cells, %v", own, len(out[0].Cells), out[0].Err)
				}
				mustInc(t, c, row, "f", q, 1)
				mustInc(t, c, own, "f", "n", 1)
			}
		})
	}
	wg.Wait()
	close(stop)
	builds.Wait()
	for w := range writers {
		res := mustGet(t, c, fmt.Sprintf("w%d", w))
		if len(res.Cells) != columns {
			t.Fatalf("row w%d has %d columns, want %d", w, len(res.Cells), columns)
		}
		for _, cell := range res.Cells {
			if !slices.Equal(cell.Value, be64(2)) {
				t.Errorf("w%d %s = %x, want 2: a second Increment read the column as absent", w, cell.Qualifier, cell.Value)
			}
		}
		for i := range columns {
			own := fmt.Sprintf("w%d-%05d", w, i)
			if got := cellsKV(mustGet(t, c, own).Cells); !slices.Equal(got, []string{"f:n=" + string(be64(2))}) {
				t.Errorf("row %s: %q, want n = 2", own, got)
			}
		}
	}
}

// A mutation of many columns looks them all up in the key filter first
// (filterPass): it must still find each column that has a record, and
// treat the others as new, as one of few columns does. Here half of them
// were written before the engine was opened again (only the filter built
// from the files knows them), one holds a delete marker ahead of the
// clock, and the rest are new.
func TestMutationsOfManyColumnsSeeWhatTheFilterKnows(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock(specT0)
	future := uint64(specT0 + 60_000)
	c := openSpec(t, embedded.Options{Dir: dir, Clock: clock.Now})
	for i := range 10 {
		mustInc(t, c, "r", "g", fmt.Sprint("n", i), int64(10*i))
		mustPut(t, c, "r", vals("f", fmt.Sprint("p", i), "old"))
	}
	mustDel(t, c, "r", vals("f", "p3", ""), at(future))
	c.Close()

	c = openSpec(t, embedded.Options{Dir: dir, Clock: clock.Now})
	embedded.WaitKeyFilter(t, c)
	amounts := map[string]map[string][]byte{"g": {}}
	puts := map[string]map[string][]byte{"f": {}}
	for i := range 20 {
		amounts["g"][fmt.Sprint("n", i)] = be64(1)
		puts["f"][fmt.Sprint("p", i)] = []byte("new")
	}
	inc, err := hrpc.NewIncStr(context.Background(), specTable, "r", amounts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendRPC(inc); err != nil {
		t.Fatal(err)
	}
	mustPut(t, c, "r", puts)
	got := map[string]string{}
	for _, cell := range mustGet(t, c, "r").Cells {
		got[string(cell.Family)+":"+string(cell.Qualifier)] = string(cell.Value)
	}
	for i := range 20 {
		n, p := fmt.Sprint("g:n", i), fmt.Sprint("f:p", i)
		want := int64(1)
		if i < 10 {
			want += int64(10 * i)
		}
		if got[n] != string(be64(want)) {
			t.Errorf("%s = %x, want %d", n, got[n], want)
		}
		if v, ok := got[p]; i == 3 && ok || i != 3 && v != "new" {
			t.Errorf("%s = %q (present %v), want %s", p, v, ok, map[bool]string{true: "hidden by the marker", false: "new"}[i == 3])
		}
	}
}

// A bulk load that says how many records it brings (ExpectedRecords)
// gets a first filter made for them, within KeyFilterBytes: not the
// smallest, to be built again each time the store doubles.
func TestExpectedRecordsSizeTheFirstFilter(t *testing.T) {
	for _, tc := range []struct {
		expected int64
		maxBytes int
		bytes    int // of the filter built at Open
	}{
		{0, 0, 1 << 20},                // the smallest: about 700,000 keys
		{500_000, 0, 1 << 20},          // fewer than it holds
		{1_000_000, 0, 2 << 20},        // 12 bits a key: 1.5 MB
		{30_000_000, 0, 64 << 20},      // 45 MB
		{1_000_000_000, 0, 64 << 20},   // DefaultMaxKeyFilterBytes
		{30_000_000, 8 << 20, 8 << 20}, // KeyFilterBytes
	} {
		// Read once Close has stopped every writer (Pebble's too).
		var logged bytes.Buffer
		c, err := embedded.Open(embedded.Options{Tables: specTables(), ExpectedRecords: tc.expected, KeyFilterBytes: tc.maxBytes,
			Logger: zerolog.New(zerolog.SyncWriter(&logged)).Level(zerolog.DebugLevel)})
		if err != nil {
			t.Fatal(err)
		}
		embedded.WaitKeyFilter(t, c)
		c.Close()
		var built []int
		for _, line := range strings.Split(logged.String(), "\n") {
			var e struct {
				Message string
				Bytes   int
			}
			if json.Unmarshal([]byte(line), &e) == nil && e.Message == "embedded: key filter built" {
				built = append(built, e.Bytes)
			}
		}
		if want := []int{tc.bytes}; !slices.Equal(built, want) {
			t.Errorf("ExpectedRecords %d, KeyFilterBytes %d: filters built of %v bytes, want %v", tc.expected, tc.maxBytes, built, want)
		}
	}
}
