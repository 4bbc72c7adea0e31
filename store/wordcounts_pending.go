package store

import (
	"context"
	"encoding/binary"
	"slices"
	"strings"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Pending merges. Merging a write's counts into its author's top list
// reads and rewrites the whole list (up to topListKeep entries, some 20
// KB), so most posts, edits and deletions leave their counts in the
// top-words row instead: one cell of their own (keys.QualTopPendingPrefix
// and the write's word serial) holding the snapshot their Increment
// answered with, written blind, without reading the row. A count may
// have fallen, to 0 even (pendingZeros): a reader and a fold take it as
// they take one that rose, the latest snapshot of a word winning. A
// writer merges them into the list (a fold): the write whose write count
// (serialWrites) is 1 past a multiple of topFoldEvery, the write whose
// words take the author's word count (serialWords) past a multiple of
// pendingWordBudget, import and repair (which increment without a
// snapshot), and an author's first topFoldEvery writes. So between two
// folds a row holds fewer than topFoldEvery cells and fewer than
// pendingWordBudget words in them, whether writes are short or long. A
// write's fold that loses its compare-and-set MaxAttempts times leaves
// its counts pending rather than marking the list dirty.
//
// A fold is a merge as before (updateTopWords), of the words of the
// pending cells it read with its own. It takes their counts from the
// snapshots when every one is newer than the list (its serial above the
// highest merged, kept in the version), and otherwise reads them all
// again; after its compare-and-set it deletes the pending cells it
// merged, at their own stamps.
//
// So a pending cell whose serial is above the list's is newer than the
// list for its words: a reader applies the pending snapshots in serial
// order and merges them into the list as a writer would. A cell whose
// serial is not above the list's was written after a fold that did not
// see it (its write was slow between its Increment and its Put), or
// merged by a fold that did not get to delete it: the list may hold an
// older count for its words, or a newer one, and a reader reads their
// counts again (one Get of those columns), as the next fold does.
//
// A crash between a write's Increment and its Put leaves the list stale
// for its words, as a crash between the Increment and the merge did; a
// crash of a fold before its deletes leaves cells that readers read
// again until the next fold. An hbgraph from before pending cells reads
// the list alone (stale by at most the posts since the last fold), and
// its merges, recounts and repairs set the version past the pending
// cells, which this one then reads again: none is lost.

// topFoldEvery is how many writes' counts a top-words row holds pending
// at most between two folds (more only when a fold fails or is cut
// short): the fold's read, merge and write of the list (some 20 KB when
// full) is paid once in so many writes. pendingWordBudget bounds their
// words.
const topFoldEvery = 64

// pendingWordBudget bounds the words a top-words row holds pending
// between two folds, so that a reader's merge of the pending cells stays
// small beside the list: the write whose words take the author's count
// of words written past a multiple of it folds. Fold every 64th write
// alone and posts of 200 words (140 distinct) would leave 8,000 to merge,
// or, folding every long post, rewrite the list every time. A write of
// this many words or more always folds.
const pendingWordBudget = 512

// The word serial (keys.QualWordSerial) counts an author's writes in its
// low serialWordShift bits and their words above: every write of counts
// adds serialStep of its distinct words. It only goes up, which is all
// that ordering snapshots needs (see wordSnapshot); the two counts time
// the folds. The writes wrap into the words after 16 million, which
// shifts one fold.
const serialWordShift = 24

// serialStep is what a write of counts of words distinct words adds to
// the serial.
func serialStep(words int) int64 { return 1 + int64(words)<<serialWordShift }

// serialWrites is the author's writes of counts a serial counts.
func serialWrites(serial int64) int64 { return serial & (1<<serialWordShift - 1) }

// serialWords is the author's words written (distinct in each write) a
// serial counts.
func serialWords(serial int64) int64 { return serial >> serialWordShift }

// pendingQualifier is the qualifier of the pending cell of a snapshot
// with the given word serial, made by the Increment with the given nonce.
// The serial alone would not do: an Increment that a nonce turned away
// (a retry's) answers with the row as it is, whose serial is another
// write's.
func pendingQualifier(serial int64, nonce uint64) string {
	q := make([]byte, 0, len(keys.QualTopPendingPrefix)+16)
	q = append(q, keys.QualTopPendingPrefix...)
	q = binary.BigEndian.AppendUint64(q, uint64(serial))
	return string(binary.BigEndian.AppendUint64(q, nonce))
}

// topPending is a pending cell of a top-words row, or a writer's own
// snapshot among them (foldCounts).
type topPending struct {
	qualifier string
	serial    int64
	stamp     int64            // the stamp its Put was made with: its delete's
	list      []byte           // its counts, as a list cell (topList.encode)
	own       map[string]int64 // a writer's own counts, instead of list
	bad       bool             // the qualifier or the cell does not decode: its words are unknown
}

// pendingOf decides whether a writer leaves its snapshot pending rather
// than merging it: a post's, an edit's or a deletion's that is not one
// that folds (see the top of this file). An author's first
// topFoldEvery writes all fold: one whose fold a fault cut short, retried
// after others came in, would otherwise leave its author without a list
// until the next fold.
func pendingOf(snap *wordSnapshot, deltas map[string]int64) bool {
	if snap == nil {
		return false
	}
	writes, words := serialWrites(snap.serial), serialWords(snap.serial)
	if writes <= topFoldEvery || writes%topFoldEvery == 1 {
		return false
	}
	if words/pendingWordBudget != (words-int64(len(deltas)))/pendingWordBudget {
		return false // this write's words crossed a multiple of the budget
	}
	return pendable(snap)
}

// pendable reports whether a snapshot fits in a pending cell: no count
// below 0 (a row that went wrong), and fewer than pendingWordBudget of
// them.
func pendable(snap *wordSnapshot) bool {
	if snap == nil || len(snap.counts) >= pendingWordBudget {
		return false
	}
	for _, n := range snap.counts {
		if n < 0 {
			return false
		}
	}
	return true
}

// pendingZeros is the flags byte of a pending cell with a count of 0 (an
// edit's or a deletion's word that no article has any more), which a list
// cell never holds. An hbgraph from before it takes such a cell for one
// that does not decode, and reads the whole word count row instead.
const pendingZeros = 2

// encodePending is a pending cell: the Put's stamp (8 bytes), then the
// snapshot's counts as a list cell (topList.encode), its flags byte
// pendingZeros when a count is 0.
func encodePending(stamp int64, snap *wordSnapshot) []byte {
	words := make([]WordCount, 0, len(snap.counts))
	zeros := false
	for w, n := range snap.counts {
		words = append(words, WordCount{Word: w, Count: n})
		zeros = zeros || n == 0
	}
	sortByRank(words)
	counts := topList{words: words}.encode()
	if zeros {
		counts[0] = pendingZeros // the flags byte
	}
	return append(encodeMs(stamp), counts...)
}

// pendingCellEntries reads the entries of a pending cell's counts (a
// list cell that is never complete, and may hold counts of 0).
func pendingCellEntries(cell []byte) topEntries {
	switch {
	case len(cell) > 0 && cell[0] == 0:
		return topEntries{rest: cell[1:]}
	case len(cell) > 0 && cell[0] == pendingZeros:
		return topEntries{rest: cell[1:], zeros: true}
	}
	return topEntries{bad: true}
}

// pendingsOf returns the pending cells of a top-words row in serial
// order. Their counts are decoded as they are merged (pendingCounts).
func pendingsOf(c cellSource) []topPending {
	var out []topPending
	c.each(func(q string, v []byte) {
		if !strings.HasPrefix(q, keys.QualTopPendingPrefix) {
			return
		}
		p := topPending{qualifier: q, bad: true}
		if len(q) == len(keys.QualTopPendingPrefix)+16 && len(v) > 8 {
			p.serial = int64(binary.BigEndian.Uint64([]byte(q[len(keys.QualTopPendingPrefix):])))
			p.stamp, _ = decodeMs(v[:8])
			p.list, p.bad = v[8:], false
		}
		out = append(out, p)
	})
	slices.SortFunc(out, func(a, b topPending) int { return strings.Compare(a.qualifier, b.qualifier) })
	return out
}

// putPending leaves the counts of snap pending in the author's top-words
// row: one Put, blind (see the top of this file).
func (s *Store) putPending(ctx context.Context, author string, snap *wordSnapshot) error {
	stamp := s.nowMs()
	q := pendingQualifier(snap.serial, snap.nonce)
	return s.put(ctx, keys.TableWordCounts, keys.FamilyWordCounts, keys.TopWords(author), cells{q: encodePending(stamp, snap)}, stamp)
}

// deletePendings deletes the pending cells a fold merged, at their
// stamps (a re-send of a Put carries the same) or later.
func (s *Store) deletePendings(ctx context.Context, trow []byte, pending []topPending) error {
	if len(pending) == 0 {
		return nil
	}
	stamp := s.nowMs() // for a cell that does not decode (its stamp unknown)
	qs := make([]string, len(pending))
	for i, p := range pending {
		qs[i] = p.qualifier
		stamp = max(stamp, p.stamp)
	}
	// One stamp for all: each qualifier is one post's, whose Put (and its
	// re-sends) is stamped at most this, even from a clock ahead of ours.
	return s.deleteColumns(ctx, keys.TableWordCounts, keys.FamilyWordCounts, trow, qs, stamp)
}

// pendingCounts applies the pending snapshots newer than the list (serial
// above listSerial; with known false, none is) in serial order, and
// returns them with the words of the others, which must be read again
// (stale). ok is false when a pending cell does not decode.
func pendingCounts(pending []topPending, listSerial int64, known bool) (counts map[string]int64, stale []string, serial int64, ok bool) {
	n := 0
	for _, p := range pending {
		n += len(p.own) + len(p.list)/3 // an entry takes 3 bytes at least
	}
	counts = make(map[string]int64, n)
	serial = listSerial
	for _, p := range pending {
		if p.bad {
			return nil, nil, 0, false
		}
		fresh := known && p.serial > listSerial
		if fresh {
			serial = max(serial, p.serial)
		}
		if p.own != nil {
			for w, n := range p.own {
				if fresh {
					counts[w] = n
				} else {
					stale = append(stale, w)
				}
			}
			continue
		}
		entries := pendingCellEntries(p.list)
		text := string(p.list) // the words as substrings of one copy
		for {
			count, word, _, more := entries.next()
			if !more {
				break
			}
			at := len(p.list) - len(entries.rest) - len(word)
			if w := text[at : at+len(word)]; fresh {
				counts[w] = int64(count)
			} else {
				stale = append(stale, w)
			}
		}
		if entries.bad || entries.read >= pendingWordBudget {
			return nil, nil, 0, false
		}
	}
	return counts, stale, serial, true
}
