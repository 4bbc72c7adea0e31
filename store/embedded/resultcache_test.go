package embedded_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/embedded"
)

// TestRowCacheNeverServesAReplacedRow has writers increment one row while
// readers Get it all the time (filling the cache with what they read): a
// Get begun after an Increment returned must see at least its value, and
// the last Get sees every increment.
func TestRowCacheNeverServesAReplacedRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cl := openSpec(t, embedded.Options{})
	const writers, perWriter, readers = 8, 200, 4
	read := func() int64 {
		res := mustGet(t, cl, "hot")
		for _, c := range res.Cells {
			if string(c.Family) == "f" && string(c.Qualifier) == "n" {
				return int64(binary.BigEndian.Uint64(c.Value))
			}
		}
		return 0
	}
	stopReaders := keepReading(readers, func() { read() })
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perWriter {
				inc, _ := hrpc.NewIncStrSingle(ctx, specTable, "hot", "f", "n", 1)
				v, err := cl.Increment(inc)
				if err != nil {
					errs <- err
					return
				}
				if got := read(); got < v {
					errs <- fmt.Errorf("Get after an Increment to %d read %d", v, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	stopReaders()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := read(); got != writers*perWriter {
		t.Errorf("after every increment the row holds %d, want %d", got, writers*perWriter)
	}
}

// TestRowCacheAnswersOnlyItsSelection reads a row whole (cached), then with
// one family, one qualifier, and after a delete of a family.
func TestRowCacheAnswersOnlyItsSelection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cl := openSpec(t, embedded.Options{})
	mustPut(t, cl, "r", map[string]map[string][]byte{"f": {"a": []byte("1"), "b": []byte("2")}, "g": {"c": []byte("3")}})
	for range 2 { // the second read of each comes from the cache
		if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, []string{"f:a=1", "f:b=2", "g:c=3"}) {
			t.Errorf("whole row: %q", got)
		}
		if got := cellsKV(mustGet(t, cl, "r", hrpc.Families(map[string][]string{"g": nil})).Cells); !slices.Equal(got, []string{"g:c=3"}) {
			t.Errorf("family g: %q", got)
		}
		if got := cellsKV(mustGet(t, cl, "r", hrpc.Families(map[string][]string{"f": {"b"}})).Cells); !slices.Equal(got, []string{"f:b=2"}) {
			t.Errorf("f:b: %q", got)
		}
	}
	del, _ := hrpc.NewDelStr(ctx, specTable, "r", map[string]map[string][]byte{"f": nil})
	if _, err := cl.Delete(del); err != nil {
		t.Fatal(err)
	}
	if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, []string{"g:c=3"}) {
		t.Errorf("after deleting family f: %q", got)
	}
	// A cached result is the caller's: changing it changes no later read.
	res := mustGet(t, cl, "r")
	res.Cells[0].Value[0] = 'X'
	if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, []string{"g:c=3"}) {
		t.Errorf("after a caller changed its result: %q", got)
	}
}

// TestScanCacheNeverServesAChangedPage has writers add rows to one range
// while readers scan its first page all the time (filling the cache): a
// scan begun after a Put returned must hold the row put, and after a
// Delete returned must not.
func TestScanCacheNeverServesAChangedPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cl := openSpec(t, embedded.Options{})
	const writers, perWriter, readers = 6, 60, 3
	has := func(row string) bool {
		return slices.Contains(rowKeys(mustScan(t, cl, "t/", "t0", hrpc.NumberOfRows(1000))), row)
	}
	stopReaders := keepReading(readers, func() { has("") })
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				row := fmt.Sprintf("t/%d/%03d", w, i)
				mustPut(t, cl, row, vals("f", "a", row))
				if !has(row) {
					errs <- fmt.Errorf("a scan after the Put of %s lacks it", row)
					return
				}
				if i%3 == 0 {
					del, _ := hrpc.NewDelStr(ctx, specTable, row, nil)
					if _, err := cl.Delete(del); err != nil {
						errs <- err
						return
					}
					if has(row) {
						errs <- fmt.Errorf("a scan after the Delete of %s holds it", row)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	stopReaders()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got, want := len(mustScan(t, cl, "t/", "t0")), writers*perWriter*2/3; got != want {
		t.Errorf("%d rows in the range, want %d", got, want)
	}
}

// TestScanCacheFirstPageThenTheRest scans five rows two at a time, twice:
// the second scan's first page comes from the cache and the scanner goes
// on from where the first left it, forward and reversed, and with a write
// elsewhere in the table between.
func TestScanCacheFirstPageThenTheRest(t *testing.T) {
	t.Parallel()
	cl := openSpec(t, embedded.Options{})
	putRows(t, cl, "p1", "p2", "p3", "p4", "p5", "q1")
	for _, reversed := range []bool{false, true} {
		opts := []func(hrpc.Call) error{hrpc.NumberOfRows(2)}
		start, stop := "p", "q"
		want := []string{"p1", "p2", "p3", "p4", "p5"}
		if reversed {
			opts = append(opts, hrpc.Reversed())
			start, stop = "p9", "p"
			want = []string{"p5", "p4", "p3", "p2", "p1"}
		}
		for i := range 3 {
			if got := rowKeys(mustScan(t, cl, start, stop, opts...)); !slices.Equal(got, want) {
				t.Errorf("reversed %v, scan %d: %q, want %q", reversed, i, got, want)
			}
			mustPut(t, cl, "q1", vals("f", "a", fmt.Sprint(i))) // outside the range
		}
		mustPut(t, cl, "p3", vals("f", "b", "new"))
		got := rowsKV(mustScan(t, cl, start, stop, opts...))
		if !slices.Contains(got, "p3 f:b=new") {
			t.Errorf("reversed %v: after a Put to p3 the scan reads %q", reversed, got)
		}
	}
}

// keepReading runs read over and over in n goroutines, filling the caches
// with what they find, until the returned stop is called; stop waits for
// them.
func keepReading(n int, read func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
					read()
				}
			}
		}()
	}
	return func() {
		close(done)
		wg.Wait()
	}
}
