package keys

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// TestMigrateArticleRow migrates the rows layout 1 wrote (the golden rows
// of TestGolden before layout 2) to the rows of layout 2.
func TestMigrateArticleRow(t *testing.T) {
	for _, tc := range []struct {
		name    string
		v1, now string
	}{
		{"timeline",
			"1f3dbb23" + "616c0001" + "00" + "7ffffffffffffffd" + "0000000000000003",
			"1f3dbb23" + "616c0001" + "00" + "7ffffffffffffffd" + "fffffffffffffffc"},
		{"category",
			"1f3dbb23" + "616c0001" + "01" + "676f0001" + "7ffffffffffffffd" + "0000000000000003",
			"1f3dbb23" + "616c0001" + "01" + "676f0001" + "7ffffffffffffffd" + "fffffffffffffffc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v1, _ := hex.DecodeString(tc.v1)
			got, ok := MigrateArticleRow(v1)
			if !ok || hex.EncodeToString(got) != tc.now {
				t.Fatalf("MigrateArticleRow(%s) = %x, %v; want %s", tc.v1, got, ok, tc.now)
			}
			if _, ok := MigrateArticleRow(got); ok {
				t.Fatalf("MigrateArticleRow(%x) migrates a layout 2 row", got)
			}
		})
	}
	for name, row := range map[string][]byte{
		"counters":                 Counters("al"),
		"layout row":               ArticleLayoutRow(),
		"node":                     Node("al"),
		"layout 1, id above int64": mustKey(timelineLayoutV1.Encode("al", int64(2), uint64(1)<<63)),
		"truncated":                mustKey(timelineLayoutV1.Encode("al", int64(2), uint64(3)))[:20],
	} {
		if got, ok := MigrateArticleRow(row); ok {
			t.Errorf("%s: MigrateArticleRow(%x) = %x, true", name, row, got)
		}
	}
}

// TestArticleLayoutRowIsNoAuthorsRow checks that the layout row decodes as
// no layout and lies under no author's prefix, so that whole-table scans
// and author walks pass over it.
func TestArticleLayoutRowIsNoAuthorsRow(t *testing.T) {
	row := ArticleLayoutRow()
	for _, l := range layouts {
		if v, err := l.Decode(row); err == nil {
			t.Fatalf("%s decodes the layout row as %q", l.Name(), v)
		}
	}
	if a, err := DecodeAuthor(row); err == nil {
		t.Fatalf("DecodeAuthor(layout row) = %q", a)
	}
	for _, id := range edgeIDs {
		if bytes.HasPrefix(row, AuthorPrefix(id)) {
			t.Fatalf("the layout row lies under author %q", id)
		}
	}
	row[0] = 1
	if bytes.Equal(row, ArticleLayoutRow()) {
		t.Fatal("ArticleLayoutRow returns a shared slice")
	}
}

// TestAuthorRowPrefix: every row of an author, of either layout, has the
// author's prefix; the layout row has none.
func TestAuthorRowPrefix(t *testing.T) {
	a := Article{Author: "ann\x00b", Posted: 5, Seq: 7}
	trow, _ := a.Key()
	crow, _ := Category{Name: "c", Article: a}.Key()
	v1, _ := timelineLayoutV1.Encode("ann\x00b", int64(5), uint64(7))
	want := AuthorPrefix("ann\x00b")
	for name, row := range map[string][]byte{"timeline": trow, "category": crow, "counters": Counters("ann\x00b"), "v1": v1} {
		if p, ok := AuthorRowPrefix(row); !ok || !bytes.Equal(p, want) {
			t.Errorf("%s: AuthorRowPrefix = %x, %v; want %x", name, p, ok, want)
		}
	}
	if p, ok := AuthorRowPrefix(ArticleLayoutRow()); ok {
		t.Errorf("layout row: AuthorRowPrefix = %x, true", p)
	}
}
