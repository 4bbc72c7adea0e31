package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/tsuna/gohbase/hrpc"

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
// RebuildWordCounts corrects counts with Increments (never a marker) and
// rewrites corrupt ones;
// Repair runs it for every author.
//
// Top lists. Reading the whole row to sort it would make wordCounts cost
// the author's vocabulary, so each author also has a top-words row
// (keys.TopWords) holding a topList: the author's most frequent words
// with their counts, in wordCounts' order, at most topListKeep of them.
// Its invariant is that the list is a prefix of that order: every word it
// leaves out ranks below its last entry, or it is complete (it holds
// every word whose count is positive). A list that is complete or holds
// at least MaxTopWords entries answers every page.
//
// The writer that changes counts keeps the list after its Increment
// (updateTopWords), or, most posts, leaves its counts pending for a later
// writer to merge so (see wordcounts_pending.go). The merge is a
// compare-and-set on the row's version cell, in which it reads the list,
// then the counts its Increment changed, and merges
// them (mergeTopCell). A count that rose past the last entry goes in;
// one that fell below the last entry goes out, which shortens the list; a
// list that would no longer answer every page is recomputed from the whole
// word count row instead. Reading the changed counts after the list, in
// the compare-and-set, keeps the list exact beside other writers: a count
// is only merged with a value read after its last change, and every merge
// starts from the list the previous one wrote. (So every merge writes the
// row, a new version, even when its list is the one it read: a merge that
// read the counts before this writer's Increment then loses.) A writer that loses
// Options.MaxAttempts times in a row leaves its counts pending (a post's)
// or marks the row dirty (an Increment of QualTopDirty) instead: a dirty
// list answers nothing and the next writer that merges recomputes it. A
// crash between the Increment and the list leaves the list stale until
// Repair, which rebuilds every list with the counts.
//
// Reads get the top-words row and merge its pending counts for their
// page (viewTopRows); one that is missing (written before top lists
// existed, or an author with no words), dirty, corrupt or unable to
// answer every page is replaced by the word count row, read in a second
// batch and sorted as before (topWordsFallback). The next write to the
// author that merges, or Repair, builds the list.

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

// countArticleWords counts the words of an article's title and body
// (articleWords), failing with ErrInvalidInput if they are more than
// MaxArticleWords distinct words. A write counts them once, here, and
// increments the counts with the same map.
func countArticleWords(title, body string) (map[string]int64, error) {
	m := map[string]int64{}
	countWords(m, title)
	countWords(m, body)
	if len(m) > MaxArticleWords {
		return nil, invalid("title and body must hold at most %d distinct words, not %d", MaxArticleWords, len(m))
	}
	return m, nil
}

// WordCount is one word of an author's word counts.
type WordCount struct {
	Word  string
	Count int64
}

// countWords adds the words of text to m.
func countWords(m map[string]int64, text string) { addWords(m, text, 1) }

// addWords adds by to m for each word of text.
func addWords(m map[string]int64, text string, by int64) {
	start := -1
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			addWord(m, text[start:i], by)
			start = -1
		}
	}
	if start >= 0 {
		addWord(m, text[start:], by)
	}
}

func addWord(m map[string]int64, w string, by int64) {
	if w = strings.ToLower(w); len(w) <= MaxWordBytes {
		m[w] += by
	}
}

// articleWords counts the words of an article's title and body.
func articleWords(a articleCells) map[string]int64 {
	m := map[string]int64{}
	countWords(m, a.title)
	countWords(m, a.body)
	return m
}

// articleWordDeltas is wordDeltas(articleWords(old), articleWords(next)),
// with one map, and no counting of a title or body that did not change.
func articleWordDeltas(old, next articleCells) map[string]int64 {
	d := make(map[string]int64, 16)
	if old.title != next.title {
		addWords(d, next.title, 1)
		addWords(d, old.title, -1)
	}
	if old.body != next.body {
		addWords(d, next.body, 1)
		addWords(d, old.body, -1)
	}
	for w, n := range d {
		if n == 0 {
			delete(d, w)
		}
	}
	return d
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
// Increment of all the words' columns: one round trip, atomic on the row,
// with the nonce of ctx's op for purpose (so a re-send, or a retry with
// the same op, counts once); then it updates the top list, which is safe
// to do again (it merges the counts as they are, not the deltas).
func (s *Store) addWordCounts(ctx context.Context, author string, deltas map[string]int64, purpose string) error {
	if len(deltas) == 0 {
		return nil
	}
	if err := s.faultPoint(pointWordCount); err != nil {
		return err
	}
	// The serial goes up with the words, in the same Increment: its answer
	// is one snapshot of them (see wordSnapshot), which also tells whether
	// this write folds (pendingOf).
	inc := make(map[string]int64, len(deltas)+1)
	maps.Copy(inc, deltas)
	inc[keys.QualWordSerial] = serialStep(len(deltas))
	wrow := keys.WordCounts(author)
	op := opOf(ctx)
	res, err := s.sendIncrement(ctx, op, purpose, keys.TableWordCounts, keys.FamilyWordCounts, wrow, inc)
	if err != nil {
		return fmt.Errorf("count words: %w", err)
	}
	if err := s.faultPoint(pointTopWords); err != nil {
		return err
	}
	// The counts are written: a client that goes away now would leave the
	// list stale until Repair, so it is kept whatever becomes of ctx (each
	// call still bounded by the call timeout, the loop by MaxAttempts).
	ctx = context.WithoutCancel(ctx)
	snap := snapshotOf(res.Cells, deltas)
	if snap != nil {
		snap.nonce = op.nonce(purpose, wrow)
	}
	if pendingOf(snap, deltas) {
		return s.putPending(ctx, author, snap)
	}
	return s.updateTopWords(ctx, author, slices.Collect(maps.Keys(deltas)), snap)
}

// wordSnapshot is the counts of some words of a word count row and the
// row's QualWordSerial, read together: one Increment's answer, or one Get.
//
// A merge into the top list may use the counts of its own Increment,
// without reading them again, when its serial is above that of every
// snapshot merged into the list so far (which the list's version records):
// then no merged count is newer than its own. The serial only goes up
// between two snapshots of the row, so a snapshot read after another has
// a serial at least as high; the version keeps the highest serial merged.
// (A writer that increments counts without the serial, as import and
// repair do, always reads them again: it has no snapshot of its own.)
//
// The serial goes back only when a repair by an hbgraph from before
// serials, run beside this one (a rolling upgrade), brings it to 0 as a
// word no article has. The list then takes the next merges' snapshots
// again after one merge that reads the counts; a writer whose Increment
// came before that repair and whose merge comes after a merge of the same
// words may put back an older count, which the next merge of the word or
// Repair corrects (as after a crash between the Increment and the merge).
type wordSnapshot struct {
	counts map[string]int64
	serial int64
	nonce  uint64 // of the Increment that answered it (none: 0), for its pending cell
}

// snapshotOf is the snapshot an Increment of words answered with (its
// cells), or nil when a word or the serial is missing from it (a re-sent
// Increment is answered with a Get of its cells, which a delete marker
// may hide) or does not decode.
func snapshotOf(res []*hrpc.Cell, words map[string]int64) *wordSnapshot {
	snap := wordSnapshot{counts: make(map[string]int64, len(words)), serial: -1}
	for _, c := range res {
		n, ok := decodeMs(c.Value)
		if !ok {
			return nil
		}
		if q := string(c.Qualifier); q == keys.QualWordSerial {
			snap.serial = n
		} else if _, asked := words[q]; asked {
			snap.counts[q] = n
		}
	}
	if snap.serial < 0 || len(snap.counts) != len(words) {
		return nil
	}
	return &snap
}

// TopWords returns the author's n most frequent words, most frequent first,
// ties in word order, from one Get of the author's top-words row (or, when
// it cannot answer, of the word count row: see the top of this file). Words
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
// of Gets of their top-words rows.
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
	return rankCounts(counts, n), nil
}

// rankCounts returns the n first positive counts in wordCounts' order.
func rankCounts(counts map[string]int64, n int) []WordCount {
	out := make([]WordCount, 0, len(counts))
	for w, k := range counts {
		if k > 0 {
			out = append(out, WordCount{Word: w, Count: k})
		}
	}
	sortByRank(out)
	if len(out) > n {
		out = out[:n:n]
	}
	return out
}

// sortByRank sorts words by compareRank. Many are sorted by their
// indices, then moved once each: swapping WordCounts copies a string
// pointer, with a write barrier while the GC marks, and a sort makes
// n log n swaps (a fold's 512 placed words were 7% of a long post).
func sortByRank(words []WordCount) {
	if len(words) <= 16 {
		slices.SortFunc(words, compareRank)
		return
	}
	idx := make([]int32, len(words))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int { return compareRank(words[a], words[b]) })
	sorted := make([]WordCount, len(words))
	for i, j := range idx {
		sorted[i] = words[j]
	}
	copy(words, sorted)
}

// compareRank is wordCounts' order: the larger count first, ties in word
// order.
func compareRank(a, b WordCount) int {
	if c := cmp.Compare(b.Count, a.Count); c != 0 {
		return c
	}
	return strings.Compare(a.Word, b.Word)
}

// topListKeep is the most entries a top list holds: MaxTopWords, the
// largest page, and a margin that counts falling out of the list use up
// before it has to be recomputed from the whole word count row.
const topListKeep = MaxTopWords + MaxTopWords/8

// Fault point between the word count Increment and the top list.
const pointTopWords = "top-words"

// Fault point between a writer's merge's read of the top list and its
// compare-and-set (not import's, whose merges of several authors run at
// once, where fault points are counted in order).
const pointTopWordsMerge = "top-words-merge"

// topList is the list of a top-words row (see the top of this file).
type topList struct {
	words    []WordCount // in compareRank order, every count positive
	complete bool        // words holds every word with a positive count
}

// answersEveryPage reports whether the list holds the first n words for
// every n in 1..MaxTopWords.
func (t topList) answersEveryPage() bool { return t.complete || len(t.words) >= MaxTopWords }

// topListOf is the list of the counts of a whole word count row.
func topListOf(counts map[string]int64) topList {
	words := rankCounts(counts, topListKeep+1)
	if len(words) > topListKeep {
		return topList{words: words[:topListKeep:topListKeep]}
	}
	return topList{words: words, complete: true}
}

// topEntries reads the entries of a QualTopWords cell in order, checking
// each against the one before: a positive count, and compareRank order.
type topEntries struct {
	rest      []byte // the entries not read yet
	prevCount uint64
	prevWord  []byte
	read      int  // entries read
	zeros     bool // a count may be 0 (a pending cell's: see pendingCellEntries)
	bad       bool // the cell is not an encoded list
}

// topCellEntries reads the entries of cell, whose flags byte is checked.
func topCellEntries(cell []byte) (r topEntries, complete bool) {
	if len(cell) == 0 || cell[0] > 1 {
		return topEntries{bad: true}, false
	}
	return topEntries{rest: cell[1:]}, cell[0] == 1
}

// next returns the next entry's count and word, and the entry as encoded
// (both alias the cell); ok is false at the end, or for an entry that
// does not decode or is out of order (bad is then set).
func (r *topEntries) next() (count uint64, word, entry []byte, ok bool) {
	b := r.rest
	if len(b) == 0 || r.bad {
		return 0, nil, nil, false
	}
	count, n := uvarint(b)
	if n <= 0 || count == 0 && !r.zeros || count > math.MaxInt64 {
		r.bad = true
		return 0, nil, nil, false
	}
	wlen, m := uvarint(b[n:])
	if m <= 0 || wlen > uint64(len(b)-n-m) {
		r.bad = true
		return 0, nil, nil, false
	}
	end := n + m + int(wlen)
	word = b[n+m : end]
	// compareRank: the larger count first, ties in word order.
	if r.read > 0 && (count > r.prevCount || count == r.prevCount && bytes.Compare(r.prevWord, word) >= 0) {
		r.bad = true
		return 0, nil, nil, false
	}
	r.prevCount, r.prevWord = count, word
	r.read++
	r.rest = b[end:]
	return count, word, b[:end], true
}

// uvarint is binary.Uvarint, a byte below 0x80 (most counts and word
// lengths) read inline.
func uvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}

// mergeTopCell merges the current counts of some words into the encoded
// list cell, keeping it a prefix of wordCounts' order, and returns the new
// cell. It works on the encoding, copying the kept entries a run at a
// time, so a merge costs a pass over the cell and the changed words, not a
// list decoded and encoded again (a post changes a few of an author's
// thousand). ok is
// false when the cell does not decode, or the result would no longer
// answer every page: recompute it from the whole row.
func mergeTopCell(cell []byte, counts map[string]int64) (merged []byte, ok bool) {
	entries, complete := topCellEntries(cell)
	if entries.bad || !complete && len(entries.rest) == 0 {
		return nil, false
	}
	placed := make([]WordCount, 0, len(counts))
	changed := newWordFilter(len(counts))
	for w, n := range counts {
		changed.add(w)
		if n > 0 {
			placed = append(placed, WordCount{Word: w, Count: n})
		}
	}
	sortByRank(placed)
	merged = make([]byte, 1, len(cell)+len(placed)*(2*binary.MaxVarintLen64+MaxWordBytes/8))
	// Kept entries are copied a run at a time: cell[runFrom:runTo] holds
	// the run entries kept and not yet copied to merged.
	size, run, runFrom, runTo := 0, 0, 1, 1
	full := false
	flush := func() {
		if run == 0 {
			return
		}
		take := min(run, topListKeep-size)
		if take < run {
			full = true
			// Only the first take entries of the run fit: find where they end.
			rest := topEntries{rest: cell[runFrom:runTo]}
			for range take {
				rest.next()
			}
			runTo = runTo - len(rest.rest)
		}
		merged = append(merged, cell[runFrom:runTo]...)
		size += take
		run, runFrom = 0, runTo
	}
	var enc []byte // a placed entry's encoding
	addPlaced := func(e WordCount) {
		flush()
		if size == topListKeep {
			full = true
			return
		}
		enc = binary.AppendUvarint(enc[:0], uint64(e.Count))
		enc = binary.AppendUvarint(enc, uint64(len(e.Word)))
		merged = append(append(merged, enc...), e.Word...)
		size++
	}
	var lastCount uint64
	var lastWord []byte
	for {
		at := len(cell) - len(entries.rest)
		count, word, entry, more := entries.next()
		if !more {
			break
		}
		lastCount, lastWord = count, word
		// Every changed word that ranks before this entry goes in first.
		for len(placed) > 0 && rankedBefore(placed[0], count, word) {
			addPlaced(placed[0])
			placed = placed[1:]
		}
		if changed.mayHold(word) {
			if _, isChanged := counts[string(word)]; isChanged {
				continue
			}
		}
		if run == 0 || runTo != at {
			flush()
			runFrom = at
		}
		runTo = at + len(entry)
		run++
	}
	if entries.bad || entries.read > topListKeep {
		return nil, false
	}
	// Every word the list leaves out ranks below its last entry, so a
	// changed count past it can only be placed in a complete list.
	for _, e := range placed {
		if !complete && !rankedBefore(e, lastCount, lastWord) {
			break
		}
		addPlaced(e)
	}
	flush()
	complete = complete && !full
	if complete {
		merged[0] = 1
	}
	return merged, complete || size >= MaxTopWords
}

// rankedBefore reports whether e ranks before the entry (count, word) in
// compareRank order.
func rankedBefore(e WordCount, count uint64, word []byte) bool {
	if c := uint64(e.Count); c != count {
		return c > count
	}
	return e.Word < string(word)
}

// wordFilter is a Bloom filter with one hash, of about 16 bits a word and
// 256 at least: a word it does not hold is none of the words added, told
// without a map lookup (a merge checks each entry of a list against the
// changed words, a read against the pending ones), and one it holds is
// one of them but about once in 16.
type wordFilter []uint64

func newWordFilter(words int) wordFilter {
	n := 4
	for n*64 < 16*words {
		n *= 2
	}
	return make(wordFilter, n)
}

func (f wordFilter) add(w string) {
	i, bit := f.at(wordHash(w))
	f[i] |= bit
}

func (f wordFilter) mayHold(w []byte) bool {
	i, bit := f.at(wordHash(w))
	return f[i]&bit != 0
}

// at is the word and bit of a hash: the word from its top bits, the bit
// from its low six.
func (f wordFilter) at(h uint64) (int, uint64) {
	return int(h >> (64 - bits.Len(uint(len(f)-1)))), 1 << (h & 63)
}

// wordHash mixes a word's length and its first and last eight bytes: a
// few instructions, where a general hash costs more than the rest of an
// entry's merge. Words that share all three only cost a map lookup.
func wordHash[W string | []byte](w W) uint64 {
	var head, tail uint64
	for i := 0; i < len(w) && i < 8; i++ {
		head = head<<8 | uint64(w[i])
	}
	for i := max(8, len(w)-8); i < len(w); i++ {
		tail = tail<<8 | uint64(w[i])
	}
	h := (head ^ uint64(len(w))<<56) * 0x9e3779b97f4a7c15
	return (h ^ tail ^ h>>29) * 0xbf58476d1ce4e5b9
}

// emptyTopCell is the cell of a complete list with no words.
var emptyTopCell = topList{complete: true}.encode()

// encode is the QualTopWords cell: a flags byte (1: complete), then per
// entry uvarint(count) uvarint(len(word)) word.
func (t topList) encode() []byte {
	n := 1
	for _, e := range t.words {
		n += 2*binary.MaxVarintLen64 + len(e.Word)
	}
	b := make([]byte, 1, n)
	if t.complete {
		b[0] = 1
	}
	for _, e := range t.words {
		b = binary.AppendUvarint(b, uint64(e.Count))
		b = binary.AppendUvarint(b, uint64(len(e.Word)))
		b = append(b, e.Word...)
	}
	return b
}

// decodeTopList decodes a QualTopWords cell, its first keep entries into
// words and the rest checked and counted only (a read wants a page of
// it); ok is false for a cell that is not an encoded list of positive
// counts in compareRank order.
func decodeTopList(b []byte, keep int) (t topList, size int, ok bool) {
	entries, complete := topCellEntries(b)
	if entries.bad {
		return topList{}, 0, false
	}
	t.complete = complete
	// The words kept are substrings of one copy of the cell: one
	// allocation, not one per word (a list holds up to topListKeep).
	var text string
	if keep > 0 {
		text = string(b)
	}
	for {
		count, word, _, more := entries.next()
		if !more {
			break
		}
		if size < keep {
			at := len(b) - len(entries.rest) - len(word) // word's offset in the cell
			t.words = append(t.words, WordCount{Word: text[at : at+len(word)], Count: int64(count)})
		}
		size++
	}
	if entries.bad || size > topListKeep {
		return topList{}, 0, false
	}
	return t, size, true
}

// topRow is what a top-words row holds.
type topRow struct {
	version []byte // QualTopVersion as read, the compare-and-set token; nil: no row
	stamp   int64  // the version as a time: every write is stamped later
	// serial is the highest QualWordSerial of the snapshots merged into
	// the list (see wordSnapshot); serialKnown is false for a version
	// written before serials (or none).
	serial      int64
	serialKnown bool
	list        topList
	listSize    int   // the list's entries, of which list holds the first keep
	listOK      bool  // the list cell is there and decodes
	dirty       int64 // QualTopDirty
	dirtySeen   int64 // QualTopDirtySeen
	listCell    []byte
}

// decodeTopRow decodes a top-words row, the first keep words of its list;
// with keep < 0 it leaves the list cell as it is (listOK false).
func decodeTopRow(c cellSource, keep int) topRow {
	var r topRow
	r.version, _ = c.lookup(keys.QualTopVersion)
	r.stamp, r.serial, r.serialKnown = decodeTopVersion(r.version)
	r.listCell, _ = c.lookup(keys.QualTopWords)
	if keep >= 0 {
		r.list, r.listSize, r.listOK = decodeTopList(r.listCell, keep)
	}
	if v, ok := c.lookup(keys.QualTopDirty); ok {
		r.dirty, _ = decodeMs(v)
	}
	if v, ok := c.lookup(keys.QualTopDirtySeen); ok {
		r.dirtySeen, _ = decodeMs(v)
	}
	return r
}

// clean reports whether the row has no dirty mark it has not seen.
func (r topRow) clean() bool { return r.dirty == r.dirtySeen }

// usable reports whether the row's list holds to the invariant.
func (r topRow) usable() bool { return r.listOK && r.clean() }

// answersEveryPage reports whether a read can take its words from the row.
func (r topRow) answersEveryPage() bool {
	return r.usable() && (r.list.complete || r.listSize >= MaxTopWords)
}

// updateTopWords merges the current counts of words, and those of the
// row's pending cells, into the author's top list (see the top of this
// file and wordcounts_pending.go), or recomputes the list from the whole
// word count row when it is missing, dirty, corrupt, or would no longer
// answer every page; then it deletes the pending cells it merged.
//
// own is the snapshot of the writer's own Increment of the words (nil:
// none): used instead of reading the counts again when it is newer than
// every snapshot merged into the list (see wordSnapshot).
func (s *Store) updateTopWords(ctx context.Context, author string, words []string, own *wordSnapshot) error {
	trow, wrow := keys.TopWords(author), keys.WordCounts(author)
	err := s.casLoop(ctx, "update top words", func(int) (bool, error) {
		c, err := s.get(ctx, keys.TableWordCounts, keys.FamilyWordCounts, trow)
		if err != nil {
			return false, err
		}
		have := decodeTopRow(c, -1) // the list is merged as encoded
		pending := pendingsOf(c)
		var (
			cell   []byte
			exact  = have.clean() && have.listCell != nil // and it decodes: mergeTopCell checks
			serial int64
		)
		if exact {
			var counts map[string]int64
			if counts, serial, exact, err = s.foldCounts(ctx, wrow, have, pending, words, own); err != nil {
				return false, err
			}
			if exact {
				cell, exact = mergeTopCell(have.listCell, counts)
			}
		}
		if !exact {
			var list topList
			if list, serial, err = s.recountTopList(ctx, wrow); err != nil {
				return false, err
			}
			cell = list.encode()
		}
		if own != nil { // a writer's merge (import merges many authors at once)
			if err := s.faultPoint(pointTopWordsMerge); err != nil {
				return false, err
			}
		}
		_, won, err := s.putTopList(ctx, trow, have, cell, true, serial)
		if won && err == nil {
			err = s.deletePendings(ctx, trow, pending)
		}
		return won, err
	})
	if errors.Is(err, ErrConflict) && pendable(own) {
		// Its counts pending, for the next fold: a post's, as most are.
		if err := s.putPending(ctx, author, own); err != nil {
			return fmt.Errorf("top words: %w", err)
		}
		return nil
	}
	if errors.Is(err, ErrConflict) {
		// Rather than leave the list without this writer's counts, make
		// it answer nothing until the next writer recomputes it.
		// Only dirty != dirtySeen matters, so counting twice does no
		// harm, but a nonce that a retry shared with an earlier mark
		// would drop this one: each mark's purpose is its own.
		if _, err := s.incrementFor(ctx, "top-dirty/"+NewOpID().String(),
			keys.TableWordCounts, keys.FamilyWordCounts, trow, keys.QualTopDirty, 1); err != nil {
			return fmt.Errorf("top words: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("top words: %w", err)
	}
	return nil
}

// foldCounts returns the counts a merge of the writer's words (own: its
// snapshot of them, nil: none) and of the pending cells puts in the list,
// with the word serial they are as new as: the snapshots that are newer
// than the list, in serial order, and the other words read again. ok is
// false when a pending cell does not decode.
func (s *Store) foldCounts(ctx context.Context, wrow []byte, have topRow, pending []topPending, words []string, own *wordSnapshot) (counts map[string]int64, serial int64, ok bool, err error) {
	if len(pending) == 0 && own != nil && have.serialKnown && own.serial > have.serial {
		return own.counts, own.serial, true, nil // most merges: the writer's own, newer than the list
	}
	all := pending
	if own != nil {
		mine := topPending{serial: own.serial, own: own.counts}
		at, _ := slices.BinarySearchFunc(pending, own.serial, func(p topPending, serial int64) int { return cmp.Compare(p.serial, serial) })
		all = slices.Insert(slices.Clip(pending), at, mine)
	}
	counts, stale, serial, ok := pendingCounts(all, have.serial, have.serialKnown)
	if !ok {
		return nil, 0, false, nil
	}
	if own == nil {
		stale = append(stale, words...)
	}
	if len(stale) > 0 {
		// Read after the row, so newer than every snapshot in it.
		snap, err := s.wordCountsOf(ctx, wrow, stale)
		if err != nil {
			return nil, 0, false, err
		}
		maps.Copy(counts, snap.counts)
		serial = max(serial, snap.serial)
	}
	return counts, serial, true, nil
}

// rebuildTopWords checks the author's top list against the whole word
// count row and, if it does not hold (holdsFor), writes the list picked
// from the row. It reports whether it wrote.
func (s *Store) rebuildTopWords(ctx context.Context, author string) (bool, error) {
	trow, wrow := keys.TopWords(author), keys.WordCounts(author)
	var wrote bool
	err := s.casLoop(ctx, "rebuild top words", func(int) (bool, error) {
		c, err := s.get(ctx, keys.TableWordCounts, keys.FamilyWordCounts, trow)
		if err != nil {
			return false, err
		}
		have := decodeTopRow(c, topListKeep)
		snap, err := s.readWordSnapshot(ctx, wrow)
		if err != nil {
			return false, err
		}
		counts := snap.counts
		ranked := rankCounts(counts, len(counts))
		pending := pendingsOf(c)
		if len(pending) > 0 {
			have = have.withPendings(pending, counts) // what a reader sees
		}
		if have.holdsFor(ranked) || (len(c) == 0 && len(ranked) == 0) {
			wrote = false
			return true, nil
		}
		var won bool
		wrote, won, err = s.putTopList(ctx, trow, have, topListOf(counts).encode(), false, snap.serial)
		if won && err == nil && len(pending) > 0 {
			wrote, err = true, s.deletePendings(ctx, trow, pending)
		}
		return won, err
	})
	return wrote, err
}

// withPendings is r as a reader sees it (viewTopRows): its list with
// the pending counts merged, those not newer than the list taken from now
// (counts: the whole word count row, read after r).
func (r topRow) withPendings(pending []topPending, now map[string]int64) topRow {
	if !r.usable() {
		return r
	}
	counts, stale, _, ok := pendingCounts(pending, r.serial, r.serialKnown)
	for _, w := range stale {
		counts[w] = now[w]
	}
	var merged []byte
	if ok {
		merged, ok = mergeTopCell(r.listCell, counts)
	}
	if !ok {
		r.listOK = false
		return r
	}
	r.list, r.listSize, r.listOK = decodeTopList(merged, topListKeep)
	return r
}

// holdsFor reports whether the row's list is right for an author whose
// positive counts rank as ranked: a prefix of it that answers every page,
// and all of it if the list says it is complete. A writer's list need not
// be the one topListOf would pick: counts that fell out shorten it.
func (r topRow) holdsFor(ranked []WordCount) bool {
	w := r.list.words
	return r.answersEveryPage() && len(w) <= len(ranked) && slices.Equal(w, ranked[:len(w)]) &&
		(!r.list.complete || len(w) == len(ranked))
}

// recountTopList reads the whole word count row and picks its list; serial
// is the row's QualWordSerial.
func (s *Store) recountTopList(ctx context.Context, wrow []byte) (list topList, serial int64, err error) {
	snap, err := s.readWordSnapshot(ctx, wrow)
	if err != nil {
		return topList{}, 0, err
	}
	return topListOf(snap.counts), snap.serial, nil
}

// readWordCounts reads and decodes a whole word count row.
func (s *Store) readWordCounts(ctx context.Context, wrow []byte) (map[string]int64, error) {
	snap, err := s.readWordSnapshot(ctx, wrow)
	return snap.counts, err
}

// readWordSnapshot reads and decodes a whole word count row, its serial
// with its counts.
func (s *Store) readWordSnapshot(ctx context.Context, wrow []byte) (wordSnapshot, error) {
	c, err := s.get(ctx, keys.TableWordCounts, keys.FamilyWordCounts, wrow)
	if err != nil {
		return wordSnapshot{}, err
	}
	counts, err := decodeWordCounts(wrow, c)
	if err != nil {
		return wordSnapshot{}, err
	}
	return wordSnapshot{counts: counts, serial: wordSerial(c)}, nil
}

// wordSerial is the QualWordSerial of a word count row (0: none yet, or
// not an int64: a serial is only compared, and 0 is below every Increment
// of it).
func wordSerial(c cellSource) int64 {
	v, _ := c.lookup(keys.QualWordSerial)
	n, _ := decodeMs(v)
	return n
}

// wordCountsOf reads the counts of words (absent: 0) from a word count
// row, with the row's serial, in one Get of those columns.
func (s *Store) wordCountsOf(ctx context.Context, wrow []byte, words []string) (*wordSnapshot, error) {
	columns := append(slices.Clip(words), keys.QualWordSerial)
	res, errs, err := s.getColumnsBatch(ctx, keys.TableWordCounts, keys.FamilyWordCounts, columns, [][]byte{wrow})
	if err == nil {
		err = errs[0]
	}
	if err != nil {
		return nil, err
	}
	counts := make(map[string]int64, len(words))
	for _, w := range words {
		counts[w] = 0
	}
	var serial int64
	for _, c := range res[0] {
		w := string(c.Qualifier)
		n, ok := decodeMs(c.Value)
		if w == keys.QualWordSerial {
			serial = n
			continue
		}
		if !ok {
			return nil, corrupt(wrow, "corrupt word count %q: %d bytes", w, len(c.Value))
		}
		counts[w] = n
	}
	return &wordSnapshot{counts: counts, serial: serial}, nil
}

// putTopList writes list to the top-words row, if have was read from it
// and nothing has written it since (a compare-and-set on the version),
// with a version one past have's and after the clock, and the dirty mark
// have had as seen (the list was recomputed after it, or have was clean).
//
// A writer's merge (merge set: after its Increment, see updateTopWords)
// always writes, the list changed or not: the new version makes every
// merge that read the row before, and so may have read the counts before
// this writer's Increment, lose its compare-and-set and read them again.
// Otherwise (a rebuild) a row that already holds list is left alone:
// changed is false, won true; and an author with no words and no row
// keeps having none.
//
// serial is the QualWordSerial of the snapshot the list was made from,
// which the version keeps: never below the one it had, as the snapshot
// was read after it (see wordSnapshot), unless the row's serial went back.
func (s *Store) putTopList(ctx context.Context, trow []byte, have topRow, cell []byte, merge bool, serial int64) (changed, won bool, err error) {
	if !merge && have.usable() && bytes.Equal(cell, have.listCell) {
		return false, true, nil
	}
	if !merge && have.version == nil && have.listCell == nil && have.dirty == 0 && bytes.Equal(cell, emptyTopCell) {
		return false, true, nil
	}
	stamp := max(s.nowMs(), have.stamp+1)
	written := cells{keys.QualTopWords: cell, keys.QualTopVersion: encodeTopVersion(stamp, serial)}
	if have.dirty != have.dirtySeen {
		// When they are equal the row holds have.dirty as seen already,
		// and only a writer that wins the compare-and-set on the version
		// writes that cell: it is still so.
		written[keys.QualTopDirtySeen] = encodeMs(have.dirty)
	}
	if s.inTx(ctx) {
		// The transaction holds the row since it read have: nothing has
		// written it since, and a Put is the compare-and-set's write.
		return true, true, s.put(ctx, keys.TableWordCounts, keys.FamilyWordCounts, trow, written, stamp)
	}
	won, err = s.checkAndPut(ctx, keys.TableWordCounts, keys.FamilyWordCounts, trow, keys.QualTopVersion, have.version, written, stamp)
	return won, won, err
}

// encodeTopVersion is the QualTopVersion cell: the write's stamp, then the
// highest word serial merged (8 bytes each). One written before serials
// has the stamp alone.
func encodeTopVersion(stamp, serial int64) []byte {
	return binary.BigEndian.AppendUint64(encodeMs(stamp), uint64(serial))
}

// decodeTopVersion decodes a QualTopVersion cell; known is false when it
// has no serial.
func decodeTopVersion(v []byte) (stamp, serial int64, known bool) {
	if len(v) == 16 {
		stamp, _ = decodeMs(v[:8])
		serial, _ = decodeMs(v[8:])
		return stamp, serial, true
	}
	stamp, _ = decodeMs(v)
	return stamp, 0, false
}

// topWordsFallback replaces each top-words row among rows[idx] that cannot
// answer every page (viewTopRows gave it no view) with its author's word
// count row, read in one batch.
func (s *Store) topWordsFallback(ctx context.Context, rows []Row, idx []int) error {
	var need []int
	var wrows [][]byte
	for _, i := range idx {
		author, err := keys.DecodeTopWords([]byte(rows[i].key))
		if err != nil || rows[i].top != nil {
			continue
		}
		need = append(need, i)
		wrows = append(wrows, keys.WordCounts(author))
	}
	if len(need) == 0 {
		return nil
	}
	res, err := s.getBatch(ctx, keys.TableWordCounts, wrows)
	if err != nil {
		return err
	}
	for j, i := range need {
		rows[i] = Row{key: string(wrows[j]), cells: res[j]}
	}
	return nil
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
		if w == keys.QualWordSerial {
			continue // not a word
		}
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

// wordCountChunk bounds the cells of one Increment of a rebuild.
const wordCountChunk = 4096

// wordCountFixes counts the cells a rebuild of a word count row wrote.
type wordCountFixes struct {
	corrected int // counts incremented to the recount: absent, or another value
	// deleted counts the cells of words no article has that were brought
	// to 0 (and left, as writers leave them), not those that were 0.
	deleted int
	corrupt int // cells that were not an int64, Put or deleted at their own stamp; in neither count above
	// topList is 1 if the top-words row was rewritten: missing (written
	// before top lists), stale after a crash, dirty or corrupt.
	topList int
}

// rebuildWordCounts is RebuildWordCounts without the check of the author
// id, which a repair reads from a row key. The fixes count the cells
// written before any error.
//
// Beside writers it counts the author's articles, and reads the counts
// between two scans of them (see settleAttempts): if the counts disagree,
// it makes the Increments of the writes possibly in flight with their own
// nonces and counts again. An author whose articles kept changing is left
// as it is, to the next rebuild.
//
// It never writes a delete marker stamped with this machine's clock,
// which may be ahead of the region server's (replicas, and the machine
// Repair runs on, are only as close as NTP keeps them): such a marker
// hides every Increment the server stamps before it. So a count that is
// off is corrected by an Increment of the difference (stamped by the
// server, past the cell it adds to), and a word no article has any more
// is brought to 0 the same way and left, as writers leave them; a 0 cell
// older than zeroCellAge is deleted at its own timestamp, which no later
// Increment can be stamped at or before. A word without a cell is Put
// with a compare-and-set on its absence (else the Increment that made it
// is added to), stamped one past the row's newest cell and the clock: a Put ahead of
// the clock hides nothing (the next Increment is stamped past it), and
// this one is newer than a marker a foreign tool or an older rebuild may
// have left on the word. A corrupt cell (not an int64, which no Increment
// can add to) is overwritten at its own timestamp, or deleted at it.
func (s *Store) rebuildWordCounts(ctx context.Context, authorID string) (wordCountFixes, error) {
	var fixed wordCountFixes
	wrow := keys.WordCounts(authorID)
	var (
		want, deltas    map[string]int64
		puts            cells
		zeros           []string
		corrupt         map[string]bool
		stamps          map[string]int64
		newest          int64
		offBeforeReplay map[string]bool // the words off before the Increments of writes in flight were made
	)
	for attempt := 0; ; attempt++ {
		// The first attempt makes no Increments of writes in flight: if
		// the counts agree with the rows, there is nothing to write.
		replay := attempt > 0
		want = map[string]int64{}
		before, err := s.timelinePass(ctx, authorID, replay, false, func(_ row, t timelineState, ok bool) error {
			if ok && !t.isMarked() { // a marked article is being deleted: its words are going
				countWords(want, t.title)
				countWords(want, t.body)
			}
			return nil
		})
		if err != nil {
			return fixed, err
		}
		// Read after the articles and the Increments of their writes in
		// flight (see settleAttempts): then the counts are those of the
		// rows counted, if no row changed since.
		res, err := s.getBatch(ctx, keys.TableWordCounts, [][]byte{wrow})
		if err != nil {
			return fixed, err
		}
		after, err := s.timelinePass(ctx, authorID, false, false, nil)
		if err != nil {
			return fixed, err
		}
		if before != after {
			if attempt == settleAttempts-1 {
				return fixed, nil // writes go on: left to the next run
			}
			continue
		}
		stamps, newest = make(map[string]int64, len(res[0])), 0
		for _, cell := range res[0] {
			if cell.Timestamp != nil {
				stamps[string(cell.Qualifier)] = int64(*cell.Timestamp)
				newest = max(newest, int64(*cell.Timestamp))
			}
		}
		var have map[string]int64
		have, corrupt = splitWordCounts(res[0].asMap()) // a corrupt word is absent from have
		deltas, puts, zeros = map[string]int64{}, cells{}, nil
		for w, n := range want {
			h, ok := have[w]
			switch {
			case corrupt[w]:
			case !ok:
				puts[w] = encodeMs(n)
			case h != n:
				deltas[w] = n - h
			}
		}
		for w, h := range have {
			if _, ok := want[w]; !ok {
				switch {
				case h != 0:
					deltas[w] = -h
				case stamps[w] < s.nowMs()-zeroCellAge.Milliseconds():
					zeros = append(zeros, w)
				}
			}
		}
		if replay || len(deltas)+len(puts) == 0 {
			break
		}
		offBeforeReplay = map[string]bool{}
		for w := range deltas {
			offBeforeReplay[w] = true
		}
		for w := range puts {
			offBeforeReplay[w] = true
		}
	}
	// The words the Increments of writes in flight (or cut short) set
	// right, as fixes (under load, also those their writers would have).
	for w := range offBeforeReplay {
		if _, off := deltas[w]; off || puts[w] != nil {
			continue
		}
		if _, ok := want[w]; ok {
			fixed.corrected++
		} else {
			fixed.deleted++
		}
	}
	for chunk := range slices.Chunk(slices.Sorted(maps.Keys(deltas)), wordCountChunk) {
		d := make(map[string]int64, len(chunk))
		for _, w := range chunk {
			d[w] = deltas[w]
		}
		// A fresh op each: a re-send counts once, a later rebuild again.
		if err := s.incrementColumnsFor(WithOp(ctx, NewOpID()), "rebuild", keys.TableWordCounts, keys.FamilyWordCounts, wrow, d); err != nil {
			return fixed, err
		}
		for _, w := range chunk {
			if _, ok := want[w]; ok {
				fixed.corrected++
			} else {
				fixed.deleted++
			}
		}
	}
	if len(puts) > 0 {
		stamp := max(s.nowMs(), newest) + 1
		for _, w := range slices.Sorted(maps.Keys(puts)) {
			// Only over no cell: an Increment that made one since (a
			// write begun after the read) is added to instead.
			won, err := s.checkAndPut(ctx, keys.TableWordCounts, keys.FamilyWordCounts, wrow, w, nil, cells{w: puts[w]}, stamp)
			if err == nil && !won {
				n, _ := decodeMs(puts[w])
				err = s.incrementColumnsFor(WithOp(ctx, NewOpID()), "rebuild", keys.TableWordCounts, keys.FamilyWordCounts, wrow, map[string]int64{w: n})
			}
			if err != nil {
				return fixed, err
			}
			fixed.corrected++
		}
	}
	for w := range corrupt {
		var err error
		if n, ok := want[w]; ok {
			err = s.put(ctx, keys.TableWordCounts, keys.FamilyWordCounts, wrow, cells{w: encodeMs(n)}, stamps[w])
		} else {
			err = s.deleteColumns(ctx, keys.TableWordCounts, keys.FamilyWordCounts, wrow, []string{w}, stamps[w])
		}
		if err != nil {
			return fixed, err
		}
		fixed.corrupt++
	}
	for _, w := range zeros { // no fix: writers leave them by design
		if err := s.deleteColumns(ctx, keys.TableWordCounts, keys.FamilyWordCounts, wrow, []string{w}, stamps[w]); err != nil {
			return fixed, err
		}
	}
	// After the counts: the list is picked from them.
	wrote, err := s.rebuildTopWords(ctx, authorID)
	if wrote {
		fixed.topList++
	}
	return fixed, err
}

// zeroCellAge is how old a 0 word count cell must be for a rebuild to
// delete it at its own timestamp: far more than the clock skew between
// the machines that stamp the row's cells, so that every Increment made
// after the delete is stamped after it.
const zeroCellAge = time.Hour
