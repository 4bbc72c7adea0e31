package store

import (
	"context"
	"time"

	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/keys"
	"github.com/hbgraph/hbgraph/store/pagescan"
)

// rowWrite is one Put or Delete of a write batch (writeRows): a Put of
// put to family when put is set, otherwise a Delete of columns (every
// cell of the row when columns is nil), stamped ts.
type rowWrite struct {
	row     []byte
	family  string
	put     cells
	columns []string
	ts      int64
}

// putRow is a rowWrite that puts values to family of row at ts.
func putRow(row []byte, family string, values cells, ts int64) rowWrite {
	return rowWrite{row: row, family: family, put: values, ts: ts}
}

// deleteRowAt is a rowWrite that deletes every cell of row stamped ts or
// earlier.
func deleteRowAt(row []byte, ts int64) rowWrite { return rowWrite{row: row, ts: ts} }

// writeRows sends the Puts and Deletes ws, all to table, as one batch:
// one round trip where each of them alone was one. Each is idempotent
// (its cells and timestamps fixed), so a re-send of the batch, or of any
// of its calls, writes the same; HBase applies them independently, so a
// failure may leave any of them applied: only writes whose order does not
// matter (both index rows of a relationship, an article's two category
// rows) go in one batch. The first error is returned.
func (s *Store) writeRows(ctx context.Context, table string, ws []rowWrite) error {
	switch len(ws) {
	case 0:
		return nil
	case 1:
		w := ws[0]
		if w.put != nil {
			return s.put(ctx, table, w.family, w.row, w.put, w.ts)
		}
		if w.columns != nil {
			return s.deleteColumns(ctx, table, w.family, w.row, w.columns, w.ts)
		}
		return s.deleteRow(ctx, table, w.row, w.ts)
	}
	rows := make([][]byte, len(ws))
	for i, w := range ws {
		rows[i] = w.row
	}
	if direct, ok := s.writesDirectly(ws); ok && !s.overlapCalls {
		return s.writeRowsDirectly(ctx, direct, table, rows, ws)
	}
	res, err := s.sendBatch(ctx, "write", table, rows, func(ctx context.Context, i int) (hrpc.Call, error) {
		w := ws[i]
		ts := hrpc.TimestampUint64(uint64(w.ts))
		if w.put != nil {
			return hrpc.NewPutStr(ctx, table, string(w.row), familiesOf(table, w.family, w.put), ts)
		}
		return hrpc.NewDelStr(ctx, table, string(w.row), columnFamilies(table, w.family, w.columns), ts)
	})
	if err != nil {
		return err
	}
	for _, r := range res {
		if r.Error != nil {
			return r.Error
		}
	}
	return nil
}

// columnFamilies are the columns of a Delete as deleteColumns sends them
// (nil: the whole row): a once column in both keys.FamilyOnce and family.
func columnFamilies(table, family string, qualifiers []string) map[string]map[string][]byte {
	if qualifiers == nil {
		return nil
	}
	cols := make(map[string][]byte, len(qualifiers))
	var once map[string][]byte
	for _, q := range qualifiers {
		cols[q] = nil
		if keys.OnceColumn(table, q) {
			if once == nil {
				once = map[string][]byte{}
			}
			once[q] = nil
		}
	}
	fams := map[string]map[string][]byte{family: cols}
	if once != nil {
		fams[keys.FamilyOnce] = once
	}
	return fams
}

// directWriter is a client that applies puts and deletions of whole rows
// without hrpc: the embedded engine.
type directWriter interface {
	pagescan.Putter
	pagescan.RowDeleter
}

// writesDirectly returns the client as a directWriter when it is one and
// ws are all puts and deletions of whole rows.
func (s *Store) writesDirectly(ws []rowWrite) (directWriter, bool) {
	direct, ok := s.hc.(directWriter)
	for _, w := range ws {
		ok = ok && (w.put != nil || w.columns == nil)
	}
	return direct, ok
}

// writeRowsDirectly is writeRows' batch applied write by write, as
// SendBatch applies its calls (each, whatever became of the others; the
// first error is the answer), traced as the one batch it stands for.
func (s *Store) writeRowsDirectly(ctx context.Context, direct directWriter, table string, rows [][]byte, ws []rowWrite) error {
	ctx, cancel := s.batchDeadline(ctx, len(ws))
	defer cancel()
	call := Call{Op: "Batch", Table: table, Rows: rows, Start: time.Now()}
	var first error
	for _, w := range ws {
		var err error
		if w.put != nil {
			err = direct.PutCells(ctx, table, w.row, familiesOf(table, w.family, w.put), uint64(w.ts))
		} else {
			err = direct.DeleteRowAt(ctx, table, w.row, uint64(w.ts))
		}
		if err != nil && first == nil {
			first = err
		}
	}
	call.Err = first
	trace(ctx, call)
	if first != nil {
		return classify("batch write "+table, first)
	}
	return nil
}
