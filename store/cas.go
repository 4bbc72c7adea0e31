package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// Backoff between compare-and-set attempts: none before the second, then
// a random wait up to casBackoffBase doubled each time, at most
// casBackoffMax, so that writers racing on one row spread out instead of
// reading and losing in step.
const (
	casBackoffBase = 50 * time.Microsecond
	casBackoffMax  = 5 * time.Millisecond
)

// casLoop is every read-modify-write of the store (seed 002: no locks; a
// write is a compare-and-set on what was read). It calls try until try
// reports that its write won or returns an error, at most
// Options.MaxAttempts times, backing off between attempts and stopping
// when ctx is done. When every attempt lost it fails with ErrConflict,
// saying what op kept losing.
func (s *Store) casLoop(ctx context.Context, op string, try func(attempt int) (won bool, err error)) error {
	for attempt := 0; attempt < s.maxAttempts; attempt++ {
		if attempt > 0 {
			if err := casBackoff(ctx, attempt); err != nil {
				return err
			}
		}
		won, err := try(attempt)
		if err != nil || won {
			return err
		}
	}
	return fmt.Errorf("%s: %w", op, &Refusal{Kind: ErrConflict, Reason: fmt.Sprintf("concurrent writes to the same rows won all %d attempts: try again", s.maxAttempts)})
}

// casBackoff waits before attempt (1, 2, ...), or until ctx is done.
func casBackoff(ctx context.Context, attempt int) error {
	if attempt < 2 {
		return ctx.Err()
	}
	limit := casBackoffMax
	if shift := attempt - 2; shift < 7 {
		limit = min(limit, casBackoffBase<<shift)
	}
	timer := time.NewTimer(rand.N(limit) + 1)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		// The context too may be done by now (select picks either):
		// a canceled write does not try again.
		return ctx.Err()
	}
}
