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
	t, err := c.scanTable(table)
	if err != nil {
		for i := range scans {
			pages[i] = pagescan.Page{Err: err}
		}
		return
	}
	for i, sc := range scans {
		q, ok := t.pageQueries[sc.Family]
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
