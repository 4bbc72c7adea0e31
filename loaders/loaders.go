// Package loaders batches the store reads of one GraphQL operation: every
// Get of the same kind made while resolving one level of a query goes out as
// one SendBatch, and every page scan of that level runs concurrently, so the
// number of store round trips follows the query's depth, not its fan-out.
//
// Loaders are built per request by Middleware and fetched with For. A batch
// runs with the context of its first Load, which carries the request's
// deadline and store tracer: loaders must never outlive their request.
package loaders

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/graph-gophers/dataloader/v7"
	"golang.org/x/sync/errgroup"

	"github.com/hbgraph/hbgraph/store"
)

// Config tunes batching.
type Config struct {
	// Wait is how long a loader waits for more keys before it sends a batch
	// by itself. The request's scheduler normally sends batches sooner (as
	// soon as no running resolver can add a key); Wait only bounds the delay
	// when it cannot tell (loads made outside a resolver).
	Wait time.Duration
	// BatchSize caps keys per batch (one SendBatch per table, or one group
	// of concurrent scans). One level of a query with 100-edge pages reads a
	// few hundred rows, which should stay one batch; 1 turns batching off,
	// for comparison.
	BatchSize int
	// ScanConcurrency bounds the concurrent page scans of one batch.
	ScanConcurrency int
}

// DefaultConfig is what the server uses unless told otherwise.
var DefaultConfig = Config{Wait: 10 * time.Millisecond, BatchSize: 1000, ScanConcurrency: 16}

// AdjacencyKey selects one page of a node's relationships.
type AdjacencyKey struct {
	Node string
	Type string
	Dir  store.Direction
	Page store.PageRequest
}

// ArticlesKey selects one page of an author's articles. The window bounds
// are Unix milliseconds; Has* tell whether a bound is set.
type ArticlesKey struct {
	Author              string
	Category            string
	After, Before       int64
	HasAfter, HasBefore bool
	Page                store.PageRequest
}

// WordCountsKey selects an author's n most frequent words.
type WordCountsKey struct {
	Author string
	N      int
}

// Loaders are the dataloaders of one operation: one for row reads, whose
// batches go out as one SendBatch per table, and one per kind of page scan.
// Their methods may be called from the operation's resolvers concurrently;
// each blocks until its batch has been answered.
type Loaders struct {
	rows         *loader[store.Get, store.Row]
	adjacency    *loader[AdjacencyKey, store.RelationshipPage]
	articlePages *loader[ArticlesKey, store.ArticlePage]

	sched *scheduler
}

// startRead starts loading the row g names (err is g's own error); the
// returned func waits for it and decodes it.
func startRead[T any](ctx context.Context, l *Loaders, g store.Get, err error, decode func(store.Row) (T, error)) func() (T, error) {
	if err != nil {
		return func() (T, error) {
			var zero T
			return zero, err
		}
	}
	thunk := l.rows.load(ctx, g)
	return func() (T, error) {
		row, err := wait(ctx, l.rows.on(g), thunk)
		if err != nil {
			var zero T
			return zero, err
		}
		return decode(row)
	}
}

// readAs loads the row g names and decodes it.
func readAs[T any](ctx context.Context, l *Loaders, g store.Get, err error, decode func(store.Row) (T, error)) (T, error) {
	return startRead(ctx, l, g, err, decode)()
}

// Node returns a node, nil if it does not exist.
func (l *Loaders) Node(ctx context.Context, id string) (*store.Node, error) {
	g, err := store.NodeGet(id)
	return readAs(ctx, l, g, err, func(r store.Row) (*store.Node, error) { return r.Node(id) })
}

// readMany reads many rows with one wait, after every key has joined the
// batch, and decodes each; errs[i] is the error of gets[i] (a key that
// could not be built, or its decoding).
func readMany[T any](ctx context.Context, l *Loaders, gets []store.Get, errs []error, decode func(i int, r store.Row) (T, error)) ([]T, []error) {
	thunks := make([]dataloader.Thunk[store.Row], len(gets))
	var valid []store.Get
	for i, g := range gets {
		if errs[i] == nil {
			thunks[i] = l.rows.load(ctx, g)
			valid = append(valid, g)
		}
	}
	out := make([]T, len(gets))
	_, _ = wait(ctx, l.rows.on(valid...), func() (struct{}, error) {
		for i, thunk := range thunks {
			if thunk == nil {
				continue
			}
			row, err := thunk()
			if err == nil {
				out[i], err = decode(i, row)
			}
			errs[i] = err
		}
		return struct{}{}, nil
	})
	return out, errs
}

// Nodes returns nodes in the order of ids, nil where one does not exist.
// errs[i] is the error of ids[i].
func (l *Loaders) Nodes(ctx context.Context, ids []string) ([]*store.Node, []error) {
	gets := make([]store.Get, len(ids))
	errs := make([]error, len(ids))
	for i, id := range ids {
		gets[i], errs[i] = store.NodeGet(id)
	}
	return readMany(ctx, l, gets, errs, func(i int, r store.Row) (*store.Node, error) { return r.Node(ids[i]) })
}

// Relationships is Relationship for many keys, with one wait.
func (l *Loaders) Relationships(ctx context.Context, ks []store.RelationshipKey) ([]*store.Relationship, []error) {
	gets := make([]store.Get, len(ks))
	errs := make([]error, len(ks))
	for i, k := range ks {
		gets[i], errs[i] = k.Get()
	}
	return readMany(ctx, l, gets, errs, func(i int, r store.Row) (*store.Relationship, error) { return r.Relationship(ks[i]) })
}

// Articles is Article for many ids, with one wait.
func (l *Loaders) Articles(ctx context.Context, ids []string) ([]*store.Article, []error) {
	gets := make([]store.Get, len(ids))
	errs := make([]error, len(ids))
	for i, id := range ids {
		gets[i], errs[i] = store.ArticleGet(id)
	}
	return readMany(ctx, l, gets, errs, func(i int, r store.Row) (*store.Article, error) { return r.Article(ids[i]) })
}

// Relationship returns a relationship, nil if it does not exist.
func (l *Loaders) Relationship(ctx context.Context, k store.RelationshipKey) (*store.Relationship, error) {
	g, err := k.Get()
	return readAs(ctx, l, g, err, func(r store.Row) (*store.Relationship, error) { return r.Relationship(k) })
}

// Article returns an article, nil if it does not exist.
func (l *Loaders) Article(ctx context.Context, id string) (*store.Article, error) {
	g, err := store.ArticleGet(id)
	return readAs(ctx, l, g, err, func(r store.Row) (*store.Article, error) { return r.Article(id) })
}

// Degree starts loading a degree counter; the returned func waits for it.
func (l *Loaders) Degree(ctx context.Context, k store.DegreeKey) func() (int64, error) {
	g, err := k.Get()
	return startRead(ctx, l, g, err, store.Row.Degree)
}

// ArticleCount starts loading an article counter; the returned func waits
// for it.
func (l *Loaders) ArticleCount(ctx context.Context, k store.ArticleCountKey) func() (int64, error) {
	g, err := k.Get()
	return startRead(ctx, l, g, err, func(r store.Row) (int64, error) { return r.ArticleCount(k.Category) })
}

// WordCounts returns an author's most frequent words.
func (l *Loaders) WordCounts(ctx context.Context, k WordCountsKey) ([]store.WordCount, error) {
	g, err := store.WordCountsGet(k.Author)
	return readAs(ctx, l, g, err, func(r store.Row) ([]store.WordCount, error) { return r.TopWords(k.N) })
}

// Adjacency returns a page of a node's relationships.
func (l *Loaders) Adjacency(ctx context.Context, k AdjacencyKey) (store.RelationshipPage, error) {
	return wait(ctx, l.adjacency.on(k), l.adjacency.load(ctx, k))
}

// ArticlePage returns a page of an author's articles.
func (l *Loaders) ArticlePage(ctx context.Context, k ArticlesKey) (store.ArticlePage, error) {
	return wait(ctx, l.articlePages.on(k), l.articlePages.load(ctx, k))
}

// Prefetch starts loads whose results a child field will ask for: their
// keys join the current batches now, while the caller still runs, instead
// of when the child's resolver gets to run. Keys are node ids (string),
// AdjacencyKey, ArticlesKey, WordCountsKey, store.DegreeKey and
// store.ArticleCountKey; a later load of the same key is answered by the
// same batch. An invalid key is left for the child to report.
func (l *Loaders) Prefetch(ctx context.Context, keys ...any) {
	for _, k := range keys {
		var g store.Get
		var err error
		switch k := k.(type) {
		case AdjacencyKey:
			l.adjacency.load(ctx, k)
			continue
		case ArticlesKey:
			l.articlePages.load(ctx, k)
			continue
		case string:
			g, err = store.NodeGet(k)
		case WordCountsKey:
			g, err = store.WordCountsGet(k.Author)
		case store.DegreeKey:
			g, err = k.Get()
		case store.ArticleCountKey:
			g, err = k.Get()
		default:
			panic(fmt.Sprintf("loaders: cannot prefetch a %T", k))
		}
		if err == nil {
			l.rows.load(ctx, g)
		}
	}
}

// flush sends every pending batch now, as dispatch round round.
func (l *Loaders) flush(round int) {
	l.rows.flush(round)
	l.adjacency.flush(round)
	l.articlePages.flush(round)
}

// loader is a dataloader whose batches report the dispatch round that sent
// them.
type loader[K comparable, V any] struct {
	*dataloader.Loader[K, V]
	sched *scheduler

	// mu guards the maps: the resolvers blocked on each key, the keys
	// loaded since the last flush, and the round that flushed each key
	// whose batch has not started yet.
	mu      sync.Mutex
	waiters map[K][]*waiter
	pending map[K]bool
	flushed map[K]int
	// loaded are the keys loaded so far; done those whose value is at
	// hand (answered, or primed before any load), which need no waiting.
	loaded, done map[K]bool
}

// load is Load, noting the key for the round that will send it.
func (l *loader[K, V]) load(ctx context.Context, k K) dataloader.Thunk[V] {
	l.mu.Lock()
	if l.loaded == nil {
		l.loaded, l.pending = make(map[K]bool), make(map[K]bool)
	}
	l.loaded[k] = true
	if !l.done[k] {
		l.pending[k] = true
	}
	l.mu.Unlock()
	return l.Load(ctx, k)
}

// prime caches v for k. A key loaded before is left to its batch (Prime
// does not replace it) and so is not marked done.
func (l *loader[K, V]) prime(ctx context.Context, k K, v V) {
	l.Prime(ctx, k, v)
	l.mu.Lock()
	if !l.loaded[k] {
		l.markDone(k)
	}
	l.mu.Unlock()
}

// markDone notes that k's value is at hand; l.mu must be held.
func (l *loader[K, V]) markDone(k K) {
	if l.done == nil {
		l.done = make(map[K]bool)
	}
	l.done[k] = true
}

// flush sends the pending batch as part of dispatch round round.
func (l *loader[K, V]) flush(round int) {
	l.mu.Lock()
	if len(l.pending) > 0 && l.flushed == nil {
		l.flushed = make(map[K]int)
	}
	for k := range l.pending {
		// A key loaded again (a cache hit) before its batch started keeps
		// the round that sent it.
		if _, ok := l.flushed[k]; !ok {
			l.flushed[k] = round
		}
	}
	clear(l.pending)
	l.mu.Unlock()
	l.Flush()
}

// inRound tags ctx with the round that sent the batch of keys starting
// now. The round is the batch's own, noted at the flush: its goroutine may
// start after the next flush has begun. A batch the loader sent by itself
// (full, or its timer) was gathered for the coming round.
func (l *loader[K, V]) inRound(ctx context.Context, keys []K) context.Context {
	round := 0
	l.mu.Lock()
	for _, k := range keys {
		if r, ok := l.flushed[k]; ok {
			if round == 0 || r < round {
				round = r
			}
			delete(l.flushed, k)
		}
		delete(l.pending, k)
	}
	l.mu.Unlock()
	if round == 0 {
		round = l.sched.round() + 1
	}
	return store.WithRound(ctx, round)
}

// on returns the function that files a waiter under keys, or nil when
// every key's value is at hand: waiting for them blocks on no batch, and
// telling the scheduler would only make it settle for nothing.
func (l *loader[K, V]) on(keys ...K) func(*waiter) {
	l.mu.Lock()
	ready := true
	for _, k := range keys {
		if !l.done[k] {
			ready = false
			break
		}
	}
	l.mu.Unlock()
	if ready {
		return nil
	}
	return func(w *waiter) {
		l.mu.Lock()
		if l.waiters == nil {
			l.waiters = make(map[K][]*waiter)
		}
		for _, k := range keys {
			l.waiters[k] = append(l.waiters[k], w)
		}
		l.mu.Unlock()
	}
}

// answered wakes the waiters of keys whose batch has just answered.
func (l *loader[K, V]) answered(keys []K) {
	var ws []*waiter
	l.mu.Lock()
	for _, k := range keys {
		ws = append(ws, l.waiters[k]...)
		delete(l.waiters, k)
		l.markDone(k)
	}
	l.mu.Unlock()
	l.sched.wake(ws)
}

// New builds the loaders of one operation over s.
func New(s *store.Store, cfg Config) *Loaders {
	l := &Loaders{}
	l.sched = newScheduler(l.flush)
	l.rows = newLoader(cfg, l.sched, s.Read)
	l.adjacency = newScanLoader(cfg, l.sched, func(ctx context.Context, k AdjacencyKey) (store.RelationshipPage, error) {
		page, err := s.Adjacent(ctx, k.Node, k.Type, k.Dir, k.Page)
		for _, p := range page.Primed { // a relationship read from the index need not be read again
			l.rows.prime(ctx, p.Get, p.Row)
		}
		return page, err
	})
	l.articlePages = newScanLoader(cfg, l.sched, func(ctx context.Context, k ArticlesKey) (store.ArticlePage, error) {
		var q store.ArticleQuery
		q.Category = k.Category
		if k.HasAfter {
			t := time.UnixMilli(k.After)
			q.PostedAfter = &t
		}
		if k.HasBefore {
			t := time.UnixMilli(k.Before)
			q.PostedBefore = &t
		}
		page, err := s.Articles(ctx, k.Author, q, k.Page)
		for _, p := range page.Primed {
			l.rows.prime(ctx, p.Get, p.Row)
		}
		return page, err
	})
	return l
}

// inputCapacity is the buffer of the channel that carries a batch's keys to
// its goroutine, which drains it as keys arrive. dataloader's default, 1000,
// allocates and zeroes 8 KiB for every batch; a Load finding the buffer
// full waits for the drain, which wide batches can afford.
const inputCapacity = 64

func options[K comparable, V any](cfg Config) []dataloader.Option[K, V] {
	return []dataloader.Option[K, V]{
		dataloader.WithWait[K, V](cfg.Wait),
		dataloader.WithBatchCapacity[K, V](max(cfg.BatchSize, 1)),
		dataloader.WithInputCapacity[K, V](inputCapacity),
	}
}

// newBatchLoader builds a loader whose batch function runs in the context
// of the round that sent it.
func newBatchLoader[K comparable, V any](cfg Config, sched *scheduler, batch dataloader.BatchFunc[K, V]) *loader[K, V] {
	l := &loader[K, V]{sched: sched}
	pool := batchWorkers()
	l.Loader = dataloader.NewBatchedLoader(func(ctx context.Context, ks []K) []*dataloader.Result[V] {
		var res []*dataloader.Result[V]
		pool.do(func() { res = batch(l.inRound(ctx, ks), ks) })
		l.answered(ks)
		return res
	}, options[K, V](cfg)...)
	return l
}

// newLoader wraps a store call that answers a batch of keys in order.
func newLoader[K comparable, V any](cfg Config, sched *scheduler, fetch func(context.Context, []K) ([]V, error)) *loader[K, V] {
	return newBatchLoader(cfg, sched, func(ctx context.Context, ks []K) []*dataloader.Result[V] {
		vs, err := fetch(ctx, ks)
		out := make([]*dataloader.Result[V], len(ks))
		for i := range ks {
			if err != nil {
				out[i] = &dataloader.Result[V]{Error: err}
			} else {
				out[i] = &dataloader.Result[V]{Data: vs[i]}
			}
		}
		return out
	})
}

// newScanLoader runs one scan per key (see scanEach).
func newScanLoader[K comparable, V any](cfg Config, sched *scheduler, scan func(context.Context, K) (V, error)) *loader[K, V] {
	return newBatchLoader(cfg, sched, func(ctx context.Context, ks []K) []*dataloader.Result[V] {
		return scanEach(ctx, cfg.ScanConcurrency, ks, scan)
	})
}

// scanEach runs scan for each key, at most limit at a time, and returns
// the results in the order of ks. A limit of 1 (or less) runs them one
// after another in the caller's goroutine.
func scanEach[K, V any](ctx context.Context, limit int, ks []K, scan func(context.Context, K) (V, error)) []*dataloader.Result[V] {
	out := make([]*dataloader.Result[V], len(ks))
	if limit <= 1 {
		for i, k := range ks {
			v, err := scan(ctx, k)
			out[i] = &dataloader.Result[V]{Data: v, Error: err}
		}
		return out
	}
	var g errgroup.Group
	g.SetLimit(limit)
	for i, k := range ks {
		g.Go(func() error {
			v, err := scan(ctx, k)
			out[i] = &dataloader.Result[V]{Data: v, Error: err}
			return nil
		})
	}
	_ = g.Wait()
	return out
}

type ctxKey struct{}

// Middleware installs a fresh set of loaders in every request's context.
func Middleware(s *store.Store, cfg Config, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l := New(s, cfg)
		ctx := context.WithValue(r.Context(), ctxKey{}, l)
		ctx = context.WithValue(ctx, schedulerKey{}, l.sched)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// For returns the loaders of the request ctx belongs to. It panics when
// Middleware did not run: a wiring bug, caught by the recover func.
func For(ctx context.Context) *Loaders {
	return ctx.Value(ctxKey{}).(*Loaders)
}
