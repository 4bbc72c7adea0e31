package embedded

import (
	"fmt"
	"testing"
)

// TestRowCacheStaysWithinItsBytes fills a small cache with many rows.
func TestRowCacheStaysWithinItsBytes(t *testing.T) {
	c := newRowCache(64 * 4096) // 4 KiB a shard
	for i := range 20_000 {
		key := fmt.Sprintf("row%05d", i)
		_, gen := c.get(i%rowLocks, key, "")
		c.put(i%rowLocks, key, gen, &cachedRow{arena: make([]byte, 100), cells: make([]cachedCell, 2)})
	}
	for i := range c.shards {
		s := &c.shards[i]
		if s.bytes > c.maxBytes || s.bytes < 0 {
			t.Errorf("shard %d holds %d bytes, at most %d", i, s.bytes, c.maxBytes)
		}
		want := 0
		for k, r := range s.entries {
			want += r.size(k)
		}
		if s.bytes != want {
			t.Errorf("shard %d counts %d bytes, its rows take %d", i, s.bytes, want)
		}
	}
}

// TestRowCacheKeepsNothingReadBeforeAWrite: a read that noted the
// generation before a write's invalidation does not keep what it read.
func TestRowCacheKeepsNothingReadBeforeAWrite(t *testing.T) {
	c := newRowCache(1 << 20)
	_, gen := c.get(7, "k", "")
	c.invalidate(7, "k")
	c.put(7, "k", gen, &cachedRow{arena: []byte("stale")})
	if r, _ := c.get(7, "k", ""); r != nil {
		t.Error("a row read before the write was kept")
	}
	_, gen = c.get(7, "k", "")
	c.put(7, "k", gen, &cachedRow{arena: []byte("fresh")})
	if r, _ := c.get(7, "k", ""); r == nil || string(r.arena) != "fresh" {
		t.Errorf("a row read after the write was not kept: %v", r)
	}
	if r, _ := c.get(7, "k", "f"); r != nil {
		t.Error("a row kept for every family answered a read of family f")
	}
	c.clear()
	if r, _ := c.get(7, "k", ""); r != nil {
		t.Error("clear kept a row")
	}
}
