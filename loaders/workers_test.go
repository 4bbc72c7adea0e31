package loaders

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestWorkersRunEveryJob runs many jobs from many goroutines at once, more
// than there are workers: each runs exactly once and do returns after it.
func TestWorkersRunEveryJob(t *testing.T) {
	w := newWorkers(3)
	const callers, each = 32, 200
	var ran [callers * each]atomic.Int32
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for i := range each {
				n := c*each + i
				done := false
				w.do(func() { ran[n].Add(1); done = true })
				if !done {
					t.Errorf("job %d: do returned before it ran", n)
				}
			}
		})
	}
	wg.Wait()
	for n := range ran {
		if got := ran[n].Load(); got != 1 {
			t.Fatalf("job %d ran %d times", n, got)
		}
	}
}

// TestWorkersNeverHoldBack checks that with every worker busy a job runs
// at once in its caller rather than waiting for one.
func TestWorkersNeverHoldBack(t *testing.T) {
	w := newWorkers(2)
	release := make(chan struct{})
	var busy sync.WaitGroup
	for range 2 {
		busy.Add(1)
		go w.do(func() { busy.Done(); <-release })
	}
	busy.Wait() // both workers (or callers) are blocked
	ran := make(chan struct{})
	go func() {
		w.do(func() {})
		close(ran)
	}()
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("a job waited for a busy worker")
	}
	close(release)
}

// goroutineID is the current goroutine's number, from its stack header.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return strings.Fields(string(buf))[1]
}

// onWorker runs jobs until one runs on a worker rather than in the caller
// (a worker takes jobs only once it is parked waiting for one).
func onWorker(t *testing.T, w *workers) {
	t.Helper()
	for range 10000 {
		caller, ran := goroutineID(), ""
		w.do(func() { ran = goroutineID() })
		if ran != caller {
			return
		}
		runtime.Gosched()
	}
	t.Fatal("no job ran on a worker")
}

// TestWorkersRaisePanicsInTheCaller checks that a panic in a job that runs
// on a worker reaches the caller of do (where dataloader recovers it) and
// leaves the worker serving.
func TestWorkersRaisePanicsInTheCaller(t *testing.T) {
	w := newWorkers(1)
	panicked := func() (onWorker bool) {
		caller, ran := goroutineID(), ""
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want boom", r)
			}
			onWorker = ran != caller
		}()
		w.do(func() { ran = goroutineID(); panic("boom") })
		t.Error("do returned after a panic")
		return false
	}
	for worker := 0; worker < 3; {
		if panicked() {
			worker++
		}
		runtime.Gosched()
	}
	onWorker(t, w)
}
