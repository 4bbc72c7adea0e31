package embedded_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/hbgraph/hbgraph/store/embedded"
)

// TestGetOfColumnsReadsTheNewestLevel checks reads that name their
// columns, which get each record from the newest level that holds it:
// after the row was compacted into the bottom level, a column rewritten,
// deleted, or deleted with its family since answers as it is now, one
// never written answers nothing, and the answers are those of a read of
// the whole row, alone and in a batch.
func TestGetOfColumnsReadsTheNewestLevel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := newFakeClock(specT0)
	c := openSpec(t, embedded.Options{Clock: clock.Now})
	mustPut(t, c, "r", map[string]map[string][]byte{
		"f": {"a": []byte("a1"), "b": []byte("b1"), "c": []byte("c1")},
		"g": {"a": []byte("ga1"), "b": []byte("gb1")},
	})
	if err := c.CompactAll(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Millisecond)
	mustPut(t, c, "r", vals("f", "a", "a2"))
	mustDel(t, c, "r", map[string]map[string][]byte{"f": {"b": nil}})
	mustDel(t, c, "r", map[string]map[string][]byte{"g": nil})
	clock.Advance(time.Millisecond)
	mustPut(t, c, "r", vals("g", "b", "gb2"))

	named := hrpc.Families(map[string][]string{"f": {"a", "b", "c", "z"}, "g": {"a", "b"}})
	want := []string{"f:a=a2", "f:c=c1", "g:b=gb2"}
	if got := cellsKV(mustGet(t, c, "r", named).Cells); !slices.Equal(got, want) {
		t.Errorf("Get of named columns: %q, want %q", got, want)
	}
	if got := cellsKV(mustGet(t, c, "r").Cells); !slices.Equal(got, want) {
		t.Errorf("Get of the whole row: %q, want %q", got, want)
	}
	one := hrpc.Families(map[string][]string{"f": {"c"}})
	if got := cellsKV(mustGet(t, c, "r", one).Cells); !slices.Equal(got, []string{"f:c=c1"}) {
		t.Errorf("Get of f:c: %q", got)
	}
	var batch []hrpc.Call
	for _, opt := range []func(hrpc.Call) error{named, one, hrpc.Families(map[string][]string{"f": nil})} {
		g, err := hrpc.NewGetStr(ctx, specTable, "r", opt)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, g)
	}
	res, allOK := c.SendBatch(ctx, batch)
	if !allOK {
		t.Fatalf("batch: %v", res)
	}
	for i, want := range [][]string{want, {"f:c=c1"}, {"f:a=a2", "f:c=c1"}} {
		got := cellsKV(hrpc.ToLocalResult(res[i].Msg.(*pb.GetResponse).GetResult()).Cells)
		if !slices.Equal(got, want) {
			t.Errorf("batch Get %d: %q, want %q", i, got, want)
		}
	}
}

// TestGetOfColumnsSeesTheRowWhole has writers rewrite a row's two
// columns together, in one Put, while readers read both by name: alone,
// and in batches beside a read of the whole row. Each read must see both
// columns from one Put: a Get of several records reads them from one
// snapshot, as HBase reads a row, where a Get of each record of the store
// in turn could see a Put land between them.
func TestGetOfColumnsSeesTheRowWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := openSpec(t, embedded.Options{Clock: newFakeClock(specT0).Now})
	put := func(v string) {
		mustPut(t, c, "r", map[string]map[string][]byte{"f": {"a": []byte(v), "b": []byte(v)}})
	}
	put("start")
	const writers, puts, readers = 4, 400, 4
	var done atomic.Bool
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range puts {
				put(fmt.Sprintf("%d-%d", w, i))
			}
		}()
	}
	named := func() *hrpc.Get {
		g, err := hrpc.NewGetStr(ctx, specTable, "r", hrpc.Families(map[string][]string{"f": {"a", "b"}}))
		if err != nil {
			t.Error(err)
		}
		return g
	}
	whole := func() *hrpc.Get {
		g, err := hrpc.NewGetStr(ctx, specTable, "r")
		if err != nil {
			t.Error(err)
		}
		return g
	}
	check := func(how string, cells []*hrpc.Cell) bool {
		kv := cellsKV(cells)
		if len(kv) != 2 || kv[0][len("f:a="):] != kv[1][len("f:b="):] {
			t.Errorf("%s: %q: not from one Put", how, kv)
			return false
		}
		return true
	}
	var reads atomic.Int64
	var rg sync.WaitGroup
	for range readers {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for !done.Load() {
				res, err := c.Get(named())
				if err != nil {
					t.Error(err)
					return
				}
				if !check("Get", res.Cells) {
					return
				}
				out, _ := c.SendBatch(ctx, []hrpc.Call{named(), whole()})
				for i, r := range out {
					if r.Error != nil {
						t.Error(r.Error)
						return
					}
					if !check(fmt.Sprintf("batch Get %d", i), hrpc.ToLocalResult(r.Msg.(*pb.GetResponse).GetResult()).Cells) {
						return
					}
				}
				reads.Add(3)
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	rg.Wait()
	if reads.Load() == 0 {
		t.Error("no read ran beside the writers")
	}
}
