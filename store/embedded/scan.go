package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"
)

// Scan metrics names, as HBase reports them.
const (
	metricRowsScanned  = "ROWS_SCANNED"
	metricRowsFiltered = "ROWS_FILTERED"
)

// rowMatches applies the PrefixFilters.
func (q *query) rowMatches(row []byte) bool {
	for _, p := range q.rowPrefixes {
		if !bytes.HasPrefix(row, p) {
			return false
		}
	}
	return true
}

// pastPrefix reports whether no row after this one (in scan order) can match
// a PrefixFilter, so the scan can stop, as HBase's filterAllRemaining does.
func (q *query) pastPrefix(row []byte, reversed bool) bool {
	for _, p := range q.rowPrefixes {
		if bytes.HasPrefix(row, p) {
			continue
		}
		if c := bytes.Compare(row, p); (c > 0) != reversed {
			return true
		}
	}
	return false
}

// Scan returns a scanner over [start, stop) (reversed: from start down to
// stop, exclusive). Rows are fetched NumberOfRows at a time, each page with a
// fresh Pebble iterator, so an idle scanner pins nothing.
func (c *Client) Scan(s *hrpc.Scan) hrpc.Scanner {
	if tx := txOf(s.Context()); tx != nil {
		return &scanner{rpc: s, err: tx.refuseScan()}
	}
	sc := &scanner{c: c, rpc: s}
	sc.err = sc.init()
	return sc
}

// ScanV2 returns the same rows as Scan, a page (NumberOfRows rows) per Next.
func (c *Client) ScanV2(s *hrpc.Scan) hrpc.ScannerV2 {
	if tx := txOf(s.Context()); tx != nil {
		return &scannerV2{&scanner{rpc: s, err: tx.refuseScan()}}
	}
	sc := &scanner{c: c, rpc: s}
	sc.err = sc.init()
	return &scannerV2{sc}
}

// CacheRegions is a no-op: the engine has one region per table.
func (c *Client) CacheRegions(table []byte) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.leave()
	_, err := c.table(table)
	return err
}

type scanner struct {
	c        *Client
	rpc      *hrpc.Scan // nil for ScanPages
	ctx      context.Context
	t        *table
	q        *query
	reversed bool
	pageSize int
	// [lower, upper) is the key range not yet read.
	lower, upper []byte

	page []*pb.Result
	done bool
	// The first page of a scan the cache may keep: the scan as the cache
	// knows it and its bucket, and whether it was fetched yet.
	cacheKey           []byte
	cachePrefix        []byte
	cacheable, fetched bool
	err                error // returned once by Next, then io.EOF
	// rowsScanned and rowsFiltered are the scan metrics HBase reports
	// (GetScanMetrics), counted here without a map per scan.
	rowsScanned, rowsFiltered int64
}

func (s *scanner) init() error {
	if err := s.c.enter(); err != nil {
		return err
	}
	defer s.c.leave()
	t, err := s.c.table(s.rpc.Table())
	if err != nil {
		return err
	}
	s.t = t
	s.ctx = s.rpc.Context()
	s.rpc.SetRegion(t.region)
	req := s.rpc.ToProto().(*pb.ScanRequest)
	scan := req.GetScan()
	if scan == nil {
		return fmt.Errorf("%w: scan continuation by scanner id", ErrUnsupported)
	}
	s.q, err = newQuery(t, scan.GetColumn(), scan.GetFilter(), scan.GetTimeRange(),
		scan.GetStoreLimit(), scan.GetStoreOffset(), scan.StoreLimit != nil)
	if err != nil {
		return err
	}
	s.pageSize = int(req.GetNumberOfRows())
	if s.pageSize <= 0 {
		s.pageSize = int(hrpc.DefaultNumberOfRows)
	}
	s.reversed = scan.GetReversed()
	s.setRange(scan.GetStartRow(), scan.GetStopRow())
	return nil
}

// setRange sets the unread range to the scan's [start, stop) (reversed:
// start down to stop) and notes the scan's key in the result cache; s.t,
// s.q, s.reversed and s.pageSize are set.
func (s *scanner) setRange(start, stop []byte) {
	t := s.t
	first, last := t.rowBounds(start, stop)
	s.lower, s.upper = t.prefix, t.end
	if !s.reversed {
		if first != nil {
			s.lower = first
		}
		if last != nil {
			s.upper = last
		}
	} else {
		// HBase's reversed scan: start is the high row (inclusive), stop the
		// low row (exclusive). An escaped row ends in its terminator, never
		// 0xFF, so its prefixEnd is itself with the last byte raised.
		if first != nil {
			first[len(first)-1]++
			s.upper = first
		}
		if last != nil {
			last[len(last)-1]++
			s.lower = last
		}
	}
	if bytes.Compare(s.lower, s.upper) >= 0 {
		s.done = true
	}
	if s.c.results != nil && !s.done {
		s.cacheKey, s.cacheable = scanKey(s.q, s.lower, s.upper, s.reversed, s.pageSize)
		s.cachePrefix = scanPrefix(s.lower, s.upper)
	}
}

// Next returns the next row, io.EOF after the last one.
func (s *scanner) Next() (*hrpc.Result, error) {
	r, err := s.next()
	if err != nil {
		return nil, err
	}
	return hrpc.ToLocalResult(r), nil
}

func (s *scanner) next() (*pb.Result, error) {
	for len(s.page) == 0 {
		if err := s.fail(); err != nil {
			return nil, err
		}
		if s.done {
			return nil, io.EOF
		}
		var rows [][]*pb.Cell
		rows, s.err = s.fetch(s.pageSize)
		s.page = asResults(rows)
	}
	r := s.page[0]
	s.page = s.page[1:]
	return r, nil
}

// asResults are a page's rows as Next returns them: two allocations.
func asResults(rows [][]*pb.Cell) []*pb.Result {
	if len(rows) == 0 {
		return nil
	}
	page := make([]*pb.Result, len(rows))
	results := make([]pb.Result, len(rows))
	for i, cells := range rows {
		results[i].Cell = cells
		page[i] = &results[i]
	}
	return page
}

// fail returns a pending error once; later calls see io.EOF.
func (s *scanner) fail() error {
	if s.err == nil {
		return nil
	}
	err := s.err
	s.err, s.done, s.page = nil, true, nil
	return err
}

// Close releases the scanner; Next then returns io.EOF. Safe to call twice.
func (s *scanner) Close() error {
	s.done, s.page, s.err = true, nil, nil
	return nil
}

func (s *scanner) GetScanMetrics() map[string]int64 {
	if !s.rpc.TrackScanMetrics() {
		return nil
	}
	return map[string]int64{metricRowsScanned: s.rowsScanned, metricRowsFiltered: s.rowsFiltered}
}

// fetch reads up to n rows with cells from the unread range.
func (s *scanner) fetch(n int) ([][]*pb.Cell, error) {
	ctx := s.ctx
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.c.enter(); err != nil {
		return nil, err
	}
	defer s.c.leave()
	// The first page comes from the result cache when it holds it; else
	// what the cache needs is noted before the iterator opens.
	var (
		keep    bool
		read    pageRead
		rowsEnc []byte
		nRows   int
		nCells  int
	)
	if s.cacheable && !s.fetched {
		s.fetched = true
		cached, r := s.c.results.getPage(s.t, s.cachePrefix, s.cacheKey)
		if page, ok := s.fromCache(cached); ok {
			return page, nil
		}
		keep, read = true, r
	}
	it, err := s.c.db.NewIter(&pebble.IterOptions{LowerBound: s.lower, UpperBound: s.upper})
	if err != nil {
		return nil, fmt.Errorf("embedded: scan: %w", err)
	}
	defer it.Close()
	var page [][]*pb.Cell
	var (
		// Stack space for most rows; cutCells copies out what is kept.
		arenaBuf [1024]byte
		keptBuf  [16]keptCell
	)
	seek := true // false while the iterator already sits on the next row
	for len(page) < n {
		rowPrefix, row, ok := s.position(it, seek)
		seek = true
		if !ok {
			s.done = true
			break
		}
		if len(page)%64 == 63 {
			if err := ctx.Err(); err != nil {
				return page, err
			}
		}
		if s.reversed {
			s.upper = rowPrefix
		} else {
			s.lower = prefixEnd(rowPrefix)
		}
		if s.q.pastPrefix(row, s.reversed) {
			s.done = true
			break
		}
		s.rowsScanned++
		if !s.q.rowMatches(row) {
			s.rowsFiltered++
			continue
		}
		arena, kept, pastRow := s.q.readRow(it, rowPrefix, arenaBuf[:0], keptBuf[:0])
		seek = s.reversed || !pastRow
		if len(kept) == 0 {
			s.rowsFiltered++
			continue
		}
		page = append(page, cutCells(row, arena, kept))
		if keep {
			rowsEnc = appendBytes(rowsEnc, row)
			rowsEnc = appendCells(rowsEnc, arena, kept)
			nRows++
			nCells += len(kept)
		}
	}
	if err := it.Error(); err != nil {
		return page, fmt.Errorf("embedded: scan: %w", err)
	}
	if keep {
		s.c.results.putPage(s.t, read, s.encodePage(nRows, nCells, rowsEnc))
	}
	return page, nil
}

// encodePage is the first page as the result cache keeps it: the
// scanner's state after it (where it stands, whether it is done, the rows
// it counted), the rows' and cells' numbers, then the rows.
func (s *scanner) encodePage(nRows, nCells int, rows []byte) []byte {
	b := make([]byte, 0, len(s.lower)+len(s.upper)+len(rows)+32)
	b = appendBytes(b, s.lower)
	b = appendBytes(b, s.upper)
	done := uint64(0)
	if s.done {
		done = 1
	}
	b = binary.AppendUvarint(b, done)
	b = binary.AppendUvarint(b, uint64(s.rowsScanned))
	b = binary.AppendUvarint(b, uint64(s.rowsFiltered))
	b = binary.AppendUvarint(b, uint64(nRows))
	b = binary.AppendUvarint(b, uint64(nCells))
	return append(b, rows...)
}

// fromCache is the first page of the scan from a cached one, b (nil on a
// miss), the scanner left where the scan that filled it was.
func (s *scanner) fromCache(b []byte) ([][]*pb.Cell, bool) {
	if b == nil {
		return nil, false
	}
	lower, b, ok := readBytes(b)
	if !ok {
		return nil, false
	}
	upper, b, ok := readBytes(b)
	if !ok {
		return nil, false
	}
	var counts [5]uint64 // done, scanned, filtered, rows, cells
	for i := range counts {
		v, w := binary.Uvarint(b)
		if w <= 0 {
			return nil, false
		}
		counts[i], b = v, b[w:]
	}
	if counts[3] > uint64(len(b)) || counts[4] > uint64(len(b)) {
		return nil, false
	}
	page := make([][]*pb.Cell, counts[3])
	arena := cellArena{hint: int(counts[4])} // the page's cells in one slab
	for i := range page {
		row, rest, ok := readBytes(b)
		if !ok {
			return nil, false
		}
		var cells []*pb.Cell
		if cells, b, ok = decodeCells(s.t, row[:len(row):len(row)], rest, &arena); !ok {
			return nil, false
		}
		page[i] = cells
	}
	s.lower, s.upper, s.done = lower[:len(lower):len(lower)], upper[:len(upper):len(upper)], counts[0] == 1
	s.rowsScanned += int64(counts[1])
	s.rowsFiltered += int64(counts[2])
	return page, true
}

// position moves the iterator to the first record of the next row in scan
// order and returns that row's record prefix and decoded row key.
func (s *scanner) position(it *pebble.Iterator, seek bool) (rowPrefix, row []byte, ok bool) {
	valid := it.Valid()
	switch {
	case s.reversed:
		valid = it.SeekLT(s.upper)
	case seek:
		valid = it.SeekGE(s.lower)
	}
	if !valid {
		return nil, nil, false
	}
	k := it.Key()
	tp := len(s.t.prefix)
	n := escapedLen(k[tp:])
	if n < 0 {
		return nil, nil, false
	}
	rowPrefix = append([]byte(nil), k[:tp+n]...)
	row = unescape(nil, k[tp:tp+n])
	if s.reversed && !it.SeekGE(rowPrefix) {
		return nil, nil, false
	}
	return rowPrefix, row, true
}

// scannerV2 serves ScanV2 from the same pages, converted to the cell blocks
// a region server sends and decoded by hrpc itself.
type scannerV2 struct{ *scanner }

func (s *scannerV2) Next() (*hrpc.ScanResponseV2, error) { return s.Scan(uint32(s.pageSize)) }

func (s *scannerV2) Scan(rows uint32) (*hrpc.ScanResponseV2, error) {
	if err := s.fail(); err != nil {
		return nil, err
	}
	if s.done {
		return nil, io.EOF
	}
	if rows == 0 {
		rows = uint32(s.pageSize)
	}
	page, err := s.fetch(int(rows))
	if err != nil {
		s.done = true
		return nil, err
	}
	if len(page) == 0 && s.done {
		return nil, io.EOF
	}
	resp := &pb.ScanResponse{MoreResultsInRegion: proto.Bool(!s.done)}
	var blocks []byte
	for _, r := range page {
		resp.CellsPerResult = append(resp.CellsPerResult, uint32(len(r)))
		resp.PartialFlagPerResult = append(resp.PartialFlagPerResult, false)
		for _, cell := range r {
			blocks = appendCellBlock(blocks, cell)
		}
	}
	if _, err := s.rpc.DeserializeCellBlocks(resp, blocks); err != nil {
		return nil, fmt.Errorf("embedded: scan: %w", err)
	}
	return s.rpc.Response, nil
}

// appendCellBlock encodes a cell in HBase's KeyValue wire format.
func appendCellBlock(b []byte, c *pb.Cell) []byte {
	keyLen := 2 + len(c.Row) + 1 + len(c.Family) + len(c.Qualifier) + 8 + 1
	b = be32(b, uint32(4+4+keyLen+len(c.Value)))
	b = be32(b, uint32(keyLen))
	b = be32(b, uint32(len(c.Value)))
	b = append(b, byte(len(c.Row)>>8), byte(len(c.Row)))
	b = append(b, c.Row...)
	b = append(b, byte(len(c.Family)))
	b = append(b, c.Family...)
	b = append(b, c.Qualifier...)
	ts := c.GetTimestamp()
	for i := 7; i >= 0; i-- {
		b = append(b, byte(ts>>(8*i)))
	}
	b = append(b, byte(pb.CellType_PUT))
	return append(b, c.Value...)
}

// allGets tells whether every call of a batch is a Get.
func allGets(batch []hrpc.Call) bool {
	for _, call := range batch {
		if _, ok := call.(*hrpc.Get); !ok {
			return false
		}
	}
	return true
}

func be32(b []byte, v uint32) []byte {
	return append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// SendBatch runs each call and returns the results in request order with
// per-call errors. Like gohbase, it refuses batches that mix tables or hold
// calls that cannot be batched (scans, CheckAndMutate), running none of them.
func (c *Client) SendBatch(ctx context.Context, batch []hrpc.Call) ([]hrpc.RPCResult, bool) {
	if len(batch) == 0 {
		return nil, true
	}
	res := make([]hrpc.RPCResult, len(batch))
	allOK := true
	seen := make(map[hrpc.Call]int, len(batch))
	table := batch[0].Table()
	for i, call := range batch {
		res[i].Error = gohbase.NotExecutedError
		if j, dup := seen[call]; dup {
			res[i].Error = fmt.Errorf("%w: duplicate call in batch at index %d", ErrInvalidRequest, j)
			allOK = false
			continue
		}
		seen[call] = i
		if !bytes.Equal(call.Table(), table) {
			res[i].Error = fmt.Errorf("%w: multiple tables in batch request: %q and %q",
				ErrInvalidRequest, table, call.Table())
			allOK = false
		} else if !hrpc.CanBatch(call) {
			res[i].Error = fmt.Errorf("%w: non-batchable call passed to SendBatch", ErrInvalidRequest)
			allOK = false
		}
	}
	if !allOK {
		return res, false
	}
	if allGets(batch) && txOf(ctx) == nil {
		return res, c.getBatch(ctx, batch, res)
	}
	for i, call := range batch {
		if err := ctx.Err(); err != nil {
			res[i].Error = err
			allOK = false
			continue
		}
		res[i].Msg, res[i].Error = c.sendCall(call, true)
		if res[i].Error != nil {
			allOK = false
		}
	}
	return res, allOK
}
