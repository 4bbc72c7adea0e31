package embedded_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/embedded"
)

// TestReadOnlyReadsAndChangesNothing: a store opened ReadOnly reads what
// was written, including writes still only in the write-ahead log, refuses
// writes, and leaves every file of the directory as it was; a directory
// without a store is refused, not created (Pebble leaves its LOCK file).
func TestReadOnlyReadsAndChangesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c, err := embedded.Open(embedded.Options{Dir: dir, Tables: specTables()})
	if err != nil {
		t.Fatal(err)
	}
	put, err := hrpc.NewPutStr(ctx, specTable, "r1", map[string]map[string][]byte{"f": {"q": []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(put); err != nil {
		t.Fatal(err)
	}
	c.Close()
	before := dirListing(t, dir)

	ro, err := embedded.Open(embedded.Options{Dir: dir, Tables: specTables(), ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	get, err := hrpc.NewGetStr(ctx, specTable, "r1")
	if err != nil {
		t.Fatal(err)
	}
	res, err := ro.Get(get)
	if err != nil || len(res.Cells) != 1 || string(res.Cells[0].Value) != "v" {
		t.Fatalf("read-only get: %v, %v", res, err)
	}
	put2, _ := hrpc.NewPutStr(ctx, specTable, "r2", map[string]map[string][]byte{"f": {"q": []byte("v")}})
	if _, err := ro.Put(put2); err == nil {
		t.Fatal("a read-only store took a Put")
	}
	ro.Close()
	if after := dirListing(t, dir); after != before {
		t.Fatalf("files changed by a read-only open:\nbefore %s\nafter  %s", before, after)
	}

	empty := t.TempDir()
	if _, err := embedded.Open(embedded.Options{Dir: empty, Tables: specTables(), ReadOnly: true}); err == nil {
		t.Fatal("read-only open of an empty directory succeeded")
	}
	if got := dirListing(t, empty); got != "" {
		t.Fatalf("read-only open of an empty directory created %s", got)
	}
}

// dirListing names dir's files with their sizes and modification times,
// but for LOCK, which every open takes.
func dirListing(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out string
	for _, e := range entries {
		if e.Name() == "LOCK" {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprintf("%s:%d:%v ", e.Name(), fi.Size(), fi.ModTime())
	}
	return out
}
