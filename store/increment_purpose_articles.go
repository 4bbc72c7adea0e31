package store

import (
	"context"

	"github.com/tsuna/gohbase/hrpc"
)

// purposeIncrement is one Increment of incrementEachPurpose: deltas to
// row, with the nonce of the ctx's op for purpose.
type purposeIncrement struct {
	row     []byte
	deltas  map[string]int64
	purpose string
}

// incrementEachPurpose sends incs (rows may repeat: each is its own
// Increment, with its own nonce), writeChunk to a SendBatch, and returns
// each one's error.
func (s *Store) incrementEachPurpose(ctx context.Context, table, family string, incs []purposeIncrement) []error {
	rows := make([][]byte, len(incs))
	for i, inc := range incs {
		rows[i] = inc.row
	}
	tb := []byte(table)
	op := opOf(ctx)
	res, err := s.sendWrites(ctx, "increment", table, rows, func(ctx context.Context, i int) (hrpc.Call, error) {
		return newNoncedIncrement(ctx, op, incs[i].purpose, tb, family, incs[i].row, incs[i].deltas, false)
	})
	errs := make([]error, len(incs))
	for i := range incs {
		errs[i] = batchError(err, res, i)
	}
	return errs
}
