// Package importer loads JSON Lines files of nodes, relationships and
// articles into the store through its import operations: every index row
// and counter is written, the files' times and article ids are kept, rows
// that exist are skipped (so an interrupted import can be rerun), and a bad
// line is reported by its number without stopping the rest.
//
// Files are imported in order, nodes before the relationships and articles
// that need them; the lines of one file are imported by a pool of workers,
// each taking a batch of lines at a time. Nodes, relationships and
// articles are imported a batch at a time (store.ImportNodes,
// store.ImportRelationshipsTallied and store.ImportArticles group a
// batch's reads and writes). The relationships' degree counts are summed
// over the file and written at its end (store.DegreeTally), even when the
// import is interrupted.
//
//	node:         {"id": "n1", "properties": {...}, "created_at": ms, "updated_at": ms}
//	relationship: {"start_node_id": "n1", "type": "follow", "end_node_id": "n2", "properties": {...}, "created_at": ms, "updated_at": ms}
//	article:      {"id": 123, "author_id": "n1", "title": "...", "body": "...", "category": "...", "posted_at": ms, "updated_at": ms}
//
// updated_at defaults to created_at (an article's to posted_at); a node's
// owner may be absent (nobody owns it).
package importer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/hbgraph/hbgraph/store"
)

// Files names the files to import; an empty name is skipped.
type Files struct {
	Nodes, Relationships, Articles string
}

// Options tune an import.
type Options struct {
	// Workers import batches of lines concurrently; 0 means 4 per CPU (the
	// embedded engine's calls are short, and waiting on them overlaps).
	Workers int
	// Progress, when set, gets a progress line (rows, rows/s, ETA) redrawn
	// in place: pass a terminal. Otherwise Log gets a line every LogEvery.
	Progress io.Writer
	Log      zerolog.Logger
	LogEvery time.Duration // 0 means 5 s
	// MaxReported bounds the line errors kept per file; 0 means 100.
	MaxReported int
	// BatchSize is the nodes, relationships or articles a worker imports
	// at once (with one store.ImportNodes, ImportRelationshipsTallied or
	// ImportArticles); 0 means DefaultBatchSize.
	BatchSize int
}

// DefaultBatchSize is Options.BatchSize unless set. Bigger batches share
// more node reads and counter increments, and their writes, sorted by row,
// land closer together: on the 250k-relationship bench dataset, batches of
// 256 imported 17k rows/s, of 1024 19.5k, of 4096 22k (8192: 22k). The
// 70k articles, whose authors have 7 each on average, gain less from the
// size: batches of 64 imported 12.8k rows/s, of 1024 13.5k, of 4096 13.3k,
// of 16384 13.2k (one run each; a line at a time: 8.6k). The store sends
// a batch's writes 1024 to a SendBatch.
const DefaultBatchSize = 4096

// DefaultCallTimeout bounds each store call of an import unless the
// caller says otherwise (hbgraph import --import-call-timeout), and
// BatchRowTimeout is what a batched call (one SendBatch) gets beyond it
// for each call it carries (store.Options.BatchRowTimeout). The server's
// 5 s (store.DefaultCallTimeout) is for one request's reads; an import
// batch of 4096 relationships reads up to 8192 nodes in one SendBatch and
// writes 1024 rows at a time, and a busy machine serves them slower: on
// the 2-core machine shared with five other processes, importing the
// 10,000-node benchmark dataset, the slowest batch took 1.6 s and batches
// of word count Increments up to 2.6 ms a row, so a machine a few times
// busier would fail whole batches at 5 s. An import has no client waiting
// on it: a stalled cluster costs it the timeout, and the rerun resumes.
const (
	DefaultCallTimeout = 30 * time.Second
	BatchRowTimeout    = 2 * time.Millisecond
)

// maxBatchBytes also bounds a batch: at most this many bytes of lines, but
// at least one line. An article's body may be a MiB, and a worker holds a
// batch's lines, their decoded items and the SendBatches of their writes
// at once; HBase also refuses requests over 256 MB
// (hbase.ipc.max.request.size). The bench dataset's batches, 1.8 MB of
// articles or 0.7 MB of relationships, are not cut.
const maxBatchBytes = 4 << 20

// LineError is one line that could not be imported.
type LineError struct {
	Line int64
	Err  error
}

// Result counts one file's lines.
type Result struct {
	Kind                             string
	File                             string
	Lines, Imported, Skipped, Failed int64
	Errors                           []LineError // the first MaxReported
	Elapsed                          time.Duration
}

// Rate is imported and skipped lines per second.
func (r Result) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Imported+r.Skipped) / r.Elapsed.Seconds()
}

// Run imports the files in order and returns a result per file imported.
// It stops early only when ctx ends or a file cannot be read.
func Run(ctx context.Context, st *store.Store, files Files, opts Options) ([]Result, error) {
	if opts.Workers <= 0 {
		opts.Workers = 4 * runtime.GOMAXPROCS(0)
	}
	if opts.LogEvery <= 0 {
		opts.LogEvery = 5 * time.Second
	}
	if opts.MaxReported <= 0 {
		opts.MaxReported = 100
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	seqs := &maxSeqs{m: map[string]uint64{}}
	degrees := store.NewDegreeTally(0)
	kinds := []struct {
		kind, file string
		batch      importBatch
		batchSize  int
		finish     func(ctx context.Context) error
	}{
		{"nodes", files.Nodes, func(ctx context.Context, lines [][]byte) []outcome {
			return importDecoded(lines, decodeNode, func(nodes []store.NodeImport) []store.ImportOutcome {
				out, _ := st.ImportNodes(ctx, nodes)
				return out
			})
		}, opts.BatchSize, nil},
		{"relationships", files.Relationships, func(ctx context.Context, lines [][]byte) []outcome {
			return importDecoded(lines, decodeRelationship, func(rels []store.RelationshipImport) []store.ImportOutcome {
				// An error stopping the batch early is also each unsettled item's.
				out, _ := st.ImportRelationshipsTallied(ctx, rels, degrees)
				return out
			})
		}, opts.BatchSize, func(ctx context.Context) error {
			// The relationships reported imported are counted whatever
			// stopped the file: an interrupt too.
			began := time.Now()
			err := st.FlushDegreeTally(context.WithoutCancel(ctx), degrees)
			opts.Log.Info().Int("counters", degrees.Flushed()).Dur("took", time.Since(began).Round(time.Millisecond)).
				Msg("degree counters written")
			if err != nil {
				return fmt.Errorf("relationships imported, but their degree counts are not all written: %w", err)
			}
			return nil
		}},
		{"articles", files.Articles, func(ctx context.Context, lines [][]byte) []outcome {
			return importDecoded(lines, decodeArticle, func(arts []store.ArticleImport) []store.ImportOutcome {
				out, _ := st.ImportArticles(ctx, arts)
				seqs.add(arts, out)
				return out
			})
		}, opts.BatchSize, nil},
	}
	var results []Result
	for _, k := range kinds {
		if k.file == "" {
			continue
		}
		r, err := importFile(ctx, k.kind, k.file, k.batch, k.batchSize, k.finish, opts)
		results = append(results, r)
		if err != nil {
			return results, err
		}
	}
	// Live posts must take sequence numbers past the imported ones.
	if err := seqs.advance(ctx, st, opts.Workers); err != nil {
		return results, err
	}
	if err := compactBeforeFeeds(ctx, st, results, opts); err != nil {
		return results, err
	}
	// The imported articles' feed rows, now that their followers are in.
	// Said before it starts: the last file's line says 0s left, and this
	// may take a while.
	opts.Log.Info().Msg("writing the home feeds of the imported articles")
	began := time.Now()
	n, err := st.FinishFanouts(ctx)
	if err != nil {
		return results, fmt.Errorf("write the home feeds: %w", err)
	}
	if n > 0 {
		opts.Log.Info().Int("articles", n).Dur("took", time.Since(began).Round(time.Millisecond)).Msg("home feeds written")
	}
	return results, nil
}

// outcome is what became of one line: imported (ok), skipped, or failed.
type outcome struct {
	ok  bool
	err error
}

// importBatch imports a batch of lines and returns an outcome per line.
type importBatch func(ctx context.Context, lines [][]byte) []outcome

// job is a batch of lines, their line numbers, and the bytes of the file
// they took (newlines and blank lines included).
type job struct {
	numbers []int64
	lines   [][]byte
	bytes   int64
}

// importFile streams one file to the workers, a batch of lines at a time,
// and then calls finish, if set, within the file's time.
func importFile(ctx context.Context, kind, path string, importLines importBatch, batchSize int,
	finish func(context.Context) error, opts Options) (Result, error) {
	r := Result{Kind: kind, File: path}
	f, err := os.Open(path)
	if err != nil {
		return r, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return r, err
	}
	start := time.Now()
	// done counts the bytes of the lines whose batches are imported: the
	// reader runs ahead of the workers by the batches queued, which on a
	// small file is all of it.
	var done, lines, imported, skipped, failed atomic.Int64
	var mu sync.Mutex // guards r.Errors
	jobs := make(chan job, 2*opts.Workers)
	var wg sync.WaitGroup
	for range opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				for i, o := range importLines(ctx, j.lines) {
					switch {
					case o.err != nil:
						failed.Add(1)
						mu.Lock()
						if len(r.Errors) < opts.MaxReported {
							r.Errors = append(r.Errors, LineError{Line: j.numbers[i], Err: o.err})
						}
						mu.Unlock()
					case o.ok:
						imported.Add(1)
					default:
						skipped.Add(1)
					}
				}
				done.Add(j.bytes)
			}
		}()
	}
	stopProgress := progress(kind, info.Size(), &done, &imported, &skipped, &failed, start, opts)

	br := bufio.NewReaderSize(f, 1<<20)
	var readErr error
	var batch job
	var batchBytes int
	for n := int64(1); ctx.Err() == nil; n++ {
		b, err := br.ReadBytes('\n')
		batch.bytes += int64(len(b))
		if line := bytes.TrimSpace(b); len(line) > 0 {
			lines.Add(1)
			batch.numbers = append(batch.numbers, n)
			batch.lines = append(batch.lines, line)
			if batchBytes += len(line); len(batch.lines) == batchSize || batchBytes >= maxBatchBytes {
				jobs <- batch
				batch, batchBytes = job{}, 0
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			readErr = err
			break
		}
	}
	if len(batch.lines) > 0 || batch.bytes > 0 {
		jobs <- batch
	}
	close(jobs)
	wg.Wait()
	var finishErr error
	if finish != nil {
		finishErr = finish(ctx)
	}
	stopProgress()
	r.Lines, r.Imported, r.Skipped, r.Failed = lines.Load(), imported.Load(), skipped.Load(), failed.Load()
	r.Elapsed = time.Since(start)
	if readErr == nil {
		readErr = ctx.Err()
	}
	return r, errors.Join(readErr, finishErr)
}

// decode reads one line strictly: one JSON object, numbers kept exact.
func decode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

func times(created, updated *int64) (time.Time, time.Time, error) {
	if created == nil {
		return time.Time{}, time.Time{}, errors.New("created_at is missing")
	}
	if updated == nil {
		updated = created
	}
	return time.UnixMilli(*created), time.UnixMilli(*updated), nil
}

func decodeNode(b []byte) (store.NodeImport, error) {
	var l struct {
		ID string `json:"id"`
		// Owner is the subject that may change the node (a token's sub);
		// absent: only admins may.
		Owner      string         `json:"owner"`
		Properties map[string]any `json:"properties"`
		CreatedAt  *int64         `json:"created_at"`
		UpdatedAt  *int64         `json:"updated_at"`
	}
	if err := decode(b, &l); err != nil {
		return store.NodeImport{}, err
	}
	c, u, err := times(l.CreatedAt, l.UpdatedAt)
	if err != nil {
		return store.NodeImport{}, err
	}
	return store.NodeImport{ID: l.ID, Owner: l.Owner, Properties: l.Properties, Created: c, Updated: u}, nil
}

// importDecoded decodes a batch of lines and imports the items of those
// that decode with one call of importItems, which returns an outcome per
// item; a line that does not decode fails alone.
func importDecoded[T any](lines [][]byte, decodeLine func([]byte) (T, error),
	importItems func([]T) []store.ImportOutcome) []outcome {
	out := make([]outcome, len(lines))
	items := make([]T, 0, len(lines))
	at := make([]int, 0, len(lines)) // line of each of items
	for i, b := range lines {
		item, err := decodeLine(b)
		if err != nil {
			out[i].err = err
			continue
		}
		items = append(items, item)
		at = append(at, i)
	}
	for j, o := range importItems(items) {
		out[at[j]] = outcome{ok: o.Created, err: o.Err}
	}
	return out
}

func decodeRelationship(b []byte) (store.RelationshipImport, error) {
	var l struct {
		Start      string         `json:"start_node_id"`
		Type       string         `json:"type"`
		End        string         `json:"end_node_id"`
		Properties map[string]any `json:"properties"`
		CreatedAt  *int64         `json:"created_at"`
		UpdatedAt  *int64         `json:"updated_at"`
	}
	if err := decode(b, &l); err != nil {
		return store.RelationshipImport{}, err
	}
	c, u, err := times(l.CreatedAt, l.UpdatedAt)
	if err != nil {
		return store.RelationshipImport{}, err
	}
	return store.RelationshipImport{Key: store.RelationshipKey{Start: l.Start, Type: l.Type, End: l.End},
		Properties: l.Properties, Created: c, Updated: u}, nil
}

func decodeArticle(b []byte) (store.ArticleImport, error) {
	var l struct {
		ID       uint64 `json:"id"`
		Author   string `json:"author_id"`
		Title    string `json:"title"`
		Body     string `json:"body"`
		Category string `json:"category"`
		Posted   *int64 `json:"posted_at"`
		Updated  *int64 `json:"updated_at"`
	}
	if err := decode(b, &l); err != nil {
		return store.ArticleImport{}, err
	}
	if l.Posted == nil {
		return store.ArticleImport{}, errors.New("posted_at is missing")
	}
	a := store.ArticleImport{Author: l.Author, Seq: l.ID, Title: l.Title, Body: l.Body, Category: l.Category,
		Posted: time.UnixMilli(*l.Posted)}
	if l.Updated != nil {
		a.Updated = time.UnixMilli(*l.Updated)
	}
	return a, nil
}

// maxSeqs tracks each author's largest imported article id.
type maxSeqs struct {
	mu sync.Mutex
	m  map[string]uint64
}

// add notes the ids of the articles imported or skipped (there already).
func (m *maxSeqs) add(arts []store.ArticleImport, out []store.ImportOutcome) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, a := range arts {
		if out[i].Err == nil {
			m.m[a.Author] = max(m.m[a.Author], a.Seq)
		}
	}
}

// advance makes each author's next article id greater than the largest
// imported, workers authors at a time: one by one, the 100,000 authors
// of a 100,000-node import took 10-16 s after its last article, each a
// read and an Increment.
func (m *maxSeqs) advance(ctx context.Context, st *store.Store, workers int) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for author, seq := range m.m {
		g.Go(func() error {
			if err := st.AdvanceArticleSeq(gctx, author, seq); err != nil {
				return fmt.Errorf("advance article ids of %q: %w", author, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// compactBeforeFeeds compacts the embedded engine's store once the
// articles are in, before their home feeds are written: a bulk load
// leaves its flushes in Pebble's L0 for one compaction at its end (see
// the engine's bulkLoadCompactions), and the feeds' fan-outs, a scan of
// the articles and each author's followers read, would seek in every L0
// sublevel. At 100,000 nodes (17 sublevels) the fan-outs took 42 s on
// that L0 and 19-22 s after this compaction (25-32 s under the old
// compactions while the files were read); the last compaction then
// merges only the feeds' rows and the cleared marks, 10 s. Nothing on a
// cluster, or when no article was imported.
func compactBeforeFeeds(ctx context.Context, st *store.Store, results []Result, opts Options) error {
	var articles int64
	for _, r := range results {
		if r.Kind == "articles" {
			articles += r.Imported
		}
	}
	if articles == 0 {
		return nil
	}
	began := time.Now()
	compacted, err := st.Compact(ctx)
	if err != nil {
		return fmt.Errorf("compact before the home feeds: %w", err)
	}
	if compacted {
		opts.Log.Info().Dur("took", time.Since(began).Round(time.Millisecond)).Msg("store compacted before the home feeds")
	}
	return nil
}
