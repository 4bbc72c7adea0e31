package embedded

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/rs/zerolog"
	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/region"
)

// Errors returned by the engine. Each wraps the error a caller would test
// for against a real cluster where one exists.
var (
	// ErrClosed is returned by every call made after Close.
	ErrClosed = fmt.Errorf("embedded: %w", gohbase.ErrClientClosed)
	// ErrUnknownTable is returned for a table that was not declared in
	// Options.Tables; it also matches gohbase.TableNotFound.
	ErrUnknownTable = fmt.Errorf("embedded: %w", gohbase.TableNotFound)
	// ErrUnknownFamily is returned for a column family the table does not
	// have, like HBase's NoSuchColumnFamilyException.
	ErrUnknownFamily = errors.New("embedded: NoSuchColumnFamilyException")
	// ErrUnsupported is returned for a request feature the engine does not
	// emulate; the message names the feature.
	ErrUnsupported = errors.New("embedded: unsupported")
	// ErrInvalidRequest is returned for a request HBase itself would reject
	// (an empty row in a mutation, a Put with no columns, a non-long cell
	// incremented).
	ErrInvalidRequest = errors.New("embedded: invalid request")
)

// DefaultDeleteMarkerHorizon is how long delete markers are kept when
// Options.DeleteMarkerHorizon is zero: a day, like the default interval of
// HBase's major compactions.
const DefaultDeleteMarkerHorizon = 24 * time.Hour

// maxRowLength is HBase's limit (Short.MAX_VALUE).
const maxRowLength = 32767

// Options configure Open.
type Options struct {
	Dir    string              // data directory; "" keeps everything in memory
	Tables map[string][]string // table name -> its column families
	Sync   bool                // fsync every commit (power-loss safety); default false
	Logger zerolog.Logger

	// Clock returns the current time; nil means time.Now. Cell timestamps
	// are its milliseconds.
	Clock func() time.Time
	// DeleteMarkerHorizon is how long a delete marker hides late Puts with
	// older timestamps before MajorCompact purges it; 0 means
	// DefaultDeleteMarkerHorizon.
	DeleteMarkerHorizon time.Duration
	// CacheBytes sizes Pebble's block cache; 0 means DefaultCacheBytes.
	CacheBytes int64
	// ResultCacheBytes sizes the cache of rows read by plain Gets and of
	// scans' first pages (see resultCache), outside the Go heap; 0 means
	// DefaultResultCacheBytes, negative turns it off.
	ResultCacheBytes int64
	// KeyFilterBytes bounds the filter of the store's record keys that
	// spares a write the read of a column that has no record (see
	// keyFilter); 0 means DefaultMaxKeyFilterBytes, negative turns it off.
	KeyFilterBytes int
	// ExpectedRecords is about how many data records a bulk load that
	// knows its input is about to add: the first key filter is made for
	// them and those stored, and not built again, twice the size, each
	// time the store outgrows it. 0 sizes it for those stored.
	ExpectedRecords int64

	// NonceGracePeriod is how long the nonce of an applied Increment or
	// Append is remembered, so that a re-send of it is answered and not
	// applied again; 0 means DefaultNonceGracePeriod (HBase's default).
	NonceGracePeriod time.Duration
	// MaxNonces caps the nonces remembered; 0 means DefaultMaxNonces.
	// Past it the oldest are forgotten first, before their grace period
	// ends (see nonceTable).
	MaxNonces int
	// NoNonces applies every Increment and Append as sent and remembers
	// no nonce: for a process whose calls are never re-sent, as import's
	// (in-process calls, each batch its own op), which makes more
	// Increments within the grace period than any cap would hold.
	NoNonces bool

	// NoWAL writes no write-ahead log, for a bulk load that can be run
	// again (import): a commit waits for no log write, and a crash or a
	// kill loses the commits since the last memtable flush. What survives
	// is a prefix of the commits, in their order, as if the process had
	// died earlier. Close flushes, so a process that closes the engine
	// loses nothing. Ignored with Sync, which asks for every commit to
	// survive, and in memory, which has no log.
	NoWAL bool

	// ReadOnly opens an existing store (Dir) for reading only: writes fail,
	// nothing is compacted, and the files are left as they were (a
	// backup's checkpoint, read by export). Pebble still takes the
	// directory's lock.
	ReadOnly bool

	// noAutoCompactions leaves files where flushes put them (tests that
	// need several levels before compacting them by hand).
	noAutoCompactions bool
}

// DefaultResultCacheBytes is the result cache unless
// Options.ResultCacheBytes says otherwise: every node, and the first pages
// of the timelines and relationships, of a graph of about 10,000 nodes.
const DefaultResultCacheBytes = 128 << 20

// DefaultRowCacheBytes is the row cache unless Options.RowCacheBytes says
// otherwise: room for every node of a graph of about 100,000 (it is on the
// Go heap, under the server's memory limit).
const DefaultRowCacheBytes = 32 << 20

// DefaultCacheBytes is the block cache unless Options.CacheBytes says
// otherwise. Pebble's own default (8 MiB) made most point reads of a
// flushed store decompress their block again: writes read the rows they
// change, so an import spent 45% of its time in Pebble Gets.
const DefaultCacheBytes = 256 << 20

func (o *Options) validate() error {
	if len(o.Tables) == 0 {
		return errors.New("embedded: Options.Tables declares no table")
	}
	for name, families := range o.Tables {
		if name == "" {
			return errors.New("embedded: empty table name")
		}
		if len(families) == 0 {
			return fmt.Errorf("embedded: table %q declares no column family", name)
		}
		seen := make(map[string]bool, len(families))
		for _, f := range families {
			if f == "" || seen[f] {
				return fmt.Errorf("embedded: table %q: empty or repeated family %q", name, f)
			}
			seen[f] = true
		}
	}
	if o.DeleteMarkerHorizon < 0 || o.CacheBytes < 0 {
		return errors.New("embedded: negative DeleteMarkerHorizon or CacheBytes")
	}
	if o.NonceGracePeriod < 0 || o.MaxNonces < 0 {
		return errors.New("embedded: negative NonceGracePeriod or MaxNonces")
	}
	if o.ReadOnly && o.Dir == "" {
		return errors.New("embedded: ReadOnly needs a Dir")
	}
	return nil
}

type table struct {
	name     string
	prefix   []byte // spaceData esc(name)
	end      []byte // prefixEnd(prefix): past the table's last row
	region   hrpc.RegionInfo
	families []*family // sorted by name, the order HBase returns cells in
	byName   map[string]*family
	// pageQueries select a family whole, or the whole row (""), for
	// ScanPages: made once, as a query is only read once made.
	pageQueries map[string]*query
	// columnQueries select some columns of a family for ScanPages, by
	// columnsKey: made on first use.
	columnQueriesMu sync.RWMutex
	columnQueries   map[string]*query
}

type family struct {
	index int // in table.families
	name  string
	bytes []byte // the name, shared by every returned cell
	esc   []byte
}

func newTable(name string, families []string) *table {
	t := &table{
		name:   name,
		prefix: appendEscaped([]byte{spaceData}, []byte(name)),
		// One region covers the whole table: requests need a region to be
		// turned into protobuf, as on a region server.
		region: region.NewInfo(0, nil, []byte(name),
			[]byte(name+",,0.embedded."), nil, nil),
		byName: make(map[string]*family, len(families)),
	}
	t.end = prefixEnd(t.prefix)
	sorted := append([]string(nil), families...)
	sort.Strings(sorted)
	for i, f := range sorted {
		fam := &family{index: i, name: f, bytes: []byte(f), esc: appendEscaped(nil, []byte(f))}
		t.families = append(t.families, fam)
		t.byName[f] = fam
	}
	t.pageQueries = map[string]*query{"": {t: t}}
	for _, fam := range t.families {
		t.pageQueries[fam.name] = &query{t: t, only: fam}
	}
	return t
}

func (t *table) family(name []byte) (*family, error) {
	if f, ok := t.byName[string(name)]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("%w: column family %q does not exist in table %q",
		ErrUnknownFamily, name, t.name)
}

// familyByEsc is the declared family whose escaped name is esc, or nil.
func (t *table) familyByEsc(esc []byte) *family {
	for _, f := range t.families {
		if bytes.Equal(f.esc, esc) {
			return f
		}
	}
	return nil
}

func (t *table) rowPrefix(row []byte) []byte {
	return appendEscaped(append(make([]byte, 0, len(t.prefix)+len(row)+4), t.prefix...), row)
}

// rowBounds is rowPrefix of start and of stop (nil for an empty row) in
// one allocation: a scan's bounds. Each is capped at its length, so that
// appending to one never writes into the other.
func (t *table) rowBounds(start, stop []byte) (lo, hi []byte) {
	buf := make([]byte, 0, 2*len(t.prefix)+2*(len(start)+len(stop))+4)
	if len(start) > 0 {
		buf = appendEscaped(append(buf, t.prefix...), start)
		lo = buf[:len(buf):len(buf)]
	}
	if len(stop) > 0 {
		rest := appendEscaped(append(buf[len(buf):], t.prefix...), stop)
		hi = rest[:len(rest):len(rest)]
	}
	return lo, hi
}

// rowLocks is the number of mutexes rows are striped over. Mutations of one
// row are serialised by its stripe; a collision only serialises two rows.
const rowLocks = 1024

// Client is an in-process HBase: it implements gohbase.Client over Pebble.
//
// All methods may be called concurrently. Results returned to callers own
// their bytes. Scanners are not safe for concurrent use, as in gohbase.
type Client struct {
	db      *pebble.DB
	dir     string // Options.Dir: "" in memory
	tables  map[string]*table
	clock   func() time.Time
	horizon time.Duration
	log     zerolog.Logger
	// writeOpts is pebble.Sync on disk (see noSyncWALFS for what that
	// costs when Options.Sync is false) and NoSync in memory or with
	// Options.NoWAL.
	writeOpts *pebble.WriteOptions
	// flushOnClose is Options.NoWAL in effect: what the memtables hold is
	// nowhere else until flushed.
	flushOnClose bool
	// compress is false while a bulk load (Options.NoWAL) writes tables
	// that CompactAll will write again: they are written uncompressed
	// until it starts (see bulkLoadCompactions).
	compress atomic.Bool

	// locks[i] serialises the mutations of the rows of stripe i (see
	// rowStripe) and guards familyMarkers[i].
	locks [rowLocks]sync.Mutex
	// familyMarkers[i] holds the record keys of the family delete markers
	// stored in rows of stripe i, or more: a key is added before its marker
	// is committed and removed once a purge of it is. A mutation reads a
	// row's marker only when its key is here, so the rows that never had
	// one (nearly all) cost no read for it. Loaded from the marker index by
	// Open.
	familyMarkers [rowLocks]map[string]struct{}

	// nonces are the Increments and Appends applied recently, by nonce;
	// nil with Options.NoNonces.
	nonces *nonceTable

	// results caches plain Gets' rows and scans' first pages; nil when
	// turned off. A write invalidates what it changes (invalidateRow).
	results *resultCache

	// filter is the filter of every data record's key (see keyFilter):
	// nil until the first is built, or when turned off. nextFilter is one
	// being built, filterBuilding says one is, filterBuilds waits for it;
	// filterMu orders the two with commits.
	filter, nextFilter atomic.Pointer[keyFilter]
	filterMu           sync.RWMutex
	filterBuilding     atomic.Bool
	filterBuilds       sync.WaitGroup
	maxFilterBytes     int

	// txConflicts counts the transactions that could not go on (Tx).
	txConflicts atomic.Int64

	// mu guards closed. Every call holds it for reading while it uses db,
	// so Close waits for calls in flight before closing Pebble.
	mu     sync.RWMutex
	closed bool

	stop      chan struct{}
	compactor sync.WaitGroup
}

var _ gohbase.Client = (*Client)(nil)

// Open opens (creating if needed) the engine described by opts.
func Open(opts Options) (*Client, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	c := &Client{
		dir:     opts.Dir,
		tables:  make(map[string]*table, len(opts.Tables)),
		clock:   opts.Clock,
		horizon: opts.DeleteMarkerHorizon,
		log:     opts.Logger,
		stop:    make(chan struct{}),
	}
	if c.clock == nil {
		c.clock = time.Now
	}
	if c.horizon == 0 {
		c.horizon = DefaultDeleteMarkerHorizon
	}
	grace, maxNonces := opts.NonceGracePeriod, opts.MaxNonces
	if grace == 0 {
		grace = DefaultNonceGracePeriod
	}
	if maxNonces == 0 {
		maxNonces = DefaultMaxNonces
	}
	if !opts.NoNonces {
		c.nonces = newNonceTable(grace, maxNonces)
	}
	for name, families := range opts.Tables {
		c.tables[name] = newTable(name, families)
	}
	switch {
	case opts.ResultCacheBytes == 0:
		c.results = newResultCache(DefaultResultCacheBytes, c.tables)
	case opts.ResultCacheBytes > 0:
		c.results = newResultCache(opts.ResultCacheBytes, c.tables)
	}
	cacheBytes := opts.CacheBytes
	if cacheBytes == 0 {
		cacheBytes = DefaultCacheBytes
	}
	cache := pebble.NewCache(cacheBytes)
	defer cache.Unref() // Pebble holds its own reference
	popts := &pebble.Options{
		Logger: pebbleLogger{opts.Logger},
		Cache:  cache,
		// Hot rows (counters, a busy node) are rewritten often; a larger
		// memtable keeps them there between flushes.
		MemTableSize: 64 << 20,

		DisableAutomaticCompactions: opts.noAutoCompactions,
		ReadOnly:                    opts.ReadOnly,
	}
	for i := range popts.Levels {
		// Creates ask whether a row is absent; bloom filters answer that
		// without reading blocks.
		popts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	dir := opts.Dir
	if dir == "" {
		popts.FS = vfs.NewMem()
		popts.DisableWAL = true // nothing to recover into
		c.writeOpts = pebble.NoSync
		for i := range popts.Levels { // nothing to save but CPU
			popts.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.NoCompression }
		}
	} else {
		// Every commit asks for a WAL sync so that Pebble writes the record
		// to the file before the call returns: an acknowledged write then
		// survives the process being killed. Without Options.Sync the sync
		// itself is skipped (power loss may lose the last writes).
		popts.FS = vfs.Default
		if !opts.Sync {
			popts.FS = noSyncWALFS{vfs.Default}
		}
		c.writeOpts = pebble.Sync
		if opts.NoWAL && !opts.Sync && !opts.ReadOnly {
			// A relationship import at 10,000 nodes: 26,486 -> 34,344
			// rows/s (its commits waited for the log's write).
			popts.DisableWAL = true
			c.writeOpts = pebble.NoSync
			c.flushOnClose = true
			bulkLoadCompactions(popts, &c.compress)
		}
	}
	db, err := pebble.Open(dir, popts)
	if err != nil {
		return nil, fmt.Errorf("embedded: open %q: %w", dir, err)
	}
	c.db = db
	if err := c.loadFamilyMarkers(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("embedded: open %q: %w", dir, err)
	}
	if !opts.ReadOnly {
		c.compactor.Add(1)
		go c.compactPeriodically()
		if c.maxFilterBytes = opts.KeyFilterBytes; c.maxFilterBytes == 0 {
			c.maxFilterBytes = DefaultMaxKeyFilterBytes
		}
		if c.maxFilterBytes > 0 {
			// About 32 bytes a record on disk: a filter too large for
			// the store beats one that must be built again at once.
			used, err := db.EstimateDiskUsage([]byte{spaceData}, []byte{spaceMarker})
			if err != nil {
				c.Close()
				return nil, fmt.Errorf("embedded: open %q: %w", dir, err)
			}
			c.startKeyFilter(int64(used/32) + opts.ExpectedRecords)
		}
	}
	return c, nil
}

// Close waits for calls in flight, stops background work and closes the
// store. Calls after Close fail with ErrClosed. Close is safe to call twice.
func (c *Client) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	close(c.stop)
	c.mu.Unlock()
	c.compactor.Wait()
	c.filterBuilds.Wait()
	if c.flushOnClose {
		if err := c.db.Flush(); err != nil {
			c.log.Error().Err(err).Msg("embedded: close: flush (the writes since the last flush are lost)")
		}
	}
	if err := c.db.Close(); err != nil {
		c.log.Error().Err(err).Msg("embedded: close")
	}
	if c.results != nil {
		// fastcache's memory is mapped outside the Go heap and goes back
		// only through Reset: a dropped cache keeps it for good (a process
		// that opens engines in turn, as the tests do, grew by gigabytes).
		// No call is in flight: closed was set under the write lock.
		c.results.store.Reset()
	}
}

// enter marks a call in flight; the caller must call leave when done with db.
func (c *Client) enter() error {
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

func (c *Client) leave() { c.mu.RUnlock() }

func (c *Client) table(name []byte) (*table, error) {
	if t, ok := c.tables[string(name)]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownTable, name)
}

// now is the current time in milliseconds, HBase's timestamp unit.
func (c *Client) now() uint64 {
	return uint64(c.clock().UnixMilli())
}

// rowStripe is the stripe of locks and familyMarkers a row belongs to.
func rowStripe(t *table, row []byte) int {
	// FNV-1a of the table's name, a 0 and the row, written out: the
	// hash.Hash32 of hash/fnv costs an allocation a call.
	const offset32, prime32 = 2166136261, 16777619
	h := uint32(offset32)
	for i := 0; i < len(t.name); i++ {
		h = (h ^ uint32(t.name[i])) * prime32
	}
	h *= prime32 // ^ 0
	for _, b := range row {
		h = (h ^ uint32(b)) * prime32
	}
	return int(h % rowLocks)
}

func (c *Client) lockRow(t *table, row []byte) *sync.Mutex {
	m := &c.locks[rowStripe(t, row)]
	m.Lock()
	return m
}

// loadFamilyMarkers fills familyMarkers from the marker index, which lists
// every delete marker stored; Open calls it before any mutation.
func (c *Client) loadFamilyMarkers() error {
	it, err := c.db.NewIter(&pebble.IterOptions{LowerBound: []byte{spaceMarker}, UpperBound: []byte{spaceMarker + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		entry := it.Key()
		if len(entry) < 1+tsLength {
			return fmt.Errorf("%w: marker index entry %q", errCorrupt, entry)
		}
		key := entry[1+tsLength:]
		dk, ok := parseDataKey(key)
		if !ok {
			return fmt.Errorf("%w: marker index entry %q", errCorrupt, entry)
		}
		t := c.tables[string(unescape(nil, dk.tableEsc))]
		if dk.kind != kindFamilyMarker || t == nil {
			continue
		}
		c.addFamilyMarker(rowStripe(t, unescape(nil, dk.rowEsc)), string(key))
	}
	return it.Error()
}

// addFamilyMarker records a family marker's key; the caller holds the row's
// lock (or is Open).
func (c *Client) addFamilyMarker(stripe int, key string) {
	m := c.familyMarkers[stripe]
	if m == nil {
		m = make(map[string]struct{})
		c.familyMarkers[stripe] = m
	}
	m[strings.Clone(key)] = struct{}{} // key may be a writer's, which it reuses
}

// pebbleLogger sends Pebble's own messages to zerolog.
type pebbleLogger struct{ log zerolog.Logger }

func (l pebbleLogger) Infof(format string, args ...interface{}) {
	l.log.Debug().Msgf("pebble: "+format, args...)
}

func (l pebbleLogger) Errorf(format string, args ...interface{}) {
	l.log.Error().Msgf("pebble: "+format, args...)
}

func (l pebbleLogger) Fatalf(format string, args ...interface{}) {
	msg := fmt.Sprintf("pebble: "+format, args...)
	l.log.Error().Msg(msg)
	panic(msg)
}

// bulkLoadL0Sublevels is the L0 read amplification at which a bulk load
// compacts L0: twice a 100,000-node import's whole load.
const bulkLoadL0Sublevels = 32

// bulkLoadOpenFiles keeps a bulk load's L0 files open (some 80 a
// sublevel, bulkLoadL0Sublevels of them) beside its lower levels', well
// under the open files a Go process may have on Linux (its hard limit,
// to which Go raises the soft one: 20,000 on this machine).
const bulkLoadOpenFiles = 5000

// bulkLoadCompactions is how a bulk load (Options.NoWAL: import) has
// Pebble compact: hardly at all until its CompactAll. An import's rows
// land all over the key space, so each file flushed to L0 overlaps all of
// Lbase, and each compaction of L0 into Lbase rewrites most of it, only
// for CompactAll to rewrite it all once more at the end. So L0 is
// compacted only at bulkLoadL0Sublevels sublevels, never by its count of
// files (Pebble's 500, which an import reached first), and writes stop
// only at twice that; its files stay open (bulkLoadOpenFiles, not 1,000).
// A bigger import compacts L0 every bulkLoadL0Sublevels sublevels, into
// an Lbase of 256 MiB rather than 64.
//
// A 100,000-node import (2.5 million relationships, 700,000 articles)
// ends with 17 sublevels, 1,375 files and 2.6 GB in L0, none compacted.
// In 7 pairs of whole imports at that size, old and new in turn,
// relationships ran 0.98-1.27 times the rows a second (median 1.06) and
// articles 0.99-1.34 (1.18); at 10,000 nodes, which reach neither
// threshold, 0.93-1.19 and 0.90-1.14 (0.97 and 1.07), the machine's
// noise. A Get looks at each sublevel behind its bloom filter (one of
// named columns stops at the newest), but a scan merges them all, so
// import compacts before the home feeds' fan-outs: with that, whole
// imports took 227 -> 188 s and 218 -> 215 s (bench/RESULTS.md).
//
// An import killed or interrupted before its CompactAll leaves that L0. A
// server opening it serves at once and compacts it with the defaults (its
// writes would wait only for a flush while L0 still has 12 sublevels): at
// 100,000 nodes, up in 1.7 s, its reads and writes (one a second, over
// HTTP) took 12-60 ms for the 30 s it compacted, then 11-20.
//
// Its memtables are 256 MiB rather than 64: a quarter of the files, each
// of more, reach L0. Relationships of 100,000 nodes: 1.10 times the rows
// a second (4 pairs, 1.01-1.23), 10,000 nodes 1.06, peak RSS 0.2 GB more;
// 128 and 512 MiB did worse than 256 (bench/RESULTS.md).
//
// Its tables are written uncompressed until compress is set (CompactAll,
// which rewrites them all into the bottom level, sets it first): flushes
// and compactions skip Snappy for files that are soon written again.
// Relationships of 100,000 nodes: 1.055-1.064 times the rows a second (3
// pairs), 7-8% less CPU, the same store on disk. An import stopped before
// CompactAll leaves uncompressed files, which Pebble reads as any, and
// compresses as its compactions rewrite them.
func bulkLoadCompactions(o *pebble.Options, compress *atomic.Bool) {
	o.MemTableSize = 256 << 20
	o.L0CompactionThreshold = bulkLoadL0Sublevels
	o.L0CompactionFileThreshold = math.MaxInt32
	o.L0StopWritesThreshold = 2 * bulkLoadL0Sublevels
	o.LBaseMaxBytes = 256 << 20
	o.MaxOpenFiles = bulkLoadOpenFiles
	for i := range o.Levels {
		o.Levels[i].Compression = func() *sstable.CompressionProfile {
			if compress.Load() {
				return sstable.SnappyCompression // Pebble's default
			}
			return sstable.NoCompression
		}
	}
}
