package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/hbgraph/hbgraph/store/pagescan"
)

// Tx runs the calls of one store operation as one write: every call whose
// context carries the Tx (BeginTx) reads what the calls before it wrote,
// and Commit applies all of them in one Pebble batch, or none. A Tx locks
// every row it reads or writes until Commit or Discard (strict two-phase
// locking), so what it read is still so when it commits: the operation's
// calls behave as if they had run one after another with nothing in
// between, one of the orders a cluster may run them in, and none of its
// writes is seen before all are. A Tx that would wait for a lock while it
// holds others, or that is asked for what it does not do (a scan, a read
// of a row it wrote other than whole or by family), fails every call from
// then on with pagescan.ErrTxConflict: the operation is then run again
// without one.
type Tx struct {
	c  *Client
	mu sync.Mutex // one call at a time (an operation may overlap its calls)
	// held are the row stripes the Tx locked (c.locks), in order taken: a
	// few (a write touches a handful of rows), so a slice, not a set.
	held []int
	// order holds the writers of the rows written, each staging its row's
	// columns for the whole Tx, in the order first written; rows indexes
	// them by record prefix once they are more than a few.
	order []*rowWriter
	rows  map[string]*rowWriter
	batch *pebble.Batch
	// nonces are the Increments' nonces started (see nonceTable).
	nonces []nonceKey
	err    error // sticky: the first conflict, or ErrClosed
	done   bool
	closed bool // begun after Close: no call slot held

	heldBuf  [8]int
	orderBuf [txIndexedRows]*rowWriter
}

// txIndexedRows is how many rows a Tx writes before it indexes its
// writers in a map: a write touches a handful, which a look along the
// list finds sooner.
const txIndexedRows = 8

type txKey struct{}

// doneCtx is a context that is done: a wait on it gives up at once.
var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// nestedTx is a Tx begun within another (see BeginTx).
type nestedTx struct{}

func (nestedTx) Commit() error { return nil }
func (nestedTx) Discard()      {}

// BeginTx returns ctx carrying a new Tx, and the Tx. The caller must Commit
// or Discard it. The Tx holds a call slot from here to its end, as a call
// does (Close waits for it), and its calls take none of their own: a call
// waiting for a slot while Close waits, and for a row the Tx holds, would
// wait for good. Within a Tx, it returns ctx and a Tx whose Commit and
// Discard do nothing: the outer one decides. After Close, every call of
// the Tx fails with ErrClosed.
func (c *Client) BeginTx(ctx context.Context) (context.Context, pagescan.Tx) {
	if txOf(ctx) != nil {
		return ctx, nestedTx{}
	}
	tx := &Tx{c: c}
	tx.held, tx.order = tx.heldBuf[:0], tx.orderBuf[:0]
	if err := c.enter(); err != nil {
		tx.err, tx.closed = err, true
	} else {
		tx.batch = c.db.NewBatch()
	}
	return context.WithValue(ctx, txKey{}, tx), tx
}

func txOf(ctx context.Context) *Tx {
	tx, _ := ctx.Value(txKey{}).(*Tx)
	return tx
}

// conflict fails the Tx for good.
func (tx *Tx) conflict(why string) error {
	if tx.err == nil {
		tx.c.txConflicts.Add(1)
		tx.err = fmt.Errorf("%w: %s", pagescan.ErrTxConflict, why)
	}
	return tx.err
}

// txLockSpins is how often a Tx that holds locks tries again for one
// taken before it gives up: a call holds a row's lock for microseconds,
// another Tx for a whole operation.
const txLockSpins = 64

// lock takes the stripe's lock unless the Tx holds it. The first lock
// may wait: a Tx that holds none is in no cycle of waits.
func (tx *Tx) lock(stripe int) error {
	if slices.Contains(tx.held, stripe) {
		return nil
	}
	m := &tx.c.locks[stripe]
	if len(tx.held) == 0 {
		m.Lock()
	} else {
		ok := m.TryLock()
		for i := 0; !ok && i < txLockSpins; i++ {
			runtime.Gosched()
			ok = m.TryLock()
		}
		if !ok {
			return tx.conflict("a row is locked by another write")
		}
	}
	tx.held = append(tx.held, stripe)
	return nil
}

func (tx *Tx) unlockAll() {
	for _, s := range tx.held {
		tx.c.locks[s].Unlock()
	}
	tx.held = tx.held[:0]
}

// enterCall begins a call of the Tx: nil when it may go on.
func (tx *Tx) enterCall() error {
	tx.mu.Lock()
	switch {
	case tx.done:
		tx.mu.Unlock()
		return errors.New("embedded: a call of a finished transaction")
	case tx.err != nil:
		tx.mu.Unlock()
		return tx.err
	}
	return nil
}

// writer is the Tx's writer of the row (its stripe locked by the caller).
func (tx *Tx) writer(t *table, row []byte) *rowWriter {
	var kb rowKeyBuf
	prefix := appendEscaped(append(kb[:0], t.prefix...), row)
	if w := tx.writerOf(prefix); w != nil {
		return w
	}
	// The row is copied: the Tx's answers hold it after the call.
	w := tx.c.takeWriter(t, append([]byte(nil), row...), tx.batch)
	tx.order = append(tx.order, w)
	switch {
	case tx.rows != nil:
		tx.rows[string(w.rowPrefix)] = w
	case len(tx.order) > txIndexedRows:
		tx.rows = make(map[string]*rowWriter, 2*len(tx.order))
		for _, w := range tx.order {
			tx.rows[string(w.rowPrefix)] = w
		}
	}
	return w
}

// writerOf is the Tx's writer of the row with record prefix prefix, or
// nil.
func (tx *Tx) writerOf(prefix []byte) *rowWriter {
	if tx.rows != nil {
		return tx.rows[string(prefix)]
	}
	for _, w := range tx.order {
		if bytes.Equal(w.rowPrefix, prefix) {
			return w
		}
	}
	return nil
}

// wrote is the Tx's writer of the row, if it has written it (most reads
// come before any write: no record prefix is made for them).
func (tx *Tx) wrote(t *table, row []byte) *rowWriter {
	if len(tx.order) == 0 {
		return nil
	}
	var kb rowKeyBuf
	return tx.writerOf(appendEscaped(append(kb[:0], t.prefix...), row))
}

// mutate is Client.mutate within the Tx.
func (tx *Tx) mutate(t *table, req *pb.MutateRequest) (*pb.MutateResponse, error) {
	if err := tx.enterCall(); err != nil {
		return nil, err
	}
	defer tx.mu.Unlock()
	m := req.GetMutation()
	row := m.GetRow()
	if len(row) == 0 || len(row) > maxRowLength {
		return nil, tx.conflict("a row key the engine refuses") // answered without a Tx
	}
	for _, a := range m.GetAttribute() {
		if a.GetName() == "_ttl" {
			return nil, tx.conflict("a cell TTL") // refused without a Tx
		}
	}
	cond := req.GetCondition()
	var expected []byte
	if cond != nil {
		var err error
		if expected, err = checkCondition(cond, row); err != nil {
			return nil, tx.conflict(err.Error())
		}
	}
	if err := tx.lock(rowStripe(t, row)); err != nil {
		return nil, err
	}
	if typ := m.GetMutateType(); tx.c.nonces != nil && cond == nil && m.GetNonce() != 0 &&
		(typ == pb.MutationProto_INCREMENT || typ == pb.MutationProto_APPEND) {
		key := nonceKey{group: req.GetNonceGroup(), nonce: m.GetNonce()}
		// Not waited for: a Tx holds its locks meanwhile.
		proceed, err := tx.c.nonces.start(doneCtx, key, int64(tx.c.now()))
		switch {
		case err != nil:
			return nil, tx.conflict("an Increment whose nonce is in flight")
		case !proceed && tx.wrote(t, row) == nil:
			// Applied before: answered as outside (the row is held).
			return tx.c.duplicate(t, m)
		case !proceed:
			return nil, tx.conflict("an Increment whose nonce was applied, of a row the transaction wrote")
		}
		tx.nonces = append(tx.nonces, key)
	}
	w := tx.writer(t, row)
	w.now = tx.c.now()
	if cond != nil {
		ok, err := w.conditionHolds(cond, expected)
		if err != nil {
			return nil, tx.conflict(err.Error())
		}
		if !ok {
			return &pb.MutateResponse{Processed: proto.Bool(false)}, nil
		}
	}
	result, err := w.apply(m)
	if err != nil {
		return nil, tx.conflict(err.Error()) // half staged: the Tx cannot go on
	}
	resp := &pb.MutateResponse{Result: result}
	if cond != nil {
		resp.Processed = proto.Bool(true)
	}
	return resp, nil
}

// get is Client.get within the Tx: a row it wrote is read with its staged
// columns over it, whole or by whole families (anything else is a
// conflict).
func (tx *Tx) get(t *table, g *pb.Get) (*pb.GetResponse, error) {
	if err := tx.enterCall(); err != nil {
		return nil, err
	}
	defer tx.mu.Unlock()
	if err := tx.lock(rowStripe(t, g.GetRow())); err != nil {
		return nil, err
	}
	w := tx.wrote(t, g.GetRow())
	if w == nil {
		return tx.c.get(t, g)
	}
	// A whole row or whole families, as GetRows reads them.
	q, err := newQuery(t, g.GetColumn(), g.GetFilter(), g.GetTimeRange(),
		g.GetStoreLimit(), g.GetStoreOffset(), g.StoreLimit != nil)
	if err != nil {
		return nil, err
	}
	families, whole := q.wholeFamilies()
	if !whole || g.GetExistenceOnly() {
		return nil, tx.conflict("a Get of some columns of a row the transaction wrote")
	}
	resp, err := tx.c.get(t, g)
	if err != nil {
		return nil, err
	}
	cells := resp.GetResult().GetCell()
	r := tx.overlay(t, w, families, *(*[]*hrpc.Cell)(unsafe.Pointer(&cells)))
	if r.Err != nil {
		return nil, r.Err
	}
	out := r.Cells
	return &pb.GetResponse{Result: &pb.Result{Cell: *(*[]*pb.Cell)(unsafe.Pointer(&out))}}, nil
}

// getRows is GetRows within the Tx: every row locked, then read as
// outside it, the rows it wrote with their staged columns over them.
func (tx *Tx) getRows(ctx context.Context, t *table, q *query, rows [][]byte, family string, out []pagescan.Row) {
	if err := tx.enterCall(); err != nil {
		for i := range out {
			out[i] = pagescan.Row{Err: err}
		}
		return
	}
	defer tx.mu.Unlock()
	// In stripe order: two transactions that read the same rows in one
	// call do not each take one and give up on the other.
	stripes := make([]int, len(rows))
	for i, row := range rows {
		stripes[i] = rowStripe(t, row)
	}
	slices.Sort(stripes)
	for _, s := range stripes {
		if err := tx.lock(s); err != nil {
			for i := range out {
				out[i] = pagescan.Row{Err: err}
			}
			return
		}
	}
	// Every row as outside the Tx (their locks held: as Pebble has them,
	// from the result cache or not), then the rows the Tx wrote with its
	// staged columns over them.
	tx.c.getRows(ctx, t, q, rows, family, out)
	for i, row := range rows {
		if w := tx.wrote(t, row); w != nil && out[i].Err == nil {
			out[i] = tx.overlay(t, w, family, out[i].Cells)
		}
	}
}

// overlay returns cells, a read of w's row for the family selection,
// with w's staged columns over them.
func (tx *Tx) overlay(t *table, w *rowWriter, family string, cells []*hrpc.Cell) pagescan.Row {
	if len(w.markers) > 0 {
		return pagescan.Row{Err: tx.conflict("a read of a row whose family the transaction deleted")}
	}
	var arena []byte
	kept := make([]keptCell, 0, len(cells))
	for _, c := range cells {
		f := t.byName[string(c.Family)]
		if f == nil {
			return pagescan.Row{Err: tx.conflict("a cell of an unknown family")}
		}
		arena = append(append(arena, c.Qualifier...), c.Value...)
		kept = append(kept, keptCell{fam: f, ts: *c.Timestamp, qualLen: len(c.Qualifier), valueLen: len(c.Value)})
	}
	v := appendCells(appendBytes(nil, []byte(family)), arena, kept)
	v, ok := patchRow(t, w.rowPrefix, v, w.staged, nil, nil)
	if !ok {
		return pagescan.Row{Err: tx.conflict("a staged row that does not decode")}
	}
	_, rest, _ := readBytes(v)
	patched, _, ok := decodeCells(t, w.row, rest, &cellArena{})
	if !ok {
		return pagescan.Row{Err: tx.conflict("a staged row that does not decode")}
	}
	if len(patched) == 0 {
		return pagescan.Row{}
	}
	return pagescan.Row{Cells: hrpcCells(patched)}
}

// TxConflicts is the number of transactions that could not go on (see Tx),
// since Open.
func (c *Client) TxConflicts() int64 { return c.txConflicts.Load() }

// Commit applies what the Tx wrote, in one Pebble batch, and releases its
// locks. It fails, having applied nothing, after a conflict.
func (tx *Tx) Commit() error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.done {
		return errors.New("embedded: a transaction committed or discarded twice")
	}
	tx.done = true
	defer tx.release()
	if tx.err != nil {
		tx.endNonces(false)
		return tx.err
	}
	written := tx.order[:0:0]
	for _, w := range tx.order {
		if err := w.stage(); err != nil {
			tx.endNonces(false)
			return err
		}
		if w.wroteAny() {
			written = append(written, w)
		}
	}
	if tx.batch.Empty() {
		tx.endNonces(true)
		return nil
	}
	err := tx.c.commitRows(tx.batch, written)
	tx.endNonces(err == nil)
	return err
}

// Discard applies nothing of the Tx and releases its locks.
func (tx *Tx) Discard() {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.done {
		return
	}
	tx.done = true
	tx.endNonces(false)
	tx.release()
}

func (tx *Tx) release() {
	tx.unlockAll()
	for i, w := range tx.order {
		w.release()
		tx.order[i] = nil
	}
	tx.rows, tx.order = nil, nil
	if !tx.closed {
		_ = tx.batch.Close()
		tx.c.leave()
	}
}

func (tx *Tx) endNonces(applied bool) {
	for _, k := range tx.nonces {
		if tx.c.nonces.end(k, applied, int64(tx.c.now())) {
			tx.c.log.Warn().Int("max_nonces", tx.c.nonces.max).
				Msg("embedded: nonce table full: the oldest nonces are forgotten before their grace period ends")
		}
	}
	tx.nonces = nil
}

// refuseScan fails the Tx, which does not scan (see Tx), and returns the
// error its scan answers.
func (tx *Tx) refuseScan() error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	return tx.conflict("a scan")
}
