package store

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Empty reports whether no table of keys.Tables holds a row: for each
// table, one scan of at most two rows, keys only. Rows whose every cell is
// deleted do not count (the scan skips them, walking their markers), nor
// does the articles table's layout version (keys.ArticleLayoutRow), which
// the first read of articles records in an empty table.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	tables := keys.Tables()
	for _, t := range slices.Sorted(maps.Keys(tables)) {
		rows, err := s.scan(ctx, scanRange{table: t, family: tables[t][0], limit: 2, keyOnly: true})
		if err != nil {
			return false, fmt.Errorf("empty: %w", err)
		}
		for _, rw := range rows {
			if t != keys.TableArticles || !bytes.Equal(rw.key, keys.ArticleLayoutRow()) {
				return false, nil
			}
		}
	}
	return true, nil
}
