package store

import "context"

// incrementPurpose is increment with the purpose of its nonce (see
// incrementFor): stable across re-sends and retries of one write, different
// for two Increments of one op that must both apply.
func (s *Store) incrementPurpose(ctx context.Context, table, family string, row []byte, qualifier string, delta int64, purpose string) (int64, error) {
	return s.incrementFor(ctx, purpose, table, family, row, qualifier, delta)
}
