package tests

// Word counts by brute force (issue 22, item 3): an author's vocabulary
// grows with every article, so what a read of wordCounts costs must not. An
// article may add at most 10,000 distinct words, and wordCounts reads the
// author's top-words list, whose size is bounded, never the whole
// vocabulary. The explain extension's cellsRead and bytesRead show what a
// read cost.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// maxArticleWords is store.MaxArticleWords, the README's bound.
const maxArticleWords = 10000

// wordCountsRead is the cost explain reports for the reads of table
// wordcounts.
type wordCountsRead struct{ calls, rows, cells, bytes int }

// explainedWordCounts reads the author's wordCounts(first: n) with explain
// and returns the words and what the reads of table wordcounts cost.
func (s *server) explainedWordCounts(t *testing.T, author string, n int) ([]wordCount, wordCountsRead) {
	t.Helper()
	r := s.post(t, gqlRequest{Query: `query($id: ID!, $n: Int) { node(id: $id) { wordCounts(first: $n) { word count } } }`,
		Variables: map[string]any{"id": author, "n": n}, Extensions: map[string]any{"explain": true}})
	var data struct {
		Node struct{ WordCounts []wordCount }
	}
	r.ok(t, &data)
	var ext struct {
		Explain struct {
			Waves []struct {
				Calls []struct {
					Table     string   `json:"table"`
					Rows      []string `json:"rows"`
					RowsRead  int      `json:"rowsRead"`
					CellsRead int      `json:"cellsRead"`
					BytesRead int      `json:"bytesRead"`
				} `json:"calls"`
			} `json:"waves"`
		} `json:"explain"`
	}
	if err := json.Unmarshal(r.Extensions, &ext); err != nil {
		t.Fatalf("explain: %v in %.300s", err, r.Extensions)
	}
	var cost wordCountsRead
	for _, w := range ext.Explain.Waves {
		for _, c := range w.Calls {
			if c.Table == "wordcounts" {
				cost.calls++
				cost.rows += c.RowsRead
				cost.cells += c.CellsRead
				cost.bytes += c.BytesRead
			}
		}
	}
	return data.Node.WordCounts, cost
}

// wordsText returns n distinct words made from prefix, one space after each.
func wordsText(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s%d ", prefix, i)
	}
	return b.String()
}

func TestHostileWordCounts(t *testing.T) {
	s := startServer(t)
	s.createNode(t, "voc", nil)
	// An author with no words has no list: the read finds that out.
	if got, _ := s.explainedWordCounts(t, "voc", 10); len(got) != 0 {
		t.Fatalf("no articles, words %v", got)
	}

	// A vocabulary of 54,000 words, each article within the bound.
	counts := map[string]int{}
	var first articleOut
	for i := range 6 {
		body := wordsText(fmt.Sprintf("a%dw", i), 9000) + strings.Repeat("common ", 20+i)
		a := s.postArticle(t, "voc", "title", body, "c")
		if i == 0 {
			first = a
		}
		for _, w := range strings.Fields(body + " title") {
			counts[w]++
		}
	}
	ranked := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), strings.Compare(a, b))
	})
	want := func(n int) []wordCount {
		out := make([]wordCount, 0, n)
		for _, w := range ranked[:n] {
			out = append(out, wordCount{w, counts[w]})
		}
		return out
	}

	// A page costs its page: one row of bounded size (the top-words list,
	// at most 1,125 words of a few bytes here), not the 54,000 cells of the
	// author's word count row.
	for _, n := range []int{10, 1000} {
		got, cost := s.explainedWordCounts(t, "voc", n)
		if !slices.Equal(got, want(n)) {
			t.Fatalf("wordCounts(first: %d): %.200v..., want %.200v...", n, got, want(n))
		}
		if cost.calls != 1 || cost.rows != 1 || cost.cells < 1 || cost.cells > 8 || cost.bytes < 1 || cost.bytes > 32<<10 {
			t.Errorf("wordCounts(first: %d) read %+v from table wordcounts; want one row of at most 8 cells and 32 KiB", n, cost)
		}
		t.Logf("wordCounts(first: %d): %+v", n, cost)
	}

	// Over the bound: refused, and nothing changes.
	before, _ := s.explainedWordCounts(t, "voc", 1000)
	over := wordsText("z", maxArticleWords+1)
	r := s.post(t, gqlRequest{Query: `mutation($b: String!) { postArticle(authorId: "voc", title: "t", body: $b, category: "c") { id } }`,
		Variables: map[string]any{"b": over}})
	if r.wantError(t, "BAD_USER_INPUT", "postArticle") && !strings.Contains(r.Errors[0].Message, "distinct words") {
		t.Errorf("post over the bound: %q; want the bound named", r.Errors[0].Message)
	}
	r = s.post(t, gqlRequest{Query: `mutation($id: ID!, $b: String!) { updateArticle(id: $id, body: $b) { id } }`,
		Variables: map[string]any{"id": first.ID, "b": over}})
	if r.wantError(t, "BAD_USER_INPUT", "updateArticle") && !strings.Contains(r.Errors[0].Message, "distinct words") {
		t.Errorf("update over the bound: %q; want the bound named", r.Errors[0].Message)
	}
	var data struct {
		Node struct {
			Articles struct{ TotalCount int }
		}
		Article struct{ Body string }
	}
	s.mustDo(t, `query($id: ID!) { node(id: "voc") { articles { totalCount } } article(id: $id) { body } }`,
		map[string]any{"id": first.ID}, &data)
	if data.Node.Articles.TotalCount != 6 || data.Article.Body != first.Body {
		t.Errorf("after the refusals: %d articles, first body changed %v", data.Node.Articles.TotalCount, data.Article.Body != first.Body)
	}
	if after, _ := s.explainedWordCounts(t, "voc", 1000); !slices.Equal(after, before) {
		t.Error("the refused writes changed the word counts")
	}
}
