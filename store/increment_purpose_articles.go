package store

import (
	"context"
	"encoding/binary"

	"github.com/tsuna/gohbase/hrpc"
)

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

// purposeIncrement is one Increment of incrementEachPurpose: deltas to
// row, with the nonce of the ctx's op for purpose.
type purposeIncrement struct {
	row     []byte
	deltas  map[string]int64
	purpose string
}

// incrementEachPurpose sends incs (rows may repeat: each its own
// Increment, with its own nonce), writeChunk to a SendBatch, and returns
// each one's error. At the merge with the nonces, each call is built by
// newNoncedIncrement(ctx, opOf(ctx), inc.purpose, ...) instead.
func (s *Store) incrementEachPurpose(ctx context.Context, table, family string, incs []purposeIncrement) []error {
	rows := make([][]byte, len(incs))
	for i, inc := range incs {
		rows[i] = inc.row
	}
	tb := []byte(table)
	res, err := s.sendWrites(ctx, "increment", table, rows, func(ctx context.Context, i int) (hrpc.Call, error) {
		values := make(map[string][]byte, len(incs[i].deltas))
		for q, n := range incs[i].deltas {
			values[q] = binary.BigEndian.AppendUint64(nil, uint64(n))
		}
		return hrpc.NewInc(ctx, tb, incs[i].row, map[string]map[string][]byte{family: values})
	})
	errs := make([]error, len(incs))
	for i := range incs {
		errs[i] = batchError(err, res, i)
	}
	return errs
}
