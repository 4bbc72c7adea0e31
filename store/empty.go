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
// the first read of articles records in an empty table, nor the residues
// deleted node and relationship rows leave.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	tables := keys.Tables()
	for _, t := range slices.Sorted(maps.Keys(tables)) {
		r := scanRange{table: t, family: tables[t][0], limit: 2, keyOnly: true}
		if t == keys.TableGraph {
			// Deleted rows' residues (deleteEntityCreated) do not count.
			found := false
			err := s.scanAll(ctx, scanRange{table: t, family: tables[t][0]}, func(rw row) (bool, error) {
				found = !isResidue(rw)
				return !found, nil
			})
			if err != nil {
				return false, fmt.Errorf("empty: %w", err)
			}
			if found {
				return false, nil
			}
			continue
		}
		rows, err := s.scan(ctx, r)
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
