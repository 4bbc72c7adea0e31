package keys

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"
)

// authorRows returns a timeline, a category and a counters row of author.
func authorRows(t *testing.T, author string) map[string][]byte {
	t.Helper()
	art := Article{Author: author, Posted: 5, Seq: 1}
	tl, err := art.Key()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := Category{Name: "go\x00", Article: Article{Author: author, Posted: math.MaxInt64, Seq: math.MaxInt64}}.Key()
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"timeline": tl, "category": cat, "counters": Counters(author)}
}

func TestAuthorPrefix(t *testing.T) {
	for name, id := range edgeIDs {
		t.Run(name, func(t *testing.T) {
			p := AuthorPrefix(id)
			if !bytes.Equal(p, WordCounts(id)) {
				t.Fatalf("AuthorPrefix(%q) = %x, its word count row %x", id, p, WordCounts(id))
			}
			for kind, row := range authorRows(t, id) {
				if !bytes.HasPrefix(row, p) {
					t.Errorf("%s row %x does not start with %x", kind, row, p)
				}
				if got, err := DecodeAuthor(row); err != nil || got != id {
					t.Errorf("DecodeAuthor(%s row %x) = %q, %v", kind, row, got, err)
				}
				// str(author) is self-delimiting: no other author's rows
				// start with the prefix.
				for _, other := range []string{id + "x", id + "\x00", "x" + id} {
					for _, orow := range authorRows(t, other) {
						if bytes.HasPrefix(orow, p) {
							t.Errorf("row %x of %q starts with the prefix of %q", orow, other, id)
						}
					}
				}
			}
		})
	}
}

// Repair walks the authors of table articles and of table wordcounts side
// by side: their rows must come in the same author order.
func TestAuthorsSortAlikeInBothTables(t *testing.T) {
	var authors []string
	for _, id := range edgeIDs {
		authors = append(authors, id)
	}
	for i := range 200 {
		authors = append(authors, string(rune('a'+i%26))+string(rune('0'+i/26)))
	}
	var articleRows [][]byte
	for _, a := range authors {
		for _, row := range authorRows(t, a) {
			articleRows = append(articleRows, row)
		}
	}
	slices.SortFunc(articleRows, bytes.Compare)
	var fromArticles []string
	for _, row := range articleRows {
		a, err := DecodeAuthor(row)
		if err != nil {
			t.Fatal(err)
		}
		if len(fromArticles) == 0 || fromArticles[len(fromArticles)-1] != a {
			fromArticles = append(fromArticles, a)
		}
	}
	wordRows := make([][]byte, len(authors))
	for i, a := range authors {
		wordRows[i] = WordCounts(a)
	}
	slices.SortFunc(wordRows, bytes.Compare)
	var fromWords []string
	for _, row := range wordRows {
		a, err := DecodeWordCounts(row)
		if err != nil {
			t.Fatal(err)
		}
		fromWords = append(fromWords, a)
	}
	if !slices.Equal(fromArticles, fromWords) {
		t.Fatalf("authors in articles order:\n%q\nin wordcounts order:\n%q", fromArticles, fromWords)
	}
}

func TestDecodeAuthorRejects(t *testing.T) {
	for kind, row := range authorRows(t, "a\x00b") {
		t.Run(kind+" truncated", func(t *testing.T) {
			for i := range len(row) {
				if got, err := DecodeAuthor(row[:i]); !errors.Is(err, ErrInvalidKey) {
					t.Fatalf("prefix %x: %q, %v; want ErrInvalidKey", row[:i], got, err)
				}
			}
		})
	}
	adj, _ := Adjacency{Node: "n", Dir: Outgoing, Type: "T", Created: 5, Other: "o"}.Key()
	for name, row := range map[string][]byte{
		"word count row": WordCounts("a"),
		"node row":       Node("a"),
		"adjacency row":  adj,
		"trailing byte":  append(Counters("a"), 0x00),
		"unknown tag":    append(AuthorPrefix("a"), 0x03),
		"empty":          nil,
	} {
		t.Run(name, func(t *testing.T) {
			if got, err := DecodeAuthor(row); !errors.Is(err, ErrInvalidKey) {
				t.Fatalf("DecodeAuthor(%x) = %q, %v; want ErrInvalidKey", row, got, err)
			}
		})
	}
}
