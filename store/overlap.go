package store

import "sync"

// overlap runs the steps of a write that do not depend on one another:
// at once with Options.OverlapCalls, each in its own goroutine but the
// first; else one after the other, stopping at the first error, as the
// calls were always made.
//
// Overlapped, every step runs to its end whatever the others answer, so
// the error returned must not hide a write whose outcome is unknown: an
// UNAVAILABLE (any error that is not a definite answer) wins over a
// definite one, else the first error in the steps' order. A caller that
// answers definitely then has not left a write of another step behind
// unseen (an intent placed while the other end answered NOT_FOUND is in
// what the caller collected; one whose call failed is UNAVAILABLE).
func (s *Store) overlap(steps ...func() error) error {
	if !s.overlapCalls || len(steps) < 2 {
		for _, step := range steps {
			if err := step(); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, len(steps))
	var wg sync.WaitGroup
	for i, step := range steps[1:] {
		wg.Go(func() { errs[i+1] = step() })
	}
	errs[0] = steps[0]()
	wg.Wait()
	var first error
	for _, err := range errs {
		if err != nil && !definite(err) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}
