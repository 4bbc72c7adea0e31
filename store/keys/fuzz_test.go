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
	f.Add([]byte{})                                                   // empty row
	f.Add([]byte{0, 0, 0, 0})                                         // a hash and nothing else
	f.Add([]byte{0, 0, 0, 0, 0x02, 'a', 0x00})                        // string cut inside its terminator
	f.Add([]byte{0, 0, 0, 0, 0x00, 'a', 0x00, 0x02})                  // bad escape
	f.Add(append(Node("a"), 0xFF))                                    // trailing byte
	f.Add(mustKey(Article{Author: "a", Posted: 1}.Key()))             // a timeline row, for the category decoder
	f.Add(mustKey(timelineLayoutV1.Encode("a", int64(1), uint64(2)))) // a layout 1 timeline row
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
		_, _ = MigrateArticleRow(row)
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
		if n > math.MaxInt64 {
			for _, l := range layouts {
				if _, err := l.Encode(sampleValues(l, a, b, tm, n, d)...); (err == nil) == slices.ContainsFunc(l.parts, func(p part) bool { return p.kind == kindDesc }) {
					t.Fatalf("%s: Encode with article id %d: %v", l.Name(), n, err)
				}
			}
			n &= math.MaxInt64 // and round trip the rest
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

// FuzzArticleOrder checks that timeline and category rows of one author
// sort newest first: by posted time, and within a millisecond by article
// id, the highest (the last created) first.
func FuzzArticleOrder(f *testing.F) {
	f.Add(int64(5), uint64(1), int64(5), uint64(2))                         // same millisecond: id 2 first
	f.Add(int64(5), uint64(9), int64(6), uint64(1))                         // newer time wins over a higher id
	f.Add(int64(0), uint64(0), int64(0), uint64(math.MaxInt64))             // extreme ids
	f.Add(int64(7), uint64(255), int64(7), uint64(256))                     // ids across a byte boundary
	f.Add(int64(math.MaxInt64), uint64(3), int64(math.MaxInt64), uint64(3)) // equal
	f.Fuzz(func(t *testing.T, t1 int64, n1 uint64, t2 int64, n2 uint64) {
		t1, t2 = t1&math.MaxInt64, t2&math.MaxInt64 // rev takes t >= 0
		n1, n2 = n1&math.MaxInt64, n2&math.MaxInt64 // desc takes n <= MaxInt64
		want := cmp.Or(-cmp.Compare(t1, t2), -cmp.Compare(n1, n2))
		a1, a2 := Article{Author: "au", Posted: t1, Seq: n1}, Article{Author: "au", Posted: t2, Seq: n2}
		if got := bytes.Compare(mustKey(a1.Key()), mustKey(a2.Key())); got != want {
			t.Fatalf("timeline: compare(%+v, %+v) = %d, want %d", a1, a2, got, want)
		}
		c1, c2 := Category{Name: "go", Article: a1}, Category{Name: "go", Article: a2}
		if got := bytes.Compare(mustKey(c1.Key()), mustKey(c2.Key())); got != want {
			t.Fatalf("category: compare(%+v, %+v) = %d, want %d", c1, c2, got, want)
		}
	})
}

// FuzzMigrateArticleRow checks that MigrateArticleRow never panics, turns a
// layout 1 row into the current row of the same article, and leaves alone
// every row that is not of layout 1, current rows included.
func FuzzMigrateArticleRow(f *testing.F) {
	f.Add(mustKey(timelineLayoutV1.Encode("al", int64(2), uint64(3))))                 // layout 1 timeline row
	f.Add(mustKey(categoryLayoutV1.Encode("al", "go", int64(2), uint64(3))))           // layout 1 category row
	f.Add(mustKey(timelineLayoutV1.Encode("al", int64(2), uint64(math.MaxInt64)+1)))   // layout 1, id without a current form
	f.Add(mustKey(Article{Author: "al", Posted: 2, Seq: 3}.Key()))                     // current timeline row
	f.Add(mustKey(Category{Name: "go", Article: Article{Author: "al", Seq: 3}}.Key())) // current category row
	f.Add(Counters("al"))                                                              // counters row
	f.Add(ArticleLayoutRow())                                                          // the layout row
	f.Fuzz(func(t *testing.T, row []byte) {
		got, ok := MigrateArticleRow(row)
		if _, err := TimelineLayout.Decode(row); err == nil && ok {
			t.Fatalf("MigrateArticleRow(%x) migrated a current timeline row", row)
		}
		if _, err := CategoryLayout.Decode(row); err == nil && ok {
			t.Fatalf("MigrateArticleRow(%x) migrated a current category row", row)
		}
		if !ok {
			return
		}
		if _, again := MigrateArticleRow(got); again {
			t.Fatalf("MigrateArticleRow(%x) = %x, which migrates again", row, got)
		}
		if v1, err := timelineLayoutV1.Decode(row); err == nil {
			a, err := DecodeTimeline(got)
			if err != nil || a != (Article{Author: v1[0].(string), Posted: v1[1].(int64), Seq: v1[2].(uint64)}) {
				t.Fatalf("timeline %x (%q) migrated to %x (%+v, %v)", row, v1, got, a, err)
			}
			return
		}
		v1, err := categoryLayoutV1.Decode(row)
		if err != nil {
			t.Fatalf("MigrateArticleRow(%x) = %x, but the row is of no layout 1", row, got)
		}
		c, err := DecodeCategory(got)
		want := Category{Name: v1[1].(string), Article: Article{Author: v1[0].(string), Posted: v1[2].(int64), Seq: v1[3].(uint64)}}
		if err != nil || c != want {
			t.Fatalf("category %x (%q) migrated to %x (%+v, %v)", row, v1, got, c, err)
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
