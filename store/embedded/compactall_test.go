package embedded

import (
	"context"
	"fmt"
	"testing"
	"time"

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
				putAndFlush(t, c, func(i int) string { return fmt.Sprintf("row%05d", r*50+i) })
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

// A bulk load leaves its flushes in L0 for CompactAll, past the
// thresholds at which a server compacts them (bulkLoadCompactions); a
// store opened afterwards without NoWAL, as a server opens what a killed
// import left, compacts them by itself.
func TestBulkLoadLeavesL0ToCompactAll(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tables := map[string][]string{"t": {"f"}}
	const flushes = 12 // past the 4 sublevels at which a server compacts L0, and the old bulk load's 8
	c, err := Open(Options{Dir: dir, Tables: tables, NoWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	for r := range flushes { // every flush spans the whole key range, as an import's do
		putAndFlush(t, c, func(i int) string { return fmt.Sprintf("row%05d", i*flushes+r) })
	}
	m := c.db.Metrics()
	if got := m.Levels[0].Sublevels; got != flushes || m.Compact.Count != 0 || m.Compact.NumInProgress != 0 {
		t.Errorf("after %d flushes of a bulk load: %d L0 sublevels, %d compactions done and %d running; want %d, none",
			flushes, got, m.Compact.Count, m.Compact.NumInProgress, flushes)
	}
	c.Close()

	c, err = Open(Options{Dir: dir, Tables: tables})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(time.Minute) // a bound on a failure, not a measure: it takes milliseconds
	for c.db.Metrics().Levels[0].Sublevels >= 4 {
		if time.Now().After(deadline) {
			t.Fatalf("a store opened after the bulk load still has %d L0 sublevels a minute later", c.db.Metrics().Levels[0].Sublevels)
		}
		time.Sleep(10 * time.Millisecond)
	}
	g, err := hrpc.NewGetStr(ctx, "t", fmt.Sprintf("row%05d", 99*flushes+flushes-1))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c.Get(g); err != nil || len(res.Cells) != 1 {
		t.Fatalf("the last row after compacting: %v, %v", res, err)
	}
}

// putAndFlush puts 100 rows of table t, row(0) to row(99), a cell each,
// and flushes them into L0.
func putAndFlush(t *testing.T, c *Client, row func(i int) string) {
	t.Helper()
	for i := range 100 {
		p, err := hrpc.NewPutStr(context.Background(), "t", row(i), map[string]map[string][]byte{"f": {"q": []byte("value")}})
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
