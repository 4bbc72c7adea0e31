package embedded

import (
	"context"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsuna/gohbase/hrpc"
)

// After CompactAll every file is in the bottom level, and every row reads
// as it was written.
func TestCompactAllLeavesOneLevel(t *testing.T) {
	ctx := context.Background()
	// Pebble's own compactions may move the files first when the machine
	// is busy: they are off, so that only CompactAll moves them.
	c, err := Open(Options{Dir: t.TempDir(), Tables: map[string][]string{"t": {"f"}}, noAutoCompactions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.CompactAll(ctx); err != nil {
		t.Fatalf("CompactAll of an empty store: %v", err)
	}
	levelsWithFiles := func() (levels []int) {
		m := c.db.Metrics()
		for l := range m.Levels {
			if m.Levels[l].TablesCount > 0 {
				levels = append(levels, l)
			}
		}
		return levels
	}
	// Four flushed rounds, each rewriting half of the last one's rows: four
	// overlapping files in L0.
	const rounds, perRound = 4, 200
	want := map[string]string{}
	for r := range rounds {
		for i := range perRound {
			row, value := fmt.Sprintf("row%05d", r*perRound/2+i), fmt.Sprint(r)
			p, err := hrpc.NewPutStr(ctx, "t", row, map[string]map[string][]byte{"f": {"q": []byte(value)}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Put(p); err != nil {
				t.Fatal(err)
			}
			want[row] = value
		}
		if err := c.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	files := func() (n int64) {
		for _, l := range c.db.Metrics().Levels {
			n += l.TablesCount
		}
		return n
	}
	if n, lv := files(), levelsWithFiles(); n < rounds || len(lv) != 1 || lv[0] != 0 {
		t.Fatalf("%d files in levels %v before compacting; the test needs one a flush, in L0", n, lv)
	}
	if err := c.CompactAll(ctx); err != nil {
		t.Fatal(err)
	}
	bottom := len(c.db.Metrics().Levels) - 1
	if lv := levelsWithFiles(); len(lv) != 1 || lv[0] != bottom {
		t.Errorf("files in levels %v after CompactAll, want only %d", lv, bottom)
	}
	for row, v := range want {
		g, _ := hrpc.NewGetStr(ctx, "t", row)
		res, err := c.Get(g)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Cells) != 1 || string(res.Cells[0].Value) != v {
			t.Errorf("%s: %d cells after CompactAll, want one of value %q", row, len(res.Cells), v)
		}
	}
	c.Close()
	if err := c.CompactAll(ctx); err == nil {
		t.Error("CompactAll after Close succeeded")
	}
}

// A bulk load (NoWAL) flushes and compacts its files uncompressed, since
// CompactAll writes them again; CompactAll writes them compressed, as a
// store that is not bulk loading writes every file.
func TestBulkLoadCompressesFromCompactAll(t *testing.T) {
	ctx := context.Background()
	compressions := func(c *Client) map[string]int {
		levels, err := c.db.SSTables(pebble.WithProperties())
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]int{}
		for _, l := range levels {
			for _, f := range l {
				names[f.Properties.CompressionName]++
			}
		}
		return names
	}
	for _, tc := range []struct {
		name               string
		noWAL              bool
		flushed, compacted string // the files' compression
	}{
		{"bulk load", true, "NoCompression", "Snappy"},
		{"with a log", false, "Snappy", "Snappy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Open(Options{Dir: t.TempDir(), Tables: map[string][]string{"t": {"f"}}, NoWAL: tc.noWAL, noAutoCompactions: true})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for r := range 3 {
				for i := range 100 {
					p, err := hrpc.NewPutStr(ctx, "t", fmt.Sprintf("row%05d", r*50+i), map[string]map[string][]byte{"f": {"q": []byte("value")}})
					if err != nil {
						t.Fatal(err)
					}
					if _, err := c.Put(p); err != nil {
						t.Fatal(err)
					}
				}
				if err := c.db.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			if got := compressions(c); len(got) != 1 || got[tc.flushed] != 3 {
				t.Errorf("flushed files' compressions %v, want 3 %s", got, tc.flushed)
			}
			if err := c.CompactAll(ctx); err != nil {
				t.Fatal(err)
			}
			if got := compressions(c); len(got) != 1 || got[tc.compacted] == 0 {
				t.Errorf("compacted files' compressions %v, want only %s", got, tc.compacted)
			}
		})
	}
}
