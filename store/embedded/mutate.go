package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// latestTimestamp is HBase's LATEST_TIMESTAMP (Long.MAX_VALUE): "use the
// server's clock".
const latestTimestamp = math.MaxInt64

func (c *Client) Put(p *hrpc.Mutate) (*hrpc.Result, error)    { return c.mutateResult(p) }
func (c *Client) Delete(d *hrpc.Mutate) (*hrpc.Result, error) { return c.mutateResult(d) }
func (c *Client) Append(a *hrpc.Mutate) (*hrpc.Result, error) { return c.mutateResult(a) }

// Increment adds to one big-endian int64 cell and returns the sum.
func (c *Client) Increment(i *hrpc.Mutate) (int64, error) {
	r, err := c.mutateResult(i)
	if err != nil {
		return 0, err
	}
	if len(r.Cells) != 1 {
		return 0, fmt.Errorf("%w: increment returned %d cells, but we expected exactly one",
			ErrInvalidRequest, len(r.Cells))
	}
	return int64(binary.BigEndian.Uint64(r.Cells[0].Value)), nil
}

func (c *Client) CheckAndPut(p *hrpc.Mutate, family, qualifier string, expectedValue []byte) (bool, error) {
	return c.CheckAndPutWithCompareType(p, family, qualifier, expectedValue, pb.CompareType_EQUAL)
}

func (c *Client) CheckAndPutWithCompareType(p *hrpc.Mutate, family, qualifier string,
	expectedValue []byte, compareType pb.CompareType) (bool, error) {
	cas, err := hrpc.NewCheckAndPutWithCompareType(p, family, qualifier, expectedValue, compareType)
	if err != nil {
		return false, err
	}
	return c.checkAndMutate(cas)
}

func (c *Client) CheckAndMutate(cam *hrpc.CheckAndMutate) (bool, error) {
	return c.checkAndMutate(cam)
}

func (c *Client) checkAndMutate(call hrpc.Call) (bool, error) {
	resp, err := c.send(call)
	if err != nil {
		return false, err
	}
	return resp.(*pb.MutateResponse).GetProcessed(), nil
}

func (c *Client) mutateResult(m *hrpc.Mutate) (*hrpc.Result, error) {
	resp, err := c.send(m)
	if err != nil {
		return nil, err
	}
	return hrpc.ToLocalResult(resp.(*pb.MutateResponse).GetResult()), nil
}

// mutate applies one MutateRequest (with or without a condition) to its row
// atomically. An Increment or Append with a nonce is applied at most once
// within the grace period (see nonceTable): a duplicate is answered as
// RSRpcServices answers it, with a Get of its cells.
func (c *Client) mutate(ctx context.Context, t *table, req *pb.MutateRequest) (*pb.MutateResponse, error) {
	m := req.GetMutation()
	row := m.GetRow()
	if len(row) == 0 {
		return nil, fmt.Errorf("%w: row length is 0", ErrInvalidRequest)
	}
	if len(row) > maxRowLength {
		return nil, fmt.Errorf("%w: row length %d > %d", ErrInvalidRequest, len(row), maxRowLength)
	}
	for _, a := range m.GetAttribute() {
		if a.GetName() == "_ttl" {
			return nil, fmt.Errorf("%w: cell TTL (the TTL mutation option)", ErrUnsupported)
		}
	}
	cond := req.GetCondition()
	var expected []byte // the condition's comparator value, read once
	if cond != nil {
		var err error
		if expected, err = checkCondition(cond, row); err != nil {
			return nil, err
		}
	}

	// As RSRpcServices.increment and append do (startNonceOperation): a
	// MutationProto without a nonce, or with 0 (HConstants.NO_NONCE), is
	// never de-duplicated; MutateRequest.nonce_group names the client.
	if typ := m.GetMutateType(); c.nonces != nil && cond == nil && m.GetNonce() != 0 &&
		(typ == pb.MutationProto_INCREMENT || typ == pb.MutationProto_APPEND) {
		key := nonceKey{group: req.GetNonceGroup(), nonce: m.GetNonce()}
		proceed, err := c.nonces.start(ctx, key, int64(c.now()))
		if err != nil {
			return nil, err
		}
		if !proceed {
			return c.duplicate(t, m)
		}
		resp, err := c.apply(t, row, m, nil, nil)
		if c.nonces.end(key, err == nil, int64(c.now())) {
			c.log.Warn().Int("max_nonces", c.nonces.max).
				Msg("embedded: nonce table full: the oldest nonces are forgotten before their grace period ends")
		}
		return resp, err
	}
	return c.apply(t, row, m, cond, expected)
}

// duplicate answers an Increment or Append whose nonce was applied: with
// the current values of the cells it names, read as a Get of them (HBase's
// "convert duplicate increment to get"), not the answer the first one had.
func (c *Client) duplicate(t *table, m *pb.MutationProto) (*pb.MutateResponse, error) {
	g := &pb.Get{Row: m.GetRow(), TimeRange: &pb.TimeRange{}}
	if tr := m.GetTimeRange(); tr != nil {
		g.TimeRange.From, g.TimeRange.To = tr.From, tr.To
	}
	for _, cv := range m.GetColumnValue() {
		col := &pb.Column{Family: cv.GetFamily()}
		for _, qv := range cv.GetQualifierValue() {
			col.Qualifier = append(col.Qualifier, qv.GetQualifier())
		}
		g.Column = append(g.Column, col)
	}
	resp, err := c.get(t, g)
	if err != nil {
		return nil, err
	}
	return &pb.MutateResponse{Result: resp.GetResult()}, nil
}

// apply applies m, if cond (nil: none), whose comparator value is
// expected, holds, under its row's lock.
func (c *Client) apply(t *table, row []byte, m *pb.MutationProto, cond *pb.Condition, expected []byte) (*pb.MutateResponse, error) {
	mu := c.lockRow(t, row)
	defer mu.Unlock()

	w := c.newRowWriter(t, row)
	defer w.close()
	if cond != nil {
		ok, err := w.conditionHolds(cond, expected)
		if err != nil || !ok {
			return &pb.MutateResponse{Processed: proto.Bool(false)}, err
		}
	}
	result, err := w.apply(m)
	if err != nil {
		return nil, err
	}
	if err := w.commit(); err != nil {
		return nil, err
	}
	resp := &pb.MutateResponse{Result: result}
	if cond != nil {
		resp.Processed = proto.Bool(true)
	}
	return resp, nil
}

// checkCondition refuses what the engine does not evaluate, and returns
// the value the condition's comparator compares against.
func checkCondition(cond *pb.Condition, row []byte) ([]byte, error) {
	if cond.GetFilter() != nil {
		return nil, fmt.Errorf("%w: CheckAndMutate with a filter condition (%s)",
			ErrUnsupported, cond.GetFilter().GetName())
	}
	if !bytes.Equal(cond.GetRow(), row) {
		return nil, fmt.Errorf("%w: condition row %q differs from mutation row %q",
			ErrInvalidRequest, cond.GetRow(), row)
	}
	if cond.GetTimeRange() != nil && (cond.GetTimeRange().From != nil || cond.GetTimeRange().To != nil) {
		return nil, fmt.Errorf("%w: CheckAndMutate with a time range", ErrUnsupported)
	}
	return comparatorValue(cond.GetComparator())
}

// comparatorValue returns the bytes a BinaryComparator compares against.
func comparatorValue(cmp *pb.Comparator) ([]byte, error) {
	const binaryComparator = "org.apache.hadoop.hbase.filter.BinaryComparator"
	if cmp.GetName() != binaryComparator {
		return nil, fmt.Errorf("%w: comparator %s", ErrUnsupported, cmp.GetName())
	}
	v, err := binaryComparatorValue(cmp.GetSerializedComparator())
	if err != nil {
		return nil, fmt.Errorf("%w: bad BinaryComparator: %v", ErrInvalidRequest, err)
	}
	return v, nil
}

// binaryComparatorValue is the comparable's value of a serialized
// BinaryComparator, read as proto.Unmarshal reads it (the last value
// wins, unknown fields are skipped, the same encodings refused, the
// required comparable required), without making the two messages: every
// CheckAndMutate has one. The value aliases b.
func binaryComparatorValue(b []byte) ([]byte, error) {
	var value []byte
	comparable := false
	err := eachField(b, func(num protowire.Number, typ protowire.Type, field []byte) error {
		if num != 1 || typ != protowire.BytesType { // comparable
			return nil
		}
		comparable = true
		return eachField(field, func(num protowire.Number, typ protowire.Type, field []byte) error {
			if num == 1 && typ == protowire.BytesType { // value
				value = field
			}
			return nil
		})
	})
	if err == nil && !comparable {
		err = errors.New("required field comparable not set")
	}
	return value, err
}

// eachField calls fn with each field of the message m: a length-delimited
// field's contents, or nil for a field of another wire type.
func eachField(m []byte, fn func(protowire.Number, protowire.Type, []byte) error) error {
	for len(m) > 0 {
		num, typ, n := protowire.ConsumeTag(m)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m = m[n:]
		var field []byte
		if typ == protowire.BytesType {
			field, n = protowire.ConsumeBytes(m)
		} else {
			n = protowire.ConsumeFieldValue(num, typ, m)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		m = m[n:]
		if err := fn(num, typ, field); err != nil {
			return err
		}
	}
	return nil
}

// rowWriter stages the changes of one mutation to one row. The caller holds
// the row's lock, so the reads it makes cannot go stale before commit.
type rowWriter struct {
	c         *Client
	t         *table
	row       []byte
	rowPrefix []byte
	stripe    int // rowStripe: the lock the caller holds
	now       uint64
	batch     *pebble.Batch
	// staged columns and family markers, by record key, so that a mutation
	// touching a column twice sees its own first change.
	columns map[string]*column
	staged  []stagedColumn    // columns, in the order staged: what a commit ranges over
	markers map[string]uint64 // nil until a family is deleted
	// arena holds the record keys the writer made and the records it read,
	// and slab its columns: a mutation of many columns then makes a few
	// allocations, not several per column. Both are only appended to; a
	// full one is replaced, and what was taken from it stays as it was
	// until release, after which the next writer fills them again.
	arena   []byte
	slab    []column
	scratch []byte   // a record key being looked up
	hashes  []uint64 // filterPass's
}

// writerPool keeps rowWriters between mutations, with their column maps,
// arenas and slabs: a write of a few small rows would otherwise make them
// all again, which was most of what it allocated. Nothing a writer hands
// out points into what it keeps (an Increment's values and the answer's
// row are allocated apart, and every reader of its staged columns copies
// them), so it is put back once its mutation has committed or been
// dropped.
var writerPool = sync.Pool{New: func() any { return &rowWriter{columns: make(map[string]*column, 16)} }}

// A writer back from a mutation larger than this drops what it holds
// rather than keep it for the next one.
const (
	keptWriterBytes   = 16 << 10
	keptWriterColumns = 256
)

// takeWriter returns a writer of the row (t's, with its lock held by the
// caller) that stages into batch; release puts it back.
func (c *Client) takeWriter(t *table, row []byte, batch *pebble.Batch) *rowWriter {
	w := writerPool.Get().(*rowWriter)
	w.c, w.t, w.row, w.stripe, w.now, w.batch = c, t, row, rowStripe(t, row), c.now(), batch
	w.rowPrefix = appendEscaped(append(w.rowPrefix[:0], t.prefix...), row)
	return w
}

// release puts w back in writerPool, its columns and records forgotten.
func (w *rowWriter) release() {
	if len(w.columns) > keptWriterColumns {
		w.columns = make(map[string]*column, 16)
	} else {
		clear(w.columns)
	}
	w.markers = nil
	clear(w.staged)
	w.staged = w.staged[:0]
	if cap(w.staged) > keptWriterColumns {
		w.staged = nil
	}
	clear(w.slab) // no value kept alive
	w.slab = w.slab[:0]
	if cap(w.slab) > keptWriterColumns {
		w.slab = nil
	}
	w.arena = w.arena[:0]
	if cap(w.arena) > keptWriterBytes {
		w.arena = nil
	}
	w.c, w.t, w.row, w.batch = nil, nil, nil, nil
	writerPool.Put(w)
}

func (c *Client) newRowWriter(t *table, row []byte) *rowWriter {
	return c.takeWriter(t, row, c.db.NewBatch())
}

// close drops w's batch and puts w back: nothing of it is used after.
func (w *rowWriter) close() {
	_ = w.batch.Close()
	w.release()
}

func (w *rowWriter) commit() error {
	if err := w.stage(); err != nil {
		return err
	}
	if w.batch.Empty() {
		return nil
	}
	return w.c.commitRows(w.batch, []*rowWriter{w})
}

// stage writes the columns the mutations changed, and the family markers,
// into w's batch.
func (w *rowWriter) stage() error {
	for _, sc := range w.staged {
		k, col := sc.key, sc.col
		if !col.changed {
			continue
		}
		if !col.hasPut && !col.hasDel {
			if err := w.batch.Delete(bytesOf(k), nil); err != nil {
				return err
			}
			continue
		}
		// Encoded in the batch: no copy of each record to hand it.
		op := w.batch.SetDeferred(len(k), col.encodedLen())
		copy(op.Key, k)
		col.encodeTo(op.Value)
		if err := op.Finish(); err != nil {
			return err
		}
	}
	for k, ts := range w.markers {
		w.c.addFamilyMarker(w.stripe, k) // before the marker can be seen
		if err := w.batch.Set([]byte(k), encodeTs(ts), nil); err != nil {
			return err
		}
	}
	return nil
}

// wroteAny tells whether w's mutations changed anything.
func (w *rowWriter) wroteAny() bool {
	if len(w.markers) > 0 {
		return true
	}
	for _, sc := range w.staged {
		if sc.col.changed {
			return true
		}
	}
	return false
}

// commitRows commits batch, which holds the writes of ws (their rows'
// locks held), between the result cache's beginWrite and endWrite of each
// row: no read is answered from the cache while it cannot tell whether it
// comes before the commit or after it.
func (c *Client) commitRows(batch *pebble.Batch, ws []*rowWriter) error {
	if c.results != nil {
		for _, w := range ws {
			c.results.beginWrite(w.t, w.stripe, w.rowPrefix)
		}
	}
	err := c.commitFiltered(batch, ws)
	if c.results != nil {
		for _, w := range ws {
			cols := w.staged
			if err != nil || len(w.markers) > 0 {
				cols = nil
			}
			c.results.endWrite(w.t, w.stripe, w.rowPrefix, cols)
		}
	}
	if err != nil {
		return fmt.Errorf("embedded: commit: %w", err)
	}
	return nil
}

// appendRecordKey appends the key of one of the row's records in family f
// (see cells.go) to b.
func (w *rowWriter) appendRecordKey(b []byte, f *family, kind byte, qualifier []byte) []byte {
	b = append(b, w.rowPrefix...)
	b = append(b, f.esc...)
	b = append(b, kind)
	return append(b, qualifier...)
}

func (w *rowWriter) columnKey(f *family, qualifier []byte) string {
	return w.keep(w.appendRecordKey(w.scratch[:0], f, kindColumn, qualifier))
}

func (w *rowWriter) markerKey(f *family) string {
	return w.keep(w.appendRecordKey(w.scratch[:0], f, kindFamilyMarker, nil))
}

// keep copies b into the writer's arena, as a string.
func (w *rowWriter) keep(b []byte) string {
	k := w.keepBytes(b)
	return unsafe.String(unsafe.SliceData(k), len(k))
}

// keepBytes copies b into the writer's arena.
func (w *rowWriter) keepBytes(b []byte) []byte {
	k := w.take(len(b))
	copy(k, b)
	return k
}

// arenaChunk is the least an arena allocation holds, past what reserve
// made room for.
const arenaChunk = 128

// reserve makes room in the arena for what m's columns may take: a key
// each, and the record read (its value about the size of the new one, or
// a long's). It returns how many columns m has.
func (w *rowWriter) reserve(m *pb.MutationProto) (columns int) {
	need := 0
	for _, cv := range m.GetColumnValue() {
		for _, qv := range cv.GetQualifierValue() {
			columns++
			need += len(w.rowPrefix) + 2*len(cv.GetFamily()) + 2 + len(qv.GetQualifier()) + columnHeader + max(len(qv.GetValue()), 8)
		}
	}
	if cap(w.arena)-len(w.arena) < need {
		w.arena = make([]byte, 0, need)
	}
	return columns
}

// take returns n bytes of the arena, to be filled once.
func (w *rowWriter) take(n int) []byte {
	if cap(w.arena)-len(w.arena) < n {
		w.arena = make([]byte, 0, max(n, arenaChunk, 2*cap(w.arena)))
	}
	at := len(w.arena)
	w.arena = w.arena[:at+n]
	return w.arena[at : at+n : at+n]
}

// newColumn returns a zero column from the slab.
func (w *rowWriter) newColumn() *column {
	if len(w.slab) == cap(w.slab) {
		w.slab = make([]column, 0, max(8, 2*cap(w.slab)))
	}
	w.slab = w.slab[:len(w.slab)+1]
	return &w.slab[len(w.slab)-1]
}

// bytesOf is s's bytes, for calls that only read them (Pebble copies
// what it keeps of a key).
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func (w *rowWriter) get(key string) ([]byte, bool, error) {
	if !w.c.mayHaveRecord(key) {
		return nil, false, nil
	}
	v, closer, err := w.c.db.Get(bytesOf(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("embedded: read: %w", err)
	}
	kept := w.keepBytes(v)
	return kept, true, closer.Close()
}

// column returns the staged record for (f, qualifier), loading it first.
func (w *rowWriter) column(f *family, qualifier []byte) (*column, error) {
	w.scratch = w.appendRecordKey(w.scratch[:0], f, kindColumn, qualifier)
	if col, ok := w.columns[string(w.scratch)]; ok {
		return col, nil
	}
	key := w.keep(w.scratch)
	v, ok, err := w.get(key)
	if err != nil {
		return nil, err
	}
	var c column
	if ok {
		if c, err = decodeColumn(v); err != nil {
			return nil, err
		}
	}
	return w.addColumn(key, c), nil
}

// stagedColumn is a column a rowWriter staged, with its record key.
type stagedColumn struct {
	key string
	col *column
}

// addColumn stages c as the column of record key key, and returns it.
func (w *rowWriter) addColumn(key string, c column) *column {
	col := w.newColumn()
	*col = c
	w.columns[key] = col
	w.staged = append(w.staged, stagedColumn{key, col})
	return col
}

// filterPassColumns is the least columns of a mutation that filterPass
// looks up first.
const filterPassColumns = 8

// filterPass looks up the key of each column of m in the key filter, in
// one pass before they are read one by one, and takes those it has not
// as columns with no record. A large filter misses the cache at each
// lookup: lookups with nothing between them wait for their misses
// together, where each between two Pebble reads waits for its own (most
// of a word count Increment's columns exist, and would be looked up
// again, then from the cache).
func (w *rowWriter) filterPass(m *pb.MutationProto) {
	filter := w.c.filter.Load()
	if filter == nil {
		return
	}
	hashes := w.hashes[:0]
	for _, cv := range m.GetColumnValue() {
		f, err := w.t.family(cv.GetFamily())
		if err != nil {
			return // the mutation fails on it
		}
		for _, qv := range cv.GetQualifierValue() {
			w.scratch = w.appendRecordKey(w.scratch[:0], f, kindColumn, qv.GetQualifier())
			hashes = append(hashes, filterHashBytes(w.scratch))
		}
	}
	w.hashes = hashes
	filter.touch(hashes)
	i := 0
	for _, cv := range m.GetColumnValue() {
		f, _ := w.t.family(cv.GetFamily())
		for _, qv := range cv.GetQualifierValue() {
			h := hashes[i]
			i++
			if filter.mayContain(h) {
				continue
			}
			w.scratch = w.appendRecordKey(w.scratch[:0], f, kindColumn, qv.GetQualifier())
			if _, ok := w.columns[string(w.scratch)]; !ok {
				w.addColumn(w.keep(w.scratch), column{})
			}
		}
	}
}

// familyMarker returns the timestamp of f's family delete marker (0: none).
func (w *rowWriter) familyMarker(f *family) (uint64, error) {
	key := w.markerKey(f)
	if ts, ok := w.markers[key]; ok {
		return ts, nil
	}
	if _, ok := w.c.familyMarkers[w.stripe][key]; !ok {
		return 0, nil // never had one, or it was purged
	}
	v, ok, err := w.get(key)
	if err != nil || !ok {
		return 0, err
	}
	return decodeTs(v)
}

// visible returns the cell's current value, or nil when it has none.
func (w *rowWriter) visible(f *family, qualifier []byte) (*column, error) {
	col, err := w.column(f, qualifier)
	if err != nil || !col.hasPut {
		return nil, err
	}
	return col, nil
}

// conditionHolds evaluates a CheckAndMutate condition the way HRegion does:
// an empty expected value matches a missing or empty cell, and the
// comparator (its value expected) is compared to the cell (so LESS means
// expected < stored).
func (w *rowWriter) conditionHolds(cond *pb.Condition, expected []byte) (bool, error) {
	f, err := w.t.family(cond.GetFamily())
	if err != nil {
		return false, err
	}
	col, err := w.visible(f, cond.GetQualifier())
	if err != nil {
		return false, err
	}
	op := cond.GetCompareType()
	if len(expected) == 0 {
		present := col != nil && len(col.value) > 0
		if op == pb.CompareType_NOT_EQUAL {
			return present, nil
		}
		return !present, nil
	}
	if col == nil {
		return false, nil
	}
	cmp := bytes.Compare(expected, col.value)
	switch op {
	case pb.CompareType_LESS:
		return cmp < 0, nil
	case pb.CompareType_LESS_OR_EQUAL:
		return cmp <= 0, nil
	case pb.CompareType_EQUAL:
		return cmp == 0, nil
	case pb.CompareType_NOT_EQUAL:
		return cmp != 0, nil
	case pb.CompareType_GREATER_OR_EQUAL:
		return cmp >= 0, nil
	case pb.CompareType_GREATER:
		return cmp > 0, nil
	}
	return false, fmt.Errorf("%w: compare type %v", ErrUnsupported, op)
}

// timestamp picks a cell's timestamp: the qualifier's, else the mutation's,
// else the server clock.
func (w *rowWriter) timestamp(m *pb.MutationProto, qv *pb.MutationProto_ColumnValue_QualifierValue) uint64 {
	ts := uint64(latestTimestamp)
	if qv != nil && qv.Timestamp != nil {
		ts = qv.GetTimestamp()
	} else if m.Timestamp != nil {
		ts = m.GetTimestamp()
	}
	if ts >= latestTimestamp {
		return w.now
	}
	return ts
}

func (w *rowWriter) apply(m *pb.MutationProto) (*pb.Result, error) {
	if columns := w.reserve(m); columns >= filterPassColumns && m.GetMutateType() != pb.MutationProto_DELETE {
		w.filterPass(m)
	}
	switch m.GetMutateType() {
	case pb.MutationProto_PUT:
		return nil, w.put(m)
	case pb.MutationProto_DELETE:
		return nil, w.delete(m)
	case pb.MutationProto_INCREMENT, pb.MutationProto_APPEND:
		return w.readModifyWrite(m)
	}
	return nil, fmt.Errorf("%w: mutation type %v", ErrUnsupported, m.GetMutateType())
}

func (w *rowWriter) put(m *pb.MutationProto) error {
	n := 0
	for _, cv := range m.GetColumnValue() {
		f, err := w.t.family(cv.GetFamily())
		if err != nil {
			return err
		}
		famDel, err := w.familyMarker(f)
		if err != nil {
			return err
		}
		for _, qv := range cv.GetQualifierValue() {
			n++
			ts := w.timestamp(m, qv)
			col, err := w.column(f, qv.GetQualifier())
			if err != nil {
				return err
			}
			if (famDel != 0 && ts <= famDel) || (col.hasDel && ts <= col.delTs) {
				continue // hidden by a delete marker until it is purged
			}
			if col.hasPut && ts < col.putTs {
				continue // one version is kept: an older one never wins
			}
			col.hasPut, col.putTs, col.value, col.changed = true, ts, qv.GetValue(), true
		}
	}
	if n == 0 {
		return fmt.Errorf("%w: no columns to insert", ErrInvalidRequest)
	}
	return nil
}

func (w *rowWriter) delete(m *pb.MutationProto) error {
	cvs := m.GetColumnValue()
	cells := 0
	for _, cv := range cvs {
		cells += len(cv.GetQualifierValue())
	}
	// A Delete that names no cell (no families, or families with empty
	// qualifier maps, which gohbase sends without a qualifier) reaches HBase
	// as an empty Delete, and HRegion.prepareDelete makes that a delete of
	// every family: the whole row.
	if cells == 0 {
		ts := w.timestamp(m, nil)
		for _, f := range w.t.families {
			if err := w.deleteFamily(f, ts); err != nil {
				return err
			}
		}
		return nil
	}
	for _, cv := range cvs {
		f, err := w.t.family(cv.GetFamily())
		if err != nil {
			return err
		}
		for _, qv := range cv.GetQualifierValue() {
			ts := w.timestamp(m, qv)
			switch qv.GetDeleteType() {
			case pb.MutationProto_DELETE_FAMILY:
				err = w.deleteFamily(f, ts)
			case pb.MutationProto_DELETE_MULTIPLE_VERSIONS:
				err = w.deleteColumn(f, qv.GetQualifier(), ts)
			default:
				// One version is kept, so "delete this version only" would
				// have to resurrect nothing or an older cell HBase still
				// has: refuse rather than guess.
				err = fmt.Errorf("%w: delete type %v", ErrUnsupported, qv.GetDeleteType())
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *rowWriter) deleteColumn(f *family, qualifier []byte, ts uint64) error {
	col, err := w.column(f, qualifier)
	if err != nil {
		return err
	}
	key := w.columnKey(f, qualifier)
	if col.hasPut && col.putTs <= ts {
		col.hasPut, col.value, col.changed = false, nil, true
	}
	if famDel, err := w.familyMarker(f); err != nil || ts <= famDel {
		return err // the family marker already hides everything this would
	}
	if col.hasDel && col.delTs >= ts {
		return nil
	}
	if col.hasDel {
		if err := w.batch.Delete(markerIndexKey(col.delTs, []byte(key)), nil); err != nil {
			return err
		}
	}
	col.hasDel, col.delTs, col.changed = true, ts, true
	return w.batch.Set(markerIndexKey(ts, []byte(key)), nil, nil)
}

func (w *rowWriter) deleteFamily(f *family, ts uint64) error {
	old, err := w.familyMarker(f)
	if err != nil || old >= ts {
		return err
	}
	key := w.markerKey(f)
	if old != 0 {
		if err := w.batch.Delete(markerIndexKey(old, []byte(key)), nil); err != nil {
			return err
		}
	}
	if w.markers == nil {
		w.markers = make(map[string]uint64, 1)
	}
	w.markers[key] = ts
	if err := w.batch.Set(markerIndexKey(ts, []byte(key)), nil, nil); err != nil {
		return err
	}
	// Drop what the marker hides, and column markers it makes redundant.
	start := append([]byte(key[:len(key)-1]), kindColumn)
	it, err := w.c.db.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: prefixEnd(start)})
	if err != nil {
		return err
	}
	// Each record found is staged from the iterator, not read again.
	for it.First(); it.Valid(); it.NextPrefix() {
		if _, staged := w.columns[string(it.Key())]; staged {
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return fmt.Errorf("embedded: read: %w", err)
		}
		c, err := decodeColumn(w.keepBytes(v))
		if err != nil {
			_ = it.Close()
			return err
		}
		w.addColumn(w.keep(it.Key()), c)
	}
	if err := it.Close(); err != nil {
		return err
	}
	for _, sc := range w.staged {
		k, col := sc.key, sc.col
		if !bytes.HasPrefix([]byte(k), start) {
			continue
		}
		if col.hasPut && col.putTs <= ts {
			col.hasPut, col.value, col.changed = false, nil, true
		}
		if col.hasDel && col.delTs <= ts {
			if err := w.batch.Delete(markerIndexKey(col.delTs, []byte(k)), nil); err != nil {
				return err
			}
			col.hasDel, col.delTs, col.changed = false, 0, true
		}
	}
	return nil
}

// readModifyWrite serves Increment and Append. The new cell's timestamp is
// the clock, or one past the old cell's when the clock is behind it, so the
// new value always supersedes the one it was computed from.
func (w *rowWriter) readModifyWrite(m *pb.MutationProto) (*pb.Result, error) {
	increment := m.GetMutateType() == pb.MutationProto_INCREMENT
	// The answer's cells in one allocation with what they point to, not
	// one per cell.
	n := 0
	for _, cv := range m.GetColumnValue() {
		n += len(cv.GetQualifierValue())
	}
	result := &pb.Result{Cell: make([]*pb.Cell, 0, n)}
	cells := make([]answerCell, n)
	var sums []byte // an Increment's values: the answer's, so not w's arena
	if increment {
		sums = make([]byte, 0, 8*n)
	}
	for _, cv := range m.GetColumnValue() {
		f, err := w.t.family(cv.GetFamily())
		if err != nil {
			return nil, err
		}
		for _, qv := range cv.GetQualifierValue() {
			col, err := w.column(f, qv.GetQualifier())
			if err != nil {
				return nil, err
			}
			var value []byte
			switch {
			case increment:
				delta, err := longValue(qv.GetValue(), "increment amount")
				if err != nil {
					return nil, err
				}
				var old int64
				if col.hasPut {
					if old, err = longValue(col.value, "stored value"); err != nil {
						return nil, err
					}
				}
				sums = binary.BigEndian.AppendUint64(sums, uint64(old+delta))
				value = sums[len(sums)-8 : len(sums) : len(sums)]
			case col.hasPut:
				value = append(append([]byte(nil), col.value...), qv.GetValue()...)
			default:
				value = append([]byte(nil), qv.GetValue()...)
			}
			ts := w.now
			if col.hasPut && ts <= col.putTs {
				ts = col.putTs + 1
			}
			famDel, err := w.familyMarker(f)
			if err != nil {
				return nil, err
			}
			// Like a Put, the new cell stays hidden under a delete marker
			// at or after its timestamp; HBase still returns the value.
			if !(col.hasDel && ts <= col.delTs) && !(famDel != 0 && ts <= famDel) {
				col.hasPut, col.putTs, col.value, col.changed = true, ts, value, true
			}
			i := len(result.Cell)
			ac := &cells[i]
			ac.ts, ac.typ = ts, pb.CellType_PUT
			cell := &ac.cell
			cell.Row, cell.Family, cell.Qualifier = w.row, f.bytes, qv.GetQualifier()
			cell.Timestamp, cell.CellType, cell.Value = &ac.ts, &ac.typ, value
			result.Cell = append(result.Cell, cell)
		}
	}
	if len(result.Cell) == 0 {
		return nil, fmt.Errorf("%w: no columns to %s", ErrInvalidRequest,
			map[bool]string{true: "increment", false: "append"}[increment])
	}
	return result, nil
}

// answerCell is a cell of an Increment's or Append's answer with the
// timestamp and type it points to.
type answerCell struct {
	cell pb.Cell
	ts   uint64
	typ  pb.CellType
}

func longValue(b []byte, what string) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("%w: %s is not a long, it's %d bytes wide", ErrInvalidRequest, what, len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}
