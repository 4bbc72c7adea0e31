package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/hbgraph/hbgraph/store/pagescan"
)

// atomically runs op in one transaction of an engine that has them (the
// embedded engine: pagescan.TxBeginner), so that its calls apply together
// at its end or not at all, with no other write between them: one of the
// orders a cluster may run them in, without a commit of the engine per
// call, and without a crash between two of them. op runs again without a
// transaction when the transaction cannot go on (ErrTxConflict: nothing of
// it was applied), and always without one when a test cuts operations
// short at their fault points.
//
// A definite answer commits what op wrote (a create that lost cleans up
// after itself); any other error applies nothing of it, which its
// "unknown" allows.
func (s *Store) atomically(ctx context.Context, op func(ctx context.Context) error) error {
	b, ok := s.hc.(pagescan.TxBeginner)
	if !ok || s.fault != nil {
		return op(ctx)
	}
	txCtx, tx := b.BeginTx(ctx)
	defer tx.Discard() // (after Commit: nothing; after a panic: the rows go free)
	err := op(context.WithValue(txCtx, inTxKey{}, true))
	switch {
	case errors.Is(err, pagescan.ErrTxConflict):
		tx.Discard()
	case definite(err):
		cerr := tx.Commit()
		if cerr == nil {
			return err
		}
		if !errors.Is(cerr, pagescan.ErrTxConflict) {
			return fmt.Errorf("commit: %w: %w", ErrUnavailable, cerr)
		}
	default:
		tx.Discard()
		return err
	}
	return op(ctx)
}

type inTxKey struct{}

// inTx tells whether ctx's calls are those of a transaction (atomically).
func (s *Store) inTx(ctx context.Context) bool {
	in, _ := ctx.Value(inTxKey{}).(bool)
	return in
}
