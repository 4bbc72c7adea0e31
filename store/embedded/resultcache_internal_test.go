package embedded

import (
	"slices"
	"testing"
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
	c.invalidateRow(tbl, stripe, prefix)
	c.putRow(stripe, prefix, gen, "", []byte("aold"), kept)
	if got := get(""); got != nil {
		t.Errorf("a row read before the write was kept: %q", got)
	}
	_, _, gen = c.getRow(tbl, stripe, prefix, row, "")
	c.putRow(stripe, prefix, gen, "", []byte("anew"), kept)
	if got := get(""); !slices.Equal(got, []string{"f:a=new"}) {
		t.Errorf("a row read after the write: %q", got)
	}
	if got := get("f"); got != nil {
		t.Errorf("a row kept for every family answered a read of family f: %q", got)
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
	write := func(row string) { r := []byte(row); c.invalidateRow(tbl, rowStripe(tbl, r), tbl.rowPrefix(r)) }

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
	c.clear()
	if hit() {
		t.Error("clear left a page")
	}
}
