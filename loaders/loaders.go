// Package loaders batches the store reads of an operation.
//
// Queries run on graph/plan, whose levels are its waves: the Fetcher (one
// batch per kind of read per level, no waiting). What gqlgen's executor
// still resolves field by field (a mutation's result, `--executor gqlgen`)
// goes through Loaders: dataloaders that gather the Gets and page scans
// their resolvers ask for within Config.Wait and send them as one
// SendBatch per table and one group of scans.
//
// Loaders are built per request by Middleware and fetched with For. A batch
// runs with the context of its first Load, which carries the request's
// deadline and store tracer: loaders must never outlive their request.
package loaders

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/graph-gophers/dataloader/v7"
	"golang.org/x/sync/errgroup"

	"github.com/hbgraph/hbgraph/store"
	"github.com/hbgraph/hbgraph/tracing"
)

// Config tunes batching.
type Config struct {
	// Wait is how long a loader gathers keys before it sends a batch: the
	// resolvers of one level start within it (gqlgen starts them at once,
	// each in its goroutine).
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
var DefaultConfig = Config{Wait: time.Millisecond, BatchSize: 1000, ScanConcurrency: 16}

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
	// Feed, when set, makes the key a page of Author's home feed of that
	// relationship type (store.Feed) instead of Author's own articles.
	Feed string
	// NoBody reads the page without the articles' bodies
	// (store.ArticleQuery.NoBody); a feed page ignores it.
	NoBody bool
}

// Loaders are the dataloaders of one operation: one for row reads, whose
// batches go out as one SendBatch per table, and one per kind of page scan.
// Their methods may be called from the operation's resolvers concurrently;
// each blocks until its batch has been answered.
type Loaders struct {
	rows         *dataloader.Loader[store.Get, store.Row]
	adjacency    *dataloader.Loader[AdjacencyKey, store.RelationshipPage]
	articlePages *dataloader.Loader[ArticlesKey, store.ArticlePage]
}

// Node returns a node, nil if it does not exist.
func (l *Loaders) Node(ctx context.Context, id string) (*store.Node, error) {
	nodes, errs := l.Nodes(ctx, []string{id})
	return nodes[0], errs[0]
}

// readMany reads many rows with one wait, after every key has joined the
// batch, and decodes each; errs[i] is the error of gets[i] (a key that
// could not be built, or its decoding).
func readMany[T any](ctx context.Context, l *Loaders, gets []store.Get, errs []error, decode func(i int, r store.Row) (T, error)) ([]T, []error) {
	thunks := make([]dataloader.Thunk[store.Row], len(gets))
	for i, g := range gets {
		if errs[i] == nil {
			thunks[i] = l.rows.Load(ctx, g)
		}
	}
	out := make([]T, len(gets))
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

// Rows is the request's row loader as the fields' reads take it
// (fields.Read.Start): gets join the coming batch at once; the returned
// func waits for their rows (the first error, else the rows in order).
func (l *Loaders) Rows(ctx context.Context) func(gets []store.Get) func() ([]store.Row, error) {
	return func(gets []store.Get) func() ([]store.Row, error) {
		thunks := make([]dataloader.Thunk[store.Row], len(gets))
		for i, g := range gets {
			thunks[i] = l.rows.Load(ctx, g)
		}
		return func() ([]store.Row, error) {
			rows := make([]store.Row, len(thunks))
			for i, thunk := range thunks {
				var err error
				if rows[i], err = thunk(); err != nil {
					return nil, err
				}
			}
			return rows, nil
		}
	}
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Adjacency returns a page of a node's relationships.
func (l *Loaders) Adjacency(ctx context.Context, k AdjacencyKey) (store.RelationshipPage, error) {
	return l.adjacency.Load(ctx, k)()
}

// ArticlePage returns a page of an author's articles.
func (l *Loaders) ArticlePage(ctx context.Context, k ArticlesKey) (store.ArticlePage, error) {
	return l.articlePages.Load(ctx, k)()
}

// New builds the loaders of one operation over s.
func New(s *store.Store, cfg Config) *Loaders {
	l := &Loaders{}
	l.rows = newLoader(cfg, "rows", s.Read)
	l.adjacency = newScanLoader(cfg, "relationships", func(ctx context.Context, k AdjacencyKey) (store.RelationshipPage, error) {
		page, err := s.AdjacentIndex(ctx, k.Node, k.Type, k.Dir, k.Page)
		if err != nil {
			return page, err
		}
		// The ends are read through the rows loader: batched with the
		// other pages' and the request's reads, and cached for the fields
		// that resolve the far nodes next.
		gets := page.EndGets()
		rows, errs := readMany(tracing.BesideWave(ctx), l, gets, make([]error, len(gets)), func(_ int, r store.Row) (store.Row, error) { return r, nil })
		if err := firstError(errs); err != nil {
			return store.RelationshipPage{}, err
		}
		if page, err = page.CheckEnds(rows); err != nil {
			return page, err
		}
		for _, p := range page.Primed() { // a relationship read from the index need not be read again
			l.rows.Prime(ctx, p.Get, p.Row)
		}
		return page, nil
	})
	l.articlePages = newScanLoader(cfg, "articles", func(ctx context.Context, k ArticlesKey) (store.ArticlePage, error) {
		page, err := k.read(ctx, s)
		for _, p := range page.Primed() {
			l.rows.Prime(ctx, p.Get, p.Row)
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

// newBatchLoader builds a loader whose batch function runs on the batch
// workers; kind names its reads in the batch's span.
func newBatchLoader[K comparable, V any](cfg Config, kind string, batch dataloader.BatchFunc[K, V]) *dataloader.Loader[K, V] {
	pool := batchWorkers()
	return dataloader.NewBatchedLoader(func(ctx context.Context, ks []K) []*dataloader.Result[V] {
		var res []*dataloader.Result[V]
		pool.do(func() {
			ctx, span := tracing.StartWave(ctx, "batch", kind, 0, len(ks))
			res = batch(ctx, ks)
			span.End(0) // a key cached by the dataloader never reaches a batch
		})
		return res
	}, options[K, V](cfg)...)
}

// newLoader wraps a store call that answers a batch of keys in order.
func newLoader[K comparable, V any](cfg Config, kind string, fetch func(context.Context, []K) ([]V, error)) *dataloader.Loader[K, V] {
	return newBatchLoader(cfg, kind, func(ctx context.Context, ks []K) []*dataloader.Result[V] {
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
func newScanLoader[K comparable, V any](cfg Config, kind string, scan func(context.Context, K) (V, error)) *dataloader.Loader[K, V] {
	return newBatchLoader(cfg, kind, func(ctx context.Context, ks []K) []*dataloader.Result[V] {
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

// perRequest builds a request's loaders when a resolver first asks: a
// query the plan runs never does, and builds none.
type perRequest struct {
	once    sync.Once
	loaders *Loaders
	s       *store.Store
	cfg     Config
}

// Middleware gives every request a fresh set of loaders, built on first
// use.
func Middleware(s *store.Store, cfg Config, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), ctxKey{}, &perRequest{s: s, cfg: cfg})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// For returns the loaders of the request ctx belongs to. It panics when
// Middleware did not run: a wiring bug, caught by the recover func.
func For(ctx context.Context) *Loaders {
	p := ctx.Value(ctxKey{}).(*perRequest)
	p.once.Do(func() { p.loaders = New(p.s, p.cfg) })
	return p.loaders
}
