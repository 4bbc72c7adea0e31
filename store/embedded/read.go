package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"
)

// SendRPC sends one Get or Mutate (CheckAndMutate included) and returns
// its response message, as gohbase's client does: for a call that builds
// its own protobuf (an Increment with a nonce, which gohbase's Client
// methods cannot send).
func (c *Client) SendRPC(call hrpc.Call) (proto.Message, error) { return c.send(call) }

// send reads a Get or Mutate the way a region server does, from its
// protobuf, and executes it.
func (c *Client) send(call hrpc.Call) (proto.Message, error) { return c.sendCall(call, false) }

// sendCall is send; inMulti says the call came in a batch, which gohbase
// sends as a MultiRequest carrying each call's MutationProto but not the
// MutateRequest around it: its nonce group is lost (see mutate).
func (c *Client) sendCall(call hrpc.Call, inMulti bool) (proto.Message, error) {
	tx := txOf(call.Context())
	if tx == nil { // (a transaction holds its call slot from begin to end)
		if err := c.enter(); err != nil {
			return nil, err
		}
		defer c.leave()
	}
	if err := call.Context().Err(); err != nil {
		return nil, err
	}
	t, err := c.table(call.Table())
	if err != nil {
		return nil, err
	}
	call.SetRegion(t.region)
	msg, slab, err := requestOf(call)
	if err != nil {
		return nil, err
	}
	defer slab.release()
	switch req := msg.(type) {
	case *pb.GetRequest:
		if tx != nil {
			return tx.get(t, req.GetGet())
		}
		return c.get(t, req.GetGet())
	case *pb.MutateRequest:
		if inMulti {
			req.NonceGroup = nil
		}
		if tx != nil {
			return tx.mutate(t, req)
		}
		return c.mutate(call.Context(), t, req)
	}
	return nil, fmt.Errorf("%w: call %s", ErrUnsupported, call.Name())
}

// Get returns the row's cells, sorted by family and qualifier. A missing row
// is a Result with no cells.
func (c *Client) Get(g *hrpc.Get) (*hrpc.Result, error) {
	resp, err := c.send(g)
	if err != nil {
		return nil, err
	}
	return hrpc.ToLocalResult(resp.(*pb.GetResponse).GetResult()), nil
}

func (c *Client) get(t *table, g *pb.Get) (*pb.GetResponse, error) {
	r, err := c.newGetRead(t, g)
	if err != nil || r.resp != nil {
		return r.resp, err
	}
	var needs rowNeeds
	needs.add(&r)
	src := c.openRows(&pebble.IterOptions{LowerBound: r.prefix, UpperBound: prefixEnd(r.prefix)}, needs)
	defer src.close()
	return c.readGet(src, t, r)
}

// rowSource is what a Get, or a batch of them, reads from: Pebble's Get
// for a read that names its columns (pointColumns), an iterator for one
// of whole families. A Get stops at the newest level that holds the
// record (an import's read-back of rows it just wrote: the memtable),
// where an iterator's seek looks in every level, at 100,000 nodes a
// dozen files' bloom filters a column. One snapshot serves both, so that
// each row is read whole as of one moment, as HBase reads a row.
type rowSource struct {
	points pointReader
	snap   *pebble.Snapshot // nil: no Get of several records, or of them and rows
	it     *pebble.Iterator // nil: every read names its columns
	err    error            // opening the iterator
}

// pointReader is a snapshot's, or the store's, Get of one record.
type pointReader interface {
	Get(key []byte) ([]byte, io.Closer, error)
}

// rowNeeds is what the reads of a Get, or a batch of them, need opened:
// an iterator for reads of whole families (rows), Gets for reads that
// name their columns (points), several records among them (multi).
type rowNeeds struct{ rows, points, multi bool }

// add notes what r needs.
func (n *rowNeeds) add(r *getRead) {
	switch k := len(r.points); {
	case !r.pointed:
		n.rows = true
	case k > 1:
		n.points, n.multi = true, true
	case k == 1:
		n.points = true
	}
}

// openRows opens what reads need: an iterator within bounds when one of
// them reads whole families, a snapshot when a read names more than one
// column (a single record is read whole by a Get of the store) or the
// iterator must agree with the Gets.
func (c *Client) openRows(bounds *pebble.IterOptions, n rowNeeds) *rowSource {
	src := &rowSource{points: c.db}
	if n.multi || (n.rows && n.points) {
		src.snap = c.db.NewSnapshot()
		src.points = src.snap
	}
	if n.rows {
		if src.snap != nil {
			src.it, src.err = src.snap.NewIter(bounds)
		} else {
			src.it, src.err = c.db.NewIter(bounds)
		}
	}
	return src
}

func (s *rowSource) close() {
	if s.it != nil {
		_ = s.it.Close()
	}
	if s.snap != nil {
		_ = s.snap.Close()
	}
}

// getRead is one Get on its way: its query, its row's record prefix, and
// either its answer from the result cache or what the cache needs to keep
// what the read finds.
type getRead struct {
	g      *pb.Get
	q      *query
	prefix []byte
	// points are the record keys of the columns the read names, when it
	// names each (pointed: see pointColumns).
	points    [][]byte
	pointed   bool
	resp      *pb.GetResponse // answered from the cache
	stripe    int
	cacheable bool
	// keep is whether the row read is kept in the cache: not when the Get
	// asks that its blocks not be cached, HBase's word for a read that
	// will not come again (an import's read-back of the rows it wrote).
	keep     bool
	families string
	gen      uint64
}

// newGetRead prepares g and answers it from the result cache when it can.
// It must run before the iterator that reads the row is opened: the
// stripe's generation it notes is what tells a later write apart.
func (c *Client) newGetRead(t *table, g *pb.Get) (getRead, error) {
	q, err := newQuery(t, g.GetColumn(), g.GetFilter(), g.GetTimeRange(),
		g.GetStoreLimit(), g.GetStoreOffset(), g.StoreLimit != nil)
	if err != nil {
		return getRead{}, err
	}
	r := getRead{g: g, q: q, prefix: t.rowPrefix(g.GetRow())}
	if !c.mayHaveRow(r.prefix) {
		// No record of the row (see keyFilter): what a read would find.
		r.resp = &pb.GetResponse{Result: &pb.Result{}}
		if g.GetExistenceOnly() {
			r.resp.Result.Exists = proto.Bool(false)
		}
		return r, nil
	}
	// (A read that names its columns is not one the result cache keeps.)
	if r.points, r.pointed = q.pointColumns(); r.pointed || c.results == nil || g.GetExistenceOnly() {
		return r, nil
	}
	r.families, r.cacheable = q.wholeFamilies()
	if !r.cacheable {
		return r, nil
	}
	r.stripe = rowStripe(t, g.GetRow())
	cells, hit, gen := c.results.getRow(t, r.stripe, r.prefix, g.GetRow(), r.families)
	if hit {
		r.resp = &pb.GetResponse{Result: &pb.Result{Cell: cells}}
	}
	r.gen = gen
	r.keep = g.CacheBlocks == nil || *g.CacheBlocks
	return r, nil
}

// readGet answers r from src: its named columns with src's Gets, a read
// of whole families with src's iterator, whose bounds hold r's row (a
// batch shares one over the whole table). It keeps the row in the cache
// when r may be.
func (c *Client) readGet(src *rowSource, t *table, r getRead) (*pb.GetResponse, error) {
	row := r.g.GetRow()
	var (
		arenaBuf [1024]byte
		keptBuf  [16]keptCell
		arena    = arenaBuf[:0]
		kept     = keptBuf[:0]
		err      error
	)
	switch {
	case !r.q.rowMatches(row):
	case r.pointed:
		arena, kept, err = c.readColumns(src.points, r.q, r.prefix, r.points, arena, kept)
	case src.err != nil:
		err = src.err
	default:
		if src.it.SeekGE(r.prefix) {
			arena, kept, _ = r.q.readRow(src.it, r.prefix, arena, kept)
		}
		err = src.it.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("embedded: read: %w", err)
	}
	if r.g.GetExistenceOnly() {
		return &pb.GetResponse{Result: &pb.Result{Exists: proto.Bool(len(kept) > 0)}}, nil
	}
	if r.cacheable && r.keep {
		c.results.putRow(r.stripe, r.prefix, r.gen, r.families, arena, kept)
	}
	return &pb.GetResponse{Result: &pb.Result{Cell: cutCells(append([]byte(nil), row...), arena, kept)}}, nil
}

// getBatch answers a batch of Gets of one table with one iterator, its
// rows visited in key order: each seek then starts where the last ended,
// in index and data blocks the iterator holds already, where an iterator
// per Get would take both from the block cache again (a third of a Get's
// CPU under load). Gets that name their columns read them with Pebble's
// Get instead (openRows). Each row is read whole as of one moment, and
// the result cache answers first; a batch whose Gets each read one
// column reads each as it is then, as HBase's batch of Gets, which spans
// region servers, does.
func (c *Client) getBatch(ctx context.Context, batch []hrpc.Call, res []hrpc.RPCResult) bool {
	failAll := func(err error) bool {
		for i := range res {
			res[i].Error = err
		}
		return false
	}
	if err := c.enter(); err != nil {
		return failAll(err)
	}
	defer c.leave()
	t, err := c.table(batch[0].Table())
	if err != nil {
		return failAll(err)
	}
	type pending struct {
		i int
		r getRead
	}
	var misses []pending
	allOK := true
	for i, call := range batch {
		// As a Get's own send does, whether the cache answers or not.
		if err := ctx.Err(); err != nil {
			res[i].Error, allOK = err, false
			continue
		}
		if err := call.Context().Err(); err != nil {
			res[i].Error, allOK = err, false
			continue
		}
		call.SetRegion(t.region)
		r, err := c.newGetRead(t, call.ToProto().(*pb.GetRequest).GetGet())
		switch {
		case err != nil:
			res[i].Error, allOK = err, false
		case r.resp != nil:
			res[i].Msg, res[i].Error = r.resp, nil
		default:
			misses = append(misses, pending{i, r})
		}
	}
	if len(misses) == 0 {
		return allOK
	}
	slices.SortFunc(misses, func(a, b pending) int { return bytes.Compare(a.r.prefix, b.r.prefix) })
	var needs rowNeeds
	for i := range misses {
		needs.add(&misses[i].r)
	}
	src := c.openRows(&pebble.IterOptions{LowerBound: t.prefix, UpperBound: t.end}, needs)
	defer src.close()
	for _, p := range misses {
		err := ctx.Err()
		if err == nil {
			err = batch[p.i].Context().Err()
		}
		if err == nil {
			res[p.i].Msg, err = c.readGet(src, t, p.r)
		}
		res[p.i].Error = err
		allOK = allOK && err == nil
	}
	return allOK
}

// query is what a Get or Scan selects within a row: families and
// qualifiers, a time range, filters and per-family limits.
type query struct {
	t *table
	// columns maps a selected family to its selected qualifiers (nil: all);
	// a nil map selects every family, unless only is set.
	columns map[*family]map[string]bool
	// only is the one family selected, whole, when that is the selection
	// (columns is nil then): a request's reads of a data family, kept off
	// the map, which cost them three allocations a call.
	only *family
	// selected is selection's answer, noted when the query is made once
	// and read by many scans (columnQuery); "" when not noted.
	selected string
	from, to uint64 // [from, to); to == 0: no upper bound
	// rowPrefixes come from PrefixFilters (a row must match all); stages are
	// the cell filters, in the order a MUST_PASS_ALL FilterList runs them.
	rowPrefixes [][]byte
	stages      []stage
	limited     bool
	storeLimit  uint32
	storeOffset uint32
}

type stageKind int

const (
	stageColumnPrefix stageKind = iota
	stageFirstKeyOnly
	stageKeyOnly
)

type stage struct {
	kind     stageKind
	prefix   []byte
	lenAsVal bool
}

func newQuery(t *table, cols []*pb.Column, f *pb.Filter, tr *pb.TimeRange,
	storeLimit, storeOffset uint32, limited bool) (*query, error) {
	q := &query{t: t, limited: limited, storeLimit: storeLimit, storeOffset: storeOffset}
	if len(cols) == 1 && len(cols[0].GetQualifier()) == 0 {
		fam, err := t.family(cols[0].GetFamily())
		if err != nil {
			return nil, err
		}
		q.only = fam
	} else if len(cols) > 0 {
		q.columns = make(map[*family]map[string]bool, len(cols))
		for _, col := range cols {
			fam, err := t.family(col.GetFamily())
			if err != nil {
				return nil, err
			}
			if len(col.GetQualifier()) == 0 {
				q.columns[fam] = nil
				continue
			}
			quals, ok := q.columns[fam]
			if ok && quals == nil {
				continue // the whole family was asked for already
			}
			if quals == nil {
				quals = make(map[string]bool, len(col.GetQualifier()))
				q.columns[fam] = quals
			}
			for _, qual := range col.GetQualifier() {
				quals[string(qual)] = true
			}
		}
	}
	q.from, q.to = tr.GetFrom(), tr.GetTo()
	if tr.To == nil {
		q.to = 0
	}
	if f != nil {
		if err := q.addFilter(f); err != nil {
			return nil, err
		}
	}
	return q, nil
}

const filterPackage = "org.apache.hadoop.hbase.filter."

// addFilter translates the filters the store uses; anything else is refused
// by name rather than ignored.
func (q *query) addFilter(f *pb.Filter) error {
	name := f.GetName()
	unmarshal := func(m proto.Message) error {
		if err := proto.Unmarshal(f.GetSerializedFilter(), m); err != nil {
			return fmt.Errorf("%w: bad %s: %v", ErrInvalidRequest, name, err)
		}
		return nil
	}
	switch name {
	case filterPackage + "PrefixFilter":
		var pf pb.PrefixFilter
		if err := unmarshal(&pf); err != nil {
			return err
		}
		q.rowPrefixes = append(q.rowPrefixes, pf.GetPrefix())
	case filterPackage + "ColumnPrefixFilter":
		var cp pb.ColumnPrefixFilter
		if err := unmarshal(&cp); err != nil {
			return err
		}
		q.stages = append(q.stages, stage{kind: stageColumnPrefix, prefix: cp.GetPrefix()})
	case filterPackage + "FirstKeyOnlyFilter":
		q.stages = append(q.stages, stage{kind: stageFirstKeyOnly})
	case filterPackage + "KeyOnlyFilter":
		var ko pb.KeyOnlyFilter
		if err := unmarshal(&ko); err != nil {
			return err
		}
		q.stages = append(q.stages, stage{kind: stageKeyOnly, lenAsVal: ko.GetLenAsVal()})
	case filterPackage + "FilterList":
		var fl pb.FilterList
		if err := unmarshal(&fl); err != nil {
			return err
		}
		if fl.GetOperator() != pb.FilterList_MUST_PASS_ALL {
			return fmt.Errorf("%w: filter FilterList with operator %v", ErrUnsupported, fl.GetOperator())
		}
		for _, sub := range fl.GetFilters() {
			if err := q.addFilter(sub); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%w: filter %s", ErrUnsupported, name)
	}
	return nil
}

var putCellType = pb.CellType_PUT.Enum()

// readRow reads the row whose records start at the iterator's position and
// share rowPrefix. It returns the selected cells' qualifiers and values, in
// arena, and the cells themselves (cutCells makes them into protobuf), and
// whether it left the iterator on the first record past the row. arena is
// valid until the iterator moves on. The caller lends arena and kept
// (empty, with room: stack space for most rows).
//
// A query of some families reads only theirs: it seeks past a family it
// does not select and stops after the last one it does, leaving the
// iterator inside the row (false). HBase keeps each family in a store of
// its own, so a read of the data family never meets the write bookkeeping
// kept in another (a relationship create's intent on a node, deleted when
// answered: a busy node's row holds one dead column per create until a
// major compaction purges it). Stepping over them here would make every
// read of the node pay for each (see BenchmarkGetFamilyPastDeadColumns).
func (q *query) readRow(it *pebble.Iterator, rowPrefix []byte, arena []byte, kept []keptCell) ([]byte, []keptCell, bool) {
	var r rowRead
	bounded := q.only != nil || q.columns != nil
	var (
		segBuf [16]byte
		seg    []byte // the family segment last found selected; nil: none yet
	)
	// NextPrefix, not Next: a hot row's superseded versions stay in Pebble's
	// memtable until a flush, and Next would step over each of them, while
	// NextPrefix seeks past them (Get of a row updated 20,000 times: see
	// BenchmarkGetHotRow).
	for it.Valid() && bytes.HasPrefix(it.Key(), rowPrefix) {
		k := it.Key()[len(rowPrefix):]
		if bounded && (seg == nil || !bytes.HasPrefix(k, seg)) {
			n := escapedLen(k)
			if n < 0 {
				it.NextPrefix() // not a record this engine wrote: readRecord would skip it
				continue
			}
			if f := q.t.familyByEsc(k[:n]); f == nil || !q.selects(f) {
				next := q.selectedAfter(k[:n])
				if next == nil {
					return arena, kept, false
				}
				it.SeekGE(append(rowPrefix[:len(rowPrefix):len(rowPrefix)], next.esc...))
				continue
			}
			seg = append(segBuf[:0], k[:n]...)
		}
		arena, kept = q.readRecord(&r, k, it.Value(), arena, kept)
		it.NextPrefix()
	}
	return arena, kept, true
}

// selects reports whether q reads any column of f.
func (q *query) selects(f *family) bool {
	switch {
	case q.only != nil:
		return f == q.only
	case q.columns != nil:
		_, ok := q.columns[f]
		return ok
	}
	return true
}

// selectedAfter is the first family q selects whose records sort after
// those of the family segment seg (escaped), or nil.
func (q *query) selectedAfter(seg []byte) *family {
	for _, f := range q.t.families {
		if bytes.Compare(f.esc, seg) > 0 && q.selects(f) {
			return f
		}
	}
	return nil
}

// readColumns is readRow for a query that names every column it selects
// (pointColumns): it gets each of them, in key order, instead of stepping
// through the whole row, so that reading a few counters of a row of
// thousands (an author's word counts) costs a few lookups. A column the
// key filter has never seen costs none. The cells, and what the filters
// see, are readRow's: a column it does not name is one readRow would
// skip.
func (c *Client) readColumns(pr pointReader, q *query, rowPrefix []byte, recordKeys [][]byte,
	arena []byte, kept []keptCell) ([]byte, []keptCell, error) {
	var r rowRead
	var key []byte
	for _, rk := range recordKeys {
		key = append(append(key[:0], rowPrefix...), rk...)
		if !c.mayHaveRecordKey(key) {
			continue
		}
		v, closer, err := pr.Get(key)
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return arena, kept, err
		}
		arena, kept = q.readRecord(&r, rk, v, arena, kept) // (copies what it keeps)
		if err := closer.Close(); err != nil {
			return arena, kept, err
		}
	}
	return arena, kept, nil
}

// pointColumns returns the record keys (after the row prefix) of the
// columns q selects, in key order, when it names each of them and not
// too many: ok is false when q selects whole families or a column prefix.
func (q *query) pointColumns() (recordKeys [][]byte, ok bool) {
	const maxPointColumns = 64 // beyond, a row of fewer columns is cheaper stepped through
	if q.columns == nil || q.limited || q.storeOffset > 0 {
		return nil, false
	}
	n := 0
	for _, quals := range q.columns {
		if quals == nil {
			return nil, false
		}
		n += len(quals)
	}
	if n > maxPointColumns {
		return nil, false
	}
	recordKeys = make([][]byte, 0, n)
	for fam, quals := range q.columns {
		for qual := range quals {
			k := make([]byte, 0, len(fam.esc)+1+len(qual))
			k = append(append(append(k, fam.esc...), kindColumn), qual...)
			recordKeys = append(recordKeys, k)
		}
	}
	slices.SortFunc(recordKeys, bytes.Compare)
	return recordKeys, true
}

// rowRead is what readRecord carries from one record of a row to the next.
type rowRead struct {
	fam       *family
	famEsc    []byte
	famCells  uint32
	firstSeen bool
}

// readRecord reads one record of a row (k: its key after the row prefix)
// into arena and kept when the query selects it.
func (q *query) readRecord(r *rowRead, k, v []byte, arena []byte, kept []keptCell) ([]byte, []keptCell) {
	n := escapedLen(k)
	if n < 0 || n >= len(k) || k[n] != kindColumn {
		return arena, kept // family marker (or a record this engine did not write)
	}
	if !bytes.Equal(r.famEsc, k[:n]) {
		r.famEsc = append(r.famEsc[:0], k[:n]...)
		r.fam = q.t.byName[string(unescape(nil, k[:n]))]
		r.famCells = 0
	}
	col, err := decodeColumn(v)
	if err != nil || !col.hasPut {
		return arena, kept
	}
	fam := r.fam
	if fam == nil {
		return arena, kept // a family no longer declared
	}
	qualifier := k[n+1:]
	if q.only != nil {
		if fam != q.only {
			return arena, kept
		}
	} else if q.columns != nil {
		quals, ok := q.columns[fam]
		if !ok || (quals != nil && !quals[string(qualifier)]) {
			return arena, kept
		}
	}
	if col.putTs < q.from || (q.to != 0 && col.putTs >= q.to) {
		return arena, kept
	}
	value := col.value
	keep := true
	for _, s := range q.stages {
		switch s.kind {
		case stageColumnPrefix:
			keep = s.prefix != nil && bytes.HasPrefix(qualifier, s.prefix)
		case stageFirstKeyOnly:
			keep = !r.firstSeen
			r.firstSeen = true
		case stageKeyOnly:
			if s.lenAsVal {
				value = binary.BigEndian.AppendUint32(nil, uint32(len(col.value)))
			} else {
				value = nil
			}
		}
		if !keep {
			break
		}
	}
	if !keep {
		return arena, kept
	}
	if q.limited || q.storeOffset > 0 {
		r.famCells++
		if r.famCells <= q.storeOffset || (q.limited && r.famCells > q.storeOffset+q.storeLimit) {
			return arena, kept
		}
	}
	// Iterator memory is reused after Next: copy what the cell keeps,
	// into one buffer per row (cut into cells below).
	arena = append(arena, qualifier...)
	arena = append(arena, value...)
	kept = append(kept, keptCell{fam: fam, qualLen: len(qualifier), valueLen: len(value), ts: col.putTs})
	return arena, kept
}

// wholeFamilies tells whether q selects whole families and nothing else
// (no filter, time range or limit), as the row cache keeps rows, and names
// them: "" for every family.
func (q *query) wholeFamilies() (string, bool) {
	if len(q.stages) > 0 || len(q.rowPrefixes) > 0 || q.from != 0 || q.to != 0 || q.limited || q.storeOffset > 0 {
		return "", false
	}
	if q.only != nil {
		return q.only.name, true
	}
	if q.columns == nil {
		return "", true
	}
	names := make([]string, 0, len(q.columns))
	for f, quals := range q.columns {
		if quals != nil {
			return "", false
		}
		names = append(names, f.name)
	}
	slices.Sort(names)
	return strings.Join(names, ","), true
}

// selection is wholeFamilies for page keys, which also names a selection
// of qualifiers: "family:q1,q2" (sorted) for each family so selected. A
// family name holds no ':', so it tells such a selection from a whole
// family's.
func (q *query) selection() (string, bool) {
	if q.selected != "" {
		return q.selected, true
	}
	if s, ok := q.wholeFamilies(); ok {
		return s, true
	}
	if len(q.stages) > 0 || len(q.rowPrefixes) > 0 || q.from != 0 || q.to != 0 || q.limited || q.storeOffset > 0 || q.columns == nil {
		return "", false
	}
	names := make([]string, 0, len(q.columns))
	for f, quals := range q.columns {
		if quals == nil {
			names = append(names, f.name)
			continue
		}
		qs := make([]string, 0, len(quals))
		for qual := range quals {
			qs = append(qs, qual)
		}
		slices.Sort(qs)
		names = append(names, f.name+":"+strings.Join(qs, ","))
	}
	slices.Sort(names)
	return strings.Join(names, ";"), true
}

// keptCell is a cell readRow keeps, its qualifier and value in the arena.
type keptCell struct {
	fam               *family
	qualLen, valueLen int
	ts                uint64
}

// cellWithTs keeps a cell's timestamp beside it: one allocation for both.
type cellWithTs struct {
	cell pb.Cell
	ts   uint64
}

// cutCells builds a row's cells from the arena with three allocations in
// all, not three per cell: a page of articles reads hundreds of cells.
func cutCells(row, arena []byte, kept []keptCell) []*pb.Cell {
	if len(kept) == 0 {
		return nil
	}
	buf := make([]byte, len(arena))
	copy(buf, arena)
	slab := make([]cellWithTs, len(kept))
	cells := make([]*pb.Cell, len(kept))
	off := 0
	for i, k := range kept {
		q := buf[off : off+k.qualLen : off+k.qualLen]
		off += k.qualLen
		v := buf[off : off+k.valueLen : off+k.valueLen]
		off += k.valueLen
		c := &slab[i]
		c.ts = k.ts
		c.cell = pb.Cell{Row: row, Family: k.fam.bytes, Qualifier: q, Value: v, Timestamp: &c.ts, CellType: putCellType}
		cells[i] = &c.cell
	}
	return cells
}
