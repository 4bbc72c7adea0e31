package store

import "context"

// incrementPurpose is increment with the purpose of its nonce: stable
// across re-sends and retries of one write, different for two Increments
// of one op that must both apply. (Thin until the nonces land in hbase.go:
// then it is incrementFor.)
func (s *Store) incrementPurpose(ctx context.Context, table, family string, row []byte, qualifier string, delta int64, purpose string) (int64, error) {
	_ = purpose
	return s.increment(ctx, table, family, row, qualifier, delta)
}
