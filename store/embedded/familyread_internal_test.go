package embedded

import (
	"context"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
)

// A read of the data family does not step over the dead columns another
// family of the row keeps (a busy node's deleted intents): HBase keeps each
// family in its own store, so neither does a region server. Counted in the
// iterator's steps, which do not depend on the machine.
func TestReadOfAFamilyDoesNotStepOverAnotherFamilysDeadColumns(t *testing.T) {
	ctx := context.Background()
	c, err := Open(Options{Tables: map[string][]string{"t": {"g", "x"}}, ResultCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	put := func(family, qualifier, value string) {
		t.Helper()
		p, err := hrpc.NewPutStr(ctx, "t", "node", map[string]map[string][]byte{family: {qualifier: []byte(value)}})
		if err == nil {
			_, err = c.Put(p)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	put("g", "c", "1")
	put("g", "p", "{}")
	put("g", "u", "1")
	const dead = 2000
	for i := range dead {
		q := fmt.Sprintf("xr%05d", i)
		put("x", q, "intent")
		d, err := hrpc.NewDelStr(ctx, "t", "node", map[string]map[string][]byte{"x": {q: nil}})
		if err == nil {
			_, err = c.Delete(d)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	tb := c.tables["t"]
	steps := func(family string) (cells int, steps int) {
		q, err := newQuery(tb, []*pb.Column{{Family: []byte(family)}}, nil, &pb.TimeRange{}, 0, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		prefix := tb.rowPrefix([]byte("node"))
		it, err := c.db.NewIter(&pebble.IterOptions{LowerBound: tb.prefix, UpperBound: tb.end})
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		var kept []keptCell
		if it.SeekGE(prefix) {
			_, kept, _ = q.readRow(it, prefix, nil, kept)
		}
		if err := it.Error(); err != nil {
			t.Fatal(err)
		}
		s := it.Stats()
		return len(kept), s.ForwardStepCount[pebble.InterfaceCall] + s.ForwardSeekCount[pebble.InterfaceCall]
	}
	if cells, n := steps("g"); cells != 3 || n > 10 {
		t.Fatalf("a read of family g: %d cells in %d steps and seeks; want 3 in at most 10, not one per dead column of x (%d)", cells, n, dead)
	}
	// The other family's reader (a writer's) does step over them, as a
	// region server would: they are its family's.
	if cells, n := steps("x"); cells != 0 || n < dead {
		t.Fatalf("a read of family x: %d cells in %d steps and seeks; want 0 in at least %d", cells, n, dead)
	}
}
