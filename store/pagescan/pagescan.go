// Package pagescan is the optional interface through which the store reads
// the first page of scans from an engine that can answer it directly: no
// hrpc request, no protobuf, no scanner per scan. The embedded engine
// implements it; a cluster client (gohbase) does not, and the store scans
// through hrpc there.
package pagescan

import (
	"context"

	"github.com/tsuna/gohbase/hrpc"
)

// Scan is one page: up to Limit rows of [Start, Stop) (Reversed: from
// Start, inclusive, down to Stop, exclusive), as an hrpc scan with
// hrpc.NumberOfRows(Limit) returns them in its first page; Family names the
// one family read ("": every family).
type Scan struct {
	Start, Stop []byte
	Family      string
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
