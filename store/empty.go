package store

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Empty reports whether no table of keys.Tables holds a row: for each
// table, one scan of at most one row, keys only. Rows whose every cell is
// deleted do not count (the scan skips them, walking their markers).
func (s *Store) Empty(ctx context.Context) (bool, error) {
	tables := keys.Tables()
	for _, t := range slices.Sorted(maps.Keys(tables)) {
		rows, err := s.scan(ctx, scanRange{table: t, family: tables[t][0], limit: 1, keyOnly: true})
		if err != nil {
			return false, fmt.Errorf("empty: %w", err)
		}
		if len(rows) > 0 {
			return false, nil
		}
	}
	return true, nil
}
