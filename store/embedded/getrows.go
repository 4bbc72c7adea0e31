package embedded

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/hbgraph/hbgraph/store/pagescan"
)

var _ pagescan.RowReader = (*Client)(nil)

// GetRows answers each row as a Get of it (of family, or of the whole row)
// answers, from the same result cache, without the request, its protobuf
// or the response around it: most of a cached Get's cost was there
// (pagescan). The rows the cache does not hold are read in key order with
// one iterator, as getBatch reads them.
func (c *Client) GetRows(ctx context.Context, table string, rows [][]byte, family string, out []pagescan.Row) {
	failAll := func(err error) {
		for i := range out {
			out[i] = pagescan.Row{Err: err}
		}
	}
	tx := txOf(ctx)
	if tx == nil { // (a transaction holds its call slot from begin to end)
		if err := c.enter(); err != nil {
			failAll(err)
			return
		}
		defer c.leave()
	}
	t, ok := c.tables[table] // no []byte of the name: it would escape
	if !ok {
		_, err := c.table([]byte(table))
		failAll(err)
		return
	}
	q, ok := t.pageQueries[family]
	if !ok {
		_, err := t.family([]byte(family))
		failAll(err)
		return
	}
	if tx != nil {
		tx.getRows(ctx, t, q, rows, family, out)
		return
	}
	c.getRows(ctx, t, q, rows, family, out)
}

// getRows is GetRows once its table and query are found.
func (c *Client) getRows(ctx context.Context, t *table, q *query, rows [][]byte, family string, out []pagescan.Row) {
	var (
		missBuf [16]rowMiss
		misses  = missBuf[:0]
	)
	// Every row's record prefix in one buffer (rowPrefix makes one each).
	n := 0
	for _, row := range rows {
		n += len(t.prefix) + len(row) + 4
	}
	prefixes := make([]byte, 0, n)
	hits := sharedHits{rows: len(rows), arena: cellArena{hint: 4 * len(rows)}}
	for i, row := range rows {
		if err := ctx.Err(); err != nil {
			out[i] = pagescan.Row{Err: err}
			continue
		}
		start := len(prefixes)
		prefixes = appendEscaped(append(prefixes, t.prefix...), row)
		m := rowMiss{i: i, prefix: prefixes[start:len(prefixes):len(prefixes)]}
		if !c.mayHaveRow(m.prefix) {
			out[i] = pagescan.Row{} // no record of the row (see keyFilter)
			continue
		}
		if c.results != nil {
			m.stripe = rowStripe(t, row)
			cells, hit, gen := c.results.getRowShared(t, m.stripe, m.prefix, row, family, &hits)
			if hit {
				out[i] = pagescan.Row{Cells: hrpcCells(cells)}
				continue
			}
			m.gen = gen
		}
		misses = append(misses, m)
	}
	if len(misses) == 0 {
		return
	}
	slices.SortFunc(misses, func(a, b rowMiss) int { return bytes.Compare(a.prefix, b.prefix) })
	it, err := c.db.NewIter(&pebble.IterOptions{LowerBound: t.prefix, UpperBound: t.end})
	if err != nil {
		err = fmt.Errorf("embedded: read: %w", err)
		for _, m := range misses {
			out[m.i] = pagescan.Row{Err: err}
		}
		return
	}
	defer it.Close()
	var (
		arenaBuf [1024]byte
		keptBuf  [16]keptCell
	)
	for _, m := range misses {
		if err := ctx.Err(); err != nil {
			out[m.i] = pagescan.Row{Err: err}
			continue
		}
		arena, kept := arenaBuf[:0], keptBuf[:0]
		if it.SeekGE(m.prefix) {
			arena, kept, _ = q.readRow(it, m.prefix, arena, kept)
		}
		if err := it.Error(); err != nil {
			out[m.i] = pagescan.Row{Err: fmt.Errorf("embedded: read: %w", err)}
			continue
		}
		if c.results != nil {
			c.results.putRow(m.stripe, m.prefix, m.gen, family, arena, kept)
		}
		out[m.i] = pagescan.Row{Cells: hrpcCells(cutCells(rows[m.i], arena, kept))}
	}
}

// rowMiss is a row of GetRows the result cache did not answer: its index,
// record prefix, and what the cache needs to keep what the read finds.
type rowMiss struct {
	i      int
	prefix []byte
	stripe int
	gen    uint64
}

// hrpcCells is hrpcRows for one row.
func hrpcCells(cells []*pb.Cell) []*hrpc.Cell {
	return *(*[]*hrpc.Cell)(unsafe.Pointer(&cells))
}

// sharedHits is where the rows of one GetRows call that the result cache
// answers are copied and decoded: one buffer and one slab of cells for
// them all, where getRow makes both for each row (three allocations a
// row, most of a cached row's cost).
type sharedHits struct {
	buf   []byte
	rows  int // the call's rows not looked up yet, to size the buffer
	arena cellArena
}

// sharedRowRoom is the room sharedHits makes for a row's cells: most node
// rows' fit (getRow's cachedRowRoom is for a row alone).
const sharedRowRoom = 256

// getRowShared is getRow (the same generation, key and selection checks),
// copying the row into h's buffer and decoding its cells from h's arena.
func (c *resultCache) getRowShared(t *table, stripe int, rowPrefix, row []byte, families string, h *sharedHits) ([]*pb.Cell, bool, uint64) {
	gen, writing := c.rowGeneration(stripe)
	if writing {
		return nil, false, gen
	}
	var kb rowKeyBuf
	key := rowCacheKey(kb[:0], rowPrefix)
	if cap(h.buf)-len(h.buf) < len(row)+sharedRowRoom/2 {
		// A fresh buffer for the rest: the rows decoded so far keep
		// pointing into the last one.
		h.buf = make([]byte, 0, max(min(h.rows, 16), 1)*(len(row)+sharedRowRoom))
	}
	h.rows--
	// fastcache appends the cells after the row, in place while they fit
	// (else in an array of their own, copying this row alone).
	start := len(h.buf)
	dst := append(h.buf[start:start], row...)
	v, ok := c.store.HasGet(dst, key)
	if !ok {
		return nil, false, gen
	}
	if cap(v) == cap(dst) {
		h.buf = h.buf[:start+len(v)]
	}
	sig, rest, ok := readBytes(v[len(row):])
	if !ok {
		return nil, false, gen
	}
	only, serves := servesSelection(t, sig, families)
	if !serves {
		return nil, false, gen
	}
	cells, _, ok := decodeCells(t, v[:len(row):len(row)], rest, &h.arena)
	if !ok {
		return nil, false, gen
	}
	return onlyFamily(cells, only), true, 0
}
