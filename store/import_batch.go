package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
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
	return s.importRelationships(ctx, rels, nil)
}

// importRelationships is ImportRelationships, counting in t unless nil.
func (s *Store) importRelationships(ctx context.Context, rels []RelationshipImport, t *DegreeTally) ([]ImportOutcome, error) {
	out := make([]ImportOutcome, len(rels))
	pending := make([]*relImport, 0, len(rels))
	ctx, op := withOp(ctx)
	for i, r := range rels {
		it, err := newRelImport(i, r)
		if err != nil {
			out[i].Err = err
			continue
		}
		// Each item's create is its own op, the same on a retry of the
		// batch with the same op.
		it.op = DeriveOpID(op.String(), "import relationship", r.Key.ID())
		pending = append(pending, it)
	}
	n := 0
	err := importRounds(out, pending, func(round []*relImport) error {
		// Each round counts with nonces of its own (a later round counts
		// the same counters again); the rounds of a retry of the batch
		// are the same.
		n++
		return s.importRelationshipRound(WithOp(ctx, DeriveOpID(op.String(), "round", strconv.Itoa(n))), round, t)
	})
	return out, err
}

// importItem is what a batch import keeps of one valid item: where it is
// in the batch, the row its CheckAndMutate creates, and its progress.
type importItem struct {
	i   int // index in the batch
	row []byte
	// created: the CheckAndMutate wrote the row; settled: the outcome is
	// final (err set, or skipped, or every write done).
	created, settled bool
	err              error
}

func (it *importItem) item() *importItem { return it }

func (it *importItem) fail(err error) {
	it.err, it.created, it.settled = err, false, true
}

// batchItem is an item of one kind of batch import (*relImport,
// *articleImport), which embeds its importItem.
type batchItem interface{ item() *importItem }

// importRounds imports pending, the valid items of a batch, with round and
// fills in their outcomes. A round imports the first pending occurrence of
// each row, so its items name distinct rows; an item whose row a round
// created or found is skipped, one whose first occurrence failed is tried
// in the next round. A round's error (a fault point) stops the batch: the
// items not yet settled carry it.
func importRounds[T batchItem](out []ImportOutcome, pending []T, round func([]T) error) error {
	for len(pending) > 0 {
		var this, later []T
		first := make(map[string]*importItem, len(pending))
		for _, it := range pending {
			if _, dup := first[string(it.item().row)]; dup {
				later = append(later, it)
				continue
			}
			first[string(it.item().row)] = it.item()
			this = append(this, it)
		}
		if err := round(this); err != nil {
			for _, it := range append(this, later...) {
				if !it.item().settled {
					it.item().fail(err)
				}
			}
			settle(out, this)
			settle(out, later)
			return err
		}
		settle(out, this)
		pending = pending[:0]
		for _, it := range later {
			if first[string(it.item().row)].err == nil {
				it.item().settled = true // the first occurrence created it or found it
				settle(out, []T{it})
				continue
			}
			pending = append(pending, it)
		}
	}
	return nil
}

func settle[T batchItem](out []ImportOutcome, items []T) {
	for _, t := range items {
		it := t.item()
		out[it.i] = ImportOutcome{Created: it.created && it.err == nil, Err: it.err}
	}
}

// live returns the items still being imported.
func live[T batchItem](items []T) []T {
	var l []T
	for _, it := range items {
		if !it.item().settled {
			l = append(l, it)
		}
	}
	return l
}

// sortedByRow returns items sorted by row. Rows are written (and read
// back) in key order: each call then lands near the one before it, which
// a store of sorted rows serves faster.
func sortedByRow[T batchItem](items []T) []T {
	items = slices.Clone(items)
	slices.SortFunc(items, func(a, b T) int { return bytes.Compare(a.item().row, b.item().row) })
	return items
}

// entityImport is a valid item of a batch whose row is an entity: a node
// or a relationship.
type entityImport struct {
	importItem
	e  entity
	op OpID // of its create
}

func (it *entityImport) entityItem() *entityImport { return it }

// entityBatchItem is an item of a batch import of entities (*nodeImport,
// *relImport), which embeds its entityImport.
type entityBatchItem interface {
	batchItem
	entityItem() *entityImport
}

// relImport is one valid relationship of a batch.
type relImport struct {
	entityImport
	k RelationshipKey
}

func newRelImport(i int, r RelationshipImport) (*relImport, error) {
	if err := r.Key.Validate(); err != nil {
		return nil, err
	}
	e, err := importEntity(r.Properties, r.Created, r.Updated, nil)
	if err != nil {
		return nil, err
	}
	return &relImport{entityImport: entityImport{importItem: importItem{i: i, row: r.Key.row()}, e: e}, k: r.Key}, nil
}

// importRelationshipRound imports items, which name distinct relationships,
// and counts them in t, or writes their counts when t is nil. It returns
// an error only for a fault point; every other failure is an item's.
func (s *Store) importRelationshipRound(ctx context.Context, items []*relImport, t *DegreeTally) error {
	items = sortedByRow(items)
	s.checkEndpoints(ctx, items)
	if err := createEntities(ctx, s, "import-create", items); err != nil {
		return err
	}
	if err := s.faultPoint("import-index"); err != nil {
		return err
	}
	s.writeIndexBatch(ctx, live(items))
	if err := s.faultPoint("import-degrees"); err != nil {
		return err
	}
	if t != nil {
		t.add(live(items))
	} else {
		s.countDegreesBatch(ctx, live(items))
	}
	for _, it := range items {
		it.settled = true
	}
	return nil
}

// checkEndpoints fails the items whose start or end node does not exist,
// reading each distinct node once.
func (s *Store) checkEndpoints(ctx context.Context, items []*relImport) {
	ids := make([]string, 0, 2*len(items))
	for _, it := range items {
		ids = append(ids, it.k.Start, it.k.End)
	}
	errs := s.nodeErrors(ctx, ids)
	for _, it := range items {
		for _, id := range []string{it.k.Start, it.k.End} {
			if err := errs[id]; err != nil {
				it.fail(err)
				break
			}
		}
	}
}

// nodeErrors reads each distinct node of ids once, in one batch of Gets in
// key order, and returns by id why the node cannot be used (it does not
// exist, its row is corrupt, its Get failed): nil if it exists.
func (s *Store) nodeErrors(ctx context.Context, ids []string) map[string]error {
	type nodeRow struct {
		id  string
		row []byte
	}
	var nodes []nodeRow
	seen := map[string]bool{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			nodes = append(nodes, nodeRow{id, keys.Node(id)})
		}
	}
	slices.SortFunc(nodes, func(a, b nodeRow) int { return bytes.Compare(a.row, b.row) })
	rows := make([][]byte, len(nodes))
	for i, n := range nodes {
		rows[i] = n.row
	}
	// Whole data families, as a request reads nodes: on the embedded
	// engine from the result cache, where an import's nodes stay (each is
	// an end of many relationships), rather than a seek of each column.
	got, errs, err := s.getRowsEach(ctx, keys.TableGraph, rows, true)
	out := make(map[string]error, len(nodes))
	for i, n := range nodes {
		if err != nil {
			out[n.id] = err
			continue
		}
		_, ok, derr := decodeEntity(n.row, got[i])
		switch {
		case errs != nil && errs[i] != nil:
			out[n.id] = errs[i]
		case derr != nil:
			out[n.id] = derr
		case !ok:
			out[n.id] = fmt.Errorf("node %q: %w", n.id, ErrNotFound)
		}
	}
	return out
}

// createEach writes the row of each live item, after fault point point,
// with a CheckAndMutate "qualifier absent" (HBase has no batched
// compare-and-set) of the cells write gives, stamped with the time it
// gives: the item is created, skipped if the row exists, or failed. It
// returns only a fault point's error.
func createEach[T batchItem](ctx context.Context, s *Store, point, table, family, qualifier string, items []T,
	write func(T) (cells, int64)) error {
	for _, t := range live(items) {
		if err := s.faultPoint(point); err != nil {
			return err
		}
		it := t.item()
		values, ts := write(t)
		ok, err := s.checkAndPut(ctx, table, family, it.row, qualifier, nil, values, ts)
		switch {
		case err != nil:
			it.fail(err)
		case !ok:
			it.settled = true // skipped: it exists
		default:
			it.created = true
		}
	}
	return nil
}

// readBack reads the given qualifiers (nil: all) of the items' rows with
// one SendBatch and hands each row's cells to check; an item whose Get
// failed fails. The Gets cache no blocks: nothing reads these rows again
// while the import runs, and an embedded engine that kept each (a
// relationship's read-back is a whole row) filled its result cache with
// them: at 10,000 nodes the cache's share of a relationship import's CPU
// went from 5.7% to 3.5%.
func readBack[T batchItem](ctx context.Context, s *Store, table, family string, qualifiers []string, items []T,
	check func(T, rowCells)) {
	rows := make([][]byte, len(items))
	for i, it := range items {
		rows[i] = it.item().row
	}
	got, errs, err := s.sendGets(ctx, table, append(familyOptions(table, family, qualifiers), hrpc.CacheBlocks(false)), rows)
	for i, it := range items {
		switch {
		case err != nil:
			it.item().fail(err)
		case errs[i] != nil:
			it.item().fail(errs[i])
		default:
			check(it, got[i])
		}
	}
}

// createEntities writes the row of each live item of items (sorted by row:
// sortedByRow), after fault point point, as createEntity does
// (createEach), then reads the rows back (verifyCreated): the items that
// remain live are created and have the rest of their writes to make.
func createEntities[T entityBatchItem](ctx context.Context, s *Store, point string, items []T) error {
	err := createEach(ctx, s, point, keys.TableGraph, keys.FamilyGraph, keys.QualCreated, items,
		func(t T) (cells, int64) { it := t.entityItem(); return it.e.createCells(it.op, false), it.e.updated })
	if err != nil {
		return err
	}
	var found []T // rows there already: ours, a residue, or another's
	for _, t := range items {
		if it := t.item(); it.settled && !it.created && it.err == nil {
			it.settled = false
			found = append(found, t)
		}
	}
	verifyCreated(ctx, s, append(live(items), found...))
	return nil
}

// verifyCreated reads the rows back, as createEntity does: a row hidden by
// a delete marker fails (an import keeps its times, so it cannot retry
// later), one that holds the item's own create is created (by this call,
// or by an earlier one of the same op: the steps after it are done again,
// idempotently), one of another create is skipped. A residue older than
// the item is created over, one after it fails (errHiddenImport).
func verifyCreated[T entityBatchItem](ctx context.Context, s *Store, items []T) {
	var over []*entityImport
	readBack(ctx, s, keys.TableGraph, keys.FamilyGraph, nil, items, func(t T, c rowCells) {
		it := t.entityItem()
		e, live, err := decodeEntity(it.row, c)
		switch {
		case err != nil:
			it.fail(err)
		case live && e.createOp == it.op:
			it.created, it.settled = true, false
		case live:
			it.created, it.settled = false, true // a concurrent create won: skipped
		case createdThenDeleted(e, it.op):
			it.created, it.settled = true, true // ours, and deleted since
		case e.deleted() && e.updated < it.e.created:
			over = append(over, it)
		default:
			it.fail(errHiddenImport)
		}
	})
	for _, it := range over {
		e, err := s.createEntity(WithOp(ctx, it.op), it.row, it.e, true, true)
		switch {
		case err == nil && e.created == it.e.created:
			it.created, it.settled = true, false
		case err == nil, errors.Is(err, ErrAlreadyExists):
			it.created, it.settled = false, true
		default:
			it.fail(err)
		}
	}
}

// writeIndexBatch puts the items' index rows (two each) in one batch, as
// writeIndex does one relationship's; an item whose put failed fails.
func (s *Store) writeIndexBatch(ctx context.Context, items []*relImport) {
	puts := make([]rowPut[*relImport], 0, 2*len(items))
	for _, it := range items {
		o, in, err := it.k.index(it.e.created)
		if err != nil {
			it.fail(err)
			continue
		}
		values := map[string]map[string][]byte{keys.FamilyGraph: {keys.QualProperties: it.e.props}} // shared by the two rows
		puts = append(puts, rowPut[*relImport]{o, it, values, it.e.updated}, rowPut[*relImport]{in, it, values, it.e.updated})
	}
	putAll(ctx, s, keys.TableGraph, puts)
}

// countDegreesBatch adds the items to their degree counters: one Increment
// per distinct counter, by the number of items it counts, in one batch. An
// item counted by a failed Increment fails.
func (s *Store) countDegreesBatch(ctx context.Context, items []*relImport) {
	deltas := counterDeltas[*relImport]{}
	for _, it := range items {
		o, in, err := it.k.degrees()
		if err != nil {
			it.fail(err)
			continue
		}
		deltas.add(it, o, keys.QualDegree, 1)
		deltas.add(it, in, keys.QualDegree, 1)
	}
	incrementAll(ctx, s, keys.TableGraph, keys.FamilyGraph, deltas)
}

// rowPut is one Put of a batch import, of a row of item it.
type rowPut[T batchItem] struct {
	row    []byte
	it     T
	values map[string]map[string][]byte
	ts     int64 // the cells' timestamp
}

// putAll sends puts in key order, writeChunk to a SendBatch; an item whose
// Put failed fails.
func putAll[T batchItem](ctx context.Context, s *Store, table string, puts []rowPut[T]) {
	slices.SortFunc(puts, func(a, b rowPut[T]) int { return bytes.Compare(a.row, b.row) })
	rows := make([][]byte, len(puts))
	for i, p := range puts {
		rows[i] = p.row
	}
	tb := []byte(table)
	res, err := s.sendWrites(ctx, "put", table, rows, func(ctx context.Context, i int) (hrpc.Call, error) {
		return hrpc.NewPut(ctx, tb, rows[i], puts[i].values, hrpc.TimestampUint64(uint64(puts[i].ts)))
	})
	for i, p := range puts {
		if e := batchError(err, res, i); e != nil && !p.it.item().settled {
			p.it.item().fail(e)
		}
	}
}

// counterDeltas sums a batch's counter increments by row and qualifier,
// with the items each row counts.
type counterDeltas[T batchItem] map[string]*counterRow[T]

type counterRow[T batchItem] struct {
	deltas  map[string]int64
	counted []T
}

// add adds n to the qualifier of row for item it.
func (d counterDeltas[T]) add(it T, row []byte, qualifier string, n int64) {
	r := d[string(row)]
	if r == nil {
		r = &counterRow[T]{deltas: map[string]int64{}}
		d[string(row)] = r
	}
	r.deltas[qualifier] += n
	if k := len(r.counted); k == 0 || r.counted[k-1].item() != it.item() {
		r.counted = append(r.counted, it)
	}
}

// incrementAll sends one Increment per row of d, of all its qualifiers at
// once (atomic on the row), in key order, writeChunk to a SendBatch. An
// item counted by a failed Increment fails.
func incrementAll[T batchItem](ctx context.Context, s *Store, table, family string, d counterDeltas[T]) {
	rows := make([][]byte, 0, len(d))
	for r := range d {
		rows = append(rows, []byte(r))
	}
	slices.SortFunc(rows, bytes.Compare)
	tb := []byte(table)
	// Each Increment carries its nonce (see noncedIncrement): a re-sent
	// batch counts once.
	op := opOf(ctx)
	res, err := s.sendWrites(ctx, "increment", table, rows, func(ctx context.Context, i int) (hrpc.Call, error) {
		return newNoncedIncrement(ctx, op, "import-counters/"+table, tb, family, rows[i], d[string(rows[i])].deltas, false)
	})
	for i, r := range rows {
		if e := batchError(err, res, i); e != nil {
			for _, it := range d[string(r)].counted {
				if !it.item().settled {
					it.item().fail(e)
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

// sendWrites is sendBatch of writes to table, writeChunk at a time.
func (s *Store) sendWrites(ctx context.Context, op, table string, rows [][]byte,
	build func(ctx context.Context, i int) (hrpc.Call, error)) ([]hrpc.RPCResult, error) {
	res := make([]hrpc.RPCResult, 0, len(rows))
	for start := 0; start < len(rows); start += writeChunk {
		chunk, err := s.sendBatch(ctx, op, table, rows[start:min(start+writeChunk, len(rows))],
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
