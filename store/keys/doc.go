// Package keys is the only place in hbgraph that builds or parses HBase row
// keys. Every row layout is declared once, as a sequence of typed parts (seed
// 003: a schema declared once so that reads and writes can never disagree);
// encoding, decoding, the prefix of a partial key, the stop row of a prefix
// scan and the start row that resumes a scan all derive from that one
// declaration. No other package concatenates key bytes.
//
// # Parts
//
// A layout is a sequence of these parts:
//
//	H(x)    4 bytes, big-endian: uint32(xxhash.Sum64(str(x))), the hash of the
//	        encoded string part x of the same row. Always the first part. It
//	        spreads writes over regions; tables are pre-split on it (SplitKeys).
//	0xNN    a tag byte: a constant that tells layouts of one table apart.
//	str(s)  s with every 0x00 byte written as 0x00 0xFF, then the terminator
//	        0x00 0x01.
//	rev(t)  8 bytes, big-endian: math.MaxInt64 - t, for t in Unix milliseconds,
//	        t >= 0. Larger t sorts first: newest first.
//	u64(n)  8 bytes, big-endian.
//	desc(n) 8 bytes, big-endian: math.MaxUint64 - n, for 0 <= n <=
//	        math.MaxInt64. Larger n sorts first; the first byte is always
//	        0x80 or more, which tells it from a u64 of the same n.
//	dir     1 byte: Outgoing or Incoming.
//
// # Why escape strings
//
// The seeds join parts with '-', which breaks as soon as an id contains '-':
// the key of ("a-b", "c") equals the key of ("a", "b-c"), and a prefix scan
// for node "a" returns the rows of node "a-b". The escape makes any byte
// string a valid id and gives three guarantees:
//
//   - no encoded string is a prefix of another encoded string, so parts never
//     run into each other and a prefix scan of str(a) never sees str(ab) or
//     str(a\x00b);
//   - bytes.Compare(str(a), str(b)) == strings.Compare(a, b): the terminator
//     0x00 0x01 sorts below an escaped 0x00 (0x00 0xFF) and below every other
//     byte;
//   - decoding is strict: 0x00 followed by anything but 0xFF or 0x01, or a
//     missing terminator, is an error, so every valid row has exactly one
//     decoding and encode(decode(row)) == row.
//
// # Ordering
//
// Rows of one layout that share the same hashed part sort by their parts in
// declaration order: strings by their bytes, rev parts newest first, u64
// parts ascending, desc parts descending. The timeline and the category
// index end in rev(posted) desc(articleId): newest first, and articles
// posted in the same millisecond the last created first, so that the order
// of a connection never depends on the clock's resolution. (The adjacency
// index ends in rev(created) str(other): relationships created in the same
// millisecond come by the other node's id, ascending.) Rows whose hashed parts differ are in no useful order;
// only prefixes that fix the hashed part are scanned.
//
// # On-disk format
//
// Tag bytes, the Direction bytes, the escape, the hash function and the
// article id format are on-disk (or client-visible) format: changing any of
// them orphans every row, split point and id already written. Add a new
// layout with a new tag instead, or, as the timeline and category layouts
// did once, version the table (ArticleLayoutVersion) and migrate its rows.
//
// # Ownership and concurrency
//
// Layouts are immutable after package initialisation and safe for
// concurrent use. Every function returns freshly allocated slices that the
// caller owns; no function retains or modifies the slices it is given.
package keys

import "errors"

// ErrInvalidKey is wrapped by every decoder (Layout.Decode, DecodeNode,
// DecodeAdjacency, ...) and by Suffix when a row is not a valid encoding of
// its layout: truncated, a bad escape, a wrong tag, a hash that does not match,
// trailing bytes. A row read from the store that fails this way is corrupt or a
// bug: give up, do not retry.
var ErrInvalidKey = errors.New("keys: invalid key")

// ErrInvalidValue is wrapped when a value cannot be encoded: a negative time,
// a Direction other than Outgoing or Incoming, the wrong number or type of
// values given to Layout.Encode or Layout.Prefix, or a bad argument to Window
// or SplitKeys. The caller fixes its input.
var ErrInvalidValue = errors.New("keys: invalid value")

// ErrInvalidCursor is wrapped (together with ErrInvalidKey) by Layout.Join
// when a client-supplied cursor suffix does not complete its prefix into a
// valid row. It is bad user input.
var ErrInvalidCursor = errors.New("keys: invalid cursor")

// ErrInvalidArticleID is wrapped by ParseArticleID when a public article id is
// malformed. It is bad user input.
var ErrInvalidArticleID = errors.New("keys: invalid article id")

// ErrEmptyWindow is returned by Window when after >= before, so no instant
// lies in the window. The caller answers with an empty page without scanning:
// HBase treats a scan whose start row equals its stop row as a Get of that row.
var ErrEmptyWindow = errors.New("keys: empty window")
