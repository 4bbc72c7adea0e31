package store

import (
	"context"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Ping reads one row of the graph table, a row nothing writes, and reports
// whether the store answered (ErrUnavailable if not): a readiness check.
func (s *Store) Ping(ctx context.Context) error {
	_, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, keys.PingRow())
	return err
}
