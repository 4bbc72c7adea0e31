package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/store/hbasefault"
)

// TestCASLoop: the one compare-and-set loop stops at its first win or
// error, gives up with ErrConflict after Options.MaxAttempts losses, and
// stops when its context is done.
func TestCASLoop(t *testing.T) {
	s := newTestStore(t)
	s.maxAttempts = 5
	ctx := context.Background()

	calls := 0
	if err := s.casLoop(ctx, "op", func(attempt int) (bool, error) {
		calls++
		return attempt == 2, nil
	}); err != nil || calls != 3 {
		t.Errorf("won on the third attempt: %v after %d calls", err, calls)
	}
	calls = 0
	boom := errors.New("boom")
	if err := s.casLoop(ctx, "op", func(int) (bool, error) { calls++; return false, boom }); err != boom || calls != 1 {
		t.Errorf("an error: %v after %d calls", err, calls)
	}
	calls = 0
	err := s.casLoop(ctx, "op", func(int) (bool, error) { calls++; return false, nil })
	if !errors.Is(err, ErrConflict) || calls != 5 {
		t.Errorf("always losing: %v after %d calls, want ErrConflict after 5", err, calls)
	}
	cctx, cancel := context.WithCancel(ctx)
	calls = 0
	err = s.casLoop(cctx, "op", func(int) (bool, error) {
		calls++
		if calls == 2 {
			cancel()
		}
		return false, nil
	})
	if !errors.Is(err, context.Canceled) || calls != 2 {
		t.Errorf("canceled after the second attempt: %v after %d calls", err, calls)
	}
}

// TestDeadline: a call gets the call timeout unless its context ends
// sooner (a wave's CallDeadline), when it sets no deadline of its own;
// a call to an engine in this process gets none (its caller's only).
func TestDeadline(t *testing.T) {
	inProcess := newTestStore(t)
	far, cancelFar := context.WithTimeout(context.Background(), time.Hour)
	defer cancelFar()
	for _, ctx := range []context.Context{context.Background(), far} {
		if got, _ := inProcess.deadline(ctx); got != ctx {
			t.Error("a call to the engine in this process made a context of its own")
		}
		if got, _ := inProcess.batchDeadline(ctx, 100); got != ctx {
			t.Error("a batch to the engine in this process made a context of its own")
		}
	}
	// Over a client with round trips (the fault injector, as a cluster).
	s, err := New(hbasefault.New(openTestEngine(t, nil)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := s.deadline(context.Background())
	defer cancel()
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > s.callTimeout {
		t.Errorf("no deadline within the call timeout: %v %v", d, ok)
	}
	wave, cancelWave := s.CallDeadline(context.Background())
	defer cancelWave()
	if got, _ := s.deadline(wave); got != wave {
		t.Error("a call under a wave's deadline made a context of its own")
	}
	if got, _ := s.deadline(far); got == far {
		t.Error("a call under an hour's deadline kept it")
	}
}
