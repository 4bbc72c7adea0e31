package store

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"slices"

	"github.com/cespare/xxhash/v2"

	"github.com/hbgraph/hbgraph/store/keys"
)

// PageRequest selects one page of a connection. Items are newest first in
// both directions: forward pages continue after Cursor, backward pages end
// just before it.
type PageRequest struct {
	Size     int    // items wanted, 0..MaxPageSize
	Backward bool   // last/before rather than first/after
	Cursor   string // after (forward) or before (backward); "": from the newest (forward) or the oldest (backward)
	// NoLookahead says the caller will not ask whether items lie beyond
	// the page in its direction: the scan reads Size rows instead of one
	// more, and PageInfo.HasNext (forward) or HasPrevious (backward) is
	// false whatever lies there.
	NoLookahead bool
}

// maxCursorLen bounds a client-supplied cursor before it is decoded.
const maxCursorLen = 4096

func (r PageRequest) validate() error {
	if r.Size < 0 || r.Size > MaxPageSize {
		return invalid("page size %d is outside 0..%d", r.Size, MaxPageSize)
	}
	if len(r.Cursor) > maxCursorLen {
		return invalid("cursor is too long")
	}
	return nil
}

// PageInfo tells what lies beyond a page, as Relay's PageInfo does.
type PageInfo struct {
	HasNext     bool
	HasPrevious bool
}

// pageRange is a connection: the rows of one layout under prefix, optionally
// narrowed to [lo, hi) (a time window; nil: the whole prefix).
type pageRange struct {
	layout        *keys.Layout
	table, family string
	prefix        []byte
	lo, hi        []byte
	qualifiers    []string // scanRange.qualifiers
}

// A cursor is the opaque form of a row's position in its connection:
// base64url of a 6-byte check (xxhash64 over the layout name, the prefix
// and the suffix) followed by the row's key suffix after the prefix.
// Suffixes of different connections of one layout look alike, and most byte
// strings of the right length are valid suffixes, so the check is what makes
// another node's, author's or category's cursor, or an edited one, fail.
// It is not a secret: whatever a client sends, the scan stays inside the
// prefix because the row is rebuilt from it. Client-visible format.
const cursorTagLen = 6

// tag appends the tag of suffix to dst.
func (pr pageRange) tag(dst, suffix []byte) []byte {
	var h xxhash.Digest
	h.Reset()
	zero := [1]byte{}
	_, _ = h.WriteString(pr.layout.Name())
	_, _ = h.Write(zero[:])
	_, _ = h.Write(pr.prefix)
	_, _ = h.Write(zero[:])
	_, _ = h.Write(suffix)
	var sum [8]byte
	binary.BigEndian.PutUint64(sum[:], h.Sum64())
	return append(dst, sum[:cursorTagLen]...)
}

// cursor is row's cursor: one allocation, the string (a page makes one
// per row).
func (pr pageRange) cursor(row []byte) string {
	suffix := row[len(pr.prefix):]
	var raw [128]byte // most rows' tag and suffix fit: no allocation
	b := append(pr.tag(raw[:0], suffix), suffix...)
	var enc [176]byte
	return string(base64.RawURLEncoding.AppendEncode(enc[:0], b))
}

// cursorRow turns a client cursor back into a row of this connection, or
// fails with ErrInvalidInput: a forged or foreign cursor can never point
// outside the prefix.
func (pr pageRange) cursorRow(cursor string) ([]byte, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil || len(b) <= cursorTagLen {
		return nil, invalid("malformed cursor")
	}
	if !bytes.Equal(b[:cursorTagLen], pr.tag(make([]byte, 0, cursorTagLen), b[cursorTagLen:])) {
		return nil, invalid("cursor does not belong to this connection")
	}
	row, err := pr.layout.Join(pr.prefix, b[cursorTagLen:])
	if err != nil {
		return nil, invalid("malformed cursor")
	}
	return row, nil
}

// page reads one page of the connection: size+1 rows to learn whether more
// lie beyond (size rows if the request does not need to know), forward by a
// scan starting just past the cursor row, backward by a reversed scan
// starting at it (seed 001's paging rows). It returns the rows newest first
// and their cursors.
func (s *Store) page(ctx context.Context, pr pageRange, req PageRequest) ([]row, Cursors, PageInfo, error) {
	p, err := planPage(pr, req)
	if err != nil || p.none {
		return nil, Cursors{}, p.info, err
	}
	rows, err := s.scan(ctx, p.r)
	if err != nil {
		return nil, Cursors{}, p.info, err
	}
	rows, cursors, info := p.finish(rows)
	return rows, cursors, info, nil
}

// pagePlan is a page's scan (r), planned by planPage, and what makes the
// page of its rows (finish); none: there is nothing to scan, and the page
// is empty.
type pagePlan struct {
	pr        pageRange
	req       PageRequest
	r         scanRange
	lo, hi    []byte
	cursorRow []byte
	info      PageInfo
	none      bool
}

func planPage(pr pageRange, req PageRequest) (pagePlan, error) {
	p := pagePlan{pr: pr, req: req}
	if err := req.validate(); err != nil {
		return p, err
	}
	lo, hi := pr.lo, pr.hi
	if lo == nil {
		lo = pr.prefix
	}
	if hi == nil {
		hi = keys.PrefixEnd(pr.prefix)
	}
	p.lo, p.hi = lo, hi
	var cursorRow []byte
	if req.Cursor != "" {
		var err error
		if cursorRow, err = pr.cursorRow(req.Cursor); err != nil {
			return p, err
		}
	}
	p.cursorRow = cursorRow
	r := scanRange{table: pr.table, family: pr.family, limit: req.Size + 1, compact: true, dataOnly: true,
		qualifiers: pr.qualifiers}
	if req.NoLookahead {
		r.limit = req.Size
	}
	if !req.Backward {
		r.start, r.stop = lo, hi
		if cursorRow != nil && bytes.Compare(keys.After(cursorRow), lo) > 0 {
			r.start = keys.After(cursorRow)
		}
		p.info.HasPrevious = cursorRow != nil
	} else {
		// Reversed: start is the high row (inclusive), stop the low one
		// (exclusive). lo is a partial key, shorter than any row, so no row
		// equals it; rows equal to the start are filtered below.
		r.reversed, r.start, r.stop = true, hi, lo
		if cursorRow != nil && bytes.Compare(cursorRow, hi) < 0 {
			r.start = cursorRow
			r.limit++ // the cursor row itself may come back
		}
		p.info.HasNext = cursorRow != nil
	}
	p.r = r
	p.none = req.Size == 0 && req.NoLookahead ||
		bytes.Compare(r.start, r.stop) >= 0 && !r.reversed || r.reversed && bytes.Compare(r.start, r.stop) <= 0
	return p, nil
}

// finish is the page of the rows its scan read.
func (p *pagePlan) finish(rows []row) ([]row, Cursors, PageInfo) {
	pr, req, info := p.pr, p.req, p.info
	kept := rows[:0]
	for _, rw := range rows {
		if !bytes.HasPrefix(rw.key, pr.prefix) || bytes.Compare(rw.key, p.lo) < 0 ||
			bytes.Compare(rw.key, p.hi) >= 0 || (p.cursorRow != nil && bytes.Equal(rw.key, p.cursorRow)) {
			continue
		}
		kept = append(kept, rw)
	}
	if len(kept) > req.Size {
		kept = kept[:req.Size]
		if req.Backward {
			info.HasPrevious = true
		} else {
			info.HasNext = true
		}
	}
	if req.Backward {
		slices.Reverse(kept)
	}
	cursors := Cursors{pr: pr, rows: make([][]byte, len(kept))}
	for i, rw := range kept {
		cursors.rows[i] = rw.key
	}
	return kept, cursors, info
}

// Cursors are the cursors of a page's rows, in its order. Each is made
// when asked for: most queries select none.
type Cursors struct {
	pr   pageRange
	rows [][]byte
	// past, when set, is the row a page that ended short read up to,
	// beyond its last row (its first, backward): what the page's end
	// (start) cursor names, so that the next page goes on from there
	// rather than reading what this one skipped again (Feed).
	past         []byte
	pastBackward bool
}

// Start is the cursor of the page's start: its first row's, or where a
// backward page that ended short stopped reading; false for an empty
// page that read nothing.
func (c Cursors) Start() (string, bool) {
	if c.past != nil && c.pastBackward {
		return c.pr.cursor(c.past), true
	}
	if len(c.rows) == 0 {
		return "", false
	}
	return c.At(0), true
}

// End is the cursor of the page's end: its last row's, or where a
// forward page that ended short stopped reading.
func (c Cursors) End() (string, bool) {
	if c.past != nil && !c.pastBackward {
		return c.pr.cursor(c.past), true
	}
	if len(c.rows) == 0 {
		return "", false
	}
	return c.At(len(c.rows) - 1), true
}

// Len is the number of rows.
func (c Cursors) Len() int { return len(c.rows) }

// At is row i's cursor.
func (c Cursors) At(i int) string { return c.pr.cursor(c.rows[i]) }

// All are every row's cursor.
func (c Cursors) All() []string {
	out := make([]string, len(c.rows))
	for i := range c.rows {
		out[i] = c.At(i)
	}
	return out
}
