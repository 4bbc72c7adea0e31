package embedded

import (
	"bytes"
	"errors"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/cockroachdb/pebble/v2"
)

// keyFilter is a Bloom filter of record keys, in the blocked form (each
// key's bits in one cache line: one miss a lookup). The engine keeps one
// of every data record it holds (Client.filter), so that a mutation learns
// that a column it is about to write has no record yet without a Pebble
// read: most columns a create writes are new (a new row, an op's column),
// and such a read costs a seek of the memtable's skiplist and a filter
// check of each table, all to find nothing.
//
// Keys are never taken out (a deleted record leaves its bits): a filter
// answers "may be there" more often with time, and the engine builds a
// larger one when more keys went in than it was made for.
type keyFilter struct {
	blocks []filterBlock
	mask   uint64 // len(blocks)-1: a power of two
	// capacity is the number of keys the filter was made for; added
	// counts the adds that set a bit (see add): a key written again does
	// not count, nor does a new one whose bits others set already (about
	// 1% of them at capacity), so a larger filter comes that much late.
	capacity int64
	added    atomic.Int64
}

// filterBlock is one cache line: 512 bits.
type filterBlock [8]atomic.Uint64

const (
	filterBitsPerKey = 12 // with 6 bits a key in a block: about 1% false positives
	filterProbes     = 6
	filterBlockBytes = 64

	minFilterBytes = 1 << 20
	// DefaultMaxKeyFilterBytes bounds the filter: past about 45 million
	// records, it answers "may be there" more often, and nothing else.
	DefaultMaxKeyFilterBytes = 64 << 20
)

// newKeyFilter makes a filter for about keys keys, of a power of two
// blocks between minFilterBytes and maxBytes.
func newKeyFilter(keys int64, maxBytes int) *keyFilter {
	want := uint64(max(keys, 1)) * filterBitsPerKey / 8
	size := uint64(minFilterBytes)
	for size < want && size < uint64(maxBytes) {
		size <<= 1
	}
	n := size / filterBlockBytes
	return &keyFilter{
		blocks:   make([]filterBlock, n),
		mask:     n - 1,
		capacity: int64(size * 8 / filterBitsPerKey),
	}
}

// filterHash is a record key's hash, for add and mayContain.
func filterHash(key string) uint64 { return xxhash.Sum64String(key) }

// filterHashBytes is filterHash of a key as bytes.
func filterHashBytes(key []byte) uint64 { return xxhash.Sum64(key) }

// probes returns the block of the key of hash h, and the word and bit of
// each probe in it: the block from the low bits, the probes from a
// multiply-mixed word (9 bits each).
func (f *keyFilter) probes(h uint64) (*filterBlock, uint64) {
	return &f.blocks[h&f.mask], bits.RotateLeft64(h, 32) * 0x9E3779B97F4A7C15
}

// add adds the key of hash h. Only a key that sets a bit counts towards
// full: most commits write records the filter has already (counters, word
// counts), which load it no further, and would otherwise have it rebuilt,
// twice the size each time, for a store that does not grow.
func (f *keyFilter) add(h uint64) {
	b, p := f.probes(h)
	set := false
	for range filterProbes {
		w, bit := (p>>6)&7, p&63
		if b[w].Load()&(1<<bit) == 0 {
			b[w].Or(1 << bit)
			set = true
		}
		p >>= 9
	}
	if set {
		f.added.Add(1)
	}
}

// mayContain is false only for a key never added.
func (f *keyFilter) mayContain(h uint64) bool {
	b, p := f.probes(h)
	for range filterProbes {
		w, bit := (p>>6)&7, p&63
		if b[w].Load()&(1<<bit) == 0 {
			return false
		}
		p >>= 9
	}
	return true
}

// touch loads the block of each hash, with no test between two loads, so
// that their cache misses overlap; mayContain of them then finds them in
// the cache.
func (f *keyFilter) touch(hashes []uint64) uint64 {
	var sum uint64
	for _, h := range hashes {
		sum += f.blocks[h&f.mask][0].Load()
	}
	return sum
}

// full tells whether more keys went in than the filter was made for.
func (f *keyFilter) full() bool { return f.added.Load() > f.capacity }

// Keeping the filter: every key of a data record in Pebble, and the
// record prefix of every row that has one (rowPrefix: never a record's
// key), is in the filter consulted (Client.filter) once there is one.
// Writes and reads consult it: a write under its row's lock, before it
// reads a column; a read with no lock, before it reads a row. So a commit
// adds its keys before Pebble has them: a read that finds a key absent
// comes before the commit, never after another read found the record.
//
// A commit adds them to the current filter and to the one being built
// (Client.nextFilter), and holds filterMu for reading from loading the
// two until its Pebble commit is done. A build takes filterMu to publish
// its filter as the next one, then reads Pebble: a commit that began
// before is done, and read; one after adds its keys. It takes it again to
// make the filter the current one.

// filterScanChunk is the keys a build reads with one iterator: it holds a
// call slot (Close waits for it), and pins memtables and tables, while it
// reads.
const filterScanChunk = 1 << 16

// startKeyFilter builds, in the background, a filter for about keys keys,
// unless one is being built.
func (c *Client) startKeyFilter(keys int64) {
	if !c.filterBuilding.CompareAndSwap(false, true) {
		return
	}
	c.filterBuilds.Add(1)
	go func() {
		defer c.filterBuilds.Done()
		defer c.filterBuilding.Store(false)
		f := newKeyFilter(keys, c.maxFilterBytes)
		start := time.Now()
		c.filterMu.Lock()
		c.nextFilter.Store(f)
		c.filterMu.Unlock()
		err := c.readRecordKeys(f)
		c.filterMu.Lock()
		if err == nil {
			c.filter.Store(f)
		}
		c.nextFilter.Store(nil)
		c.filterMu.Unlock()
		if err != nil && !errors.Is(err, ErrClosed) {
			c.log.Error().Err(err).Msg("embedded: key filter: build")
		}
		if err == nil {
			c.log.Debug().Int("bytes", len(f.blocks)*filterBlockBytes).Int64("keys", f.added.Load()).
				Dur("took", time.Since(start)).Msg("embedded: key filter built")
		}
	}()
}

// readRecordKeys adds the key of every data record in Pebble, and the
// prefix of every row, to f.
func (c *Client) readRecordKeys(f *keyFilter) error {
	lower, upper := []byte{spaceData}, []byte{spaceMarker}
	var lastRow []byte
	for {
		if err := c.enter(); err != nil {
			return err
		}
		it, err := c.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
		if err != nil {
			c.leave()
			return err
		}
		valid, n := it.First(), 0
		for ; valid && n < filterScanChunk; valid = it.Next() {
			k := it.Key()
			f.add(xxhash.Sum64(k))
			if dk, ok := parseDataKey(k); ok && !bytes.Equal(dk.rowPrefix, lastRow) {
				lastRow = append(lastRow[:0], dk.rowPrefix...)
				f.add(xxhash.Sum64(lastRow))
			}
			n++
		}
		if valid {
			lower = append(lower[:0:0], it.Key()...) // the next chunk's first
		}
		err = it.Close()
		c.leave()
		if err != nil || !valid {
			return err
		}
	}
}

// mayHaveRecord is false only when no record of key is stored.
func (c *Client) mayHaveRecord(key string) bool {
	f := c.filter.Load()
	return f == nil || f.mayContain(filterHash(key))
}

// mayHaveRecordKey is mayHaveRecord of a key as bytes.
func (c *Client) mayHaveRecordKey(key []byte) bool {
	f := c.filter.Load()
	return f == nil || f.mayContain(filterHashBytes(key))
}

// mayHaveRow is false only when the row of record prefix rowPrefix has no
// record stored.
func (c *Client) mayHaveRow(rowPrefix []byte) bool {
	f := c.filter.Load()
	return f == nil || f.mayContain(xxhash.Sum64(rowPrefix))
}

// commitFiltered commits batch, which holds the writes of ws, with their
// keys in the filters (see keyFilter), and starts a larger filter once the
// current one holds more keys than it was made for.
func (c *Client) commitFiltered(batch *pebble.Batch, ws []*rowWriter) error {
	c.filterMu.RLock()
	defer c.filterMu.RUnlock()
	next, cur := c.nextFilter.Load(), c.filter.Load()
	if next != nil || cur != nil {
		add := func(h uint64) {
			if next != nil {
				next.add(h)
			}
			if cur != nil && cur != next {
				cur.add(h)
			}
		}
		for _, w := range ws {
			add(xxhash.Sum64(w.rowPrefix))
			for _, sc := range w.staged {
				if col := sc.col; col.changed && (col.hasPut || col.hasDel) {
					add(filterHash(sc.key))
				}
			}
			for k := range w.markers {
				add(filterHash(k))
			}
		}
		if cur != nil && cur.full() && len(cur.blocks)*filterBlockBytes < c.maxFilterBytes {
			c.startKeyFilter(2 * cur.added.Load())
		}
	}
	return batch.Commit(c.writeOpts)
}
