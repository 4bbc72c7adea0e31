package keys

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// sortedStrings are distinct strings in ascending byte order, chosen around
// the escape: 0x00, 0x01 (the terminator's second byte), 0xFF (the escape's
// second byte) and ids that are prefixes of one another.
var sortedStrings = []string{
	"",
	"\x00",
	"\x00\x00",
	"\x00\x01",
	"\x00\xff",
	"\x01",
	"a",
	"a\x00",
	"a\x00b",
	"a\x00\xff",
	"a\x01",
	"a-b",
	"ab",
	"a\xff",
	"b",
	"日本語",
	"\xff",
	"\xff\x00",
	"\xff\xff",
}

func TestStrEscape(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []byte
	}{
		{"empty", "", []byte{0x00, 0x01}},
		{"plain", "ab", []byte{'a', 'b', 0x00, 0x01}},
		{"zero", "\x00", []byte{0x00, 0xFF, 0x00, 0x01}},
		{"zero inside", "a\x00b", []byte{'a', 0x00, 0xFF, 'b', 0x00, 0x01}},
		{"two zeros", "\x00\x00", []byte{0x00, 0xFF, 0x00, 0xFF, 0x00, 0x01}},
		{"ff is literal", "\xff", []byte{0xFF, 0x00, 0x01}},
		{"zero then one", "\x00\x01", []byte{0x00, 0xFF, 0x01, 0x00, 0x01}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := appendStr(nil, tc.in)
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("appendStr(%q) = %x, want %x", tc.in, got, tc.want)
			}
			if n := strLen(tc.in); n != len(got) {
				t.Errorf("strLen(%q) = %d, want %d", tc.in, n, len(got))
			}
			s, n, err := decodeStr(append(got, 'x', 0x00)) // followed by more parts
			if err != nil || s != tc.in || n != len(got) {
				t.Errorf("decodeStr = %q, %d, %v; want %q, %d, nil", s, n, err, tc.in, len(got))
			}
		})
	}
}

func TestStrDecodeRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, errNoTerminator},
		{"no terminator", []byte("abc"), errNoTerminator},
		{"lone zero at end", []byte{'a', 0x00}, errNoTerminator},
		{"escape then end", []byte{0x00, 0xFF}, errNoTerminator},
		{"zero then two", []byte{0x00, 0x02, 0x00, 0x01}, errBadEscape},
		{"zero then zero", []byte{0x00, 0x00, 0x01}, errBadEscape},
		{"zero then a", []byte{'x', 0x00, 'a', 0x00, 0x01}, errBadEscape},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if s, n, err := decodeStr(tc.in); !errors.Is(err, tc.want) {
				t.Fatalf("decodeStr(%x) = %q, %d, %v; want %v", tc.in, s, n, err, tc.want)
			}
		})
	}
}

func TestStrOrder(t *testing.T) {
	for i, a := range sortedStrings {
		for j, b := range sortedStrings {
			ea, eb := appendStr(nil, a), appendStr(nil, b)
			if got, want := bytes.Compare(ea, eb), cmpInt(i, j); got != want {
				t.Errorf("compare(str(%q), str(%q)) = %d, want %d", a, b, got, want)
			}
			if i != j && bytes.HasPrefix(eb, ea) {
				t.Errorf("str(%q) is a prefix of str(%q)", a, b)
			}
		}
	}
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestLayoutStrings(t *testing.T) {
	// The drawings of DESIGN.md "Row layouts"; n is spelled node.
	for _, tc := range []struct {
		l          *Layout
		table, fam string
		want       string
	}{
		{NodeLayout, "graph", "g", "H(id) 0x00 str(id)"},
		{RelationshipLayout, "graph", "g", "H(start) 0x01 str(start) str(type) str(end)"},
		{AdjacencyLayout, "graph", "g", "H(node) 0x02 str(node) dir str(type) rev(created) str(other)"},
		{DegreeLayout, "graph", "g", "H(node) 0x03 str(node) dir str(type)"},
		{TimelineLayout, "articles", "a", "H(author) str(author) 0x00 rev(posted) desc(articleId)"},
		{CategoryLayout, "articles", "a", "H(author) str(author) 0x01 str(category) rev(posted) desc(articleId)"},
		{CountersLayout, "articles", "a", "H(author) str(author) 0x02"},
		{WordCountsLayout, "wordcounts", "w", "H(author) str(author)"},
		{TopWordsLayout, "wordcounts", "w", "H(author) str(author) 0x01"},
		{ArticleOpLayout, "articles", "a", "H(author) str(author) 0x03 u64(opHi) u64(opLo)"},
	} {
		t.Run(tc.l.Name(), func(t *testing.T) {
			if got := tc.l.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			if tc.l.Table() != tc.table || tc.l.Family() != tc.fam {
				t.Errorf("table, family = %s, %s; want %s, %s", tc.l.Table(), tc.l.Family(), tc.table, tc.fam)
			}
		})
	}
}

func TestNewLayoutRejects(t *testing.T) {
	for _, tc := range []struct {
		name  string
		table string
		parts []part
	}{
		{"unknown table", "nope", []part{strPart("a")}},
		{"no parts", TableGraph, nil},
		{"hash not first", TableGraph, []part{strPart("a"), hashPart(0)}},
		{"hash of itself", TableGraph, []part{hashPart(0), strPart("a")}},
		{"hash out of range", TableGraph, []part{hashPart(2), strPart("a")}},
		{"hash of a tag", TableGraph, []part{hashPart(1), tagPart(0), strPart("a")}},
		{"hash of a rev", TableGraph, []part{hashPart(1), revPart("t")}},
		{"two hashes", TableGraph, []part{hashPart(2), hashPart(2), strPart("a")}},
		{"duplicate name", TableGraph, []part{strPart("a"), strPart("a")}},
		{"empty name", TableGraph, []part{strPart("")}},
		{"unknown kind", TableGraph, []part{{kind: 99}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if l, err := newLayout("x", tc.table, tc.parts...); err == nil {
				t.Fatalf("newLayout accepted %s", l)
			}
		})
	}
}

func TestEncodeRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		l      *Layout
		values []any
		prefix bool
	}{
		{"too few", NodeLayout, nil, false},
		{"too many", NodeLayout, []any{"a", "b"}, false},
		{"int for string", NodeLayout, []any{1}, false},
		{"int for int64", AdjacencyLayout, []any{"a", Outgoing, "T", 5, "b"}, false},
		{"negative time", AdjacencyLayout, []any{"a", Outgoing, "T", int64(-1), "b"}, false},
		{"min int64 time", TimelineLayout, []any{"a", int64(math.MinInt64), uint64(1)}, false},
		{"int for uint64", TimelineLayout, []any{"a", int64(1), 1}, false},
		{"article id above MaxInt64", TimelineLayout, []any{"a", int64(1), uint64(math.MaxInt64) + 1}, false},
		{"max article id in category", CategoryLayout, []any{"a", "go", int64(1), uint64(math.MaxUint64)}, false},
		{"zero direction", DegreeLayout, []any{"a", Direction(0), "T"}, false},
		{"unknown direction", DegreeLayout, []any{"a", Direction(3), "T"}, false},
		{"byte for direction", DegreeLayout, []any{"a", byte(1), "T"}, false},
		{"prefix without hash source", AdjacencyLayout, nil, true},
		{"prefix too long", NodeLayout, []any{"a", "b"}, true},
		{"prefix bad direction", AdjacencyLayout, []any{"a", Direction(0)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b []byte
			var err error
			if tc.prefix {
				b, err = tc.l.Prefix(tc.values...)
			} else {
				b, err = tc.l.Encode(tc.values...)
			}
			if !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("got %x, %v; want ErrInvalidValue", b, err)
			}
		})
	}
}

func TestPrefixIncludesTrailingTags(t *testing.T) {
	for _, tc := range []struct {
		name   string
		l      *Layout
		values []any
		want   []byte
	}{
		{"timeline", TimelineLayout, []any{"al"}, []byte{'a', 'l', 0x00, 0x01, tagTimeline}},
		{"category", CategoryLayout, []any{"al"}, []byte{'a', 'l', 0x00, 0x01, tagCategory}},
		{"category name", CategoryLayout, []any{"al", "go"}, []byte{'a', 'l', 0x00, 0x01, tagCategory, 'g', 'o', 0x00, 0x01}},
		{"counters", CountersLayout, []any{"al"}, []byte{'a', 'l', 0x00, 0x01, tagCounters}},
		{"node", NodeLayout, []any{"n"}, []byte{tagNode, 'n', 0x00, 0x01}},
		{"adjacency node", AdjacencyLayout, []any{"n"}, []byte{tagAdjacency, 'n', 0x00, 0x01}},
		{"adjacency dir", AdjacencyLayout, []any{"n", Incoming}, []byte{tagAdjacency, 'n', 0x00, 0x01, byte(Incoming)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.l.Prefix(tc.values...)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(p[4:], tc.want) {
				t.Fatalf("Prefix(%q) = %x, want hash + %x", tc.values, p, tc.want)
			}
			src := appendStr(nil, tc.values[0].(string))
			if got := p[:4]; !bytes.Equal(got, be32(hash(src))) {
				t.Errorf("hash = %x, want %x", got, be32(hash(src)))
			}
		})
	}
}

func be32(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }

func TestPrefixEnd(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want []byte
	}{
		{"empty", nil, nil},
		{"all ff", []byte{0xFF, 0xFF}, nil},
		{"simple", []byte{0x01, 0x02}, []byte{0x01, 0x03}},
		{"trailing ff", []byte{0x01, 0xFF, 0xFF}, []byte{0x02}},
		{"zero", []byte{0x00}, []byte{0x01}},
		{"fe", []byte{0xAA, 0xFE}, []byte{0xAA, 0xFF}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := bytes.Clone(tc.in)
			got := PrefixEnd(in)
			if !bytes.Equal(got, tc.want) || (tc.want == nil) != (got == nil) {
				t.Fatalf("PrefixEnd(%x) = %x, want %x", tc.in, got, tc.want)
			}
			if !bytes.Equal(in, tc.in) {
				t.Errorf("PrefixEnd modified its argument: %x", in)
			}
			// Every extension of the prefix is below the end.
			for _, ext := range [][]byte{nil, {0x00}, {0xFF, 0xFF, 0xFF}} {
				k := append(bytes.Clone(tc.in), ext...)
				if got != nil && bytes.Compare(k, got) >= 0 {
					t.Errorf("%x >= PrefixEnd %x", k, got)
				}
			}
		})
	}
}

func TestAfterAndSuffix(t *testing.T) {
	row := []byte{1, 2, 3}
	after := After(row)
	if !bytes.Equal(after, []byte{1, 2, 3, 0}) || bytes.Compare(after, row) <= 0 {
		t.Fatalf("After(%x) = %x", row, after)
	}
	if !bytes.Equal(row, []byte{1, 2, 3}) {
		t.Fatalf("After modified its argument")
	}
	s, err := Suffix([]byte{1, 2}, row)
	if err != nil || !bytes.Equal(s, []byte{3}) {
		t.Fatalf("Suffix = %x, %v", s, err)
	}
	s[0] = 9
	if row[2] != 3 {
		t.Fatalf("Suffix aliases the row")
	}
	if _, err := Suffix([]byte{1, 3}, row); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("Suffix of a foreign row: %v, want ErrInvalidKey", err)
	}
}

func TestDirection(t *testing.T) {
	if Outgoing.Opposite() != Incoming || Incoming.Opposite() != Outgoing || Direction(0).Opposite() != 0 {
		t.Errorf("Opposite is wrong")
	}
	if Outgoing.String() != "OUTGOING" || Incoming.String() != "INCOMING" ||
		!strings.Contains(Direction(7).String(), "0x07") {
		t.Errorf("String is wrong")
	}
	// On-disk format.
	if Outgoing != 0x01 || Incoming != 0x02 {
		t.Errorf("direction bytes changed: on-disk format")
	}
}

func TestTables(t *testing.T) {
	got := Tables()
	want := map[string][]string{"graph": {"g", "x"}, "articles": {"a", "x"}, "wordcounts": {"w"}}
	if len(got) != len(want) {
		t.Fatalf("Tables() = %v, want %v", got, want)
	}
	for tbl, fams := range want {
		if !slices.Equal(got[tbl], fams) {
			t.Errorf("Tables()[%s] = %v, want %v", tbl, got[tbl], fams)
		}
	}
	got["graph"][0] = "y"
	delete(got, "articles")
	if again := Tables(); again["graph"][0] != "g" || len(again) != 3 {
		t.Errorf("Tables() returns shared state")
	}
	for _, l := range layouts {
		if fams := Tables()[l.Table()]; !slices.Contains(fams, l.Family()) {
			t.Errorf("layout %s: table %s family %s not declared", l.Name(), l.Table(), l.Family())
		}
	}
}

func TestSplitKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		want [][]byte
	}{
		{"one region", 1, [][]byte{}},
		{"two", 2, [][]byte{{0x80, 0, 0, 0}}},
		{"four", 4, [][]byte{{0x40, 0, 0, 0}, {0x80, 0, 0, 0}, {0xC0, 0, 0, 0}}},
		{"three", 3, [][]byte{{0x55, 0x55, 0x55, 0x55}, {0xAA, 0xAA, 0xAA, 0xAA}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SplitKeys(tc.n)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, tc.want, bytes.Equal) {
				t.Fatalf("SplitKeys(%d) = %x, want %x", tc.n, got, tc.want)
			}
		})
	}
	for _, n := range []int{0, -1, MaxRegions + 1} {
		if _, err := SplitKeys(n); !errors.Is(err, ErrInvalidValue) {
			t.Errorf("SplitKeys(%d): %v, want ErrInvalidValue", n, err)
		}
	}
	for _, n := range []int{7, 1000, MaxRegions} {
		got, err := SplitKeys(n)
		if err != nil || len(got) != n-1 {
			t.Fatalf("SplitKeys(%d): %d keys, %v", n, len(got), err)
		}
		for i := range got {
			if len(got[i]) != 4 || (i > 0 && bytes.Compare(got[i-1], got[i]) >= 0) {
				t.Fatalf("SplitKeys(%d): keys %d, %d out of order: %x %x", n, i-1, i, got[max(i-1, 0)], got[i])
			}
		}
	}
}

// The write bookkeeping lives in FamilyOnce, and nothing a request reads
// does (on-disk format): a read of the data family alone must still tell
// a live row, a residue, a mark and a relationship's ends.
func TestOnceColumns(t *testing.T) {
	for _, tc := range []struct {
		table string
		once  []string
		data  []string
	}{
		{TableGraph, []string{QualCreateOp, QualUpdateOps, QualDeleteOp, QualPendingCreate, QualRelIntentPrefix + "0123456789abcdef"},
			[]string{QualCreated, QualProperties, QualUpdated, QualOwner, QualDeleting, QualEnds, QualGone, QualDegree, QualRelIntentPrefix}},
		{TableArticles, []string{QualArticleCreatedBy, QualArticleOps, QualArticlePrev},
			[]string{QualTitle, QualBody, QualCategory, QualArticleU, QualArticleDeleting, QualSeq, QualArticleCount, QualLayoutVersion}},
		{TableWordCounts, nil, []string{QualTopWords, QualTopVersion}},
	} {
		if HasOnceColumns(tc.table) != (tc.once != nil) {
			t.Errorf("HasOnceColumns(%s) = %v", tc.table, HasOnceColumns(tc.table))
		}
		if tc.once != nil && !slices.Contains(Tables()[tc.table], FamilyOnce) {
			t.Errorf("table %s has once columns and no family %s", tc.table, FamilyOnce)
		}
		for _, q := range tc.once {
			if !OnceColumn(tc.table, q) {
				t.Errorf("%s:%s not in %s", tc.table, q, FamilyOnce)
			}
		}
		for _, q := range tc.data {
			if OnceColumn(tc.table, q) {
				t.Errorf("%s:%s in %s: a request's read would not see it", tc.table, q, FamilyOnce)
			}
		}
	}
	// FamilyOnce's cells must come after the data family's in a row read
	// whole (cells sort by family), for a reader taking the last one.
	for table, fams := range Tables() {
		for _, f := range fams[1:] {
			if f <= fams[0] {
				t.Errorf("table %s: family %s sorts before the data family %s", table, f, fams[0])
			}
		}
	}
}
