package embedded

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/VictoriaMetrics/fastcache"
	"github.com/tsuna/gohbase/hrpc"
)

// TestResultCacheRowGenerations: a row read before a write's invalidation
// is not kept; one read after is, and only for its selection.
func TestResultCacheRowGenerations(t *testing.T) {
	tbl := newTable("t", []string{"f", "g"})
	c := newResultCache(32<<20, map[string]*table{"t": tbl})
	row := []byte("r1")
	prefix, stripe := tbl.rowPrefix(row), rowStripe(tbl, row)
	kept := []keptCell{{fam: tbl.families[0], qualLen: 1, valueLen: 3, ts: 7}}
	get := func(families string) []string {
		cells, hit, _ := c.getRow(tbl, stripe, prefix, row, families)
		if !hit {
			return nil
		}
		var out []string
		for _, cell := range cells {
			out = append(out, string(cell.Family)+":"+string(cell.Qualifier)+"="+string(cell.Value))
		}
		return out
	}

	_, _, gen := c.getRow(tbl, stripe, prefix, row, "")
	c.beginWrite(tbl, stripe, prefix)
	c.endWrite(tbl, stripe, prefix, nil)
	c.putRow(stripe, prefix, gen, "", []byte("aold"), kept)
	if got := get(""); got != nil {
		t.Errorf("a row read before the write was kept: %q", got)
	}
	_, _, gen = c.getRow(tbl, stripe, prefix, row, "")
	c.putRow(stripe, prefix, gen, "", []byte("anew"), kept)
	if got := get(""); !slices.Equal(got, []string{"f:a=new"}) {
		t.Errorf("a row read after the write: %q", got)
	}
	// A row kept whole answers a read of one family with that family's
	// cells (a request's read of a row a writer read); one kept for a
	// family answers no other selection.
	if got := get("f"); !slices.Equal(got, []string{"f:a=new"}) {
		t.Errorf("a row kept for every family, read for family f: %q", got)
	}
	if cells, hit, _ := c.getRow(tbl, stripe, prefix, row, "g"); !hit || len(cells) != 0 {
		t.Errorf("a row kept for every family, read for family g: %d cells, hit %v; want none, a hit", len(cells), hit)
	}
	gen, _ = c.rowGeneration(stripe)
	c.putRow(stripe, prefix, gen, "f", []byte("anew"), kept)
	for _, other := range []string{"", "g", "f,g"} {
		if got := get(other); got != nil {
			t.Errorf("a row kept for family f answered a read of %q: %q", other, got)
		}
	}
	_, _, gen = c.getRow(tbl, stripe, prefix, row, "")
	c.putRow(stripe, prefix, gen, "", []byte("anew"), kept)

	// Between a write's beginWrite and endWrite, its commit may or may
	// not have happened: the row is not served (a reader that found the
	// new row in Pebble must not be followed by one served the old), and
	// a row read then is not kept, neither before endWrite nor after.
	c.beginWrite(tbl, stripe, prefix)
	if got := get(""); got != nil {
		t.Errorf("a row was served while a write of it was in between: %q", got)
	}
	_, _, gen = c.getRow(tbl, stripe, prefix, row, "")
	c.putRow(stripe, prefix, gen, "", []byte("amid"), kept)
	if got := get(""); got != nil {
		t.Errorf("a row read while a write was in between was kept: %q", got)
	}
	c.endWrite(tbl, stripe, prefix, nil)
	c.putRow(stripe, prefix, gen, "", []byte("amid"), kept)
	if got := get(""); got != nil {
		t.Errorf("a row read while a write was in between was kept after it: %q", got)
	}
	c.clear()
	if got := get(""); got != nil {
		t.Errorf("clear kept a row: %q", got)
	}
}

// TestResultCacheBuckets checks which writes drop a scan's page and which
// readers may keep theirs.
func TestResultCacheBuckets(t *testing.T) {
	tbl := newTable("t", []string{"f"})
	c := newResultCache(32<<20, map[string]*table{"t": tbl})
	scan := func(author string) (prefix []byte, key []byte) {
		lower, upper := tbl.rowPrefix([]byte(author+"/")), tbl.rowPrefix([]byte(author+"/\xff"))
		return scanPrefix(lower, upper), append(append(make([]byte, pageKeyHeader), lower...), upper...)
	}
	p1, k1 := scan("author1")
	hit := func() bool { v, _ := c.getPage(tbl, p1, k1); return v != nil }
	read := func() pageRead { _, r := c.getPage(tbl, p1, k1); return r }
	begin := func(row string) func() {
		r := []byte(row)
		c.beginWrite(tbl, rowStripe(tbl, r), tbl.rowPrefix(r))
		return func() { c.endWrite(tbl, rowStripe(tbl, r), tbl.rowPrefix(r), nil) }
	}
	write := func(row string) { begin(row)() }

	c.putPage(tbl, read(), []byte("page"))
	if !hit() {
		t.Fatal("a page read with nothing written meanwhile was not kept")
	}
	write("author2/x")
	if !hit() {
		t.Error("a write outside the range dropped the page")
	}
	write("author1/x")
	if hit() {
		t.Error("a write inside the range left the page")
	}
	r := read()
	write("author1/y")
	c.putPage(tbl, r, []byte("stale"))
	if hit() {
		t.Error("a page read before a write into its range was kept")
	}
	r = read()
	write("author2/y")
	c.putPage(tbl, r, []byte("page"))
	if !hit() {
		t.Error("a page read across a write elsewhere was not kept (its bucket tracks the range)")
	}
	// A bucket that does not exist yet needs a reader during which the
	// table saw no write at all.
	p3, k3 := scan("author3")
	_, r = c.getPage(tbl, p3, k3)
	write("author9/z")
	c.putPage(tbl, r, []byte("page"))
	if v, _ := c.getPage(tbl, p3, k3); v != nil {
		t.Error("a page was kept in a new bucket though the table was written meanwhile")
	}

	// Between a write's beginWrite and endWrite, no page of its range is
	// served or kept, nor a page in a new bucket anywhere in the table.
	c.putPage(tbl, read(), []byte("page"))
	end := begin("author1/w")
	if hit() {
		t.Error("a page was served while a write into its range was in between")
	}
	r = read()
	c.putPage(tbl, r, []byte("mid"))
	if hit() {
		t.Error("a page read while a write into its range was in between was kept")
	}
	_, r = c.getPage(tbl, p3, k3)
	c.putPage(tbl, r, []byte("mid"))
	if v, _ := c.getPage(tbl, p3, k3); v != nil {
		t.Error("a page was kept in a new bucket while a write was in between")
	}
	end()
	c.putPage(tbl, r, []byte("mid"))
	if hit() {
		t.Error("a page read while a write into its range was in between was kept after it")
	}
	c.putPage(tbl, read(), []byte("page"))
	if !hit() {
		t.Error("a page read after the write ended was not kept")
	}

	// A write into six nested buckets ends in every one of them.
	nested := []string{"r", "r/s", "r/s/t", "r/s/t/u", "r/s/t/u/v", "r/s/t/u/v/w"}
	for _, a := range nested {
		p, k := scan(a)
		c.putPage(tbl, func() pageRead { _, r := c.getPage(tbl, p, k); return r }(), []byte("page"))
	}
	write("r/s/t/u/v/w/z")
	for _, a := range nested {
		p, k := scan(a)
		_, r := c.getPage(tbl, p, k)
		c.putPage(tbl, r, []byte("page"))
		if v, _ := c.getPage(tbl, p, k); v == nil {
			t.Errorf("bucket %q: a page read after a write into six buckets ended was not kept", a)
		}
	}
	c.clear()
	if hit() {
		t.Error("clear left a page")
	}
}

// Close gives the result cache's memory back: fastcache maps it outside
// the Go heap and frees it only on Reset, so a closed engine's cache kept
// it for good.
func TestCloseReleasesTheResultCache(t *testing.T) {
	ctx := context.Background()
	c, err := Open(Options{Tables: map[string][]string{"t": {"f"}}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		row := fmt.Sprintf("row%03d", i)
		p, err := hrpc.NewPutStr(ctx, "t", row, map[string]map[string][]byte{"f": {"q": []byte("v")}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Put(p); err != nil {
			t.Fatal(err)
		}
		g, _ := hrpc.NewGetStr(ctx, "t", row)
		if _, err := c.Get(g); err != nil {
			t.Fatal(err)
		}
	}
	entries := func() uint64 {
		var s fastcache.Stats
		c.results.store.UpdateStats(&s)
		return s.EntriesCount
	}
	if entries() == 0 {
		t.Fatal("the reads kept nothing in the result cache: the test checks nothing")
	}
	c.Close()
	if n := entries(); n != 0 {
		t.Errorf("the result cache holds %d entries after Close; want its memory given back", n)
	}
}

// TestGetThatCachesNoBlocksKeepsNoRow: a Get with CacheBlocks(false), as
// an import reads back the rows it wrote, is answered as any other (from
// the cache when the row is there) but leaves no row in it; a Get without
// the option keeps the row, alone and in a batch.
func TestGetThatCachesNoBlocksKeepsNoRow(t *testing.T) {
	ctx := context.Background()
	c, err := Open(Options{Tables: map[string][]string{"t": {"f"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := c.tables["t"]
	cached := func(row string) bool {
		r := []byte(row)
		_, hit, _ := c.results.getRow(tbl, rowStripe(tbl, r), tbl.rowPrefix(r), r, "")
		return hit
	}
	get := func(row string, opts ...func(hrpc.Call) error) hrpc.Call {
		t.Helper()
		g, err := hrpc.NewGetStr(ctx, "t", row, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	value := func(res *hrpc.Result) string {
		if len(res.Cells) != 1 {
			return fmt.Sprintf("%d cells", len(res.Cells))
		}
		return string(res.Cells[0].Value)
	}
	for _, row := range []string{"a", "b", "c", "d"} {
		p, err := hrpc.NewPutStr(ctx, "t", row, map[string]map[string][]byte{"f": {"q": []byte("v" + row)}})
		if err == nil {
			_, err = c.Put(p)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		res, err := c.Get(get("a", hrpc.CacheBlocks(false)).(*hrpc.Get))
		if err != nil || value(res) != "va" {
			t.Fatalf("Get of a with CacheBlocks(false): %v, %v", value(res), err)
		}
	}
	if cached("a") {
		t.Error("a Get with CacheBlocks(false) kept its row")
	}
	res, ok := c.SendBatch(ctx, []hrpc.Call{get("b", hrpc.CacheBlocks(false)), get("c")})
	if !ok || res[0].Error != nil || res[1].Error != nil {
		t.Fatalf("batch: %v", res)
	}
	if cached("b") || !cached("c") {
		t.Errorf("after a batch of b with CacheBlocks(false) and c without: b kept %v, c kept %v; want false, true", cached("b"), cached("c"))
	}
	if _, err := c.Get(get("d").(*hrpc.Get)); err != nil {
		t.Fatal(err)
	}
	if !cached("d") {
		t.Fatal("a Get without the option kept no row")
	}
	// Answered from the cache all the same, and leaving the row there.
	res1, err := c.Get(get("d", hrpc.CacheBlocks(false)).(*hrpc.Get))
	if err != nil || value(res1) != "vd" || !cached("d") {
		t.Errorf("Get of a cached row with CacheBlocks(false): %v, %v; still cached %v", value(res1), err, cached("d"))
	}
}
