package keys

import (
	"encoding/binary"
	"fmt"
)

// Tables and their column families. The names are on-disk format.
const (
	TableGraph       = "graph"      // nodes, relationships, adjacency index, degree counters
	FamilyGraph      = "g"          // the only family of TableGraph
	TableArticles    = "articles"   // timelines, category index, author counters
	FamilyArticles   = "a"          // the only family of TableArticles
	TableWordCounts  = "wordcounts" // word counts per author
	FamilyWordCounts = "w"          // the only family of TableWordCounts
)

// tables is the declaration behind Tables; never modified.
var tables = map[string][]string{
	TableGraph:      {FamilyGraph},
	TableArticles:   {FamilyArticles},
	TableWordCounts: {FamilyWordCounts},
}

// Tables returns every table hbgraph uses and its column families: what the
// embedded engine declares, what the create-tables command creates and what
// the store reads and writes. The map is a fresh copy the caller owns.
func Tables() map[string][]string {
	m := make(map[string][]string, len(tables))
	for t, fams := range tables {
		m[t] = append([]string(nil), fams...)
	}
	return m
}

// MaxRegions is the largest number of regions SplitKeys splits a table into.
const MaxRegions = 1 << 16

// SplitKeys returns the n-1 split row keys that pre-split a table into n
// regions of equal share of the 4-byte hash prefix every row starts with:
// key i (1 <= i < n) is the 4 bytes big-endian of floor(i * 2^32 / n). The
// keys are ascending and distinct. It fails with ErrInvalidValue unless
// 1 <= n <= MaxRegions; n == 1 gives no split keys.
func SplitKeys(n int) ([][]byte, error) {
	if n < 1 || n > MaxRegions {
		return nil, fmt.Errorf("%w: %d regions: want 1..%d", ErrInvalidValue, n, MaxRegions)
	}
	splits := make([][]byte, 0, n-1)
	for i := 1; i < n; i++ {
		at := uint32(uint64(i) << 32 / uint64(n))
		splits = append(splits, binary.BigEndian.AppendUint32(nil, at))
	}
	return splits, nil
}

// PingRow is the row of TableGraph a readiness check reads: its first byte
// is 'r' where every other row has its 4-byte hash, and it has no tag
// byte after one, so no layout writes or decodes it.
func PingRow() []byte { return []byte("readyz") }
