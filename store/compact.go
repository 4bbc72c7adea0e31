package store

import "context"

// compactor is what the embedded engine offers beyond gohbase.Client: a
// compaction of everything into one level.
type compactor interface {
	CompactAll(ctx context.Context) error
}

// Compact rewrites the engine's files into one level, as an operator
// major-compacts HBase after a bulk load: reads then seek in one level of
// files instead of several. On a cluster that is the operator's to
// schedule: Compact does nothing there and reports false.
func (s *Store) Compact(ctx context.Context) (bool, error) {
	c, ok := s.hc.(compactor)
	if !ok {
		return false, nil
	}
	return true, c.CompactAll(ctx)
}
