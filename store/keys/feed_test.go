package keys

import (
	"bytes"
	"testing"
)

func TestFeedLayoutStrings(t *testing.T) {
	for l, want := range map[*Layout]string{
		FeedLayout:       "H(reader) 0x04 str(reader) str(type) rev(posted) str(author) desc(articleId)",
		WideAuthorLayout: "H(type) 0x05 str(type) str(author)",
	} {
		if got := l.String(); got != want || l.Table() != TableGraph {
			t.Errorf("%s: %q in %s, want %q in graph", l.Name(), got, l.Table(), want)
		}
	}
}

func TestFeedRoundTripAndOrder(t *testing.T) {
	f := Feed{Reader: "r", Type: "follows", Article: Article{Author: "a", Posted: 5, Seq: 9}}
	row, err := f.Key()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeFeed(row); err != nil || got != f {
		t.Fatalf("DecodeFeed = %+v, %v", got, err)
	}
	if !bytes.HasPrefix(row, FeedPrefix("r", "follows")) || !bytes.HasPrefix(row, FeedReaderPrefix("r")) {
		t.Fatal("prefixes")
	}
	// Newest first, then by author, then the highest seq first.
	order := []Article{{"b", 6, 1}, {"a", 5, 1}, {"b", 5, 3}, {"b", 5, 2}, {"a", 4, 8}}
	for i := 1; i < len(order); i++ {
		x, _ := Feed{"r", "t", order[i-1]}.Key()
		y, _ := Feed{"r", "t", order[i]}.Key()
		if bytes.Compare(x, y) >= 0 {
			t.Errorf("%v sorts after %v", order[i-1], order[i])
		}
	}
}

// FeedBound splits an author's timeline where a feed position falls.
func TestFeedBound(t *testing.T) {
	rows := map[Article][]byte{}
	for _, a := range []Article{{"b", 6, 1}, {"b", 5, 3}, {"b", 5, 2}, {"b", 4, 1}} {
		rows[a], _ = a.Key()
	}
	for _, tc := range []struct {
		at    Article
		after []Article // the rows at or past the bound
	}{
		{Article{"a", 5, 7}, []Article{{"b", 5, 3}, {"b", 5, 2}, {"b", 4, 1}}},
		{Article{"c", 5, 7}, []Article{{"b", 4, 1}}},
		{Article{"b", 5, 3}, []Article{{"b", 5, 3}, {"b", 5, 2}, {"b", 4, 1}}}, // inclusive: the caller skips it
		{Article{"c", 0, 0}, nil},
	} {
		bound, _, err := FeedBound("b", tc.at.Posted, tc.at.Author, tc.at.Seq)
		if err != nil {
			t.Fatal(err)
		}
		for a, row := range rows {
			want := false
			for _, w := range tc.after {
				want = want || w == a
			}
			if got := bytes.Compare(row, bound) >= 0; got != want {
				t.Errorf("at %v: row %v past the bound: %v, want %v", tc.at, a, got, want)
			}
		}
	}
}
