package store

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Word counts (seed 004, the "row = source, qualifier = word" layout): table
// wordcounts, family w, one row per author (keys.WordCounts), one int64 cell
// per word, the number of times the word occurs in the titles and bodies of
// the author's articles.
//
// Writers keep the row exact with one Increment per distinct word by the
// change in its count: +n when an article is posted, the difference when
// its text is edited, -n when it is deleted. A count that drops to zero
// stays as a 0 cell (TopWords skips it): deleting it is not safe beside
// writers, because HBase stamps an Increment with the current time, and
// one made in the same millisecond as the delete marker, or before a
// marker stamped ahead of the clock, would be hidden by it and lost.
// RebuildWordCounts removes zero cells safely and rewrites corrupt ones;
// Repair runs it for every author.

// Word limits. A word is a maximal run of Unicode letters and digits,
// lower-cased; runs longer than MaxWordBytes (after lower-casing) are not
// counted: they are hashes, base64 and the like, not words, and each would
// be a qualifier of that size.
//
// MaxArticleWords bounds the distinct words of one article (title and
// body together): each is a column of the author's word count row that
// the article's Increment writes and every later rebuild reads. A long
// real article (10,000 words of prose) has 2,500 to 4,000 distinct words,
// and a whole novel 10,000 to 20,000 (vocabulary grows with about the
// square root of the text, Heaps' law); 10,000 leaves room for the longest
// pieces and for inflected languages, and is a tenth of what a 1 MiB body
// of made-up words adds (about 110,000).
const (
	MaxWordBytes    = 100
	MaxTopWords     = 1000
	MaxArticleWords = 10000
)

// validateArticleWords fails with ErrInvalidInput if the title and body
// of an article hold more than MaxArticleWords distinct words.
func validateArticleWords(title, body string) error {
	m := map[string]int64{}
	countWords(m, title)
	countWords(m, body)
	if len(m) > MaxArticleWords {
		return invalid("title and body must hold at most %d distinct words, not %d", MaxArticleWords, len(m))
	}
	return nil
}

// WordCount is one word of an author's word counts.
type WordCount struct {
	Word  string
	Count int64
}

// countWords adds the words of text to m.
func countWords(m map[string]int64, text string) {
	start := -1
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			addWord(m, text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		addWord(m, text[start:])
	}
}

func addWord(m map[string]int64, w string) {
	if w = strings.ToLower(w); len(w) <= MaxWordBytes {
		m[w]++
	}
}

// articleWords counts the words of an article's title and body.
func articleWords(a articleCells) map[string]int64 {
	m := map[string]int64{}
	countWords(m, a.title)
	countWords(m, a.body)
	return m
}

// wordDeltas returns after - before per word, without zeros.
func wordDeltas(before, after map[string]int64) map[string]int64 {
	d := make(map[string]int64, len(before)+len(after))
	for w, n := range after {
		d[w] += n
	}
	for w, n := range before {
		d[w] -= n
	}
	for w, n := range d {
		if n == 0 {
			delete(d, w)
		}
	}
	return d
}

// addWordCounts adds deltas to the author's word counts with one
// Increment of all the words' columns: one round trip, atomic on the row.
func (s *Store) addWordCounts(ctx context.Context, author string, deltas map[string]int64) error {
	if len(deltas) == 0 {
		return nil
	}
	if err := s.faultPoint(pointWordCount); err != nil {
		return err
	}
	if err := s.incrementColumns(ctx, keys.TableWordCounts, keys.FamilyWordCounts, keys.WordCounts(author), deltas); err != nil {
		return fmt.Errorf("count words: %w", err)
	}
	return nil
}

// TopWords returns the author's n most frequent words, most frequent first,
// ties in word order, from one Get of the author's word count row. Words
// whose count is zero or less are left out. It fails with ErrInvalidInput
// for a bad author id or n outside 1..MaxTopWords. An author with no
// articles, or no node, has no words.
func (s *Store) TopWords(ctx context.Context, authorID string, n int) ([]WordCount, error) {
	out, err := s.topWordsOf(ctx, []string{authorID}, n)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// topWordsOf is TopWords for many authors, in their order, with one batch
// of Gets of their word count rows.
func (s *Store) topWordsOf(ctx context.Context, authorIDs []string, n int) ([][]WordCount, error) {
	if n < 1 || n > MaxTopWords {
		return nil, invalid("n is %d; want 1..%d", n, MaxTopWords)
	}
	return readEach(ctx, s, authorIDs, WordCountsGet, func(_ string, r Row) ([]WordCount, error) { return r.TopWords(n) })
}

// topWords picks the n largest positive counts of a word count row, ties
// in word order.
func topWords[K rowKey](row K, c cells, n int) ([]WordCount, error) {
	counts, err := decodeWordCounts(row, c)
	if err != nil {
		return nil, err
	}
	out := make([]WordCount, 0, len(counts))
	for w, k := range counts {
		if k > 0 {
			out = append(out, WordCount{Word: w, Count: k})
		}
	}
	slices.SortFunc(out, func(a, b WordCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Word, b.Word)
	})
	if len(out) > n {
		out = out[:n:n]
	}
	return out, nil
}

// decodeWordCounts decodes the word count row with key row; a cell that is
// not an int64 is an error, naming the least such word.
func decodeWordCounts[K rowKey](row K, c cells) (map[string]int64, error) {
	m, bad := splitWordCounts(c)
	if len(bad) > 0 {
		w := slices.Min(slices.Collect(maps.Keys(bad)))
		return nil, corrupt(row, "corrupt word count %q: %d bytes", w, len(c[w]))
	}
	return m, nil
}

// splitWordCounts decodes the cells of a word count row that are an int64
// and sets the others aside as corrupt (nil if there are none).
func splitWordCounts(c cells) (counts map[string]int64, corrupt map[string]bool) {
	counts = make(map[string]int64, len(c))
	for w, v := range c {
		n, ok := decodeMs(v)
		if !ok {
			if corrupt == nil {
				corrupt = map[string]bool{}
			}
			corrupt[w] = true
			continue
		}
		counts[w] = n
	}
	return counts, corrupt
}

// wordCountChunk bounds the cells of one Put or Delete of a rebuild.
const wordCountChunk = 4096

// maxStampLead bounds how far ahead of the clock a rebuild accepts the
// word count row's newest cell (see RebuildWordCounts) before giving up.
const maxStampLead = time.Minute

// wordCountFixes counts the cells a rebuild of a word count row wrote.
type wordCountFixes struct {
	corrected int // counts Put: absent, or another value than the recount
	// deleted counts the cells of words no article has that were deleted,
	// but not the 0 cells among them: writers leave those by design (see
	// the top of this file), so deleting one is no fix.
	deleted int
	corrupt int // cells that were not an int64, Put or deleted; in neither count above
}

// rebuildWordCounts is RebuildWordCounts without the check of the author
// id, which a repair reads from a row key. The fixes count the cells
// written before any error.
func (s *Store) rebuildWordCounts(ctx context.Context, authorID string) (wordCountFixes, error) {
	var fixed wordCountFixes
	wrow := keys.WordCounts(authorID)
	wrange := scanRange{table: keys.TableWordCounts, family: keys.FamilyWordCounts,
		start: wrow, stop: keys.After(wrow), limit: 1}
	stamp := s.nowMs()
	current, err := s.scan(ctx, wrange)
	if err != nil {
		return fixed, err
	}
	if len(current) == 1 {
		stamp = max(stamp, current[0].ts)
	}
	// One past: a Put at T loses to a Delete at T, and Deletes the scan
	// cannot see (a hand-made fix, a rebuild run from a machine whose clock
	// is ahead) may share the newest cell's millisecond.
	stamp++
	if err := s.waitClockPast(ctx, stamp, maxStampLead); err != nil {
		return fixed, err
	}
	want := map[string]int64{}
	err = s.scanAll(ctx, timelineRange(authorID), func(rw row) (bool, error) {
		a, ok, err := decodeArticleCells(rw.key, rw.cells)
		if err != nil {
			return false, err
		}
		if ok {
			countWords(want, a.title)
			countWords(want, a.body)
		}
		return true, nil
	})
	if err != nil {
		return fixed, err
	}
	// Read the row again: words added since the first read may need
	// deleting too, and unchanged counts need no write.
	c, err := s.get(ctx, keys.TableWordCounts, keys.FamilyWordCounts, wrow)
	if err != nil {
		return fixed, err
	}
	have, corrupt := splitWordCounts(c) // a corrupt word is absent from have
	put := cells{}
	for w, n := range want {
		if h, ok := have[w]; !ok || h != n {
			put[w] = encodeMs(n)
		}
	}
	var gone []string
	for w := range c { // corrupt cells too
		if _, ok := want[w]; !ok {
			gone = append(gone, w)
		}
	}
	for len(put) > 0 {
		chunk := cells{}
		for w, v := range put {
			if len(chunk) == wordCountChunk {
				break
			}
			chunk[w] = v
			delete(put, w)
		}
		if err := s.put(ctx, keys.TableWordCounts, keys.FamilyWordCounts, wrow, chunk, stamp); err != nil {
			return fixed, err
		}
		for w := range chunk {
			if corrupt[w] {
				fixed.corrupt++
			} else {
				fixed.corrected++
			}
		}
	}
	for chunk := range slices.Chunk(gone, wordCountChunk) {
		if err := s.deleteColumns(ctx, keys.TableWordCounts, keys.FamilyWordCounts, wrow, chunk, stamp); err != nil {
			return fixed, err
		}
		for _, w := range chunk {
			switch {
			case corrupt[w]:
				fixed.corrupt++
			case have[w] != 0:
				fixed.deleted++
			}
		}
	}
	return fixed, nil
}
