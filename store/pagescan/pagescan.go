// Package pagescan holds the optional interfaces through which the store
// reads from an engine that can answer directly: the first page of scans
// (Scanner) and whole rows (RowReader), with no hrpc request, no protobuf,
// no scanner per scan. The embedded engine implements them; a cluster
// client (gohbase) does not, and the store reads through hrpc there.
package pagescan

import (
	"context"
	"errors"

	"github.com/tsuna/gohbase/hrpc"
)

// Scan is one page: up to Limit rows of [Start, Stop) (Reversed: from
// Start, inclusive, down to Stop, exclusive), as an hrpc scan with
// hrpc.NumberOfRows(Limit) returns them in its first page; Family names the
// one family read ("": every family), and Qualifiers, when not nil, the
// only columns of Family read (sorted; as hrpc.Families with a column list
// asks HBase): a page that needs no article body reads none.
type Scan struct {
	Start, Stop []byte
	Family      string
	Qualifiers  []string
	Reversed    bool
	Limit       int // > 0
}

// Page is the answer to one Scan: its rows in scan order, each a row's
// cells (never empty), or the error the scan failed with.
type Page struct {
	Rows [][]*hrpc.Cell
	Err  error
}

// Scanner answers several page scans of one table in one call: pages[i]
// answers scans[i] (len(pages) == len(scans)). ctx bounds every scan.
type Scanner interface {
	ScanPages(ctx context.Context, table string, scans []Scan, pages []Page)
}

// Row is the answer to one row of a RowReader's call: its cells, sorted by
// family and qualifier (nil: the row does not exist, or has no cell in the
// family read), or the error its read failed with.
type Row struct {
	Cells []*hrpc.Cell
	Err   error
}

// RowReader answers several Gets of whole rows of one table in one call,
// as hrpc Gets of the same rows and family answer them, without the hrpc
// request, its protobuf or its response: out[i] answers rows[i]
// (len(out) == len(rows)). family names the one family read ("": every
// family). ctx bounds every read. The cells may share the bytes of rows:
// the caller leaves them as they are.
type RowReader interface {
	GetRows(ctx context.Context, table string, rows [][]byte, family string, out []Row)
}

// Tx is a transaction of an engine that has them (TxBeginner): the calls
// whose context carries it are applied at Commit, all of them or none.
type Tx interface {
	Commit() error
	Discard()
}

// TxBeginner begins transactions: BeginTx returns ctx carrying a new one.
// A call of a transaction may fail with ErrTxConflict (see the engine's
// Tx): nothing of it is applied, and the operation is to be run again
// without one.
type TxBeginner interface {
	BeginTx(ctx context.Context) (context.Context, Tx)
}

// ErrTxConflict fails the calls of a transaction that cannot go on.
var ErrTxConflict = errors.New("transaction conflict")

// Incrementer applies an Increment that carries a nonce (HBase's nonce
// group and nonce: see the store's noncedIncrement) without the hrpc
// request, its cell block or its protobuf round trip: it adds deltas[i]
// to column qualifiers[i] of family in row, and answers as a nonced hrpc
// Increment of the same cells is answered. ctx may carry a transaction
// (TxBeginner), as a call's context does. The embedded engine implements
// it; a cluster client does not.
type Incrementer interface {
	IncrementNonced(ctx context.Context, table string, row []byte, family string,
		qualifiers []string, deltas []int64, nonceGroup, nonce uint64) (*hrpc.Result, error)
}

// Putter applies a Put of values (by family, then qualifier) to row,
// every cell stamped ts, as an hrpc Put of them with
// hrpc.TimestampUint64(ts) is applied, without the hrpc request, its cell
// block or its protobuf round trip. ctx may carry a transaction, as a
// call's context does. The embedded engine implements it.
type Putter interface {
	PutCells(ctx context.Context, table string, row []byte, values map[string]map[string][]byte, ts uint64) error
}

// CheckAndPutter applies a Put of values stamped ts (as Putter) if column
// (family, qualifier) of row holds expected (nil: is absent), as an hrpc
// CheckAndMutate of that Put with a BinaryComparator of expected and
// CompareType EQUAL is applied, and reports whether it did. The embedded
// engine implements it.
type CheckAndPutter interface {
	CheckAndPutCells(ctx context.Context, table string, row []byte, family, qualifier string, expected []byte,
		values map[string]map[string][]byte, ts uint64) (bool, error)
}

// RowDeleter deletes a whole row at ts (hiding every cell stamped ts or
// earlier), unconditionally or if column (family, qualifier) holds
// expected (nil: is absent), as an hrpc Delete of the row with
// hrpc.TimestampUint64(ts), and a CheckAndMutate of it (BinaryComparator,
// EQUAL), are applied. The embedded engine implements it.
type RowDeleter interface {
	DeleteRowAt(ctx context.Context, table string, row []byte, ts uint64) error
	CheckAndDeleteRowAt(ctx context.Context, table string, row []byte, family, qualifier string, expected []byte, ts uint64) (bool, error)
}
