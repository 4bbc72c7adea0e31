package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/keys"
)

// RelationshipImport is one relationship of an ImportRelationships batch.
type RelationshipImport struct {
	Key              RelationshipKey
	Properties       Properties
	Created, Updated time.Time
}

// ImportOutcome is what became of one item of a batch import: Created, or
// skipped (neither Created nor Err: the row was there already), or Err.
type ImportOutcome struct {
	Created bool
	Err     error
}

// ImportRelationships imports a batch of relationships with the outcome
// ImportRelationship would give each, in the order of rels, but with a
// batch's writes grouped (the importer sends thousands at a time):
//
//  1. one SendBatch of Gets of the distinct endpoint nodes;
//  2. a CheckAndMutate "c absent" per relationship row (HBase has no
//     batched compare-and-set), then one SendBatch of Gets reading the
//     created rows back (see createEntity: a delete marker may hide them);
//  3. a SendBatch of Puts of their index rows;
//  4. a SendBatch of Increments, one per distinct degree counter, by the
//     number of relationships created that it counts.
//
// (A SendBatch of writes carries at most writeChunk calls; a larger batch
// sends several in turn.)
//
// The order is the live CreateRelationship's, batch-wide: a relationship
// row is written before its index rows, index rows before the counters,
// so a crash leaves what one of CreateRelationship would, for many rows at
// once, and Repair fixes it. As with ImportRelationship, a rerun skips the
// relationship rows already written, so an import that crashed needs a
// Repair; it cannot tell which of them lack index rows or counts.
//
// A relationship that appears more than once in rels is imported by its
// first occurrence; the later ones are skipped, unless the first failed,
// in which case the next one is tried as if it came on its own.
//
// The error is non-nil only when the batch stopped early (a fault point,
// see Store.fault); the items it left unsettled carry it as their Err.
func (s *Store) ImportRelationships(ctx context.Context, rels []RelationshipImport) ([]ImportOutcome, error) {
	out := make([]ImportOutcome, len(rels))
	pending := make([]*relImport, 0, len(rels))
	for i, r := range rels {
		it, err := newRelImport(i, r)
		if err != nil {
			out[i].Err = err
			continue
		}
		pending = append(pending, it)
	}
	for len(pending) > 0 {
		// A round imports the first pending occurrence of each relationship.
		var round, later []*relImport
		first := make(map[string]*relImport, len(pending))
		for _, it := range pending {
			if _, dup := first[string(it.row)]; dup {
				later = append(later, it)
				continue
			}
			first[string(it.row)] = it
			round = append(round, it)
		}
		if err := s.importRelationshipRound(ctx, round); err != nil {
			for _, it := range append(round, later...) {
				if !it.settled {
					it.fail(err)
				}
			}
			settle(out, round)
			settle(out, later)
			return out, err
		}
		settle(out, round)
		pending = pending[:0]
		for _, it := range later {
			if first[string(it.row)].err == nil {
				it.settled = true // the first occurrence created it or found it
				settle(out, []*relImport{it})
				continue
			}
			pending = append(pending, it)
		}
	}
	return out, nil
}

// relImport is one valid item of a batch, with its progress.
type relImport struct {
	i   int // index in the batch
	k   RelationshipKey
	row []byte
	e   entity
	// created: the CheckAndMutate wrote the row; settled: the outcome is
	// final (err set, or skipped, or every write done).
	created, settled bool
	err              error
}

func newRelImport(i int, r RelationshipImport) (*relImport, error) {
	if err := r.Key.Validate(); err != nil {
		return nil, err
	}
	encoded, err := encodeProperties(r.Properties)
	if err != nil {
		return nil, err
	}
	c, u, err := importTimes(r.Created, r.Updated)
	if err != nil {
		return nil, err
	}
	return &relImport{i: i, k: r.Key, row: r.Key.row(), e: entity{created: c, updated: u, props: encoded}}, nil
}

func (it *relImport) fail(err error) {
	it.err, it.created, it.settled = err, false, true
}

func settle(out []ImportOutcome, items []*relImport) {
	for _, it := range items {
		out[it.i] = ImportOutcome{Created: it.created && it.err == nil, Err: it.err}
	}
}

// live returns the items still being imported.
func live(items []*relImport) []*relImport {
	var l []*relImport
	for _, it := range items {
		if !it.settled {
			l = append(l, it)
		}
	}
	return l
}

// importRelationshipRound imports items, which name distinct relationships.
// It returns an error only for a fault point; every other failure is an
// item's.
func (s *Store) importRelationshipRound(ctx context.Context, items []*relImport) error {
	// Rows are written (and read back) in key order: each call then lands
	// near the one before it, which a store of sorted rows serves faster.
	items = slices.Clone(items)
	slices.SortFunc(items, func(a, b *relImport) int { return bytes.Compare(a.row, b.row) })
	s.checkEndpoints(ctx, items)
	for _, it := range live(items) {
		if err := s.faultPoint("import-create"); err != nil {
			return err
		}
		ok, err := s.checkAndPut(ctx, keys.TableGraph, keys.FamilyGraph, it.row, qualCreated, nil, it.e.cells(), it.e.updated)
		switch {
		case err != nil:
			it.fail(err)
		case !ok:
			it.settled = true // skipped: it exists
		default:
			it.created = true
		}
	}
	s.verifyCreated(ctx, live(items))
	if err := s.faultPoint("import-index"); err != nil {
		return err
	}
	s.writeIndexBatch(ctx, live(items))
	if err := s.faultPoint("import-degrees"); err != nil {
		return err
	}
	s.countDegreesBatch(ctx, live(items))
	for _, it := range items {
		it.settled = true
	}
	return nil
}

// checkEndpoints fails the items whose start or end node does not exist,
// reading each distinct node once.
func (s *Store) checkEndpoints(ctx context.Context, items []*relImport) {
	type nodeRow struct {
		id  string
		row []byte
	}
	var nodes []nodeRow
	seen := map[string]bool{}
	for _, it := range items {
		for _, id := range []string{it.k.Start, it.k.End} {
			if !seen[id] {
				seen[id] = true
				nodes = append(nodes, nodeRow{id, keys.Node(id)})
			}
		}
	}
	slices.SortFunc(nodes, func(a, b nodeRow) int { return bytes.Compare(a.row, b.row) })
	idx := make(map[string]int, len(nodes))
	rows := make([][]byte, len(nodes))
	for i, n := range nodes {
		idx[n.id], rows[i] = i, n.row
	}
	got, errs, err := s.getColumnsBatch(ctx, keys.TableGraph, keys.FamilyGraph, []string{qualCreated, qualUpdated}, rows)
	for _, it := range items {
		if err != nil {
			it.fail(err)
			continue
		}
		for _, id := range []string{it.k.Start, it.k.End} {
			n := idx[id]
			_, ok, derr := decodeEntity(got[n])
			switch {
			case errs[n] != nil:
				it.fail(errs[n])
			case derr != nil:
				it.fail(derr)
			case !ok:
				it.fail(fmt.Errorf("node %q: %w", id, ErrNotFound))
			}
			if it.settled {
				break
			}
		}
	}
}

// verifyCreated reads the created rows back, as createEntity does: a row
// hidden by a delete marker fails (an import keeps its times, so it cannot
// retry later), and one that holds another create's cells was not ours.
func (s *Store) verifyCreated(ctx context.Context, items []*relImport) {
	rows := make([][]byte, len(items))
	for i, it := range items {
		rows[i] = it.row
	}
	got, errs, err := s.getColumnsBatch(ctx, keys.TableGraph, keys.FamilyGraph, nil, rows)
	for i, it := range items {
		switch {
		case err != nil:
			it.fail(err)
		case errs[i] != nil:
			it.fail(errs[i])
		case got[i][qualCreated] == nil:
			it.fail(errHiddenImport)
		case !bytes.Equal(got[i][qualCreated], encodeMs(it.e.created)) || !bytes.Equal(got[i][qualProperties], it.e.props):
			it.created, it.settled = false, true // a concurrent create won: skipped
		}
	}
}

// writeIndexBatch puts the items' index rows (two each) in one batch, as
// writeIndex does one relationship's; an item whose put failed fails.
func (s *Store) writeIndexBatch(ctx context.Context, items []*relImport) {
	type indexRow struct {
		row    []byte
		it     *relImport
		values map[string]map[string][]byte // shared by the two rows of it
	}
	ixs := make([]indexRow, 0, 2*len(items))
	for _, it := range items {
		o, in, err := it.k.index(it.e.created)
		if err != nil {
			it.fail(err)
			continue
		}
		values := map[string]map[string][]byte{keys.FamilyGraph: {qualProperties: it.e.props}}
		ixs = append(ixs, indexRow{o, it, values}, indexRow{in, it, values})
	}
	slices.SortFunc(ixs, func(a, b indexRow) int { return bytes.Compare(a.row, b.row) })
	rows := make([][]byte, len(ixs))
	owner := make([]*relImport, len(ixs))
	for i, ix := range ixs {
		rows[i], owner[i] = ix.row, ix.it
	}
	table := []byte(keys.TableGraph)
	res, err := s.sendWrites(ctx, "put", rows, func(ctx context.Context, i int) (hrpc.Call, error) {
		return hrpc.NewPut(ctx, table, rows[i], ixs[i].values, hrpc.TimestampUint64(uint64(owner[i].e.updated)))
	})
	for i, it := range owner {
		if e := batchError(err, res, i); e != nil && !it.settled {
			it.fail(e)
		}
	}
}

// countDegreesBatch adds the items to their degree counters: one Increment
// per distinct counter, by the number of items it counts, in one batch. An
// item counted by a failed Increment fails.
func (s *Store) countDegreesBatch(ctx context.Context, items []*relImport) {
	deltas := map[string]int64{}
	counted := map[string][]*relImport{}
	for _, it := range items {
		o, in, err := it.k.degrees()
		if err != nil {
			it.fail(err)
			continue
		}
		for _, d := range [][]byte{o, in} {
			deltas[string(d)]++
			counted[string(d)] = append(counted[string(d)], it)
		}
	}
	rows := make([][]byte, 0, len(deltas))
	for d := range deltas {
		rows = append(rows, []byte(d))
	}
	slices.SortFunc(rows, bytes.Compare)
	res, err := s.sendWrites(ctx, "increment", rows, func(ctx context.Context, i int) (hrpc.Call, error) {
		return hrpc.NewIncStrSingle(ctx, keys.TableGraph, string(rows[i]), keys.FamilyGraph, qualDegree, deltas[string(rows[i])])
	})
	for i, d := range rows {
		if e := batchError(err, res, i); e != nil {
			for _, it := range counted[string(d)] {
				if !it.settled {
					it.fail(e)
				}
			}
		}
	}
}

// writeChunk bounds the writes of one SendBatch of a batch import, each
// SendBatch under its own deadline (Options.CallTimeout): with Sync, the
// embedded engine fsyncs each write, and a few thousand of them could
// outlast one deadline.
const writeChunk = 1024

// sendWrites is sendBatch of graph table writes, writeChunk at a time.
func (s *Store) sendWrites(ctx context.Context, op string, rows [][]byte,
	build func(ctx context.Context, i int) (hrpc.Call, error)) ([]hrpc.RPCResult, error) {
	res := make([]hrpc.RPCResult, 0, len(rows))
	for start := 0; start < len(rows); start += writeChunk {
		chunk, err := s.sendBatch(ctx, op, keys.TableGraph, rows[start:min(start+writeChunk, len(rows))],
			func(ctx context.Context, i int) (hrpc.Call, error) { return build(ctx, start+i) })
		if err != nil {
			return nil, err
		}
		res = append(res, chunk...)
	}
	return res, nil
}

// batchError is the error of call i of a sendBatch: the batch's, else the
// call's own.
func batchError(err error, res []hrpc.RPCResult, i int) error {
	if err != nil {
		return err
	}
	return res[i].Error
}
