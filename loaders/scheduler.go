package loaders

import (
	"context"
	"runtime"
	"sync"

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
// Resolvers are counted by AroundFields; blocked ones by wait. Resolvers of
// the next level start in goroutines gqlgen spawns just before they enter
// AroundFields, so before flushing, the scheduler yields a few times and
// flushes only if nothing started or blocked meanwhile. If a flush is still
// missed, each loader's own timer (Config.Wait) sends its batch.
type scheduler struct {
	flush func(round int) // flushes every loader of the request

	// mu guards the counters.
	mu      sync.Mutex
	running int    // resolvers in progress
	waiting int    // of those, blocked on a loader
	gen     uint64 // bumped on every change, to see a quiet moment
	rounds  int    // flushes so far
}

// settleYields is how often the scheduler yields before trusting that no
// spawned resolver is about to start.
const settleYields = 4

func (s *scheduler) change(running, waiting int) {
	s.mu.Lock()
	s.running += running
	s.waiting += waiting
	s.gen++
	s.mu.Unlock()
}

// dispatch flushes every loader once all running resolvers are blocked.
func (s *scheduler) dispatch() {
	for {
		s.mu.Lock()
		quiet, gen := s.running > 0 && s.running == s.waiting, s.gen
		s.mu.Unlock()
		if !quiet {
			return
		}
		for range settleYields {
			runtime.Gosched()
		}
		s.mu.Lock()
		settled := s.gen == gen
		if settled {
			s.rounds++
		}
		round := s.rounds
		s.mu.Unlock()
		if settled {
			s.flush(round)
			return
		}
	}
}

// wait blocks on a loader's thunk, telling the scheduler.
func wait[V any](ctx context.Context, thunk func() (V, error)) (V, error) {
	s := schedulerOf(ctx)
	if s == nil {
		return thunk()
	}
	s.change(0, +1)
	s.dispatch()
	v, err := thunk()
	s.change(0, -1)
	return v, err
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
	s.change(+1, 0)
	res, err := next(ctx)
	s.change(-1, 0)
	s.dispatch()
	return res, err
}
