package store

import (
	"context"
	"slices"

	"github.com/hbgraph/hbgraph/store/keys"
)

// topView is a top-words row as a read answers from it: the list as
// stored, checked once, and the counts of its pending cells (see
// wordcounts_pending.go) that a page takes instead of the list's.
type topView struct {
	list []byte // the list cell, which decodes, in compareRank order
	// over holds the pending counts' words: a list entry of one of these
	// words is passed over, the word placed by its count instead.
	over wordFilter
	// pending counts by word (nil: none); placed holds those that a page
	// may show: every positive one when the list is complete, otherwise
	// those that rank before its last entry (a word the list leaves out,
	// and no pending cell holds, ranks after it). Sorted (compareRank
	// order) when they are few; otherwise each page picks its first ones
	// (the view is not changed after it is made: a row's readers may share
	// it).
	pending map[string]int64
	placed  []WordCount
	sorted  bool
}

// viewTopRows gives each top-words row among rows[idx] its view, when the
// row can answer every page with its pending counts merged: a clean list
// that decodes, pending cells that do (those not newer than the list
// read again here, in one Get of their words' counts), and, merged, a
// list that is complete or holds at least MaxTopWords words. The others
// are left without one, for topWordsFallback.
func (s *Store) viewTopRows(ctx context.Context, rows []Row, idx []int) error {
	for _, i := range idx {
		author, err := keys.DecodeTopWords([]byte(rows[i].key))
		if err != nil {
			continue
		}
		c := rows[i].cells
		have := decodeTopRow(c, -1)
		if !have.clean() || have.listCell == nil {
			continue
		}
		var counts map[string]int64
		if hasPending(c) {
			var stale []string
			var ok bool
			if counts, stale, _, ok = pendingCounts(pendingsOf(c), have.serial, have.serialKnown); !ok {
				continue
			}
			if len(stale) > 0 {
				// Read after the row: newer than every pending cell in it.
				snap, err := s.wordCountsOf(ctx, keys.WordCounts(author), stale)
				if err != nil {
					return err
				}
				for w, n := range snap.counts {
					counts[w] = n
				}
			}
		}
		if v, ok := newTopView(have.listCell, counts); ok {
			rows[i].top = v
		}
	}
	return nil
}

// hasPending reports whether a row holds pending cells.
func hasPending(c rowCells) bool {
	for _, cell := range c {
		if len(cell.Qualifier) > 0 && string(cell.Qualifier[:len(keys.QualTopPendingPrefix)]) == keys.QualTopPendingPrefix {
			return true
		}
	}
	return false
}

// newTopView checks list (one pass) and makes its view with the pending
// counts; ok is false when the list does not decode or, merged, would not
// answer every page.
func newTopView(list []byte, pending map[string]int64) (*topView, bool) {
	v := &topView{list: list}
	entries, complete := topCellEntries(list)
	if entries.bad {
		return nil, false
	}
	if len(pending) > 0 {
		v.pending = pending
		v.over = newWordFilter(len(pending))
		for w := range pending {
			v.over.add(w)
		}
	}
	size, passed := 0, 0 // entries, and those a pending count replaces
	var lastCount uint64
	var lastWord []byte
	for {
		count, word, _, more := entries.next()
		if !more {
			break
		}
		size++
		lastCount, lastWord = count, word
		if v.pending != nil && v.over.mayHold(word) {
			if _, ok := pending[string(word)]; ok {
				passed++
			}
		}
	}
	if entries.bad || size > topListKeep {
		return nil, false
	}
	for w, n := range pending {
		e := WordCount{Word: w, Count: n}
		if n > 0 && (complete || size > 0 && rankedBefore(e, lastCount, lastWord)) {
			v.placed = append(v.placed, e)
		}
	}
	if len(v.placed) <= 64 {
		sortByRank(v.placed)
		v.sorted = true
	}
	// Every word ranked before the list's last entry is in the list or
	// placed: the merged list is exact that far.
	if !complete && size-passed+len(v.placed) < MaxTopWords {
		return nil, false
	}
	return v, true
}

// page returns the first n words of the view: the list's entries that no
// pending count replaces, merged with the placed ones.
func (v *topView) page(n int) []WordCount {
	out := make([]WordCount, 0, n)
	placed := v.firstPlaced(n)
	entries, _ := topCellEntries(v.list)
	// The list's words are cut from one copy of the cell, up to the last
	// one taken, once the page is known.
	type listWord struct{ i, at, end int }
	var fromList []listWord
	for len(out) < n {
		count, word, _, more := entries.next()
		if !more {
			break
		}
		if v.pending != nil && v.over.mayHold(word) {
			if _, ok := v.pending[string(word)]; ok {
				continue
			}
		}
		for len(placed) > 0 && len(out) < n && rankedBefore(placed[0], count, word) {
			out = append(out, placed[0])
			placed = placed[1:]
		}
		if len(out) == n {
			break
		}
		end := len(v.list) - len(entries.rest)
		fromList = append(fromList, listWord{len(out), end - len(word), end})
		out = append(out, WordCount{Count: int64(count)})
	}
	if len(fromList) > 0 {
		text := string(v.list[:fromList[len(fromList)-1].end])
		for _, w := range fromList {
			out[w.i].Word = text[w.at:w.end]
		}
	}
	for len(placed) > 0 && len(out) < n {
		out = append(out, placed[0])
		placed = placed[1:]
	}
	return out
}

// firstPlaced returns the first n placed words in compareRank order (all
// of them if fewer).
func (v *topView) firstPlaced(n int) []WordCount {
	if v.sorted || len(v.placed) == 0 {
		return v.placed[:min(n, len(v.placed))]
	}
	if n >= len(v.placed)/8 {
		all := slices.Clone(v.placed)
		sortByRank(all)
		return all[:min(n, len(all))]
	}
	// A few of many: insert each into the first n so far.
	first := make([]WordCount, 0, n+1)
	for _, e := range v.placed {
		if len(first) == n && compareRank(e, first[n-1]) >= 0 {
			continue
		}
		at, _ := slices.BinarySearchFunc(first, e, compareRank)
		first = slices.Insert(first, at, e)
		if len(first) > n {
			first = first[:n]
		}
	}
	return first
}
