package keys

import (
	"encoding/binary"
	"fmt"
)

// Tables and their column families. The names are on-disk format.
const (
	TableGraph       = "graph"      // nodes, relationships, adjacency index, degree counters
	FamilyGraph      = "g"          // what TableGraph's reads return
	TableArticles    = "articles"   // timelines, category index, author counters
	FamilyArticles   = "a"          // what TableArticles' reads return
	TableWordCounts  = "wordcounts" // word counts per author
	FamilyWordCounts = "w"          // the only family of TableWordCounts
	// FamilyOnce holds the write bookkeeping of TableGraph and
	// TableArticles (OnceColumn): the ops that let a write re-sent or
	// retried recognise its own effect. Only writers read it; a request's
	// pages ask for the data family alone, so they neither read nor decode
	// it (a post's op in every timeline row).
	FamilyOnce = "x"
)

// tables is the declaration behind Tables; never modified. A table's data
// family comes first.
var tables = map[string][]string{
	TableGraph:      {FamilyGraph, FamilyOnce},
	TableArticles:   {FamilyArticles, FamilyOnce},
	TableWordCounts: {FamilyWordCounts},
}

// onceColumns are the qualifiers each table keeps in FamilyOnce; never
// modified. Rows written before FamilyOnce existed hold them in the data
// family, where they stay until the row's next write of them: a writer
// reads both families, and FamilyOnce's cell wins (see OnceColumn).
var onceColumns = map[string]map[string]bool{
	TableGraph:    {QualCreateOp: true, QualUpdateOps: true, QualDeleteOp: true, QualPendingCreate: true},
	TableArticles: {QualArticleCreatedBy: true, QualArticleOps: true, QualArticlePrev: true, QualArticleFanout: true},
}

// oncePrefixes are the qualifier prefixes of the once columns named per
// write (a relationship create's intent on an end: QualRelIntentPrefix
// and the create's op, 16 bytes).
var oncePrefixes = map[string]string{TableGraph: QualRelIntentPrefix}

// OnceColumn reports whether table keeps qualifier in FamilyOnce. A read
// of both families returns the cells of FamilyOnce after the data
// family's (cells come sorted by family, and "x" sorts last), so a reader
// that takes the last cell of a qualifier takes FamilyOnce's over one an
// older hbgraph left in the data family.
func OnceColumn(table, qualifier string) bool {
	if onceColumns[table][qualifier] {
		return true
	}
	p, ok := oncePrefixes[table]
	return ok && len(qualifier) == len(p)+16 && qualifier[:len(p)] == p
}

// HasOnceColumns reports whether table has a FamilyOnce.
func HasOnceColumns(table string) bool { return onceColumns[table] != nil }

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
