package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/keys"
)

// DegreeTally sums the degree counts of an import's relationships over
// its batches (ImportRelationshipsTallied), for FlushDegreeTally to write
// each counter once rather than once a batch. A batch's ends are
// scattered over the graph, so each batch's Increments touched as many
// counters as it had relationships, and each Increment reads its row
// back: at 100,000 nodes, from the store's files rather than a memtable.
//
// What it costs: a relationship is reported created before it is
// counted. A kill leaves uncounted every relationship imported since the
// last flush, not only those of the batches in flight, which `repair`
// after a kill recounts either way; a flush that fails leaves its
// counters to `repair` too, and says so.
type DegreeTally struct {
	mu      sync.Mutex
	deltas  map[string]int64 // by degree counter row
	limit   int              // pending counters past which a batch flushes
	flushed int              // counters written
	err     error            // the first flush's failure
}

// DefaultDegreeTallyLimit is the counters a DegreeTally holds before a
// batch flushes it: some 100 MB. A graph of 100,000 nodes and two types
// has at most 400,000.
const DefaultDegreeTallyLimit = 1 << 20

// NewDegreeTally returns an empty tally that flushes itself past limit
// pending counters (0: DefaultDegreeTallyLimit).
func NewDegreeTally(limit int) *DegreeTally {
	if limit <= 0 {
		limit = DefaultDegreeTallyLimit
	}
	return &DegreeTally{deltas: map[string]int64{}, limit: limit}
}

// Flushed is how many counter Increments the tally's flushes wrote.
func (t *DegreeTally) Flushed() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.flushed
}

// add counts the items. An item whose counters have no key fails.
func (t *DegreeTally) add(items []*relImport) {
	rows := make([][]byte, 0, 2*len(items))
	for _, it := range items {
		o, in, err := it.k.degrees()
		if err != nil {
			it.fail(err)
			continue
		}
		rows = append(rows, o, in)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range rows {
		t.deltas[string(r)]++
	}
}

// full reports whether the tally holds more counters than its limit.
func (t *DegreeTally) full() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.deltas) > t.limit
}

// take empties the tally and returns what it held.
func (t *DegreeTally) take() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.deltas
	t.deltas = map[string]int64{}
	return d
}

// ImportRelationshipsTallied is ImportRelationships, except that it adds
// the degree counts of the relationships it creates to t instead of
// writing them (see DegreeTally), and flushes t when t holds more than
// its limit. FlushDegreeTally writes what t holds at the end.
//
// Unlike ImportRelationships, a batch retried under the same op (which
// finds its own rows and finishes them) counts them again in t: the
// nonces of a flush are its own. Retry a tallied batch only under a new
// op, which skips the rows it finds, as the importer's rerun does.
func (s *Store) ImportRelationshipsTallied(ctx context.Context, rels []RelationshipImport, t *DegreeTally) ([]ImportOutcome, error) {
	out, err := s.importRelationships(ctx, rels, t)
	if err == nil && t.full() {
		// The relationships of rels are reported created: counted even
		// when ctx ends (an interrupted import). A failure is kept in t,
		// for the final flush to report.
		_ = s.FlushDegreeTally(context.WithoutCancel(ctx), t)
	}
	return out, err
}

// FlushDegreeTally writes the counts t holds, one Increment per counter,
// and returns the first failure of any flush of t: the counters it names
// are left to `repair`.
//
// The Increments carry nonces of one op, and those not acknowledged are
// sent again with the same nonces up to flushAttempts times: an Increment
// applied whose answer was lost counts once (on HBase, which keeps
// nonces; the embedded engine fails no call after applying it). What
// fails every attempt may or may not be counted, which only a recount
// can tell.
func (s *Store) FlushDegreeTally(ctx context.Context, t *DegreeTally) error {
	d := t.take()
	n, err := s.writeDegreeTotals(ctx, d)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.flushed += n
	if err != nil && t.err == nil {
		t.err = err
	}
	return t.err
}

// flushAttempts is how many times a flush sends an Increment before it
// gives up, and defaultFlushBackoff the wait before the second, doubling
// (1.5 s in all): long enough for a region to move.
const (
	flushAttempts       = 5
	defaultFlushBackoff = 100 * time.Millisecond
)

// writeDegreeTotals increments each counter row of d by its delta and
// returns how many it wrote.
func (s *Store) writeDegreeTotals(ctx context.Context, d map[string]int64) (int, error) {
	if err := s.faultPoint("import-degrees-flush"); err != nil {
		return 0, fmt.Errorf("%d degree counters not written, run repair: %w", len(d), err)
	}
	rows := make([][]byte, 0, len(d))
	for r := range d {
		rows = append(rows, []byte(r))
	}
	slices.SortFunc(rows, bytes.Compare)
	tb := []byte(keys.TableGraph)
	op := NewOpID() // of this flush: a later flush counts the same counters again
	written := 0
	wait := s.flushBackoff
	for attempt := 1; ; attempt++ {
		var failed [][]byte
		var last error
		// Chunk by chunk: a chunk that could not be sent fails alone, and
		// the chunks before it are not sent again.
		for chunk := range slices.Chunk(rows, writeChunk) {
			res, err := s.sendBatch(ctx, "increment", keys.TableGraph, chunk, func(ctx context.Context, i int) (hrpc.Call, error) {
				return newNoncedIncrement(ctx, op, "import-degrees", tb, keys.FamilyGraph, chunk[i],
					map[string]int64{keys.QualDegree: d[string(chunk[i])]}, false)
			})
			for i, r := range chunk {
				if e := batchError(err, res, i); e != nil {
					failed, last = append(failed, r), e
				} else {
					written++
				}
			}
		}
		if len(failed) == 0 {
			return written, nil
		}
		if attempt == flushAttempts || ctx.Err() != nil {
			return written, fmt.Errorf("%d degree counters not written, run repair: %w", len(failed), last)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
		rows, wait = failed, 2*wait
	}
}
