package store

import "context"

// Thin stand-ins for the nonce helper's Increments with a purpose (branch
// i23-nonces: incrementFor, incrementColumnsFor), so that the article
// writes name their purposes now. They ignore the purpose: at the merge
// they become calls of the nonced versions.

// incrementPurpose is increment whose nonce is op's for purpose.
func (s *Store) incrementPurpose(ctx context.Context, table, family string, row []byte, qualifier string, delta int64, purpose string) (int64, error) {
	_ = purpose
	return s.increment(ctx, table, family, row, qualifier, delta)
}

// incrementColumnsPurpose is incrementColumns whose nonce is op's for
// purpose.
func (s *Store) incrementColumnsPurpose(ctx context.Context, table, family string, row []byte, deltas map[string]int64, purpose string) error {
	_ = purpose
	return s.incrementColumns(ctx, table, family, row, deltas)
}
