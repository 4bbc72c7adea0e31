package loaders

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// scheduler sends the batches of one request as soon as they are complete.
//
// A batch of a level is complete when every resolver that is running is
// blocked on a loader: no running resolver can add a key any more. Then all
// loaders are flushed at once, so the store calls of one level of the query
// go out together, as one wave. Timers cannot do this here: Go timers below
// a millisecond fire after about 1.15 ms on these machines, and each loader
// would fire on its own.
//
// Resolvers are counted by AroundFields; blocked ones by wait, until the
// batch they wait for answers (then they are waking: runnable, and about to
// add the next level's keys, so not quiet). Resolvers of
// the next level start in goroutines gqlgen spawns just before they enter
// AroundFields, so before flushing, the scheduler lets them run and flushes
// only once nothing has started or blocked for settleQuiet. If a flush is still
// missed, each loader's own timer (Config.Wait) sends its batch.
type scheduler struct {
	flush    func(round int) // flushes every loader of the request
	settling atomic.Bool     // a goroutine is waiting for a quiet moment

	// mu guards the counters.
	mu      sync.Mutex
	running int    // resolvers in progress
	waiting int    // of those, blocked on a batch that has not answered
	waking  int    // of those, whose batch has answered: about to run
	gen     uint64 // bumped on every change, to see a quiet moment
	rounds  int    // flushes so far

	// The first wave needs no settling: until a root field's resolver
	// returns, no child can have been spawned, so once every root field
	// has started and all are blocked, nothing more can join the batch.
	// roots is the operation's root field count (-1 until known).
	roots, rootsStarted, rootsReturned int
}

// newScheduler returns a scheduler that flushes with flush.
func newScheduler(flush func(round int)) *scheduler {
	return &scheduler{flush: flush, roots: -1}
}

// waiter is one resolver blocked on a loader; woken tells whether its
// batch has answered.
type waiter struct{ woken bool }

// wake moves the waiters of an answered batch from waiting to waking: they
// are not blocked any more, only not yet running, and the keys they will
// load next belong in the coming flush.
func (s *scheduler) wake(ws []*waiter) {
	s.mu.Lock()
	for _, w := range ws {
		if !w.woken {
			w.woken = true
			s.waiting--
			s.waking++
		}
	}
	s.gen++
	s.mu.Unlock()
}

// settleQuiet is how long nothing may change before the scheduler trusts
// that no spawned resolver is about to start. Starting a goroutine and
// entering a resolver takes a few microseconds.
const settleQuiet = 30 * time.Microsecond

// dispatch flushes every loader once all running resolvers are blocked.
// One goroutine at a time settles; the others only changed the counters,
// which the settling one sees.
func (s *scheduler) dispatch() {
	for s.settling.CompareAndSwap(false, true) {
		flushed := s.settle()
		s.settling.Store(false)
		if flushed || !s.quiet() {
			return
		}
		// It turned quiet while the settler was giving up: settle again.
	}
}

// round is the number of flushes so far: batches starting now were sent
// by the latest one.
func (s *scheduler) round() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rounds
}

func (s *scheduler) quiet() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running > 0 && s.running == s.waiting && s.waking == 0
}

// settle waits until the request has been quiet (every running resolver
// blocked, no change) for settleQuiet, yielding meanwhile so that spawned
// resolvers get to start, and then flushes; it gives up (false) as soon as
// a resolver is running. Siblings that keep starting keep restarting the
// quiet period, so a level's keys all make its batch, however wide.
func (s *scheduler) settle() bool {
	s.mu.Lock()
	gen := s.gen
	s.mu.Unlock()
	since := time.Now()
	for first := true; ; first = false {
		// The first wave is checked before yielding: under load a yield
		// waits behind every runnable goroutine of every request.
		if !first {
			runtime.Gosched()
		}
		s.mu.Lock()
		quiet := s.running > 0 && s.running == s.waiting && s.waking == 0
		changed := s.gen != gen
		gen = s.gen
		firstWave := s.rounds == 0 && s.rootsStarted == s.roots && s.rootsReturned == 0
		if quiet && (firstWave || !first && !changed && time.Since(since) >= settleQuiet) {
			s.rounds++
			round := s.rounds
			s.mu.Unlock()
			s.flush(round)
			return true
		}
		s.mu.Unlock()
		if !quiet {
			return false
		}
		if changed {
			since = time.Now()
		}
	}
}

// wait blocks on a loader's thunk, telling the scheduler. register files
// the waiter under the keys it waits for, so that the batch answering them
// can wake it (see scheduler.wake); nil means the values are at hand.
func wait[V any](ctx context.Context, register func(*waiter), thunk func() (V, error)) (V, error) {
	s := schedulerOf(ctx)
	if s == nil || register == nil {
		return thunk()
	}
	w := &waiter{}
	s.mu.Lock()
	s.waiting++
	s.gen++
	s.mu.Unlock()
	register(w)
	s.dispatch()
	v, err := thunk()
	s.mu.Lock()
	if w.woken {
		s.waking--
	} else {
		s.waiting-- // answered from the cache, or by a batch that did not wake it
		w.woken = true
	}
	s.gen++
	s.mu.Unlock()
	return v, err
}

// isRoot tells whether fc is a root field's (a field of Query or
// Mutation, not of a type inside them).
func isRoot(fc *graphql.FieldContext) bool {
	return fc != nil && fc.Parent == nil && (fc.Object == "Query" || fc.Object == "Mutation")
}

// rootFields counts the operation's root fields that go through
// AroundField. An overcount (e.g. __typename, resolved without a resolver)
// only means the first wave settles as the others do.
func rootFields(ctx context.Context) int {
	oc := graphql.GetOperationContext(ctx)
	if oc == nil || oc.Operation == nil {
		return 1 << 30
	}
	return len(graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Query", "Mutation"}))
}

type schedulerKey struct{}

func schedulerOf(ctx context.Context) *scheduler {
	s, _ := ctx.Value(schedulerKey{}).(*scheduler)
	return s
}

// AroundField is the gqlgen field middleware that lets the scheduler count
// running resolvers. Install it with handler.Server.AroundFields.
func AroundField(ctx context.Context, next graphql.Resolver) (any, error) {
	s := schedulerOf(ctx)
	if s == nil {
		return next(ctx)
	}
	// A struct field's value is at hand; only resolvers and methods can
	// load. Counting the rest would only contend for the lock.
	fc := graphql.GetFieldContext(ctx)
	if fc != nil && !fc.IsResolver && !fc.IsMethod {
		return next(ctx)
	}
	root := isRoot(fc)
	s.mu.Lock()
	s.running++
	s.gen++
	if root {
		if s.roots < 0 {
			s.roots = rootFields(ctx)
		}
		s.rootsStarted++
	}
	s.mu.Unlock()
	res, err := next(ctx)
	s.mu.Lock()
	s.running--
	s.gen++
	if root {
		s.rootsReturned++
	}
	s.mu.Unlock()
	// This goroutine goes on to start the field's children; settling here
	// would hold them back until after the flush they belong in.
	if s.quiet() && !s.settling.Load() {
		go s.dispatch()
	}
	return res, err
}
