package loaders

import (
	"runtime"
	"sync"
)

// workers run batch functions on long-lived goroutines.
//
// A batch function goes deep into the store (on the embedded engine, into
// Pebble's iterators). Run in the fresh goroutine dataloader starts for each
// batch, it grows that goroutine's stack from a few KiB, copying it at each
// doubling: 3-4% of the server's CPU on Q2. A worker's stack stays grown
// from one batch to the next (until a GC finds it idle and shrinks it).
//
// When every worker is busy, the batch runs where it is, as before: the
// pool never holds a batch back and never bounds how many run at once
// (against a cluster, batches wait on round trips, not on CPU).
type workers struct {
	jobs chan *job
}

type job struct {
	run      func()
	done     chan struct{}
	panicked any // what run panicked with, re-raised in the caller
}

// newWorkers starts n workers; they live as long as the process.
func newWorkers(n int) *workers {
	w := &workers{jobs: make(chan *job)}
	for range n {
		go w.serve()
	}
	return w
}

func (w *workers) serve() {
	for j := range w.jobs {
		func() {
			defer func() {
				j.panicked = recover()
				close(j.done)
			}()
			j.run()
		}()
	}
}

// do runs f on an idle worker, or here if none is idle, and returns when f
// has. A panic in f is raised again here, where dataloader recovers it.
func (w *workers) do(f func()) {
	j := &job{run: f, done: make(chan struct{})}
	select {
	case w.jobs <- j:
	default:
		f()
		return
	}
	<-j.done
	if j.panicked != nil {
		panic(j.panicked)
	}
}

var (
	batchWorkersOnce sync.Once
	batchWorkersPool *workers
)

// batchWorkers is the process's pool: a few workers per core, enough to
// keep the cores busy with store work while resolvers wait.
func batchWorkers() *workers {
	batchWorkersOnce.Do(func() { batchWorkersPool = newWorkers(4 * runtime.GOMAXPROCS(0)) })
	return batchWorkersPool
}
