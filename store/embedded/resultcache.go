package embedded

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"sync"

	"github.com/VictoriaMetrics/fastcache"
	"github.com/cespare/xxhash/v2"
	"github.com/tsuna/gohbase/pb"
)

// resultCache keeps what plain Gets and the first pages of scans read, in
// front of Pebble's block cache (as RocksDB's row_cache does for point
// reads): a hit answers without an iterator, a seek or a block lookup,
// which were most of a read's CPU. The bytes live in fastcache, outside
// the Go heap: kept on the heap, the cache grew the collector's marking
// work by as much CPU as it saved the reads.
//
// Nothing a write replaced is ever served, and nothing is served from the
// cache that a read of Pebble made after the write's commit would not
// find. A write brackets its commit: beginWrite before it, endWrite after
// it, before the write returns. In between, the row and the scan buckets
// it touches are served and kept by no one, since a reader cannot tell
// whether it comes before the commit or after it (served the old row
// after another reader found the new one in Pebble, it would read
// backwards in time: the replica simulation's concurrent runs caught it).
//
//   - Rows: beginWrite and endWrite each move the row's stripe's
//     generation on, under its lock; the stripe counts its writes in
//     between. A reader notes the generation before it opens its iterator
//     and keeps what it read only if the generation did not move and no
//     write of the stripe is in between. endWrite drops the row, or sets
//     the columns the write committed in it (rewriteRow).
//   - Scans: every row a scan can return starts with the common prefix of
//     its start and stop keys, so pages are kept in buckets by that prefix.
//     beginWrite of row r moves on the version of each bucket whose prefix
//     starts r (a page's key holds its bucket's version: the old pages are
//     never found again and age out), and marks the bucket with the
//     table's write sequence; the bucket counts its writes in between. A
//     reader notes the sequence before it opens its iterator and keeps its
//     page only if its bucket was tracked since, no write touched it and
//     none is in between; a bucket that does not exist yet is made only by
//     a reader during which nothing was written to the table, and while no
//     write is in between.
type resultCache struct {
	store *fastcache.Cache

	rowLocks [rowCacheShards]sync.Mutex
	// By stripe, under rowLocks[stripe%rowCacheShards]: the generation, and
	// the writes between beginWrite and endWrite.
	rowGens    [rowLocks]uint64
	rowWriting [rowLocks]int32
	// endWrite's copy of the cached row and the patched row it makes, by
	// shard, under its lock (fastcache copies what it keeps): a write to a
	// large row would otherwise allocate twice its size.
	rowScratch, rowPatched [rowCacheShards][]byte
	rowChanges             [rowCacheShards]patchScratch

	scans map[*table]*tableScans
}

const rowCacheShards = 64

type tableScans struct {
	mu sync.RWMutex
	// seq counts the writes to the table; epoch the times buckets was
	// emptied (it is in every page's key, so versions may start again).
	seq, epoch uint64
	writing    int // writes between beginWrite and endWrite
	// buckets by the hash of their prefix (two prefixes sharing a hash
	// share a bucket: more invalidation, never less); lens are the prefix
	// lengths of the buckets, so that a write looks up only those (a few:
	// a slice, which every write ranges over, not a map).
	buckets map[uint64]scanBucket
	lens    []int
}

type scanBucket struct {
	created   uint64 // the table's sequence when the bucket was made
	lastWrite uint64 // the sequence of the last write into it
	version   uint64
	writing   int // writes into it between beginWrite and endWrite
}

// maxScanPrefix bounds a bucket's prefix (a shorter prefix of a common
// prefix is still common to every row of the range); maxScanBuckets
// bounds the buckets of a table (past it they are all dropped at once).
const (
	maxScanPrefix  = 64
	maxScanBuckets = 1 << 20
)

func newResultCache(bytes int64, tables map[string]*table) *resultCache {
	if bytes <= 0 {
		return nil
	}
	c := &resultCache{store: fastcache.New(int(bytes)), scans: map[*table]*tableScans{}}
	for _, t := range tables {
		c.scans[t] = &tableScans{buckets: map[uint64]scanBucket{}}
	}
	return c
}

// Rows.

// rowCacheKey appends the row's key in the cache to dst: callers build it
// in a buffer on their stack (the cache copies what it keeps).
func rowCacheKey(dst, rowPrefix []byte) []byte { return append(append(dst, 'r'), rowPrefix...) }

// rowKeyBuf is room on the stack for most rows' cache keys.
type rowKeyBuf [128]byte

// cachedRowRoom is the room getRow makes for a cached row's cells.
const cachedRowRoom = 512

// getRow returns the row's cells when the cache holds them for the
// selection families (the cells are the caller's), or else the stripe's
// generation for a later putRow.
func (c *resultCache) getRow(t *table, stripe int, rowPrefix, row []byte, families string) ([]*pb.Cell, bool, uint64) {
	gen, writing := c.rowGeneration(stripe)
	if writing {
		return nil, false, gen
	}
	var kb rowKeyBuf
	key := rowCacheKey(kb[:0], rowPrefix)
	// The row's copy and the cached cells in one allocation, with room
	// for most rows' cells (a larger row is copied once more; a miss,
	// rare once the cache is warm, wastes it).
	buf := make([]byte, len(row), len(row)+cachedRowRoom)
	copy(buf, row)
	v, ok := c.store.HasGet(buf, key)
	if !ok {
		return nil, false, gen
	}
	sig, rest, ok := readBytes(v[len(row):])
	if !ok {
		return nil, false, gen
	}
	only, serves := servesSelection(t, sig, families)
	if !serves {
		return nil, false, gen
	}
	cells, _, ok := decodeCells(t, v[:len(row):len(row)], rest, &cellArena{})
	if !ok {
		return nil, false, gen
	}
	return onlyFamily(cells, only), true, 0
}

// servesSelection tells whether a row cached for the selection sig answers
// a read of the selection families: the same selection, or a whole row
// (a writer's read) for a read of one family (a request's), whose cells
// onlyFamily then keeps (only is nil otherwise). The row's cache entry is
// one per row, so without the second case a row read by writers and by
// requests in turn would miss at each.
func servesSelection(t *table, sig []byte, families string) (only *family, ok bool) {
	if string(sig) == families {
		return nil, true
	}
	if len(sig) != 0 {
		return nil, false
	}
	f, ok := t.byName[families]
	return f, ok
}

// onlyFamily keeps the cells of f (all when f is nil), in place.
func onlyFamily(cells []*pb.Cell, f *family) []*pb.Cell {
	if f == nil {
		return cells
	}
	kept := cells[:0]
	for _, c := range cells {
		if string(c.Family) == f.name {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return kept
}

// rowGeneration is the stripe's generation, and whether a write of it is
// between beginWrite and endWrite (its rows are then neither served nor
// kept).
func (c *resultCache) rowGeneration(stripe int) (uint64, bool) {
	mu := &c.rowLocks[stripe%rowCacheShards]
	mu.Lock()
	defer mu.Unlock()
	return c.rowGens[stripe], c.rowWriting[stripe] > 0
}

// putRow keeps a row read for the selection families unless its stripe
// moved on since gen.
func (c *resultCache) putRow(stripe int, rowPrefix []byte, gen uint64, families string, arena []byte, kept []keptCell) {
	v := appendBytes(nil, []byte(families))
	v = appendCells(v, arena, kept)
	mu := &c.rowLocks[stripe%rowCacheShards]
	mu.Lock()
	defer mu.Unlock()
	if c.rowGens[stripe] == gen && c.rowWriting[stripe] == 0 {
		var kb rowKeyBuf
		c.store.Set(rowCacheKey(kb[:0], rowPrefix), v)
	}
}

// Scans.

// scanPrefix is the bucket of a scan whose keys lie between lower and
// upper.
func scanPrefix(lower, upper []byte) []byte {
	n := 0
	for n < len(lower) && n < len(upper) && n < maxScanPrefix && lower[n] == upper[n] {
		n++
	}
	return lower[:n]
}

// pageKeyHeader is the room scanKey leaves at the start of its key for
// what makes it a page key: a kind byte, the table's epoch, the bucket and
// its version (pageKey writes them in place: one allocation per scan).
const pageKeyHeader = 1 + 3*8

// pageKey makes scan, a key from scanKey, where the scan's first page is
// kept, and returns it.
func pageKey(scan []byte, epoch, bucket, version uint64) []byte {
	scan[0] = 's'
	binary.BigEndian.PutUint64(scan[1:], epoch)
	binary.BigEndian.PutUint64(scan[9:], bucket)
	binary.BigEndian.PutUint64(scan[17:], version)
	return scan
}

// pageRead is a first page's lookup: what a miss needs to keep the page.
type pageRead struct {
	key          []byte // nil: the bucket's pages cannot be kept now
	prefix       []byte
	seq, bucket  uint64
	epoch, vers  uint64
	bucketExists bool
}

// getPage returns the page cached for the scan (a key from scanKey, which
// it turns into the page's), or what putPage needs.
func (c *resultCache) getPage(t *table, prefix []byte, scan []byte) ([]byte, pageRead) {
	ts := c.scans[t]
	h := xxhash.Sum64(prefix)
	ts.mu.RLock()
	b, exists := ts.buckets[h]
	r := pageRead{prefix: prefix, seq: ts.seq, bucket: h, epoch: ts.epoch, vers: b.version, bucketExists: exists}
	writing := b.writing > 0 || (!exists && ts.writing > 0)
	ts.mu.RUnlock()
	if writing {
		return nil, pageRead{}
	}
	r.key = pageKey(scan, r.epoch, h, b.version)
	if exists {
		if v, ok := c.store.HasGet(nil, r.key); ok {
			return v, r
		}
	}
	return nil, r
}

// putPage keeps page unless a write may have changed it since r was
// taken.
func (c *resultCache) putPage(t *table, r pageRead, page []byte) {
	ts := c.scans[t]
	ts.mu.Lock()
	defer ts.mu.Unlock()
	b, exists := ts.buckets[r.bucket]
	switch {
	case r.key == nil || ts.epoch != r.epoch:
		return
	case !exists && (ts.seq != r.seq || ts.writing > 0):
		return // something was written meanwhile, and no bucket says where
	case !exists:
		if len(ts.buckets) >= maxScanBuckets {
			ts.reset()
			return
		}
		b = scanBucket{created: r.seq, lastWrite: r.seq, version: r.vers}
		ts.buckets[r.bucket] = b
		if !slices.Contains(ts.lens, len(r.prefix)) {
			ts.lens = append(ts.lens, len(r.prefix))
		}
	case b.created > r.seq || b.lastWrite > r.seq || b.version != r.vers || b.writing > 0:
		return
	}
	c.store.Set(r.key, page)
}

// reset drops every bucket; the epoch keeps their pages from being found.
func (ts *tableScans) reset() {
	ts.seq++
	ts.epoch++
	clear(ts.buckets)
	ts.lens = ts.lens[:0]
}

// beginWrite is called before a write of the row (its stripe and record
// prefix) commits: until its endWrite, the row and the scan buckets it
// falls in are neither served nor kept.
func (c *resultCache) beginWrite(t *table, stripe int, rowPrefix []byte) {
	mu := &c.rowLocks[stripe%rowCacheShards]
	mu.Lock()
	c.rowGens[stripe]++ // readers that began before the write keep nothing
	c.rowWriting[stripe]++
	mu.Unlock()
	c.markScans(t, rowPrefix, 1)
}

// endWrite is called after the write's commit, whether it committed or
// not, before the write returns. With cols nil it drops the row. With cols
// (the column records the write committed, with their record keys, as
// rowWriter stages them; the write added no family marker), a row the cache holds is
// kept, with each of those columns as the write left it. An update reads
// its row before it writes it, so the next update of a row is then a hit,
// not an iterator over a hot row whose every version is still in the
// memtable.
//
// The cells kept are what a read would find: the cached row was Pebble's
// row as of its stripe's generation before beginWrite, no reader kept a
// row since, the caller still holds the row's lock, so no other write of
// the row came between, and each column is set to its committed record.
func (c *resultCache) endWrite(t *table, stripe int, rowPrefix []byte, cols []stagedColumn) {
	shard := stripe % rowCacheShards
	mu := &c.rowLocks[shard]
	mu.Lock()
	// Readers that began between beginWrite and here keep nothing: they
	// may have read the row before the commit.
	c.rowGens[stripe]++
	var kb rowKeyBuf
	key := rowCacheKey(kb[:0], rowPrefix)
	if v, ok := c.store.HasGet(c.rowScratch[shard][:0], key); ok {
		c.rowScratch[shard] = v[:0] // patchRow copies what it keeps
		// Dropped first: fastcache does not keep a value of 64 KiB or more,
		// and would leave the old one in its place.
		c.store.Del(key)
		if cols != nil {
			nv, ok := patchRow(t, rowPrefix, v, cols, c.rowPatched[shard], &c.rowChanges[shard])
			if ok {
				c.store.Set(key, nv)
				c.rowPatched[shard] = nv[:0]
			}
		}
	}
	c.rowWriting[stripe]--
	mu.Unlock()
	c.markScans(t, rowPrefix, -1)
}

// cellChange is a column a write changed, as patchRow applies it to a
// cached row: set to (ts, val) when put, else removed.
type cellChange struct {
	fam  *family
	key  []byte // the record key past the row's prefix: fam.esc, kind, qual
	qual []byte
	put  bool
	ts   uint64
	val  []byte
}

// patchScratch is what patchRow works in, kept for the next: the
// changes, and their order (indices sort without write barriers).
type patchScratch struct {
	changes []cellChange
	order   []int32
}

// patchRow returns the cached row v (families selection, then cells in
// record-key order) with cols applied: a column with a put is set, one
// without is removed, appended to dst[:0] (v may not share it). ps (nil:
// none kept) is scratch, left cleared. ok is false when v or a key does
// not decode.
//
// It copies the cells it keeps as they are encoded, merging the changes
// in as it goes: a row of many cells (a top-words row with its pending
// counts) is written often, a few of its cells at a time.
func patchRow(t *table, rowPrefix, v []byte, cols []stagedColumn, dst []byte, ps *patchScratch) (out []byte, ok bool) {
	if ps == nil {
		ps = new(patchScratch)
	}
	defer func() { // no value kept past the write
		clear(ps.changes)
		ps.changes, ps.order = ps.changes[:0], ps.order[:0]
	}()
	sig, rest, ok := readBytes(v)
	if !ok {
		return nil, false
	}
	n, w := binary.Uvarint(rest)
	if w <= 0 || n > uint64(len(rest)) {
		return nil, false
	}
	rest = rest[w:]
	if !ps.collect(t, rowPrefix, sig, cols) {
		return nil, false
	}
	changes, order := ps.changes, ps.order
	// The count goes first, and is known last: room is left for the
	// longest, and the cells moved up to it at the end.
	out = appendBytes(slices.Grow(dst[:0], len(v)+len(changes)*(4*binary.MaxVarintLen64)), sig)
	countAt := len(out)
	out = append(out, make([]byte, binary.MaxVarintLen64)...)
	cellsAt := len(out)
	count := uint64(0)
	next := 0 // the first change not yet merged
	emit := func(c *cellChange) {
		out = binary.AppendUvarint(out, uint64(c.fam.index))
		out = binary.AppendUvarint(out, c.ts)
		out = appendBytes(out, c.qual)
		out = appendBytes(out, c.val)
		count++
	}
	for range n {
		cell := rest
		fam, w := binary.Uvarint(rest)
		if w <= 0 || fam >= uint64(len(t.families)) {
			return nil, false
		}
		rest = rest[w:]
		_, w = binary.Uvarint(rest)
		if w <= 0 {
			return nil, false
		}
		q, r, ok := readBytes(rest[w:])
		if !ok {
			return nil, false
		}
		if _, rest, ok = readBytes(r); !ok {
			return nil, false
		}
		f := t.families[fam]
		replaced := false
		for ; next < len(order); next++ {
			c := &changes[order[next]]
			order := compareCell(c.fam, c.qual, f, q)
			if order > 0 {
				break
			}
			if c.put {
				emit(c)
			}
			if order == 0 {
				replaced = true
				next++
				break
			}
		}
		if !replaced {
			out = append(out, cell[:len(cell)-len(rest)]...)
			count++
		}
	}
	for _, i := range order[next:] {
		if c := &changes[i]; c.put {
			emit(c)
		}
	}
	w = binary.PutUvarint(out[countAt:], count)
	copy(out[countAt+w:], out[cellsAt:])
	return out[:len(out)-(cellsAt-countAt-w)], true
}

// collect sets ps's changes to the columns of cols that the write changed
// and a read of the families selection sig returns, and its order to
// their indices in record-key order.
func (ps *patchScratch) collect(t *table, rowPrefix, sig []byte, cols []stagedColumn) bool {
	var nameBuf [64]byte
	ps.changes = ps.changes[:0]
	for _, sc := range cols {
		key, col := sc.key, sc.col
		if !col.changed {
			continue // read (a condition's column), not written
		}
		k := bytesOf(key)
		if !bytes.HasPrefix(k, rowPrefix) {
			return false
		}
		k = k[len(rowPrefix):]
		fn := escapedLen(k)
		if fn < 0 || fn >= len(k) || k[fn] != kindColumn {
			return false
		}
		fam := t.byName[string(unescape(nameBuf[:0], k[:fn]))]
		if fam == nil || !selected(sig, fam.name) {
			continue // a read of this selection does not return it
		}
		ps.changes = append(ps.changes, cellChange{fam: fam, key: k, qual: k[fn+1:], put: col.hasPut, ts: col.putTs, val: col.value})
	}
	changes, order := ps.changes, ps.order[:0]
	for i := range changes {
		order = append(order, int32(i))
	}
	// Record-key order (the escaped family is prefix-free).
	slices.SortFunc(order, func(a, b int32) int { return bytes.Compare(changes[a].key, changes[b].key) })
	ps.order = order
	return true
}

// compareCell orders cells as their records' keys sort: by escaped
// family (prefix-free), then qualifier.
func compareCell(af *family, aq []byte, bf *family, bq []byte) int {
	if c := bytes.Compare(af.esc, bf.esc); c != 0 {
		return c
	}
	return bytes.Compare(aq, bq)
}

// selected tells whether a row cached for the families selection sig
// (query.wholeFamilies: "" is every family) holds family name's cells.
func selected(sig []byte, name string) bool {
	if len(sig) == 0 {
		return true
	}
	for f := range strings.SplitSeq(string(sig), ",") {
		if f == name {
			return true
		}
	}
	return false
}

// markScans moves on the scan buckets whose prefix starts the row (their
// pages kept so far are never found again), and counts the write as begun
// (writing 1) or ended (-1) in them and in the table. No bucket is made
// while a write is in between, so the end finds the buckets the beginning
// did (or none, after a reset).
func (c *resultCache) markScans(t *table, rowPrefix []byte, writing int) {
	ts := c.scans[t]
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.writing += writing
	if writing > 0 {
		ts.seq++
	}
	for _, n := range ts.lens {
		if n > len(rowPrefix) {
			continue
		}
		h := xxhash.Sum64(rowPrefix[:n])
		b, ok := ts.buckets[h]
		if !ok {
			continue
		}
		if writing > 0 {
			// A page read since is kept by no one while the write is in
			// between, and one read before has an older sequence than the
			// bucket's last write: nothing moves on at the end.
			b.version++
			b.lastWrite = ts.seq
		}
		b.writing += writing
		ts.buckets[h] = b
	}
}

// clear drops everything, as a write to every row would.
func (c *resultCache) clear() {
	for i := range c.rowLocks {
		c.rowLocks[i].Lock()
	}
	for i := range c.rowGens {
		c.rowGens[i]++
	}
	c.store.Reset()
	for i := range c.rowLocks {
		c.rowLocks[i].Unlock()
	}
	for _, ts := range c.scans {
		ts.mu.Lock()
		ts.reset()
		ts.mu.Unlock()
	}
}

// Encoding: a row's cells as
//
//	count, then per cell: family index, timestamp, qualifier, value
//
// (lengths as uvarints); a page as lower, upper, done, rows scanned and
// filtered, then each row's key and cells.

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func readBytes(b []byte) (v, rest []byte, ok bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return nil, nil, false
	}
	return b[w : w+int(n)], b[w+int(n):], true
}

func appendCells(b, arena []byte, kept []keptCell) []byte {
	b = binary.AppendUvarint(b, uint64(len(kept)))
	off := 0
	for _, k := range kept {
		b = binary.AppendUvarint(b, uint64(k.fam.index))
		b = binary.AppendUvarint(b, k.ts)
		b = appendBytes(b, arena[off:off+k.qualLen])
		off += k.qualLen
		b = appendBytes(b, arena[off:off+k.valueLen])
		off += k.valueLen
	}
	return b
}

// cellArena hands out the cells of several rows from shared slices: a
// cached page's rows decode in two allocations, not two a row. Its zero
// value allocates for each row.
type cellArena struct {
	slab []cellWithTs
	ptrs []*pb.Cell
	hint int // cells to allocate room for at once
}

func (a *cellArena) take(n int) ([]cellWithTs, []*pb.Cell) {
	if len(a.slab) < n {
		size := max(n, a.hint)
		a.slab, a.ptrs = make([]cellWithTs, size), make([]*pb.Cell, size)
	}
	slab, ptrs := a.slab[:n:n], a.ptrs[:n:n]
	a.slab, a.ptrs = a.slab[n:], a.ptrs[n:]
	return slab, ptrs
}

// decodeCells makes cells of row from b, pointing into b, from arena.
func decodeCells(t *table, row, b []byte, arena *cellArena) ([]*pb.Cell, []byte, bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)) {
		return nil, nil, false
	}
	b = b[w:]
	if n == 0 {
		return nil, b, true
	}
	slab, cells := arena.take(int(n))
	for i := range cells {
		fam, w := binary.Uvarint(b)
		if w <= 0 || fam >= uint64(len(t.families)) {
			return nil, nil, false
		}
		b = b[w:]
		ts, w := binary.Uvarint(b)
		if w <= 0 {
			return nil, nil, false
		}
		b = b[w:]
		q, rest, ok := readBytes(b)
		if !ok {
			return nil, nil, false
		}
		v, rest, ok := readBytes(rest)
		if !ok {
			return nil, nil, false
		}
		b = rest
		c := &slab[i]
		c.ts = ts
		c.cell = pb.Cell{Row: row, Family: t.families[fam].bytes, Qualifier: q[:len(q):len(q)], Value: v[:len(v):len(v)], Timestamp: &c.ts, CellType: putCellType}
		cells[i] = &c.cell
	}
	return cells, b, true
}

// scanKey is what makes two scans the same: their range, direction, page
// size and selection (families, or some columns of them, a KeyOnlyFilter):
// a page read without a column is kept apart from one read with it. Scans with other
// filters, a time range or limits are not cached.
//
// The key starts with pageKeyHeader bytes of room for getPage.
func scanKey(q *query, lower, upper []byte, reversed bool, pageSize int) ([]byte, bool) {
	if len(q.rowPrefixes) > 0 {
		return nil, false
	}
	families, ok := q.selection()
	if !ok {
		// A KeyOnlyFilter alone is cached too.
		if len(q.stages) != 1 || q.stages[0].kind != stageKeyOnly || q.from != 0 || q.to != 0 || q.limited || q.storeOffset > 0 {
			return nil, false
		}
		if families, ok = (&query{t: q.t, columns: q.columns, only: q.only}).wholeFamilies(); !ok {
			return nil, false
		}
		families += "|keyonly"
		if q.stages[0].lenAsVal {
			families += "-len"
		}
	}
	k := make([]byte, pageKeyHeader, pageKeyHeader+len(lower)+len(upper)+len(families)+16)
	k = appendBytes(k, lower)
	k = appendBytes(k, upper)
	k = binary.AppendUvarint(k, uint64(pageSize))
	if reversed {
		k = append(k, 'r')
	}
	k = append(k, families...)
	return k, true
}
