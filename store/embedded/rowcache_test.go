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
	stop := make(chan struct{})
	var readersDone sync.WaitGroup
	for range readers {
		readersDone.Add(1)
		go func() {
			defer readersDone.Done()
			for {
				select {
				case <-stop:
					return
				default:
					read()
				}
			}
		}()
	}
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
	close(stop)
	readersDone.Wait()
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
