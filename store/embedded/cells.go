package embedded

import (
	"encoding/binary"
	"errors"
)

// On-disk layout inside Pebble. These bytes are storage format: changing any
// of them makes existing data directories unreadable.
//
//	data record:    0x01 esc(table) esc(row) esc(family) 0x00               -> family delete marker: ts(8)
//	                0x01 esc(table) esc(row) esc(family) 0x01 qualifier     -> column record (see column)
//	marker index:   0x02 ts(8) <data record key>                           -> empty
//
// esc is the order-preserving escape used by store/keys: 0x00 becomes
// 0x00 0xFF and the segment ends with 0x00 0x01. It is prefix-free, so the
// records of one row (and of one family in that row) are contiguous and rows
// sort in raw byte order, which is what HBase scans promise.
const (
	spaceData   byte = 0x01
	spaceMarker byte = 0x02

	kindFamilyMarker byte = 0x00
	kindColumn       byte = 0x01

	escByte  byte = 0x00
	escZero  byte = 0xFF
	escTerm  byte = 0x01
	tsLength      = 8
)

var errCorrupt = errors.New("embedded: corrupt record")

// appendEscaped appends esc(s) to dst.
func appendEscaped(dst, s []byte) []byte {
	for _, b := range s {
		if b == escByte {
			dst = append(dst, escByte, escZero)
			continue
		}
		dst = append(dst, b)
	}
	return append(dst, escByte, escTerm)
}

// escapedLen returns the length of the escaped segment at the start of b
// (terminator included), or -1 when b does not start with a valid segment.
func escapedLen(b []byte) int {
	for i := 0; i < len(b); i++ {
		if b[i] != escByte {
			continue
		}
		if i+1 >= len(b) {
			return -1
		}
		switch b[i+1] {
		case escTerm:
			return i + 2
		case escZero:
			i++
		default:
			return -1
		}
	}
	return -1
}

// unescape decodes an escaped segment of length n (as given by escapedLen),
// appending the raw bytes to dst.
func unescape(dst, seg []byte) []byte {
	seg = seg[:len(seg)-2]
	for i := 0; i < len(seg); i++ {
		dst = append(dst, seg[i])
		if seg[i] == escByte {
			i++ // skip escZero
		}
	}
	return dst
}

// prefixEnd returns the smallest key greater than every key starting with p,
// or nil when there is none.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// column is the one stored version of a cell plus the column delete marker
// that shadows it. HBase keeps these as separate cells; with VERSIONS => 1 a
// single record is enough: a put hidden by the marker is dropped at write time.
type column struct {
	hasPut bool
	hasDel bool
	putTs  uint64
	delTs  uint64
	value  []byte
	// changed: staged by a rowWriter, and changed by its mutation. Only
	// changed columns are written: a condition's column is read, not
	// rewritten.
	changed bool
}

const (
	flagPut byte = 1 << 0
	flagDel byte = 1 << 1

	columnHeader = 1 + 2*tsLength
)

func (c *column) encode() []byte {
	b := make([]byte, c.encodedLen())
	c.encodeTo(b)
	return b
}

// encodedLen is the length of c's record.
func (c *column) encodedLen() int { return columnHeader + len(c.value) }

// encodeTo writes c's record into b, encodedLen bytes.
func (c *column) encodeTo(b []byte) {
	b[0] = 0
	if c.hasPut {
		b[0] |= flagPut
	}
	if c.hasDel {
		b[0] |= flagDel
	}
	binary.BigEndian.PutUint64(b[1:], c.putTs)
	binary.BigEndian.PutUint64(b[1+tsLength:], c.delTs)
	copy(b[columnHeader:], c.value)
}

// decodeColumn parses a column record. The value aliases b.
func decodeColumn(b []byte) (column, error) {
	if len(b) < columnHeader {
		return column{}, errCorrupt
	}
	return column{
		hasPut: b[0]&flagPut != 0,
		hasDel: b[0]&flagDel != 0,
		putTs:  binary.BigEndian.Uint64(b[1:]),
		delTs:  binary.BigEndian.Uint64(b[1+tsLength:]),
		value:  b[columnHeader:],
	}, nil
}

func encodeTs(ts uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, tsLength), ts)
}

func decodeTs(b []byte) (uint64, error) {
	if len(b) != tsLength {
		return 0, errCorrupt
	}
	return binary.BigEndian.Uint64(b), nil
}

// markerIndexKey is the entry that lets MajorCompact find expired delete
// markers without reading every record.
func markerIndexKey(ts uint64, recordKey []byte) []byte {
	k := make([]byte, 0, 1+tsLength+len(recordKey))
	k = append(k, spaceMarker)
	k = binary.BigEndian.AppendUint64(k, ts)
	return append(k, recordKey...)
}

// dataKey is a parsed data record key. Slices alias the key.
type dataKey struct {
	tableEsc  []byte // escaped table name
	rowPrefix []byte // spaceData esc(table) esc(row)
	rowEsc    []byte
	familyEsc []byte
	kind      byte
	qualifier []byte
}

func parseDataKey(k []byte) (dataKey, bool) {
	if len(k) == 0 || k[0] != spaceData {
		return dataKey{}, false
	}
	var d dataKey
	i := 1
	n := escapedLen(k[i:])
	if n < 0 {
		return dataKey{}, false
	}
	d.tableEsc = k[i : i+n]
	i += n
	if n = escapedLen(k[i:]); n < 0 {
		return dataKey{}, false
	}
	d.rowEsc = k[i : i+n]
	i += n
	d.rowPrefix = k[:i]
	if n = escapedLen(k[i:]); n < 0 {
		return dataKey{}, false
	}
	d.familyEsc = k[i : i+n]
	i += n
	if i >= len(k) {
		return dataKey{}, false
	}
	d.kind = k[i]
	d.qualifier = k[i+1:]
	if d.kind == kindFamilyMarker && len(d.qualifier) != 0 {
		return dataKey{}, false
	}
	if d.kind != kindFamilyMarker && d.kind != kindColumn {
		return dataKey{}, false
	}
	return d, true
}
