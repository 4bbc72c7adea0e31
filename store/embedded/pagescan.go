package embedded

import (
	"context"
	"unsafe"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/hbgraph/hbgraph/store/pagescan"
)

var _ pagescan.Scanner = (*Client)(nil)

// ScanPages answers each scan as Scan answers an hrpc scan of the same
// range, direction, family and NumberOfRows(Limit) in its first page, from
// the same result cache, without the request, its protobuf or a scanner
// per scan: most of a cached page's cost was there (pagescan).
func (c *Client) ScanPages(ctx context.Context, table string, scans []pagescan.Scan, pages []pagescan.Page) {
	if tx := txOf(ctx); tx != nil {
		err := tx.refuseScan()
		for i := range scans {
			pages[i] = pagescan.Page{Err: err}
		}
		return
	}
	t, err := c.scanTable(table)
	if err != nil {
		for i := range scans {
			pages[i] = pagescan.Page{Err: err}
		}
		return
	}
	for i, sc := range scans {
		q, ok := t.pageQueries[sc.Family]
		if ok && sc.Qualifiers != nil {
			q, err = t.columnQuery(sc.Family, sc.Qualifiers)
			if err != nil {
				pages[i] = pagescan.Page{Err: err}
				continue
			}
		}
		if !ok {
			_, err := t.family([]byte(sc.Family))
			pages[i] = pagescan.Page{Err: err}
			continue
		}
		limit := sc.Limit
		if limit <= 0 {
			limit = int(hrpc.DefaultNumberOfRows)
		}
		s := scanner{c: c, ctx: ctx, t: t, q: q, reversed: sc.Reversed, pageSize: limit}
		// rowBounds builds the bounds afresh: the caller's start and stop
		// are not written to.
		s.setRange(sc.Start, sc.Stop)
		if s.done {
			pages[i] = pagescan.Page{}
			continue
		}
		rows, err := s.fetch(limit)
		if err != nil {
			pages[i] = pagescan.Page{Err: err}
			continue
		}
		pages[i] = pagescan.Page{Rows: hrpcRows(rows)}
	}
}

func (c *Client) scanTable(name string) (*table, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.leave()
	if t, ok := c.tables[name]; ok { // no []byte of the name: it would escape
		return t, nil
	}
	return c.table([]byte(name))
}

// hrpcRows are rows as hrpc cells, not copied: hrpc.Cell is defined as
// pb.Cell, and hrpc.ToLocalResult converts a result's cells so.
func hrpcRows(rows [][]*pb.Cell) [][]*hrpc.Cell {
	return *(*[][]*hrpc.Cell)(unsafe.Pointer(&rows))
}

// columnQuery is the query of the columns quals (sorted) of family, made
// once per selection: a page scan's selection is one of a few.
func (t *table) columnQuery(family string, quals []string) (*query, error) {
	var buf [64]byte
	k := append(buf[:0], family...)
	for _, q := range quals {
		k = append(k, 0)
		k = append(k, q...)
	}
	t.columnQueriesMu.RLock()
	q, ok := t.columnQueries[string(k)]
	t.columnQueriesMu.RUnlock()
	if ok {
		return q, nil
	}
	col := &pb.Column{Family: []byte(family)}
	for _, q := range quals {
		col.Qualifier = append(col.Qualifier, []byte(q))
	}
	q, err := newQuery(t, []*pb.Column{col}, nil, &pb.TimeRange{}, 0, 0, false)
	if err != nil {
		return nil, err
	}
	q.selected, _ = q.selection()
	t.columnQueriesMu.Lock()
	defer t.columnQueriesMu.Unlock()
	if t.columnQueries == nil {
		t.columnQueries = map[string]*query{}
	}
	t.columnQueries[string(k)] = q
	return q, nil
}
