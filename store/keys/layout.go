package keys

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// kind is the type of one part of a layout.
type kind uint8

const (
	kindHash kind = iota + 1 // H(x): 4 bytes, hash of the encoded str part x
	kindTag                  // a constant byte
	kindStr                  // str(s): escaped, terminated string
	kindRev                  // rev(t): 8 bytes, MaxInt64 - t
	kindU64                  // u64(n): 8 bytes
	kindDir                  // dir: one Direction byte
	kindDesc                 // desc(n): 8 bytes, MaxUint64 - n, n <= MaxInt64
)

// part is one declared part of a layout. Value parts (str, rev, u64, dir)
// take a value from the caller; hash and tag parts are derived.
type part struct {
	kind kind
	name string // value parts: the attribute's name, used in errors and String
	tag  byte   // kindTag: the constant byte
	of   int    // kindHash: index in Layout.parts of the str part hashed
}

func hashPart(of int) part      { return part{kind: kindHash, of: of} }
func tagPart(b byte) part       { return part{kind: kindTag, tag: b} }
func strPart(name string) part  { return part{kind: kindStr, name: name} }
func revPart(name string) part  { return part{kind: kindRev, name: name} }
func u64Part(name string) part  { return part{kind: kindU64, name: name} }
func dirPart(name string) part  { return part{kind: kindDir, name: name} }
func descPart(name string) part { return part{kind: kindDesc, name: name} }
func (p part) isValue() bool    { return p.kind >= kindStr }
func (p part) fixedLen() (int, bool) {
	switch p.kind {
	case kindHash:
		return 4, true
	case kindTag, kindDir:
		return 1, true
	case kindRev, kindU64, kindDesc:
		return 8, true
	}
	return 0, false
}

// Layout is one row layout: a name, the table (and its single family) the
// rows live in, and the sequence of parts. The values of a layout are its
// value parts in declaration order, typed as follows:
//
//	str -> string
//	rev -> int64 (Unix milliseconds, >= 0)
//	u64 -> uint64
//	desc -> uint64 (0..math.MaxInt64)
//	dir -> Direction
//
// Hash and tag parts take no value. A Layout is immutable and safe for
// concurrent use.
type Layout struct {
	name   string
	table  string
	family string
	parts  []part
	// nvalues is the number of value parts.
	nvalues int
	// hashSrc is the index in parts of the str part hashed by the leading hash
	// part, and hashSrcValue its index among the values; both -1 if none.
	hashSrc, hashSrcValue int
}

// newLayout validates a declaration: a known table, at most one hash part,
// first, hashing a str part; unique non-empty value names.
func newLayout(name, table string, parts ...part) (*Layout, error) {
	fams, ok := tables[table]
	if !ok || len(fams) == 0 {
		return nil, fmt.Errorf("keys: layout %s: unknown table %q", name, table)
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("keys: layout %s: no parts", name)
	}
	l := &Layout{name: name, table: table, family: fams[0], parts: parts, hashSrc: -1, hashSrcValue: -1}
	names := map[string]bool{}
	for i, p := range parts {
		switch {
		case p.kind == kindHash:
			if i != 0 {
				return nil, fmt.Errorf("keys: layout %s: hash part must come first", name)
			}
			if p.of <= 0 || p.of >= len(parts) || parts[p.of].kind != kindStr {
				return nil, fmt.Errorf("keys: layout %s: hash of part %d: not a str part", name, p.of)
			}
			l.hashSrc = p.of
		case p.isValue():
			if p.name == "" || names[p.name] {
				return nil, fmt.Errorf("keys: layout %s: part %d: empty or duplicate name %q", name, i, p.name)
			}
			names[p.name] = true
			if i == l.hashSrc {
				l.hashSrcValue = l.nvalues
			}
			l.nvalues++
		case p.kind != kindTag:
			return nil, fmt.Errorf("keys: layout %s: part %d: unknown kind %d", name, i, p.kind)
		}
	}
	// fields holds each kind's values in arrays of these sizes.
	count := map[kind]int{}
	for _, p := range parts {
		k := p.kind
		if k == kindDesc {
			k = kindU64
		}
		count[k]++
	}
	if count[kindStr] > maxStrParts || count[kindRev] > maxNumParts || count[kindU64] > maxNumParts || count[kindDir] > 1 {
		return nil, fmt.Errorf("keys: layout %s: more parts of a kind than fields holds", name)
	}
	return l, nil
}

func mustLayout(name, table string, parts ...part) *Layout {
	l, err := newLayout(name, table, parts...)
	if err != nil {
		panic(err)
	}
	return l
}

// Name returns the layout's name, such as "adjacency".
func (l *Layout) Name() string { return l.name }

// Table returns the HBase table the layout's rows live in.
func (l *Layout) Table() string { return l.table }

// Family returns the data family of the layout's table (its first).
func (l *Layout) Family() string { return l.family }

// String draws the layout as in DESIGN.md, such as
// "H(id) 0x00 str(id)".
func (l *Layout) String() string {
	s := make([]string, len(l.parts))
	for i, p := range l.parts {
		s[i] = l.partString(p)
	}
	return strings.Join(s, " ")
}

func (l *Layout) partString(p part) string {
	switch p.kind {
	case kindHash:
		return "H(" + l.parts[p.of].name + ")"
	case kindTag:
		return fmt.Sprintf("0x%02x", p.tag)
	case kindStr:
		return "str(" + p.name + ")"
	case kindRev:
		return "rev(" + p.name + ")"
	case kindU64:
		return "u64(" + p.name + ")"
	case kindDesc:
		return "desc(" + p.name + ")"
	case kindDir:
		return "dir"
	}
	return "?"
}

// Encode returns the row of the given values, one per value part in
// declaration order. It fails with ErrInvalidValue if the number or types of
// the values are wrong, a time is negative or a Direction is unknown.
func (l *Layout) Encode(values ...any) ([]byte, error) {
	if len(values) != l.nvalues {
		return nil, fmt.Errorf("%w: %s row: %d values, want %d", ErrInvalidValue, l.name, len(values), l.nvalues)
	}
	return l.encode(values)
}

// Prefix returns the bytes every row with the given leading values starts
// with: the values of the first k value parts, k = len(values), plus the tag
// parts that follow them. The values must include the part the hash is
// computed from. Prefix with all values equals Encode. Errors are as for
// Encode.
func (l *Layout) Prefix(values ...any) ([]byte, error) {
	if len(values) > l.nvalues {
		return nil, fmt.Errorf("%w: %s prefix: %d values, layout has %d", ErrInvalidValue, l.name, len(values), l.nvalues)
	}
	if l.hashSrcValue >= len(values) {
		return nil, fmt.Errorf("%w: %s prefix: must include %s, which the row hash is computed from",
			ErrInvalidValue, l.name, l.partString(l.parts[l.hashSrc]))
	}
	return l.encode(values)
}

// keyOf1 is Encode(s) as a string, for a layout whose one value is a
// string, made in one allocation: Encode's boxing of s and the copy into a
// string cost two more, on the key every node read builds. It panics on a
// layout of other values (a bug in this package).
func (l *Layout) keyOf1(s string) string {
	n := strLen(s)
	for _, p := range l.parts {
		if fl, ok := p.fixedLen(); ok {
			n += fl
		}
	}
	b := make([]byte, 0, n)
	hashAt, srcStart, srcEnd := -1, 0, 0
	for i, p := range l.parts {
		switch p.kind {
		case kindHash:
			hashAt = len(b)
			b = append(b, 0, 0, 0, 0)
		case kindTag:
			b = append(b, p.tag)
		case kindStr:
			start := len(b)
			b = appendStr(b, s)
			if i == l.hashSrc {
				srcStart, srcEnd = start, len(b)
			}
		default:
			panic("keys: " + l.name + " is not a layout of one string")
		}
	}
	if hashAt >= 0 {
		binary.BigEndian.PutUint32(b[hashAt:], hash(b[srcStart:srcEnd]))
	}
	return unsafe.String(unsafe.SliceData(b), len(b)) // b is never written again
}

// encode writes the parts up to the first value part without a value.
func (l *Layout) encode(values []any) ([]byte, error) {
	b := make([]byte, 0, l.sizeHint(values))
	hashAt, srcStart, srcEnd := -1, 0, 0
	vi := 0
encode:
	for i, p := range l.parts {
		switch p.kind {
		case kindHash:
			hashAt = len(b)
			b = append(b, 0, 0, 0, 0) // filled in below, once the source is encoded
		case kindTag:
			b = append(b, p.tag)
		default:
			if vi == len(values) {
				break encode
			}
			start := len(b)
			var err error
			if b, err = appendValue(b, p, values[vi]); err != nil {
				return nil, fmt.Errorf("%w: %s row: %s: %v", ErrInvalidValue, l.name, l.partString(p), err)
			}
			if i == l.hashSrc {
				srcStart, srcEnd = start, len(b)
			}
			vi++
		}
	}
	if hashAt >= 0 {
		binary.BigEndian.PutUint32(b[hashAt:], hash(b[srcStart:srcEnd]))
	}
	return b, nil
}

func (l *Layout) sizeHint(values []any) int {
	n, vi := 0, 0
	for _, p := range l.parts {
		if fl, ok := p.fixedLen(); ok {
			n += fl
		} else if vi < len(values) {
			if s, ok := values[vi].(string); ok {
				n += strLen(s)
			}
		}
		if p.isValue() {
			vi++
		}
	}
	return n
}

func appendValue(b []byte, p part, v any) ([]byte, error) {
	switch p.kind {
	case kindStr:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("got %T, want string", v)
		}
		return appendStr(b, s), nil
	case kindRev:
		t, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("got %T, want int64", v)
		}
		if t < 0 {
			return nil, fmt.Errorf("negative time %d", t)
		}
		return binary.BigEndian.AppendUint64(b, uint64(math.MaxInt64-t)), nil
	case kindU64:
		n, ok := v.(uint64)
		if !ok {
			return nil, fmt.Errorf("got %T, want uint64", v)
		}
		return binary.BigEndian.AppendUint64(b, n), nil
	case kindDesc:
		n, ok := v.(uint64)
		if !ok {
			return nil, fmt.Errorf("got %T, want uint64", v)
		}
		if n > math.MaxInt64 {
			return nil, fmt.Errorf("%d is above %d", n, int64(math.MaxInt64))
		}
		return binary.BigEndian.AppendUint64(b, math.MaxUint64-n), nil
	case kindDir:
		d, ok := v.(Direction)
		if !ok {
			return nil, fmt.Errorf("got %T, want keys.Direction", v)
		}
		if !d.valid() {
			return nil, fmt.Errorf("unknown direction %d", byte(d))
		}
		return append(b, byte(d)), nil
	}
	return nil, fmt.Errorf("part kind %d takes no value", p.kind)
}

// Decode parses a row of the layout into its values (see Layout for their
// types). It never panics; it fails with ErrInvalidKey if row is not exactly
// one valid encoding: truncated, a bad escape or tag or direction, a time
// or desc value out of range, a hash that does not match its part, or
// trailing bytes. The values share no memory with row.
func (l *Layout) Decode(row []byte) ([]any, error) {
	var f fields
	if err := l.decode(row, &f); err != nil {
		return nil, err
	}
	values := make([]any, 0, l.nvalues)
	var ns, nt, nn, nd int
	for _, p := range l.parts {
		switch p.kind {
		case kindStr:
			values = append(values, f.strs[ns])
			ns++
		case kindRev:
			values = append(values, f.times[nt])
			nt++
		case kindU64, kindDesc:
			values = append(values, f.nums[nn])
			nn++
		case kindDir:
			values = append(values, f.dirs[nd])
			nd++
		}
	}
	return values, nil
}

// fields are the values of a decoded row by kind, each kind in the order
// of its parts: Decode's values, none of them boxed in an any (the row
// decoders of rows.go read these: a page of rows decodes without an
// allocation per value).
type fields struct {
	strs           [maxStrParts]string
	times          [maxNumParts]int64  // kindRev
	nums           [maxNumParts]uint64 // kindU64, kindDesc
	dirs           [1]Direction
	ns, nt, nn, nd int
}

// The most parts of one kind a layout has (newLayout checks).
const (
	maxStrParts = 3
	maxNumParts = 2
)

// decode is Decode into f.
func (l *Layout) decode(row []byte, f *fields) error {
	pos := 0
	var h uint32
	srcStart, srcEnd := 0, 0
	for i, p := range l.parts {
		rest := row[pos:]
		if fl, ok := p.fixedLen(); ok && len(rest) < fl {
			return l.decodeErr(p, pos, "truncated")
		}
		switch p.kind {
		case kindHash:
			h = binary.BigEndian.Uint32(rest)
			pos += 4
		case kindTag:
			if rest[0] != p.tag {
				return l.decodeErr(p, pos, fmt.Sprintf("tag 0x%02x", rest[0]))
			}
			pos++
		case kindStr:
			s, n, err := decodeStr(rest)
			if err != nil {
				return l.decodeErr(p, pos, err.Error())
			}
			if i == l.hashSrc {
				srcStart, srcEnd = pos, pos+n
			}
			f.strs[f.ns] = s
			f.ns++
			pos += n
		case kindRev:
			x := binary.BigEndian.Uint64(rest)
			if x > math.MaxInt64 {
				return l.decodeErr(p, pos, "negative time")
			}
			f.times[f.nt] = math.MaxInt64 - int64(x)
			f.nt++
			pos += 8
		case kindU64:
			f.nums[f.nn] = binary.BigEndian.Uint64(rest)
			f.nn++
			pos += 8
		case kindDesc:
			x := binary.BigEndian.Uint64(rest)
			if x <= math.MaxInt64 {
				return l.decodeErr(p, pos, "out of range (a u64 part, as layouts before desc wrote it?)")
			}
			f.nums[f.nn] = math.MaxUint64 - x
			f.nn++
			pos += 8
		case kindDir:
			d := Direction(rest[0])
			if !d.valid() {
				return l.decodeErr(p, pos, fmt.Sprintf("unknown direction 0x%02x", rest[0]))
			}
			f.dirs[f.nd] = d
			f.nd++
			pos++
		}
	}
	if pos != len(row) {
		return fmt.Errorf("%w: %s row: %d trailing bytes", ErrInvalidKey, l.name, len(row)-pos)
	}
	if l.hashSrc >= 0 && h != hash(row[srcStart:srcEnd]) {
		return fmt.Errorf("%w: %s row: hash does not match %s", ErrInvalidKey, l.name, l.partString(l.parts[l.hashSrc]))
	}
	return nil
}

func (l *Layout) decodeErr(p part, pos int, msg string) error {
	return fmt.Errorf("%w: %s row: %s at byte %d: %s", ErrInvalidKey, l.name, l.partString(p), pos, msg)
}

// Join rebuilds the row a cursor names: prefix (built by this package for a
// connection) followed by suffix (from the client, see Suffix). It fails with
// an error wrapping both ErrInvalidCursor and ErrInvalidKey unless
// prefix+suffix is a complete, valid row of the layout. Since the row starts
// with prefix and After(row) < PrefixEnd(prefix), a forged suffix can never
// move a scan outside its prefix.
func (l *Layout) Join(prefix, suffix []byte) ([]byte, error) {
	row := make([]byte, 0, len(prefix)+len(suffix))
	row = append(append(row, prefix...), suffix...)
	var f fields
	if err := l.decode(row, &f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidCursor, err)
	}
	return row, nil
}

// PrefixEnd returns the stop row of a scan over every row that starts with
// prefix: the smallest key greater than all of them, made by incrementing the
// last byte that is not 0xFF and dropping what follows. It returns nil, the end
// of the table, if prefix is empty or all 0xFF.
func PrefixEnd(prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xFF {
			end := bytes.Clone(prefix[:i+1])
			end[i]++
			return end
		}
	}
	return nil
}

// After returns row + 0x00, the smallest key strictly greater than row: the
// start row that resumes a forward scan just past the last row seen.
func After(row []byte) []byte {
	b := make([]byte, len(row)+1)
	copy(b, row)
	return b
}

// Suffix returns a copy of row without its leading prefix: the opaque part of
// a cursor (see Layout.Join). It fails with ErrInvalidKey if row does not start
// with prefix.
func Suffix(prefix, row []byte) ([]byte, error) {
	if !bytes.HasPrefix(row, prefix) {
		return nil, fmt.Errorf("%w: row does not start with the cursor's prefix", ErrInvalidKey)
	}
	return bytes.Clone(row[len(prefix):]), nil
}

// hash is H: the row hash of an encoded str part.
func hash(encoded []byte) uint32 { return uint32(xxhash.Sum64(encoded)) }

// strLen returns len(str(s)).
func strLen(s string) int { return len(s) + strings.Count(s, "\x00") + 2 }

// appendStr appends str(s): each 0x00 as 0x00 0xFF, then 0x00 0x01.
func appendStr(b []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			break
		}
		b = append(b, s[:i+1]...)
		b = append(b, 0xFF)
		s = s[i+1:]
	}
	b = append(b, s...)
	return append(b, 0x00, 0x01)
}

var (
	errNoTerminator = errors.New("missing string terminator")
	errBadEscape    = errors.New("0x00 followed by neither 0xff nor 0x01")
)

// decodeStr parses str(s) at the start of b and returns s and the number of
// bytes read.
func decodeStr(b []byte) (string, int, error) {
	var buf []byte // the unescaped bytes so far, nil while there was no escape
	start := 0     // start of the run of literal bytes not yet in buf
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], 0)
		if j < 0 || i+j+1 == len(b) {
			return "", 0, errNoTerminator
		}
		i += j
		switch b[i+1] {
		case 0x01:
			if buf == nil {
				return string(b[:i]), i + 2, nil
			}
			return string(append(buf, b[start:i]...)), i + 2, nil
		case 0xFF:
			buf = append(buf, b[start:i+1]...) // the run and one 0x00
			i += 2
			start = i
		default:
			return "", 0, errBadEscape
		}
	}
	return "", 0, errNoTerminator
}
