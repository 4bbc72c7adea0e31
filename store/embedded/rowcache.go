package embedded

import (
	"sync"
)

// rowCache keeps the cells of rows recently read by a plain Get (every
// column of the families asked for, no filter, time range or limit), as
// RocksDB's row_cache does in front of its block cache: a hit answers
// without an iterator, a seek or a block-cache lookup, which are most of a
// Get's CPU (a node read by every request that names it).
//
// It never answers with what a write has replaced. A write invalidates the
// row after its commit, before it returns, under the shard's lock; a reader
// notes the row's stripe generation before it opens its iterator and keeps
// what it read only if no write to that stripe invalidated since. A read
// that started before a write may still be kept until that write's
// invalidation, which then drops it.
type rowCache struct {
	shards   [rowCacheShards]rowCacheShard
	maxBytes int // per shard
}

const rowCacheShards = 64

type rowCacheShard struct {
	mu sync.Mutex
	// gens counts the invalidations of the stripes mapped to this shard.
	gens    map[int]uint64
	entries map[string]*cachedRow
	bytes   int
}

// cachedRow is one row's cells: qualifiers and values in one arena, the
// rest in cachedCell, with no pointer the collector has to follow.
type cachedRow struct {
	families string // the selection it answers: family names, "" for all
	arena    []byte
	cells    []cachedCell
}

type cachedCell struct {
	family            uint16 // index in table.families
	qualLen, valueLen uint32
	ts                uint64
}

// rowCacheEntryOverhead is what a cached row costs beyond its key, arena
// and cells: the map entry and the struct.
const rowCacheEntryOverhead = 96

// size is what the row takes in the cache under key.
func (r *cachedRow) size(key string) int {
	return rowCacheEntryOverhead + len(key) + len(r.arena) + 24*len(r.cells)
}

func newRowCache(bytes int64) *rowCache {
	if bytes <= 0 {
		return nil
	}
	c := &rowCache{maxBytes: int(bytes / rowCacheShards)}
	for i := range c.shards {
		c.shards[i].gens = map[int]uint64{}
		c.shards[i].entries = map[string]*cachedRow{}
	}
	return c
}

func (c *rowCache) shard(stripe int) *rowCacheShard { return &c.shards[stripe%rowCacheShards] }

// get returns the cached row for key when it answers the selection
// families, and otherwise the stripe's generation for a later put.
func (c *rowCache) get(stripe int, key, families string) (row *cachedRow, gen uint64) {
	s := c.shard(stripe)
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.entries[key]; ok && r.families == families {
		return r, 0
	}
	return nil, s.gens[stripe]
}

// put keeps row for key unless the stripe was invalidated since gen.
func (c *rowCache) put(stripe int, key string, gen uint64, row *cachedRow) {
	size := row.size(key)
	if size > c.maxBytes/4 {
		return // a wide row would push out many small ones
	}
	s := c.shard(stripe)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gens[stripe] != gen {
		return
	}
	if old, ok := s.entries[key]; ok {
		s.bytes -= old.size(key)
		delete(s.entries, key)
	}
	// Room by random eviction (Go's map order): no list to keep in step,
	// and a hot row read again soon comes back at the cost of one read.
	for k, r := range s.entries {
		if s.bytes+size <= c.maxBytes {
			break
		}
		s.bytes -= r.size(k)
		delete(s.entries, k)
	}
	s.entries[key] = row
	s.bytes += size
}

// invalidate drops key's row and moves its stripe's generation on, so
// that a read begun before the write does not keep what it read.
func (c *rowCache) invalidate(stripe int, key string) {
	s := c.shard(stripe)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gens[stripe]++
	if r, ok := s.entries[key]; ok {
		s.bytes -= r.size(key)
		delete(s.entries, key)
	}
}

// clear drops every row (after a compaction rewrote what rows hold).
func (c *rowCache) clear() {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for stripe := range s.gens {
			s.gens[stripe]++
		}
		clear(s.entries)
		s.bytes = 0
		s.mu.Unlock()
	}
}

// rowCacheKey is the cache's key of a row: its record prefix (the table
// and the row, escaped).
func rowCacheKey(rowPrefix []byte) string { return string(rowPrefix) }
