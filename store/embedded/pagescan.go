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
	var q *query // shared by the scans of one family: fetch only reads it
	for i, sc := range scans {
		if q == nil || familyName(q) != sc.Family {
			if q, err = familyQuery(t, sc.Family); err != nil {
				pages[i] = pagescan.Page{Err: err}
				q = nil
				continue
			}
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
	return c.table([]byte(name))
}

// familyQuery selects family name of t whole, as a scan naming the
// family alone does (newQuery), or every family for "".
func familyQuery(t *table, name string) (*query, error) {
	if name == "" {
		return &query{t: t}, nil
	}
	fam, err := t.family([]byte(name))
	if err != nil {
		return nil, err
	}
	return &query{t: t, only: fam}, nil
}

func familyName(q *query) string {
	if q.only == nil {
		return ""
	}
	return q.only.name
}

// hrpcRows are rows as hrpc cells, not copied: hrpc.Cell is defined as
// pb.Cell, and hrpc.ToLocalResult converts a result's cells so.
func hrpcRows(rows [][]*pb.Cell) [][]*hrpc.Cell {
	return *(*[][]*hrpc.Cell)(unsafe.Pointer(&rows))
}
