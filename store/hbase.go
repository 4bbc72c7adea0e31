package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/hbgraph/hbgraph/store/keys"
	"github.com/hbgraph/hbgraph/store/pagescan"
)

// Call describes one round trip to HBase, reported to the Tracer of the
// context it was made with (explain output, metrics, logs).
type Call struct {
	Op       string   // Get, Batch, Put, Delete, Increment, CheckAndMutate, Scan
	Table    string   //
	Rows     [][]byte // rows read or written (one per Get in a Batch)
	StartRow []byte   // Scan only
	StopRow  []byte   // Scan only
	Reversed bool     // Scan only
	RowsRead int      // rows returned by a Get, Batch or Scan
	Start    time.Time
	Duration time.Duration
	Err      error
	// Round is the caller's dispatch round (WithRound), 0 if none: calls
	// of one round were sent together. A negative round -r is sent after
	// every call of round r returned and depends on them (the end check of
	// round r's relationship pages): a round trip of its own.
	Round int
	// CellsRead and BytesRead are the cells the rows read returned and
	// the bytes of their qualifiers and values: what a read cost, whatever
	// its row count.
	CellsRead, BytesRead int
}

// Tracer receives every Call made with a context that carries it.
// StoreCall may be called from several goroutines at once.
type Tracer interface {
	StoreCall(Call)
}

type tracerKey struct{}

type roundKey struct{}

// WithRound returns a context whose calls report round as Call.Round: a
// caller that sends several calls at once tags them with one round.
func WithRound(ctx context.Context, round int) context.Context {
	return context.WithValue(ctx, roundKey{}, round)
}

// WithTracer returns a context whose store calls are reported to t.
func WithTracer(ctx context.Context, t Tracer) context.Context {
	return context.WithValue(ctx, tracerKey{}, t)
}

func trace(ctx context.Context, c Call) {
	if t, ok := ctx.Value(tracerKey{}).(Tracer); ok {
		c.Duration = time.Since(c.Start)
		c.Round, _ = ctx.Value(roundKey{}).(int)
		t.StoreCall(c)
	}
}

// cells maps the qualifiers of one family to values, as a Put takes them.
type cells map[string][]byte

func (c cells) lookup(q string) ([]byte, bool) {
	v, ok := c[q]
	return v, ok
}

// rowCells are the cells of one row as hrpc read them, not copied: the
// reads on a request's path (Read, page scans) keep them so, since a row
// has a handful of cells and finding one by walking them costs less than
// building a map for every row read.
type rowCells []*hrpc.Cell

// lookup finds q's cell from the last: of a row read with both families,
// keys.FamilyOnce's cell of a once column, which comes after one an older
// hbgraph left in the data family (keys.OnceColumn).
func (c rowCells) lookup(q string) ([]byte, bool) {
	for i := len(c) - 1; i >= 0; i-- {
		if string(c[i].Qualifier) == q {
			return c[i].Value, true
		}
	}
	return nil, false
}

func (c rowCells) get(q string) []byte {
	v, _ := c.lookup(q)
	return v
}

// asMap is c as a map, for the reads that go through all of a row's cells;
// of a qualifier in both families, the last cell wins, as in lookup.
func (c rowCells) asMap() cells {
	if len(c) == 0 {
		return nil
	}
	m := make(cells, len(c))
	for _, cell := range c {
		m[string(cell.Qualifier)] = cell.Value
	}
	return m
}

// keysOnly is asMap of c as a key-only scan answers: every value empty.
func (c rowCells) keysOnly() cells {
	if len(c) == 0 {
		return nil
	}
	m := make(cells, len(c))
	for _, cell := range c {
		m[string(cell.Qualifier)] = []byte{}
	}
	return m
}

// each calls f with every cell of c.
func (c cells) each(f func(q string, v []byte)) {
	for q, v := range c {
		f(q, v)
	}
}

// each calls f with every cell of c, in their order.
func (c rowCells) each(f func(q string, v []byte)) {
	for _, cell := range c {
		f(string(cell.Qualifier), cell.Value)
	}
}

// cellSource is a row's cells, read either way.
type cellSource interface {
	lookup(q string) ([]byte, bool)
	each(f func(q string, v []byte))
}

// deadline bounds one call by the store's call timeout. A ctx whose
// deadline comes sooner already does (a wave's, from CallDeadline): no
// context or timer of its own, which is most of a cached read's allocations.
// Nor does a call to an engine in this process (Store.rows): it is
// CPU, which a deadline cannot shorten (a commit does not stop for one),
// and its caller's deadline bounds the calls that do stop (scans).
func (s *Store) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.rows != nil {
		return ctx, noCancel
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= s.callTimeout {
		return ctx, noCancel
	}
	return context.WithTimeout(ctx, s.callTimeout)
}

func noCancel() {}

// batchDeadline bounds a batch of n calls: the call timeout, and
// Options.BatchRowTimeout more per call.
func (s *Store) batchDeadline(ctx context.Context, n int) (context.Context, context.CancelFunc) {
	if s.batchRowTimeout == 0 || s.rows != nil {
		return s.deadline(ctx)
	}
	return context.WithTimeout(ctx, s.callTimeout+time.Duration(n)*s.batchRowTimeout)
}

// CallDeadline bounds a group of calls made together (a wave of reads)
// by one call timeout: the calls under it set none of their own.
func (s *Store) CallDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.callTimeout)
}

// dataOnly are the options of a read of a table's data family alone, by
// table, for the tables that also have keys.FamilyOnce: the reads on a
// request's path, which need none of the write bookkeeping. Built once
// (hrpc turns named families into protobuf on every call, and the
// embedded engine into a map, but the options themselves are reusable).
var dataOnly = func() map[string][]func(hrpc.Call) error {
	m := map[string][]func(hrpc.Call) error{}
	for table, fams := range keys.Tables() {
		if keys.HasOnceColumns(table) {
			m[table] = []func(hrpc.Call) error{hrpc.Families(map[string][]string{fams[0]: nil})}
		}
	}
	return m
}()

// familyOptions read the given qualifiers of family in table, or, with
// none, the whole row: every family's cells (a Get or Scan naming no column
// at all, as HBase then returns them all). A once column is read from
// keys.FamilyOnce and from family, where an older hbgraph kept it.
func familyOptions(table, family string, qualifiers []string) []func(hrpc.Call) error {
	if qualifiers == nil {
		return nil
	}
	fams := map[string][]string{family: qualifiers}
	for _, q := range qualifiers {
		if keys.OnceColumn(table, q) {
			fams[keys.FamilyOnce] = append(fams[keys.FamilyOnce], q)
		}
	}
	return []func(hrpc.Call) error{hrpc.Families(fams)}
}

// readOptions are the options of a scan of every column of table: of its
// data family alone (dataOnly: a request's pages, never a writer's scan,
// which needs the bookkeeping), or of the whole row.
func readOptions(table string, dataOnlyRead bool) []func(hrpc.Call) error {
	if dataOnlyRead {
		return dataOnly[table]
	}
	return nil
}

// familiesOf are values to write to family of table as a Put takes them:
// the once columns among them go to keys.FamilyOnce.
func familiesOf(table, family string, values cells) map[string]map[string][]byte {
	if !keys.HasOnceColumns(table) {
		return map[string]map[string][]byte{family: values}
	}
	var once cells
	for q := range values {
		if keys.OnceColumn(table, q) {
			if once == nil {
				once = cells{}
			}
			once[q] = values[q]
		}
	}
	if once == nil {
		return map[string]map[string][]byte{family: values}
	}
	data := make(cells, len(values)-len(once))
	for q, v := range values {
		if !keys.OnceColumn(table, q) {
			data[q] = v
		}
	}
	out := map[string]map[string][]byte{keys.FamilyOnce: once}
	if len(data) > 0 {
		out[family] = data
	}
	return out
}

// get reads one whole row (every family: a writer's read).
func (s *Store) get(ctx context.Context, table, family string, row []byte) (cells, error) {
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	call := Call{Op: "Get", Table: table, Rows: [][]byte{row}, Start: time.Now()}
	var res *hrpc.Result
	var err error
	if rr := s.rows; rr != nil {
		// Directly, as getBatch reads: no hrpc Get, protobuf or Result.
		var one struct {
			rows [1][]byte
			out  [1]pagescan.Row
		}
		one.rows[0] = row
		rr.GetRows(ctx, table, one.rows[:], "", one.out[:])
		res, err = &hrpc.Result{Cells: one.out[0].Cells}, one.out[0].Err
	} else {
		var g *hrpc.Get
		if g, err = hrpc.NewGetStr(ctx, table, string(row)); err != nil {
			return nil, err
		}
		res, err = s.hc.Get(g)
	}
	call.Err = err
	out := resultCells(res).asMap()
	if len(out) > 0 {
		call.RowsRead = 1
		call.countCells(res.Cells)
	}
	trace(ctx, call)
	if err != nil {
		return nil, classify("get "+table, err)
	}
	return out, nil
}

// getBatch reads many whole rows of one table with a single SendBatch, or
// in one call to an engine that reads rows directly (pagescan.RowReader);
// the result is in the order of rows (nil for a missing row).
func (s *Store) getBatch(ctx context.Context, table string, rows [][]byte) ([]rowCells, error) {
	return s.getRowsOf(ctx, table, rows, false)
}

// getRowsOf is getBatch, of the data family alone when dataOnlyRead (a
// request's reads, which need none of the write bookkeeping: see Read).
func (s *Store) getRowsOf(ctx context.Context, table string, rows [][]byte, dataOnlyRead bool) ([]rowCells, error) {
	out, errs, err := s.getRowsEach(ctx, table, rows, dataOnlyRead)
	if err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// getRowsEach is getRowsOf with each row's error (classified), as HBase
// answers a batch's Gets one by one (errs may be nil when none failed).
func (s *Store) getRowsEach(ctx context.Context, table string, rows [][]byte, dataOnlyRead bool) ([]rowCells, []error, error) {
	if s.rows != nil {
		family := ""
		if dataOnlyRead {
			family = dataFamily[table]
		}
		return s.getRows(ctx, table, family, rows)
	}
	return s.sendGets(ctx, table, readOptions(table, dataOnlyRead), rows)
}

// getRows is getRowsEach through s.rows: the same deadline, trace and
// errors as its SendBatch, without an hrpc Get per row (most of a cached
// row's cost). family names the one family read ("": every family).
// errs is made only when a row fails: a request's reads come this way.
func (s *Store) getRows(ctx context.Context, table, family string, rows [][]byte) (out []rowCells, errs []error, err error) {
	if len(rows) == 0 {
		return nil, nil, nil
	}
	ctx, cancel := s.batchDeadline(ctx, len(rows))
	defer cancel()
	call := Call{Op: "Batch", Table: table, Rows: rows, Start: time.Now()}
	res := make([]pagescan.Row, len(rows))
	s.rows.GetRows(ctx, table, rows, family, res)
	out = make([]rowCells, len(rows))
	for i, r := range res {
		if r.Err != nil {
			if call.Err == nil {
				call.Err = r.Err
				errs = make([]error, len(rows))
			}
			errs[i] = classify("batch get "+table, r.Err)
			continue
		}
		if len(r.Cells) > 0 {
			out[i] = r.Cells
			call.RowsRead++
			call.countCells(r.Cells)
		}
	}
	trace(ctx, call)
	return out, errs, nil
}

// getColumnsBatch reads the given qualifiers (nil: all) of many rows of one
// table with a single SendBatch: each row's cells (nil when missing) and
// error, in the order of rows.
func (s *Store) getColumnsBatch(ctx context.Context, table, family string, qualifiers []string, rows [][]byte) ([]rowCells, []error, error) {
	return s.sendGets(ctx, table, familyOptions(table, family, qualifiers), rows)
}

// sendGets reads many rows of one table with options fams in one
// SendBatch: each row's cells (nil when missing) and error, in the order
// of rows.
func (s *Store) sendGets(ctx context.Context, table string, fams []func(hrpc.Call) error, rows [][]byte) ([]rowCells, []error, error) {
	res, err := s.sendBatch(ctx, "get", table, rows, func(ctx context.Context, i int) (hrpc.Call, error) {
		return hrpc.NewGetStr(ctx, table, string(rows[i]), fams...)
	})
	if err != nil {
		return nil, nil, err
	}
	out := make([]rowCells, len(rows))
	errs := make([]error, len(rows))
	for i, r := range res {
		errs[i] = r.Error
		if gr, ok := r.Msg.(*pb.GetResponse); ok && r.Error == nil {
			out[i] = resultCells(hrpc.ToLocalResult(gr.GetResult()))
		}
	}
	return out, errs, nil
}

// sendBatch builds one call per row with build (all to table, each given
// the batch's deadline) and sends them as one SendBatch. It returns each
// call's result, its error classified; err is a call that could not be
// built. HBase applies a batch's calls independently: some may fail (or,
// after a crash, never run) while others succeed.
func (s *Store) sendBatch(ctx context.Context, op, table string, rows [][]byte,
	build func(ctx context.Context, i int) (hrpc.Call, error)) ([]hrpc.RPCResult, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	ctx, cancel := s.batchDeadline(ctx, len(rows))
	defer cancel()
	call := Call{Op: "Batch", Table: table, Rows: rows, Start: time.Now()}
	batch := make([]hrpc.Call, len(rows))
	for i := range rows {
		c, err := build(ctx, i)
		if err != nil {
			return nil, err
		}
		batch[i] = c
	}
	res, _ := s.hc.SendBatch(ctx, batch)
	for i := range res {
		if res[i].Error != nil {
			if call.Err == nil {
				call.Err = res[i].Error
			}
			res[i].Error = classify("batch "+op+" "+table, res[i].Error)
			continue
		}
		if gr, ok := res[i].Msg.(*pb.GetResponse); ok && len(gr.GetResult().GetCell()) > 0 {
			call.RowsRead++
			for _, c := range gr.GetResult().GetCell() {
				call.CellsRead++
				call.BytesRead += len(c.GetQualifier()) + len(c.GetValue())
			}
		}
	}
	trace(ctx, call)
	return res, nil
}

// countCells adds cells to what the call read.
func (c *Call) countCells(cells []*hrpc.Cell) {
	for _, cell := range cells {
		c.CellsRead++
		c.BytesRead += len(cell.Qualifier) + len(cell.Value)
	}
}

func resultCells(r *hrpc.Result) rowCells {
	if r == nil || len(r.Cells) == 0 {
		return nil
	}
	return r.Cells
}

// put writes cells to one row at timestamp ts (ms).
func (s *Store) put(ctx context.Context, table, family string, row []byte, values cells, ts int64) error {
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	call := Call{Op: "Put", Table: table, Rows: [][]byte{row}, Start: time.Now()}
	var err error
	if putter, ok := s.hc.(pagescan.Putter); ok {
		err = putter.PutCells(ctx, table, row, familiesOf(table, family, values), uint64(ts))
	} else {
		var p *hrpc.Mutate
		if p, err = hrpc.NewPutStr(ctx, table, string(row), familiesOf(table, family, values),
			hrpc.TimestampUint64(uint64(ts))); err != nil {
			return err
		}
		_, err = s.hc.Put(p)
	}
	call.Err = err
	trace(ctx, call)
	return classify("put "+table, err)
}

// deleteRow hides every cell of a row with timestamp <= ts.
func (s *Store) deleteRow(ctx context.Context, table string, row []byte, ts int64) error {
	return s.delete(ctx, table, row, nil, ts)
}

// deleteColumns hides the given qualifiers of a row with timestamp <= ts;
// a once column in both keys.FamilyOnce and family, where an older
// hbgraph kept it.
func (s *Store) deleteColumns(ctx context.Context, table, family string, row []byte, qualifiers []string, ts int64) error {
	if qualifiers == nil {
		qualifiers = []string{} // (columnFamilies takes nil for the whole row)
	}
	return s.delete(ctx, table, row, columnFamilies(table, family, qualifiers), ts)
}

// delete sends one Delete stamped ts: of the whole row when values is nil.
func (s *Store) delete(ctx context.Context, table string, row []byte, values map[string]map[string][]byte, ts int64) error {
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	call := Call{Op: "Delete", Table: table, Rows: [][]byte{row}, Start: time.Now()}
	var err error
	if rd, ok := s.hc.(pagescan.RowDeleter); ok && values == nil {
		err = rd.DeleteRowAt(ctx, table, row, uint64(ts))
	} else {
		var d *hrpc.Mutate
		if d, err = hrpc.NewDelStr(ctx, table, string(row), values, hrpc.TimestampUint64(uint64(ts))); err != nil {
			return err
		}
		_, err = s.hc.Delete(d)
	}
	call.Err = err
	trace(ctx, call)
	return classify("delete "+table, err)
}

// increment adds delta to an int64 cell and returns the new value. Its
// nonce is its own (a fresh op's): gohbase's re-sends of it count once, a
// retry of the write that made it counts again. Its callers may increment
// one cell more than once in one op (a sequence number's attempts, a
// detach's degrees), where a nonce derived from the op and the cell alone
// would drop all but the first; incrementFor, with a purpose that tells
// them apart, also makes a retry's Increment count once.
func (s *Store) increment(ctx context.Context, table, family string, row []byte, qualifier string, delta int64) (int64, error) {
	return s.incrementWith(ctx, NewOpID(), table+"/"+qualifier, table, family, row, qualifier, delta)
}

// incrementFor is increment with the nonce of ctx's op for purpose:
// stable across re-sends and retries of the same write, different for
// two Increments of one op that must both apply (name what each is for:
// "degree/<relationship>", "article-seq/<attempt>").
func (s *Store) incrementFor(ctx context.Context, purpose, table, family string, row []byte, qualifier string, delta int64) (int64, error) {
	return s.incrementWith(ctx, opOf(ctx), purpose, table, family, row, qualifier, delta)
}

func (s *Store) incrementWith(ctx context.Context, op OpID, purpose, table, family string, row []byte, qualifier string, delta int64) (int64, error) {
	res, err := s.sendIncrement(ctx, op, purpose, table, family, row, map[string]int64{qualifier: delta})
	if err != nil {
		return 0, err
	}
	if len(res.Cells) != 1 {
		// A duplicate is answered with a Get of the cell, which a delete
		// marker may hide.
		return 0, classify("increment "+table, fmt.Errorf("%w: increment returned %d cells, but we expected exactly one", errIncrementHidden, len(res.Cells)))
	}
	return int64(binary.BigEndian.Uint64(res.Cells[0].Value)), nil
}

// errIncrementHidden: an Increment answered without its cell, a duplicate
// of one applied earlier (its nonce) whose cell was deleted since.
var errIncrementHidden = errors.New("the counter was deleted since")

// incrementColumns adds each delta to its int64 column of one row in a
// single Increment (atomic on the row). Its nonce is the ctx's op's for the
// purpose "table/columns": its callers (an article's counters, an author's
// word counts) make one such Increment per row and op, so a retry of the
// op counts once too.
func (s *Store) incrementColumns(ctx context.Context, table, family string, row []byte, deltas map[string]int64) error {
	return s.incrementColumnsFor(ctx, table+"/columns", table, family, row, deltas)
}

// incrementColumnsFor is incrementColumns with the purpose of its nonce.
func (s *Store) incrementColumnsFor(ctx context.Context, purpose, table, family string, row []byte, deltas map[string]int64) error {
	_, err := s.sendIncrement(ctx, opOf(ctx), purpose, table, family, row, deltas)
	return err
}

// sendIncrement sends one Increment of deltas to row, with the nonce of op
// for purpose, as one RPC (gohbase's Client.Increment takes one column, and
// sends no nonce): the cells it answers, new values or, for a duplicate
// the region server recognised, the current ones.
func (s *Store) sendIncrement(ctx context.Context, op OpID, purpose, table, family string, row []byte, deltas map[string]int64) (*hrpc.Result, error) {
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	call := Call{Op: "Increment", Table: table, Rows: [][]byte{row}, Start: time.Now()}
	if inc, ok := s.hc.(pagescan.Incrementer); ok {
		qualifiers, values := make([]string, 0, len(deltas)), make([]int64, 0, len(deltas))
		for q, d := range deltas {
			qualifiers, values = append(qualifiers, q), append(values, d)
		}
		res, err := inc.IncrementNonced(ctx, table, row, family, qualifiers, values, nonceGroup, op.nonce(purpose, row))
		call.Err = err
		trace(ctx, call)
		if err != nil {
			return nil, classify("increment "+table, err)
		}
		return res, nil
	}
	sender, single := s.hc.(rpcSender)
	inc, err := newNoncedIncrement(ctx, op, purpose, []byte(table), family, row, deltas, single)
	if err != nil {
		return nil, err
	}
	var res *hrpc.Result
	if single {
		var msg proto.Message
		if msg, err = sender.SendRPC(inc); err == nil {
			res, err = mutateResult(msg)
		}
	} else {
		// A client without SendRPC (a test's wrapper): a batch of one.
		r, _ := s.hc.SendBatch(ctx, []hrpc.Call{inc})
		if err = r[0].Error; err == nil {
			res, err = mutateResult(r[0].Msg)
		}
	}
	call.Err = err
	trace(ctx, call)
	if err != nil {
		return nil, classify("increment "+table, err)
	}
	return res, nil
}

func mutateResult(msg proto.Message) (*hrpc.Result, error) {
	resp, ok := msg.(*pb.MutateResponse)
	if !ok {
		return nil, fmt.Errorf("increment answered a %T, not a MutateResponse", msg)
	}
	return hrpc.ToLocalResult(resp.GetResult()), nil
}

// rpcSender is gohbase's client (and the embedded engine, and the fault
// injector over it): one call out, its response message back, re-sent by
// gohbase while the connection fails.
type rpcSender interface {
	SendRPC(hrpc.Call) (proto.Message, error)
}

// noncedIncrement is an Increment that carries a nonce, which gohbase
// never fills in: HBase's ServerNonceManager remembers the (nonce group,
// nonce) of each Increment and Append it applied for
// hbase.server.hashNonce.gracePeriod (30 minutes by default), and
// RSRpcServices.increment answers one it has seen by "convert duplicate
// increment to get": a Get of the same cells, so the answer is their
// current values, not the original result, and nothing is added twice.
// gohbase re-sends the same call object after a connection reset
// (region/client.go failSentRPCs, then SendRPC's retry loop), so a re-sent
// noncedIncrement carries the same nonce.
//
// Both ways gohbase turns a call into protobuf carry the nonce: ToProto
// and, with cell blocks, SerializeCellBlocks (region/client.go
// canSerializeCellBlocks; region/multi.go in a batch). In a batch gohbase
// copies only the MutationProto into its MultiRequest, whose nonceGroup it
// leaves unset: HBase then uses no group (0), and still de-duplicates,
// since it only needs a nonce.
type noncedIncrement struct {
	*hrpc.Mutate
	group, nonce uint64
}

// newNoncedIncrement builds the Increment of deltas to row with op's nonce
// for purpose. alone (sent by SendRPC) keeps gohbase from batching it into
// a MultiRequest, which would drop its nonce group.
func newNoncedIncrement(ctx context.Context, op OpID, purpose string, table []byte, family string, row []byte,
	deltas map[string]int64, alone bool) (*noncedIncrement, error) {
	values := make(map[string][]byte, len(deltas))
	buf := make([]byte, 0, 8*len(deltas)) // every value in one allocation
	for q, d := range deltas {
		buf = binary.BigEndian.AppendUint64(buf, uint64(d))
		values[q] = buf[len(buf)-8 : len(buf) : len(buf)]
	}
	var opts []func(hrpc.Call) error
	if alone {
		opts = append(opts, hrpc.SkipBatch())
	}
	inc, err := hrpc.NewInc(ctx, table, row, map[string]map[string][]byte{family: values}, opts...)
	if err != nil {
		return nil, err
	}
	return &noncedIncrement{Mutate: inc, group: nonceGroup, nonce: op.nonce(purpose, row)}, nil
}

// ToProto is the Mutate's, with the nonce.
func (m *noncedIncrement) ToProto() proto.Message {
	return m.withNonce(m.Mutate.ToProto())
}

// SerializeCellBlocks is the Mutate's, with the nonce.
func (m *noncedIncrement) SerializeCellBlocks(cbs [][]byte) (proto.Message, [][]byte, uint32) {
	msg, cbs, n := m.Mutate.SerializeCellBlocks(cbs)
	return m.withNonce(msg), cbs, n
}

func (m *noncedIncrement) withNonce(msg proto.Message) proto.Message {
	if req, ok := msg.(*pb.MutateRequest); ok && req.Mutation != nil {
		req.NonceGroup = proto.Uint64(m.group)
		req.Mutation.Nonce = proto.Uint64(m.nonce)
	}
	return msg
}

// checkAndPut writes values at ts if the cell (family, qualifier) currently
// holds expected (nil: absent). It reports whether it wrote.
func (s *Store) checkAndPut(ctx context.Context, table, family string, row []byte, qualifier string,
	expected []byte, values cells, ts int64) (bool, error) {
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	if cp, ok := s.hc.(pagescan.CheckAndPutter); ok {
		return s.checkedDirectly(ctx, table, row, func() (bool, error) {
			return cp.CheckAndPutCells(ctx, table, row, conditionFamily(table, family, qualifier), qualifier, expected,
				familiesOf(table, family, values), uint64(ts))
		})
	}
	p, err := hrpc.NewPutStr(ctx, table, string(row), familiesOf(table, family, values),
		hrpc.TimestampUint64(uint64(ts)))
	if err != nil {
		return false, err
	}
	return s.checkAndMutate(ctx, p, family, qualifier, expected)
}

// checkAndDeleteRow deletes the row at ts if (family, qualifier) holds
// expected. It reports whether it deleted.
func (s *Store) checkAndDeleteRow(ctx context.Context, table, family string, row []byte, qualifier string,
	expected []byte, ts int64) (bool, error) {
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	if rd, ok := s.hc.(pagescan.RowDeleter); ok {
		return s.checkedDirectly(ctx, table, row, func() (bool, error) {
			return rd.CheckAndDeleteRowAt(ctx, table, row, conditionFamily(table, family, qualifier), qualifier, expected, uint64(ts))
		})
	}
	d, err := hrpc.NewDelStr(ctx, table, string(row), nil, hrpc.TimestampUint64(uint64(ts)))
	if err != nil {
		return false, err
	}
	return s.checkAndMutate(ctx, d, family, qualifier, expected)
}

func (s *Store) checkAndMutate(ctx context.Context, m *hrpc.Mutate, family, qualifier string, expected []byte) (bool, error) {
	call := Call{Op: "CheckAndMutate", Table: string(m.Table()), Rows: [][]byte{m.Key()}, Start: time.Now()}
	cam, err := hrpc.NewCheckAndMutate(m, conditionFamily(call.Table, family, qualifier), qualifier, pb.CompareType_EQUAL,
		filter.NewBinaryComparator(filter.NewByteArrayComparable(expected)))
	if err != nil {
		return false, err
	}
	ok, err := s.hc.CheckAndMutate(cam)
	call.Err = err
	trace(ctx, call)
	return ok, classify("check and mutate "+call.Table, err)
}

// conditionFamily is the family a compare-and-set of (family, qualifier)
// of table compares in: a once column where it is written (familiesOf).
func conditionFamily(table, family, qualifier string) string {
	if keys.OnceColumn(table, qualifier) {
		return keys.FamilyOnce
	}
	return family
}

// checkedDirectly is a compare-and-set applied without hrpc (apply, an
// engine's pagescan.CheckAndPutter or RowDeleter), traced and classified
// as checkAndMutate does an hrpc one.
func (s *Store) checkedDirectly(ctx context.Context, table string, row []byte, apply func() (bool, error)) (bool, error) {
	call := Call{Op: "CheckAndMutate", Table: table, Rows: [][]byte{row}, Start: time.Now()}
	ok, err := apply()
	call.Err = err
	trace(ctx, call)
	return ok, classify("check and mutate "+table, err)
}

// scanRange describes a bounded scan.
type scanRange struct {
	table, family string
	start, stop   []byte
	reversed      bool
	limit         int // rows to return at most; 0: no limit
	keyOnly       bool
	// dataOnly scans read the data family alone (readOptions): a
	// request's pages, never a writer's.
	dataOnly bool
	// compact rows keep their cells as read (row.raw) instead of in a
	// map (row.cells): the pages a request reads.
	compact   bool
	chunkRows int // scanAll's rows per scan; 0: defaultChunkRows
	// qualifiers, when not nil, are the only columns of family read
	// (sorted): a page that needs no article body reads none.
	qualifiers []string
}

// defaultChunkRows is scanAll's chunk for small rows; articleChunkRows
// bounds a chunk of article rows (bodies up to MaxBodyBytes) to 32 MiB.
const (
	defaultChunkRows = 512
	articleChunkRows = 32
)

// row is one scanned row.
type row struct {
	key   []byte
	cells cells    // unless the scan was compact
	raw   rowCells // if it was
	ts    int64    // the newest cell timestamp
}

// dataFamily is the family a dataOnly scan of a table reads alone
// (readOptions): "" for a table read whole.
var dataFamily = func() map[string]string {
	m := map[string]string{}
	for table, fams := range keys.Tables() {
		if keys.HasOnceColumns(table) {
			m[table] = fams[0]
		}
	}
	return m
}()

// scan reads up to r.limit rows of r in one scanner with one deadline.
func (s *Store) scan(ctx context.Context, r scanRange) ([]row, error) {
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	if ps, ok := s.hc.(pagescan.Scanner); ok && (r.isPage() || r.isProbe()) {
		var rows [1][]row
		var errs [1]error
		p := r
		p.compact, p.keyOnly = true, false
		s.scanPagesWith(ctx, ps, []scanRange{p}, rows[:], errs[:])
		if r.isProbe() {
			for i := range rows[0] {
				rows[0][i].cells, rows[0][i].raw = rows[0][i].raw.keysOnly(), nil
			}
		}
		return rows[0], errs[0]
	}
	call := Call{Op: "Scan", Table: r.table, StartRow: r.start, StopRow: r.stop, Reversed: r.reversed, Start: time.Now()}
	opts := readOptions(r.table, r.dataOnly)
	if r.qualifiers != nil {
		opts = []func(hrpc.Call) error{hrpc.Families(map[string][]string{r.family: r.qualifiers})}
	}
	if r.limit > 0 {
		opts = append(opts, hrpc.NumberOfRows(uint32(r.limit)))
	}
	if r.reversed {
		opts = append(opts, hrpc.Reversed())
	}
	if r.keyOnly {
		opts = append(opts, hrpc.Filters(filter.NewKeyOnlyFilter(false)))
	}
	sc, err := hrpc.NewScanRange(ctx, []byte(r.table), r.start, r.stop, opts...)
	if err != nil {
		return nil, err
	}
	scanner := s.hc.Scan(sc)
	defer scanner.Close()
	var rows []row
	if r.limit > 0 {
		rows = make([]row, 0, min(r.limit, 64))
	}
	for r.limit == 0 || len(rows) < r.limit {
		res, err := scanner.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			call.Err, call.RowsRead = err, len(rows)
			trace(ctx, call)
			return nil, classify("scan "+r.table, err)
		}
		if len(res.Cells) == 0 {
			continue
		}
		out := row{key: res.Cells[0].Row}
		call.countCells(res.Cells)
		if r.compact {
			out.raw = res.Cells
		} else {
			out.cells = rowCells(res.Cells).asMap()
		}
		for _, c := range res.Cells {
			if c.Timestamp != nil && int64(*c.Timestamp) > out.ts {
				out.ts = int64(*c.Timestamp)
			}
		}
		rows = append(rows, out)
	}
	call.RowsRead = len(rows)
	trace(ctx, call)
	return rows, nil
}

// isPage tells whether r is a compact page that a pagescan.Scanner can
// answer.
func (r *scanRange) isPage() bool { return r.compact && !r.keyOnly && r.limit > 0 }

// isProbe tells whether r asks for the keys of at most probeRows rows
// (whether a range holds any, or which are its first): on the embedded
// engine it is read as a page (pagescan), a few cells read whole rather
// than a scanner set up (a node's deletion makes six such probes).
func (r *scanRange) isProbe() bool {
	return !r.compact && r.keyOnly && r.limit > 0 && r.limit <= probeRows
}

// probeRows is the most rows a probe (isProbe) reads.
const probeRows = 2

// probedEmpty tells whether r holds no row, from a probe of it, on an
// engine where a probe is a page read and a listing a scanner: a listing
// of what most deletions find none of is then cheaper after one. On a
// cluster, where the probe would be a round trip more, it reads nothing
// and says false: the caller lists.
func (s *Store) probedEmpty(ctx context.Context, r scanRange) (bool, error) {
	if !s.PagesInOneCall() {
		return false, nil
	}
	r.limit, r.keyOnly = 1, true
	found, err := s.scan(ctx, r)
	return err == nil && len(found) == 0, err
}

// scanPages reads the pages rs (each isPage, all of one table), in one
// engine call when the engine can (pagescan), with one deadline: rows[i]
// and errs[i] answer rs[i]. Each page is still a Call to the tracer.
// PagesInOneCall reports whether the client answers several page scans
// in one call (the embedded engine, pagescan.Scanner): a caller then
// batches a wave's pages (ArticlesBatch). On a cluster each page is an RPC
// of its own, which a caller sends concurrently instead.
func (s *Store) PagesInOneCall() bool {
	_, ok := s.hc.(pagescan.Scanner)
	return ok
}

func (s *Store) scanPages(ctx context.Context, rs []scanRange) ([][]row, []error) {
	rows := make([][]row, len(rs))
	errs := make([]error, len(rs))
	ps, ok := s.hc.(pagescan.Scanner)
	if !ok {
		for i := range rs {
			rows[i], errs[i] = s.scan(ctx, rs[i])
		}
		return rows, errs
	}
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	s.scanPagesWith(ctx, ps, rs, rows, errs)
	return rows, errs
}

// scanPagesWith is scanPages through ps, ctx bounding the call.
func (s *Store) scanPagesWith(ctx context.Context, ps pagescan.Scanner, rs []scanRange, rows [][]row, errs []error) {
	start := time.Now()
	var scans []pagescan.Scan
	var pages []pagescan.Page
	if len(rs) == 1 {
		// One allocation for both: what goes to an interface's method
		// escapes to the heap.
		one := new(struct {
			scan [1]pagescan.Scan
			page [1]pagescan.Page
		})
		scans, pages = one.scan[:0], one.page[:]
	} else {
		scans, pages = make([]pagescan.Scan, 0, len(rs)), make([]pagescan.Page, len(rs))
	}
	for _, r := range rs {
		sc := pagescan.Scan{Start: r.start, Stop: r.stop, Reversed: r.reversed, Limit: r.limit}
		if r.dataOnly {
			sc.Family = dataFamily[r.table]
		}
		if r.qualifiers != nil {
			sc.Family, sc.Qualifiers = r.family, r.qualifiers
		}
		scans = append(scans, sc)
	}
	ps.ScanPages(ctx, rs[0].table, scans, pages)
	for i, r := range rs {
		call := Call{Op: "Scan", Table: r.table, StartRow: r.start, StopRow: r.stop, Reversed: r.reversed, Start: start}
		if err := pages[i].Err; err != nil {
			call.Err = err
			trace(ctx, call)
			errs[i] = classify("scan "+r.table, err)
			continue
		}
		out := make([]row, 0, len(pages[i].Rows))
		for _, cells := range pages[i].Rows {
			if len(cells) == 0 {
				continue
			}
			rw := row{key: cells[0].Row, raw: cells}
			call.countCells(cells)
			for _, c := range cells {
				if c.Timestamp != nil && int64(*c.Timestamp) > rw.ts {
					rw.ts = int64(*c.Timestamp)
				}
			}
			out = append(out, rw)
		}
		call.RowsRead = len(out)
		trace(ctx, call)
		rows[i] = out
	}
}

// scanAll visits every row of [start, stop) in chunks of chunkRows, each
// chunk its own scan with its own deadline, resuming just past the last row
// seen (seed 001's paging rows). fn may stop the walk by returning false.
func (s *Store) scanAll(ctx context.Context, r scanRange, fn func(row) (bool, error)) error {
	chunkRows := r.chunkRows
	if chunkRows == 0 {
		chunkRows = defaultChunkRows
	}
	r.limit = chunkRows
	for {
		rows, err := s.scan(ctx, r)
		if err != nil {
			return err
		}
		for _, rw := range rows {
			more, err := fn(rw)
			if err != nil || !more {
				return err
			}
		}
		if len(rows) < chunkRows {
			return nil
		}
		r.start = append(append([]byte(nil), rows[len(rows)-1].key...), 0)
	}
}
