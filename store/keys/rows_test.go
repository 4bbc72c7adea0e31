package keys

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// edgeIDs are ids that broke or could break the seeds' '-' joins.
var edgeIDs = map[string]string{
	"empty":      "",
	"zero":       "\x00",
	"ff":         "\xff",
	"zero ff":    "\x00\xff",
	"escape-ish": "\x00\x01\x00\xff",
	"dash":       "a-b",
	"unicode":    "日本語 ☃",
	"long":       strings.Repeat("\x00x\xff", 86)[:256],
	"plain":      "alice",
}

func TestRoundTrip(t *testing.T) {
	for name, id := range edgeIDs {
		for _, tm := range []int64{0, 1, 1_700_000_000_000, math.MaxInt64} {
			for _, d := range []Direction{Outgoing, Incoming} {
				t.Run(fmt.Sprintf("%s/t=%d/%s", name, tm, d), func(t *testing.T) {
					roundTripAll(t, id, "T\x00"+id, tm, uint64(tm)^0xF0F0, d)
				})
			}
		}
	}
}

// roundTripAll encodes and decodes one row of every layout, through the typed
// API and through the generic Layout.
func roundTripAll(t *testing.T, id, other string, tm int64, n uint64, d Direction) {
	t.Helper()
	if got, err := DecodeNode(Node(id)); err != nil || got != id {
		t.Errorf("node %q: got %q, %v", id, got, err)
	}
	rel := Relationship{Start: id, Type: other, End: id + other}
	if got, err := DecodeRelationship(rel.Key()); err != nil || got != rel {
		t.Errorf("relationship %+v: got %+v, %v", rel, got, err)
	}
	adj := Adjacency{Node: id, Dir: d, Type: other, Created: tm, Other: id}
	if row, err := adj.Key(); err != nil {
		t.Errorf("adjacency %+v: %v", adj, err)
	} else if got, err := DecodeAdjacency(row); err != nil || got != adj {
		t.Errorf("adjacency %+v: got %+v, %v", adj, got, err)
	}
	deg := Degree{Node: id, Dir: d, Type: other}
	if row, err := deg.Key(); err != nil {
		t.Errorf("degree %+v: %v", deg, err)
	} else if got, err := DecodeDegree(row); err != nil || got != deg {
		t.Errorf("degree %+v: got %+v, %v", deg, got, err)
	}
	art := Article{Author: id, Posted: tm, Seq: n}
	if row, err := art.Key(); err != nil {
		t.Errorf("timeline %+v: %v", art, err)
	} else if got, err := DecodeTimeline(row); err != nil || got != art {
		t.Errorf("timeline %+v: got %+v, %v", art, got, err)
	}
	cat := Category{Name: other, Article: art}
	if row, err := cat.Key(); err != nil {
		t.Errorf("category %+v: %v", cat, err)
	} else if got, err := DecodeCategory(row); err != nil || got != cat {
		t.Errorf("category %+v: got %+v, %v", cat, got, err)
	}
	if got, err := DecodeCounters(Counters(id)); err != nil || got != id {
		t.Errorf("counters %q: got %q, %v", id, got, err)
	}
	if got, err := DecodeWordCounts(WordCounts(id)); err != nil || got != id {
		t.Errorf("wordcounts %q: got %q, %v", id, got, err)
	}
	for _, l := range layouts {
		values := sampleValues(l, id, other, tm, n, d)
		row, err := l.Encode(values...)
		if err != nil {
			t.Errorf("%s: Encode(%q): %v", l.Name(), values, err)
			continue
		}
		got, err := l.Decode(row)
		if err != nil || !slices.Equal(got, values) {
			t.Errorf("%s: Decode(Encode(%q)) = %q, %v", l.Name(), values, got, err)
		}
		if p, err := l.Prefix(values...); err != nil || !bytes.Equal(p, row) {
			t.Errorf("%s: Prefix(all values) = %x, %v; want Encode = %x", l.Name(), p, err, row)
		}
	}
}

// sampleValues returns values for every value part of l: strings alternate
// between a and b.
func sampleValues(l *Layout, a, b string, tm int64, n uint64, d Direction) []any {
	var values []any
	for _, p := range l.parts {
		switch p.kind {
		case kindStr:
			if len(values)%2 == 0 {
				values = append(values, a)
			} else {
				values = append(values, b)
			}
		case kindRev:
			values = append(values, tm)
		case kindU64, kindDesc:
			values = append(values, n)
		case kindDir:
			values = append(values, d)
		}
	}
	return values
}

// validRows returns a few valid rows of l, edge ids included.
func validRows(l *Layout) [][]byte {
	var rows [][]byte
	for _, id := range []string{"", "a", "\x00\xff", "日本"} {
		for _, tm := range []int64{0, math.MaxInt64} {
			row, err := l.Encode(sampleValues(l, id, id+"\x00", tm, 7, Incoming)...)
			if err != nil {
				panic(err)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

func TestDecodeTruncated(t *testing.T) {
	for _, l := range layouts {
		t.Run(l.Name(), func(t *testing.T) {
			for _, row := range validRows(l) {
				for i := range len(row) {
					if v, err := l.Decode(row[:i]); !errors.Is(err, ErrInvalidKey) {
						t.Fatalf("Decode(%x), a prefix of %x: %q, %v; want ErrInvalidKey", row[:i], row, v, err)
					}
				}
				if v, err := l.Decode(append(bytes.Clone(row), 0x00)); !errors.Is(err, ErrInvalidKey) {
					t.Fatalf("Decode(%x + trailing byte): %q, %v; want ErrInvalidKey", row, v, err)
				}
			}
		})
	}
}

func TestTypedDecodersTruncated(t *testing.T) {
	adj, _ := Adjacency{Node: "n\x00", Dir: Outgoing, Type: "T", Created: 5, Other: "o"}.Key()
	deg, _ := Degree{Node: "n", Dir: Incoming, Type: "T"}.Key()
	tl, _ := Article{Author: "a", Posted: 5, Seq: 1}.Key()
	cat, _ := Category{Name: "go", Article: Article{Author: "a", Posted: 5, Seq: 1}}.Key()
	for _, tc := range []struct {
		name   string
		row    []byte
		decode func([]byte) error
	}{
		{"node", Node("n\x00"), func(b []byte) error { _, err := DecodeNode(b); return err }},
		{"relationship", Relationship{"s", "T", "e"}.Key(), func(b []byte) error { _, err := DecodeRelationship(b); return err }},
		{"adjacency", adj, func(b []byte) error { _, err := DecodeAdjacency(b); return err }},
		{"degree", deg, func(b []byte) error { _, err := DecodeDegree(b); return err }},
		{"timeline", tl, func(b []byte) error { _, err := DecodeTimeline(b); return err }},
		{"category", cat, func(b []byte) error { _, err := DecodeCategory(b); return err }},
		{"counters", Counters("a"), func(b []byte) error { _, err := DecodeCounters(b); return err }},
		{"wordcounts", WordCounts("a"), func(b []byte) error { _, err := DecodeWordCounts(b); return err }},
		{"topwords", TopWords("a"), func(b []byte) error { _, err := DecodeTopWords(b); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.decode(tc.row); err != nil {
				t.Fatalf("valid row %x: %v", tc.row, err)
			}
			for i := range len(tc.row) {
				if err := tc.decode(tc.row[:i]); !errors.Is(err, ErrInvalidKey) {
					t.Fatalf("prefix %x: %v, want ErrInvalidKey", tc.row[:i], err)
				}
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	adj, _ := Adjacency{Node: "n", Dir: Outgoing, Type: "T", Created: 5, Other: "o"}.Key()
	// adj = H(4) 02 'n' 00 01 dir 'T' 00 01 rev(8) 'o' 00 01
	const dirAt, revAt = 8, 12
	corrupt := func(i int, b byte) []byte { r := bytes.Clone(adj); r[i] = b; return r }
	for _, tc := range []struct {
		name string
		l    *Layout
		row  []byte
	}{
		{"hash mismatch", AdjacencyLayout, corrupt(0, adj[0]^1)},
		{"wrong tag", AdjacencyLayout, corrupt(4, tagDegree)},
		{"zero direction", AdjacencyLayout, corrupt(dirAt, 0)},
		{"unknown direction", AdjacencyLayout, corrupt(dirAt, 3)},
		{"negative time", AdjacencyLayout, corrupt(revAt, 0x80)},
		{"bad escape", AdjacencyLayout, corrupt(7, 0x02)},
		{"node row as relationship", RelationshipLayout, Node("a")},
		{"timeline row as category", CategoryLayout, mustKey(Article{Author: "a", Posted: 1, Seq: 2}.Key())},
		{"layout 1 timeline row", TimelineLayout, mustKey(timelineLayoutV1.Encode("a", int64(1), uint64(2)))},
		{"layout 1 category row", CategoryLayout, mustKey(categoryLayoutV1.Encode("a", "go", int64(1), uint64(2)))},
		{"empty", NodeLayout, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if v, err := tc.l.Decode(tc.row); !errors.Is(err, ErrInvalidKey) {
				t.Fatalf("Decode(%x) = %q, %v; want ErrInvalidKey", tc.row, v, err)
			}
		})
	}
}

func mustKey(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestOrderWithinPrefix checks that rows sharing their hashed part sort in
// logical order: strings by bytes, times newest first, article ids (within
// a millisecond) descending.
func TestOrderWithinPrefix(t *testing.T) {
	t.Run("relationship ends", func(t *testing.T) {
		var rows [][]byte
		for _, s := range sortedStrings {
			rows = append(rows, Relationship{Start: "a", Type: "T", End: s}.Key())
		}
		checkAscending(t, rows)
	})
	t.Run("adjacency types", func(t *testing.T) {
		var rows [][]byte
		for _, s := range sortedStrings {
			rows = append(rows, mustKey(Adjacency{Node: "a", Dir: Outgoing, Type: s, Created: 9, Other: "b"}.Key()))
		}
		checkAscending(t, rows)
	})
	times := []int64{math.MaxInt64, 1_700_000_000_001, 1_700_000_000_000, 1 << 40, 256, 255, 1, 0} // newest first
	t.Run("adjacency newest first", func(t *testing.T) {
		var rows [][]byte
		for _, tm := range times {
			for _, other := range []string{"", "a", "a\x00", "b"} {
				rows = append(rows, mustKey(Adjacency{Node: "n", Dir: Incoming, Type: "T", Created: tm, Other: other}.Key()))
			}
		}
		checkAscending(t, rows)
	})
	t.Run("timeline newest first", func(t *testing.T) {
		var rows [][]byte
		for _, tm := range times {
			for _, seq := range seqsNewestFirst {
				rows = append(rows, mustKey(Article{Author: "a\x00", Posted: tm, Seq: seq}.Key()))
			}
		}
		checkAscending(t, rows)
	})
	t.Run("category newest first", func(t *testing.T) {
		var rows [][]byte
		for _, cat := range sortedStrings {
			for _, tm := range times {
				for _, seq := range seqsNewestFirst {
					rows = append(rows, mustKey(Category{Name: cat, Article: Article{Author: "a", Posted: tm, Seq: seq}}.Key()))
				}
			}
		}
		checkAscending(t, rows)
	})
}

// seqsNewestFirst are article ids in the order the timeline and the category
// index list articles posted in one millisecond: the last created first.
var seqsNewestFirst = []uint64{math.MaxInt64, 1 << 32, 256, 255, 3, 2, 1, 0}

func checkAscending(t *testing.T, rows [][]byte) {
	t.Helper()
	for i := 1; i < len(rows); i++ {
		if bytes.Compare(rows[i-1], rows[i]) >= 0 {
			t.Fatalf("row %d >= row %d:\n%x\n%x", i-1, i, rows[i-1], rows[i])
		}
	}
}

// allRows returns rows of every layout of table for id, varying the other
// parts over edge values.
func allRows(table, id string) [][]byte {
	var rows [][]byte
	for _, l := range layouts {
		if l.Table() != table {
			continue
		}
		for _, other := range []string{"", "a", "a\x00b", "ab", "\xff"} {
			for _, d := range []Direction{Outgoing, Incoming} {
				for _, tm := range []int64{0, math.MaxInt64} {
					rows = append(rows, mustKey(l.Encode(sampleValues(l, id, other, tm, 1, d)...)))
				}
			}
		}
	}
	return rows
}

func inRange(k, start, stop []byte) bool {
	return bytes.Compare(k, start) >= 0 && (stop == nil || bytes.Compare(k, stop) < 0)
}

// TestPrefixIsolation checks that a prefix scan for id "a" never returns a row
// of an id that "a" is a prefix of, or a row of another layout.
func TestPrefixIsolation(t *testing.T) {
	const id = "a"
	others := []string{"a\x00b", "ab", "a\x00", "a\xff", "", "\x00a", "b"}
	for _, l := range layouts {
		for k := 1; k <= l.nvalues; k++ {
			base := sampleValues(l, id, "T", 5, 1, Outgoing)
			prefix := mustKey(l.Prefix(base[:k]...))
			stop := PrefixEnd(prefix)
			t.Run(l.Name(), func(t *testing.T) {
				for _, other := range others {
					for _, row := range allRows(l.Table(), other) {
						if inRange(row, prefix, stop) {
							t.Errorf("prefix %x (%s, %d values) holds a row of %q: %x", prefix, l.Name(), k, other, row)
						}
					}
				}
				// Rows of id "a" of other layouts of the table stay out;
				// rows of this layout extending the prefix values stay in.
				for _, row := range allRows(l.Table(), id) {
					v, err := l.Decode(row)
					want := err == nil && slices.Equal(v[:k], base[:k])
					// The one exception: a word count row, which has no
					// tag, is the prefix of its author's top-words row
					// (both are AuthorPrefix). It is only ever read whole,
					// by a Get, never scanned as a prefix.
					if l == WordCountsLayout && bytes.Equal(row, TopWords(id)) {
						want = true
					}
					if got := inRange(row, prefix, stop); got != want {
						t.Errorf("prefix %x (%s, %d values): row %x in range = %v, want %v", prefix, l.Name(), k, row, got, want)
					}
				}
			})
		}
	}
	t.Run("adjacency type", func(t *testing.T) {
		prefix := mustKey(AdjacencyPrefix("a", Outgoing, "T"))
		stop := PrefixEnd(prefix)
		for _, typ := range []string{"T\x00", "T\x00x", "TT", "", "T\xff"} {
			row := mustKey(Adjacency{Node: "a", Dir: Outgoing, Type: typ, Created: 1, Other: "b"}.Key())
			if inRange(row, prefix, stop) {
				t.Errorf("prefix of type T holds a row of type %q", typ)
			}
		}
		row := mustKey(Adjacency{Node: "a", Dir: Incoming, Type: "T", Created: 1, Other: "b"}.Key())
		if inRange(row, prefix, stop) {
			t.Errorf("outgoing prefix holds an incoming row")
		}
	})
	t.Run("category name", func(t *testing.T) {
		prefix := CategoryPrefix("al", "go")
		stop := PrefixEnd(prefix)
		for _, cat := range []string{"go\x00", "golang", "g", ""} {
			row := mustKey(Category{Name: cat, Article: Article{Author: "al", Posted: 1, Seq: 1}}.Key())
			if inRange(row, prefix, stop) {
				t.Errorf("prefix of category go holds a row of %q", cat)
			}
		}
		tl := TimelinePrefix("al")
		row := mustKey(Article{Author: "al", Posted: 1, Seq: 1}.Key())
		if !inRange(row, tl, PrefixEnd(tl)) || inRange(row, prefix, stop) || inRange(Counters("al"), tl, PrefixEnd(tl)) {
			t.Errorf("timeline prefix and category prefix overlap")
		}
	})
}

func TestJoinCursor(t *testing.T) {
	prefix := mustKey(AdjacencyPrefix("a", Outgoing, "KNOWS"))
	row := mustKey(Adjacency{Node: "a", Dir: Outgoing, Type: "KNOWS", Created: 1_700_000_000_000, Other: "b\x00c"}.Key())
	suffix, err := Suffix(prefix, row)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := AdjacencyLayout.Join(prefix, suffix); err != nil || !bytes.Equal(got, row) {
		t.Fatalf("Join(Suffix(row)) = %x, %v; want %x", got, err, row)
	}
	otherPrefix := mustKey(AdjacencyPrefix("ab", Outgoing, "KNOWS"))
	otherRow := mustKey(Adjacency{Node: "ab", Dir: Outgoing, Type: "KNOWS", Created: 7, Other: "z"}.Key())
	otherSuffix, _ := Suffix(otherPrefix, otherRow)

	for _, tc := range []struct {
		name     string
		suffix   []byte
		mayParse bool // a valid position inside the prefix
	}{
		{"empty", nil, false},
		{"trailing byte", append(bytes.Clone(suffix), 0x00), false},
		{"whole row", row, false},
		{"another node's row", otherRow, false},
		{"another node's suffix", otherSuffix, true},
		{"misaligned slice of another row", otherRow[len(prefix):], true},
		{"negative time", append([]byte{0x80, 0, 0, 0, 0, 0, 0, 0}, suffix[8:]...), false},
		{"bad escape", append(bytes.Clone(suffix[:8]), 'x', 0x00, 0x02, 0x00, 0x01), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AdjacencyLayout.Join(prefix, tc.suffix)
			checkJoin(t, prefix, tc.suffix, got, err)
			if err == nil && !tc.mayParse {
				t.Fatalf("Join accepted %x", tc.suffix)
			}
		})
	}
	t.Run("truncated", func(t *testing.T) {
		for i := range len(suffix) {
			got, err := AdjacencyLayout.Join(prefix, suffix[:i])
			if err == nil {
				t.Fatalf("Join accepted truncated suffix %x as %x", suffix[:i], got)
			}
			checkJoin(t, prefix, suffix[:i], got, err)
		}
	})
	t.Run("random", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for range 20000 {
			s := make([]byte, r.IntN(len(suffix)+4))
			for i := range s {
				s[i] = byte(r.IntN(256))
			}
			if r.IntN(2) == 0 && len(s) > 2 { // terminate the string part sometimes
				s[len(s)-2], s[len(s)-1] = 0x00, 0x01
			}
			got, err := AdjacencyLayout.Join(prefix, s)
			checkJoin(t, prefix, s, got, err)
		}
	})
}

// checkJoin checks Join's contract: an error wraps both sentinels; a row
// decodes, starts with the prefix, and resumes the scan inside the prefix.
func checkJoin(t *testing.T, prefix, suffix, row []byte, err error) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, ErrInvalidCursor) || !errors.Is(err, ErrInvalidKey) {
			t.Fatalf("Join(%x): %v, want ErrInvalidCursor and ErrInvalidKey", suffix, err)
		}
		return
	}
	if !bytes.HasPrefix(row, prefix) {
		t.Fatalf("Join(%x) = %x: outside prefix %x", suffix, row, prefix)
	}
	if _, err := AdjacencyLayout.Decode(row); err != nil {
		t.Fatalf("Join(%x) = %x does not decode: %v", suffix, row, err)
	}
	if !inRange(After(row), prefix, PrefixEnd(prefix)) {
		t.Fatalf("After(Join(%x)) leaves the prefix", suffix)
	}
}

func TestWindow(t *testing.T) {
	times := []int64{0, 1, 99, 100, 101, 199, 200, 201, 1_700_000_000_000, math.MaxInt64 - 1, math.MaxInt64}
	prefixes := map[string][]byte{
		"timeline": TimelinePrefix("al"),
		"category": CategoryPrefix("al", "go"),
	}
	var rows [][]byte
	for _, tm := range times {
		for _, seq := range []uint64{0, math.MaxInt64} {
			a := Article{Author: "al", Posted: tm, Seq: seq}
			rows = append(rows, mustKey(a.Key()), mustKey(Category{Name: "go", Article: a}.Key()))
		}
	}
	for _, tc := range []struct {
		name          string
		after, before int64
	}{
		{"middle", 100, 200},
		{"one ms", 100, 101},
		{"from zero", 0, 101},
		{"to max", 200, math.MaxInt64},
		{"everything", 0, math.MaxInt64},
	} {
		for name, prefix := range prefixes {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				start, stop, err := Window(prefix, tc.after, tc.before)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(start, prefix) || !bytes.HasPrefix(stop, prefix) || bytes.Compare(start, stop) >= 0 {
					t.Fatalf("Window = [%x, %x) for prefix %x", start, stop, prefix)
				}
				for _, row := range rows {
					posted, ok := postedUnder(prefix, row)
					want := ok && posted >= tc.after && posted < tc.before
					if got := inRange(row, start, stop); got != want {
						t.Errorf("row posted at %d (under prefix: %v): in window = %v, want %v", posted, ok, got, want)
					}
				}
			})
		}
	}
	for _, tc := range []struct {
		name          string
		after, before int64
		want          error
	}{
		{"empty", 100, 100, ErrEmptyWindow},
		{"reversed", 200, 100, ErrEmptyWindow},
		{"negative after", -1, 100, ErrInvalidValue},
		{"negative before", 0, -5, ErrInvalidValue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := Window(TimelinePrefix("al"), tc.after, tc.before); !errors.Is(err, tc.want) {
				t.Fatalf("Window(%d, %d): %v, want %v", tc.after, tc.before, err, tc.want)
			}
		})
	}
}

// postedUnder decodes row as a timeline or category row and reports its
// posted time and whether it lies under prefix.
func postedUnder(prefix, row []byte) (int64, bool) {
	if a, err := DecodeTimeline(row); err == nil {
		return a.Posted, bytes.HasPrefix(row, prefix)
	}
	if c, err := DecodeCategory(row); err == nil {
		return c.Article.Posted, bytes.HasPrefix(row, prefix)
	}
	panic("not an article row")
}

func BenchmarkAdjacencyKey(b *testing.B) {
	a := Adjacency{Node: "user:1234567", Dir: Outgoing, Type: "FOLLOWS", Created: 1_700_000_000_000, Other: "user:7654321"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Key(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeAdjacency(b *testing.B) {
	row := mustKey(Adjacency{Node: "user:1234567", Dir: Outgoing, Type: "FOLLOWS", Created: 1_700_000_000_000, Other: "user:7654321"}.Key())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeAdjacency(row); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGolden pins the on-disk format: tag bytes, direction bytes, escape, rev,
// u64 and the hash. If this fails, existing tables no longer read back.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		row  []byte
		want string
	}{
		{"node", Node("a"), "1ef03bc9" + "00" + "610001"},
		{"relationship", Relationship{"a", "T", "b"}.Key(), "1ef03bc9" + "01" + "610001" + "540001" + "620001"},
		{"adjacency", mustKey(Adjacency{Node: "a", Dir: Outgoing, Type: "T", Created: 1, Other: "b\x00"}.Key()),
			"1ef03bc9" + "02" + "610001" + "01" + "540001" + "7ffffffffffffffe" + "6200ff0001"},
		{"degree", mustKey(Degree{Node: "a", Dir: Incoming, Type: "T"}.Key()), "1ef03bc9" + "03" + "610001" + "02" + "540001"},
		{"timeline", mustKey(Article{Author: "al", Posted: 2, Seq: 3}.Key()),
			"1f3dbb23" + "616c0001" + "00" + "7ffffffffffffffd" + "fffffffffffffffc"},
		{"category", mustKey(Category{Name: "go", Article: Article{Author: "al", Posted: 2, Seq: 3}}.Key()),
			"1f3dbb23" + "616c0001" + "01" + "676f0001" + "7ffffffffffffffd" + "fffffffffffffffc"},
		{"article layout row", ArticleLayoutRow(), "00000000" + "0002" + "61727469636c65206c61796f7574"},
		{"counters", Counters("al"), "1f3dbb23" + "616c0001" + "02"},
		{"wordcounts", WordCounts("al"), "1f3dbb23" + "616c0001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hex.EncodeToString(tc.row); got != tc.want {
				t.Fatalf("row = %s, want %s", got, tc.want)
			}
		})
	}
}

// NodeRow builds the same row as Node, in one allocation.
func TestNodeRowIsNode(t *testing.T) {
	for _, id := range []string{"n1", "", "a\x00b", "\x00", "\x00\x00\xff", "αβγ", strings.Repeat("x", 300)} {
		if got, want := NodeRow(id), string(Node(id)); got != want {
			t.Errorf("NodeRow(%q) = %x, want %x", id, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = NodeRow("n123") }); n != 1 {
		t.Errorf("NodeRow: %v allocations, want 1", n)
	}
}
