package loaders

import (
	"context"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hbgraph/hbgraph/store"
	"github.com/hbgraph/hbgraph/tracing"
)

// Fetcher reads the store for one request, one Wave at a time, for an
// executor that knows when a level of the query is complete because it
// built the level (package plan): no scheduler, no waiting, no dataloader.
//
// A Fetcher belongs to one request and is not safe for concurrent use.
// What a wave read (every row and every page, with their errors) answers
// the same keys in later waves once the caller says there will be one
// (Remember), as the dataloaders do: a key asked for again is answered
// without a store call.
type Fetcher struct {
	s   *store.Store
	cfg Config

	rows map[store.Get]result[store.Row]
	adj  map[AdjacencyKey]result[store.RelationshipPage]
	art  map[ArticlesKey]result[store.ArticlePage]
}

type result[V any] struct {
	v   V
	err error
}

// NewFetcher returns a fetcher over s: rows are read in batches of at most
// cfg.BatchSize Gets (1: one Get per call), and up to cfg.ScanConcurrency
// store calls of a wave run at once (1 or less: one after another on the
// caller's goroutine). cfg.Wait is not used.
func NewFetcher(s *store.Store, cfg Config) *Fetcher {
	return &Fetcher{s: s, cfg: cfg}
}

// Wave is the store work of one level of a query: rows to read and pages
// to scan, each key once. Add keys, Run it, then read the results by the
// indexes the adders returned. The zero Wave is empty and ready to use.
type Wave struct {
	gets   []store.Get
	getIdx map[store.Get]int
	rows   []result[store.Row]

	adj    []AdjacencyKey
	adjIdx map[AdjacencyKey]int
	adjRes []result[store.RelationshipPage]

	art    []ArticlesKey
	artIdx map[ArticlesKey]int
	artRes []result[store.ArticlePage]

	ends []endRow // node rows read to check the pages' ends (checkEnds)
}

type endRow struct {
	get store.Get
	row result[store.Row]
}

// Get adds a row to read and returns its index for Row.
func (w *Wave) Get(g store.Get) int {
	return add(&w.gets, &w.getIdx, g)
}

// Adjacency adds a page of relationships to scan and returns its index for
// AdjacencyPage.
func (w *Wave) Adjacency(k AdjacencyKey) int {
	return add(&w.adj, &w.adjIdx, k)
}

// Articles adds a page of articles to scan and returns its index for
// ArticlePage.
func (w *Wave) Articles(k ArticlesKey) int {
	return add(&w.art, &w.artIdx, k)
}

func add[K comparable](keys *[]K, idx *map[K]int, k K) int {
	if i, ok := (*idx)[k]; ok {
		return i
	}
	if *idx == nil {
		*idx = make(map[K]int)
	}
	(*idx)[k] = len(*keys)
	*keys = append(*keys, k)
	return len(*keys) - 1
}

// Len is the number of distinct keys in the wave.
func (w *Wave) Len() int { return len(w.gets) + len(w.adj) + len(w.art) }

// Row is the row of the i-th Get, after Run: the zero Row when it does not
// exist, an error when its read failed.
func (w *Wave) Row(i int) (store.Row, error) { return w.rows[i].v, w.rows[i].err }

// AdjacencyPage is the i-th relationship page, after Run.
func (w *Wave) AdjacencyPage(i int) (store.RelationshipPage, error) {
	return w.adjRes[i].v, w.adjRes[i].err
}

// ArticlePage is the i-th article page, after Run.
func (w *Wave) ArticlePage(i int) (store.ArticlePage, error) {
	return w.artRes[i].v, w.artRes[i].err
}

// Run answers every key of w that the request has not read yet, with its
// store calls tagged as dispatch round round (store.WithRound), so that
// explain reports them as one wave however they were sent. A failed call
// fails exactly the keys it was made for. Every call gets ctx, whose
// deadline and cancellation the store honours; Run returns when every
// call it started has, and leaves no goroutine behind.
func (f *Fetcher) Run(ctx context.Context, round int, w *Wave) {
	ctx, cancel := f.s.CallDeadline(ctx)
	defer cancel()
	f.read(ctx, round, w)
	f.checkEnds(ctx, round, w)
}

// smallEnds is how many end rows checkEnds finds by walking its list
// rather than by a map.
const smallEnds = 16

// read makes w's calls, as dispatch round round, one span.
func (f *Fetcher) read(ctx context.Context, round int, w *Wave) {
	ctx, span := tracing.StartWave(store.WithRound(ctx, round), "wave", "", round, w.Len())
	cached := 0
	defer func() { span.End(cached) }()
	w.rows = resize(w.rows, len(w.gets))
	w.adjRes = resize(w.adjRes, len(w.adj))
	w.artRes = resize(w.artRes, len(w.art))

	var calls []func()
	var toRead []int // indexes into w.gets
	for i, g := range w.gets {
		if r, ok := f.rows[g]; ok {
			w.rows[i] = r
			cached++
			continue
		}
		toRead = append(toRead, i)
	}
	for size := max(f.cfg.BatchSize, 1); len(toRead) > 0; {
		chunk := toRead[:min(size, len(toRead))]
		toRead = toRead[len(chunk):]
		calls = append(calls, func() {
			gets := make([]store.Get, len(chunk))
			for j, i := range chunk {
				gets[j] = w.gets[i]
			}
			rows, err := f.s.Read(ctx, gets)
			for j, i := range chunk {
				if err != nil {
					w.rows[i] = result[store.Row]{err: err}
				} else {
					w.rows[i] = result[store.Row]{v: rows[j]}
				}
			}
		})
	}
	for i, k := range w.adj {
		if r, ok := f.adj[k]; ok {
			w.adjRes[i] = r
			cached++
			continue
		}
		calls = append(calls, func() {
			page, err := f.s.AdjacentIndex(ctx, k.Node, k.Type, k.Dir, k.Page)
			w.adjRes[i] = result[store.RelationshipPage]{page, err}
		})
	}
	var batch []int // article pages read in one store call (indexes into w.art)
	for i, k := range w.art {
		if r, ok := f.art[k]; ok {
			w.artRes[i] = r
			cached++
			continue
		}
		if k.Feed == "" {
			batch = append(batch, i)
			continue
		}
		calls = append(calls, func() {
			page, err := k.read(ctx, f.s)
			w.artRes[i] = result[store.ArticlePage]{page, err}
		})
	}
	// A batch of one costs more than the call alone; and a client that
	// answers pages one call each (a cluster's) gets them sent at once,
	// not one after another.
	if len(batch) == 1 || !f.s.PagesInOneCall() {
		for _, i := range batch {
			k := w.art[i]
			calls = append(calls, func() {
				page, err := k.read(ctx, f.s)
				w.artRes[i] = result[store.ArticlePage]{page, err}
			})
		}
	} else if len(batch) > 1 {
		calls = append(calls, func() {
			reqs := make([]store.ArticlesRequest, len(batch))
			for j, i := range batch {
				k := w.art[i]
				reqs[j] = store.ArticlesRequest{Author: k.Author, Query: k.query(), Page: k.Page}
			}
			pages, errs := f.s.ArticlesBatch(ctx, reqs)
			for j, i := range batch {
				w.artRes[i] = result[store.ArticlePage]{pages[j], errs[j]}
			}
		})
	}
	runAll(f.cfg.ScanConcurrency, calls)
}

// checkEnds checks the ends of the relationship pages the wave scanned
// (store.RelationshipPage.CheckEnds): a page's near node is usually read
// in the same wave, and a page of a node that is not there reads nothing
// more; the far ends not read yet are read in one more batch (chunked by
// BatchSize), kept in w.ends for the next wave, which reads them as the
// pages' neighbours. The check reads what the pages named, so it waits
// for them: a round trip of its own, its calls tagged -round
// (store.Call.Round) and under a span of their own.
func (f *Fetcher) checkEnds(ctx context.Context, round int, w *Wave) {
	w.ends = w.ends[:0]
	known := func(g store.Get) (result[store.Row], bool) {
		if i, ok := w.getIdx[g]; ok {
			return w.rows[i], true
		}
		if r, ok := f.rows[g]; ok {
			return r, true
		}
		return result[store.Row]{}, false
	}
	pending := make([][]store.Get, len(w.adjRes)) // a page's EndGets, while its check waits for them
	total := 0
	for i := range w.adjRes {
		gets := w.adjRes[i].v.EndGets()
		if w.adjRes[i].err != nil || len(gets) == 0 {
			w.adjRes[i].v, _ = w.adjRes[i].v.CheckEnds(nil) // empty
			continue
		}
		if near, ok := known(gets[0]); ok {
			if near.err != nil {
				w.adjRes[i] = result[store.RelationshipPage]{err: near.err}
				continue
			}
			if page, done, err := w.adjRes[i].v.CheckNear(near.v); done {
				w.adjRes[i] = result[store.RelationshipPage]{page, err} // nothing more to read
				continue
			}
		}
		pending[i] = gets
		total += len(gets)
	}
	if total == 0 {
		return
	}
	// Sized once: growing the map and the list cost more than the check.
	// A few ends are found by walking the list: a map costs more there.
	need := make([]store.Get, 0, total)
	var needIdx map[store.Get]int
	if total > smallEnds {
		needIdx = make(map[store.Get]int, total)
	}
	indexOf := func(g store.Get) (int, bool) {
		if needIdx != nil {
			i, ok := needIdx[g]
			return i, ok
		}
		i := slices.Index(need, g)
		return i, i >= 0
	}
	for _, gets := range pending {
		for _, g := range gets {
			if _, ok := known(g); ok {
				continue
			}
			if _, ok := indexOf(g); !ok {
				if needIdx != nil {
					needIdx[g] = len(need)
				}
				need = append(need, g)
			}
		}
	}
	ctx, span := tracing.StartWave(store.WithRound(ctx, -round), "wave", "ends", round, len(need))
	defer span.End(0)
	read := make([]result[store.Row], len(need))
	w.ends = slices.Grow(w.ends, len(need)) // appended to below: one allocation, not five
	var calls []func()
	for size, start := max(f.cfg.BatchSize, 1), 0; start < len(need); start += size {
		chunk := need[start:min(start+size, len(need))]
		calls = append(calls, func() {
			rows, err := f.s.Read(ctx, chunk)
			for j := range chunk {
				if err != nil {
					read[start+j] = result[store.Row]{err: err}
				} else {
					read[start+j] = result[store.Row]{v: rows[j]}
				}
			}
		})
	}
	runAll(f.cfg.ScanConcurrency, calls)
	for j, g := range need {
		w.ends = append(w.ends, endRow{g, read[j]})
	}
	for i, gets := range pending {
		if gets == nil {
			continue
		}
		rows := make([]store.Row, len(gets))
		var err error
		for j, g := range gets {
			r, ok := known(g)
			if !ok {
				i, _ := indexOf(g)
				r = read[i]
			}
			if r.err != nil {
				err = r.err
				break
			}
			rows[j] = r.v
		}
		if err == nil {
			w.adjRes[i].v, err = w.adjRes[i].v.CheckEnds(rows)
		}
		if err != nil {
			w.adjRes[i] = result[store.RelationshipPage]{err: err}
		}
	}
}

// Remember keeps what w read for the waves after it: its rows and pages.
// Called only when another wave follows: most queries' last wave (and a
// one-level query's only one) fills no map.
//
// Unlike the dataloaders, it primes no rows from the pages (store's
// Primed): the plan reads relationships and articles by key only for root
// fields and _entities, all in the first wave, so no later wave could ask
// for them, and building their keys cost Q3 a tenth of its allocations.
func (f *Fetcher) Remember(w *Wave) {
	if f.rows == nil {
		// Sized for the first wave, which is often the only one
		// remembered: growing a map costs more than the rows it keeps.
		f.rows = make(map[store.Get]result[store.Row], len(w.gets)+len(w.ends))
		f.adj = make(map[AdjacencyKey]result[store.RelationshipPage], len(w.adj))
		f.art = make(map[ArticlesKey]result[store.ArticlePage], len(w.art))
	}
	for i, g := range w.gets {
		f.rows[g] = w.rows[i]
	}
	for _, e := range w.ends {
		f.rows[e.get] = e.row
	}
	for i, k := range w.adj {
		f.adj[k] = w.adjRes[i]
	}
	for i, k := range w.art {
		f.art[k] = w.artRes[i]
	}
}

// Reset empties w for the next wave, keeping its memory.
func (w *Wave) Reset() {
	w.gets, w.adj, w.art = w.gets[:0], w.adj[:0], w.art[:0]
	clear(w.getIdx)
	clear(w.adjIdx)
	clear(w.artIdx)
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// runAll runs calls, at most limit at a time; with a limit of 1 (or less),
// or a single call, one after another on the caller's goroutine.
func runAll(limit int, calls []func()) {
	if limit <= 1 || len(calls) <= 1 {
		for _, c := range calls {
			c()
		}
		return
	}
	var g errgroup.Group
	g.SetLimit(limit)
	for _, c := range calls {
		g.Go(func() error { c(); return nil })
	}
	_ = g.Wait()
}

// query is the article query k selects.
func (k ArticlesKey) query() store.ArticleQuery {
	q := store.ArticleQuery{Category: k.Category, NoBody: k.NoBody}
	if k.HasAfter {
		t := time.UnixMilli(k.After)
		q.PostedAfter = &t
	}
	if k.HasBefore {
		t := time.UnixMilli(k.Before)
		q.PostedBefore = &t
	}
	return q
}
