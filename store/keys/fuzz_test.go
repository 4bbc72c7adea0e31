package keys

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to every decoder: none may panic, and a
// row that decodes is the one canonical encoding of its values.
func FuzzDecode(f *testing.F) {
	for _, l := range layouts {
		for _, row := range validRows(l) {
			f.Add(row) // a valid row of each layout, edge ids included
		}
	}
	f.Add([]byte{})                                       // empty row
	f.Add([]byte{0, 0, 0, 0})                             // a hash and nothing else
	f.Add([]byte{0, 0, 0, 0, 0x02, 'a', 0x00})            // string cut inside its terminator
	f.Add([]byte{0, 0, 0, 0, 0x00, 'a', 0x00, 0x02})      // bad escape
	f.Add(append(Node("a"), 0xFF))                        // trailing byte
	f.Add(mustKey(Article{Author: "a", Posted: 1}.Key())) // a timeline row, for the category decoder
	f.Fuzz(func(t *testing.T, row []byte) {
		for _, l := range layouts {
			v, err := l.Decode(row)
			if err != nil {
				continue
			}
			again, err := l.Encode(v...)
			if err != nil || !bytes.Equal(again, row) {
				t.Fatalf("%s: Decode(%x) = %q, but Encode gives %x, %v", l.Name(), row, v, again, err)
			}
		}
		// The typed decoders assert types; they must not panic either.
		_, _ = DecodeNode(row)
		_, _ = DecodeRelationship(row)
		_, _ = DecodeAdjacency(row)
		_, _ = DecodeDegree(row)
		_, _ = DecodeTimeline(row)
		_, _ = DecodeCategory(row)
		_, _ = DecodeCounters(row)
		_, _ = DecodeWordCounts(row)
		if a, err := DecodeAuthor(row); err == nil && !bytes.HasPrefix(row, AuthorPrefix(a)) {
			t.Fatalf("DecodeAuthor(%x) = %q, whose rows start with %x", row, a, AuthorPrefix(a))
		}
	})
}

// FuzzRoundTrip checks decode(encode(x)) == x for every layout.
func FuzzRoundTrip(f *testing.F) {
	f.Add("alice", "KNOWS", int64(1_700_000_000_000), uint64(42), true)       // plain values
	f.Add("", "", int64(0), uint64(0), false)                                 // empty strings, time zero
	f.Add("\x00", "\xff", int64(math.MaxInt64), uint64(math.MaxUint64), true) // 0x00, 0xFF, max values
	f.Add("a\x00\x01", "\x00\xff\x00", int64(1), uint64(1), false)            // strings that look like escapes
	f.Add("日本語", "a-b", int64(-1), uint64(7), true)                           // unicode, '-', negative time rejected
	f.Fuzz(func(t *testing.T, a, b string, tm int64, n uint64, out bool) {
		d := Incoming
		if out {
			d = Outgoing
		}
		if tm < 0 {
			for _, l := range layouts {
				if _, err := l.Encode(sampleValues(l, a, b, tm, n, d)...); (err == nil) == slices.ContainsFunc(l.parts, func(p part) bool { return p.kind == kindRev }) {
					t.Fatalf("%s: Encode with time %d: %v", l.Name(), tm, err)
				}
			}
			return
		}
		roundTripAll(t, a, b, tm, n, d)
	})
}

// FuzzOrder checks that byte order equals logical order for two (string,
// int64) tuples: strings ascending by bytes, then times newest first. It
// checks the raw parts and the category and adjacency rows, whose hashed
// part is fixed.
func FuzzOrder(f *testing.F) {
	f.Add("a", int64(1), "a", int64(2))              // same string, newer first
	f.Add("a", int64(5), "a\x00", int64(5))          // one string a prefix of the other, via 0x00
	f.Add("a", int64(0), "ab", int64(math.MaxInt64)) // prefix string, extreme times
	f.Add("a\x00", int64(3), "a\x01", int64(3))      // escaped 0x00 against 0x01
	f.Add("\xff", int64(1), "\x00\xff", int64(1))    // 0xFF against an escape
	f.Add("x", int64(255), "x", int64(256))          // times across a byte boundary
	f.Fuzz(func(t *testing.T, s1 string, t1 int64, s2 string, t2 int64) {
		t1, t2 = t1&math.MaxInt64, t2&math.MaxInt64 // rev takes t >= 0
		want := cmp.Or(cmp.Compare(s1, s2), -cmp.Compare(t1, t2))

		raw := func(s string, tm int64) []byte {
			b, err := appendValue(appendStr(nil, s), revPart("t"), tm)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		if got := bytes.Compare(raw(s1, t1), raw(s2, t2)); got != want {
			t.Fatalf("str+rev: compare((%q, %d), (%q, %d)) = %d, want %d", s1, t1, s2, t2, got, want)
		}
		cat := func(s string, tm int64) []byte {
			return mustKey(Category{Name: s, Article: Article{Author: "author", Posted: tm, Seq: 1}}.Key())
		}
		if got := bytes.Compare(cat(s1, t1), cat(s2, t2)); got != want {
			t.Fatalf("category: compare((%q, %d), (%q, %d)) = %d, want %d", s1, t1, s2, t2, got, want)
		}
		adj := func(s string, tm int64) []byte {
			return mustKey(Adjacency{Node: "n", Dir: Outgoing, Type: s, Created: tm, Other: "o"}.Key())
		}
		if got := bytes.Compare(adj(s1, t1), adj(s2, t2)); got != want {
			t.Fatalf("adjacency: compare((%q, %d), (%q, %d)) = %d, want %d", s1, t1, s2, t2, got, want)
		}
	})
}

// FuzzJoin checks that no client-supplied cursor suffix moves a scan outside
// its prefix.
func FuzzJoin(f *testing.F) {
	prefix := mustKey(AdjacencyPrefix("a", Outgoing, "KNOWS"))
	row := mustKey(Adjacency{Node: "a", Dir: Outgoing, Type: "KNOWS", Created: 9, Other: "b"}.Key())
	valid, _ := Suffix(prefix, row)
	f.Add(valid)                                                                                 // a genuine cursor
	f.Add([]byte{})                                                                              // empty cursor
	f.Add(valid[:len(valid)-1])                                                                  // truncated cursor
	f.Add(append(bytes.Clone(valid), 0x00))                                                      // cursor with a trailing byte
	f.Add(mustKey(Adjacency{Node: "b", Dir: Incoming, Type: "X", Created: 1, Other: "c"}.Key())) // a whole foreign row
	f.Fuzz(func(t *testing.T, suffix []byte) {
		got, err := AdjacencyLayout.Join(prefix, suffix)
		checkJoin(t, prefix, suffix, got, err)
	})
}

// FuzzArticleID checks that ParseArticleID never panics and accepts only the
// canonical ids ID makes.
func FuzzArticleID(f *testing.F) {
	valid, _ := Article{Author: "alice", Posted: 1_700_000_000_000, Seq: 42}.ID()
	f.Add(valid)        // a genuine id
	f.Add("")           // empty
	f.Add(valid + "=")  // padding
	f.Add(valid + "\n") // line break the base64 decoder would skip
	f.Add("AYAAAAA")    // non-minimal varint
	f.Add("AQAA_____w") // posted out of range, truncated
	f.Fuzz(func(t *testing.T, id string) {
		a, err := ParseArticleID(id)
		if err != nil {
			return
		}
		if again, err := a.ID(); err != nil || again != id {
			t.Fatalf("ParseArticleID(%q) = %+v, but ID gives %q, %v", id, a, again, err)
		}
	})
}

// FuzzArticleIDRoundTrip checks ParseArticleID(ID(a)) == a.
func FuzzArticleIDRoundTrip(f *testing.F) {
	f.Add("alice", int64(1_700_000_000_000), uint64(42))            // plain
	f.Add("", int64(0), uint64(0))                                  // zero values
	f.Add("\x00\xff", int64(math.MaxInt64), uint64(math.MaxUint64)) // extreme values
	f.Add("日本語", int64(-5), uint64(1))                              // negative time is rejected
	f.Fuzz(func(t *testing.T, author string, posted int64, seq uint64) {
		a := Article{Author: author, Posted: posted, Seq: seq}
		id, err := a.ID()
		if posted < 0 {
			if err == nil {
				t.Fatalf("ID() accepted negative time: %q", id)
			}
			return
		}
		if err != nil || !urlSafe.MatchString(id) {
			t.Fatalf("ID(%+v) = %q, %v", a, id, err)
		}
		if got, err := ParseArticleID(id); err != nil || got != a {
			t.Fatalf("ParseArticleID(ID(%+v)) = %+v, %v", a, got, err)
		}
	})
}
