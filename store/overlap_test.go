package store

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hbgraph/hbgraph/store/keys"
)

// TestOverlapAnswers checks which error overlap returns: one after the
// other, the first, and the steps after it are not run; at once, every
// step runs, an error that leaves an outcome unknown wins over a definite
// one, and otherwise the first in the steps' order.
func TestOverlapAnswers(t *testing.T) {
	notFound := fmt.Errorf("x: %w", ErrNotFound)
	conflict := fmt.Errorf("x: %w", ErrConflict)
	unavailable := fmt.Errorf("x: %w", ErrUnavailable)
	for _, tc := range []struct {
		name            string
		errs            []error
		sequential, all error
		sequentialRuns  int
	}{
		{"none", []error{nil, nil, nil}, nil, nil, 3},
		{"one", []error{nil, notFound, nil}, notFound, notFound, 2},
		{"definite in order", []error{conflict, notFound}, conflict, conflict, 1},
		{"unknown wins", []error{notFound, unavailable}, notFound, unavailable, 1},
		{"first unknown", []error{nil, unavailable, ErrInvalidInput}, unavailable, unavailable, 2},
	} {
		for _, overlapCalls := range []bool{false, true} {
			s := &Store{overlapCalls: overlapCalls}
			var ran atomic.Int32
			steps := make([]func() error, len(tc.errs))
			for i, err := range tc.errs {
				steps[i] = func() error { ran.Add(1); return err }
			}
			got := s.overlap(steps...)
			want, runs := tc.sequential, tc.sequentialRuns
			if overlapCalls {
				want, runs = tc.all, len(tc.errs)
			}
			if got != want || int(ran.Load()) != runs {
				t.Errorf("%s, overlap %v: %v after %d steps, want %v after %d", tc.name, overlapCalls, got, ran.Load(), want, runs)
			}
		}
	}
}

// TestCreateRelationshipOverlappedIntentsLeaveNoneOnAGoneEnd: a create
// whose start node is deleted between its first read and its intents
// answers NOT_FOUND. Overlapped, the intent on the end node is placed
// while the start's fails; the create must take it away, or a deletion
// of the end without detach would answer CONFLICT until it expired.
func TestCreateRelationshipOverlappedIntentsLeaveNoneOnAGoneEnd(t *testing.T) {
	for _, overlapCalls := range []bool{false, true} {
		t.Run(fmt.Sprintf("overlap=%v", overlapCalls), func(t *testing.T) {
			clk := newFakeClock()
			clk.step = 1
			db := openTestEngine(t, clk)
			s, err := New(db, Options{Clock: clk.Now, OverlapCalls: overlapCalls})
			if err != nil {
				t.Fatal(err)
			}
			other, err := New(db, Options{Clock: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			mustNode(t, s, "a", nil)
			mustNode(t, s, "b", nil)
			var once sync.Once
			var deleteErr error
			s.fault = func(point string) error {
				if point == pointRelationshipIntent {
					once.Do(func() { deleteErr = other.DeleteNode(bg, "a", false) })
				}
				return nil
			}
			k := RelationshipKey{"a", "knows", "b"}
			_, err = s.CreateRelationship(bg, k, nil)
			s.fault = nil
			if deleteErr != nil {
				t.Fatalf("deleting the start: %v", deleteErr)
			}
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("create: %v, want NOT_FOUND", err)
			}
			c, err := s.get(bg, keys.TableGraph, keys.FamilyGraph, keys.Node("b"))
			if err != nil {
				t.Fatal(err)
			}
			for q := range c {
				if strings.HasPrefix(q, keys.QualRelIntentPrefix) {
					t.Errorf("an intent is left on the end node: %q", q)
				}
			}
			if err := other.DeleteNode(bg, "b", false); err != nil {
				t.Errorf("deleting the end without detach: %v", err)
			}
		})
	}
}
