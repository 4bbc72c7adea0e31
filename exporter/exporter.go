// Package exporter writes a store's nodes, relationships and articles as
// the JSON Lines files that package importer reads, so that `hbgraph
// import` of an export rebuilds the same store: every index row, counter
// and word count is derived data that the import writes again.
//
//	nodes.jsonl          {"id": "n1", "owner": "sub", "properties": {...}, "created_at": ms, "updated_at": ms}
//	relationships.jsonl  {"start_node_id": "n1", "type": "follow", "end_node_id": "n2", "properties": {...}, "created_at": ms, "updated_at": ms}
//	articles.jsonl       {"id": 7, "author_id": "n1", "title": "...", "body": "...", "category": "...", "posted_at": ms, "updated_at": ms}
//
// (owner is left out for a node nobody owns; an article's id is its
// per-author sequence number, which the import keeps, and so keeps its
// public id.)
//
// Each file is one whole-table scan of the store in row key order (see
// store.ScanNodes), written as it is read: memory holds one page of rows
// whatever the store's size. The order and the encoding depend on the
// store's contents alone (properties are written as stored, keys sorted),
// so the same store always gives byte-identical files, and so does a store
// that an import of those files built.
package exporter

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/internal/ticker"
	"github.com/hbgraph/hbgraph/store"
)

// The files Run writes, in the order it writes them: the order an import
// needs (relationships and articles name nodes).
const (
	NodesFile         = "nodes.jsonl"
	RelationshipsFile = "relationships.jsonl"
	ArticlesFile      = "articles.jsonl"
)

// ErrNotEmpty is returned by CheckDir (and Run) for an output directory
// that holds anything: an export never mixes with other files or
// overwrites an earlier one.
var ErrNotEmpty = errors.New("exporter: output directory is not empty")

// Options tune an export.
type Options struct {
	// Progress, when set, gets a progress line (rows, rows/s) redrawn in
	// place: pass a terminal. Otherwise Log gets a line every LogEvery.
	Progress io.Writer
	Log      zerolog.Logger
	LogEvery time.Duration // 0 means 5 s
}

// Result is what one file received.
type Result struct {
	Kind    string // nodes, relationships or articles
	File    string
	Rows    int64
	Bytes   int64
	Elapsed time.Duration
	// Gone counts the relationships and articles left out because a node
	// they name is gone or being deleted: what a deletion cut short leaves
	// until deleteNode again, or repair, finishes it. Import would refuse
	// them.
	Gone int
}

// Rate is rows written per second.
func (r Result) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Rows) / r.Elapsed.Seconds()
}

// CheckDir reports whether an export may write into dir: it must not
// exist, or be empty (else ErrNotEmpty). It creates nothing.
func CheckDir(dir string) error {
	_, err := dirEntries(dir)
	return err
}

// dirEntries is CheckDir; exists tells whether dir exists.
func dirEntries(dir string) (exists bool, err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case len(entries) > 0:
		return true, fmt.Errorf("%w: %s holds %d entries; export into a new or empty directory", ErrNotEmpty, dir, len(entries))
	}
	return true, nil
}

// Run writes the three files into dir, which must not exist or be empty
// (CheckDir); it creates dir, readable by this user only (an export holds
// everything). It returns a result per file written. When it fails (ctx ended, a read failed, a row
// is corrupt) it removes the files it wrote, so that a directory holding
// them holds a whole export.
func Run(ctx context.Context, st *store.Store, dir string, opts Options) ([]Result, error) {
	if opts.LogEvery <= 0 {
		opts.LogEvery = 5 * time.Second
	}
	exists, err := dirEntries(dir)
	if err != nil {
		return nil, err
	}
	if !exists {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	kinds := []struct {
		kind, file string
		scan       func(ctx context.Context, w *lineWriter) (gone int, err error)
	}{
		{"nodes", NodesFile, func(ctx context.Context, w *lineWriter) (int, error) {
			return 0, st.ScanNodes(ctx, func(n store.NodeRecord) error {
				return w.write(nodeLine{ID: n.ID, Owner: n.Owner, Properties: n.Properties,
					CreatedAt: n.Created, UpdatedAt: n.Updated})
			})
		}},
		{"relationships", RelationshipsFile, func(ctx context.Context, w *lineWriter) (int, error) {
			return st.ScanRelationships(ctx, func(r store.RelationshipRecord) error {
				return w.write(relationshipLine{Start: r.Key.Start, Type: r.Key.Type, End: r.Key.End,
					Properties: r.Properties, CreatedAt: r.Created, UpdatedAt: r.Updated})
			})
		}},
		{"articles", ArticlesFile, func(ctx context.Context, w *lineWriter) (int, error) {
			return st.ScanArticles(ctx, func(a store.ArticleRecord) error {
				return w.write(articleLine{ID: a.Seq, Author: a.Author, Title: a.Title, Body: a.Body,
					Category: a.Category, PostedAt: a.Posted, UpdatedAt: a.Updated})
			})
		}},
	}
	var results []Result
	for _, k := range kinds {
		r, err := exportFile(ctx, k.kind, filepath.Join(dir, k.file), k.scan, opts)
		results = append(results, r)
		if err != nil {
			for _, r := range results {
				_ = os.Remove(r.File)
			}
			return results, fmt.Errorf("export %s: %w", k.kind, err)
		}
	}
	return results, nil
}

// The lines, with the field names and order importer reads.
type nodeLine struct {
	ID         string          `json:"id"`
	Owner      string          `json:"owner,omitempty"`
	Properties json.RawMessage `json:"properties"`
	CreatedAt  int64           `json:"created_at"`
	UpdatedAt  int64           `json:"updated_at"`
}

type relationshipLine struct {
	Start      string          `json:"start_node_id"`
	Type       string          `json:"type"`
	End        string          `json:"end_node_id"`
	Properties json.RawMessage `json:"properties"`
	CreatedAt  int64           `json:"created_at"`
	UpdatedAt  int64           `json:"updated_at"`
}

type articleLine struct {
	ID        uint64 `json:"id"`
	Author    string `json:"author_id"`
	Title     string `json:"title"`
	Body      string `json:"body"`
	Category  string `json:"category"`
	PostedAt  int64  `json:"posted_at"`
	UpdatedAt int64  `json:"updated_at"`
}

// lineWriter encodes lines into a buffered file and counts them.
type lineWriter struct {
	enc          *json.Encoder
	rows, nbytes atomic.Int64
}

func (w *lineWriter) write(v any) error {
	if err := w.enc.Encode(v); err != nil {
		return err
	}
	w.rows.Add(1)
	return nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// exportFile creates path (it must not exist), writes scan's lines into
// it and syncs it.
func exportFile(ctx context.Context, kind, path string, scan func(context.Context, *lineWriter) (int, error), opts Options) (Result, error) {
	r := Result{Kind: kind, File: path}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return r, err
	}
	start := time.Now()
	w := &lineWriter{}
	buf := bufio.NewWriterSize(countingWriter{f, &w.nbytes}, 1<<20)
	w.enc = json.NewEncoder(buf)
	stop := progress(kind, w, start, opts)
	r.Gone, err = scan(ctx, w)
	if err == nil {
		err = ctx.Err()
	}
	err = errors.Join(err, buf.Flush())
	stop()
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	r.Rows, r.Bytes, r.Elapsed = w.rows.Load(), w.nbytes.Load(), time.Since(start)
	return r, err
}

// progress reports a file's progress until the returned func is called.
func progress(kind string, w *lineWriter, start time.Time, opts Options) func() {
	every := opts.LogEvery
	if opts.Progress != nil {
		every = 250 * time.Millisecond
	}
	report := func(final bool) {
		rows := w.rows.Load()
		rate := float64(rows) / max(time.Since(start).Seconds(), 1e-9)
		if opts.Progress != nil {
			end := ""
			if final {
				end = "\n"
			}
			fmt.Fprintf(opts.Progress, "\r%-13s %10d rows %8.0f rows/s %9.1f MB  %s",
				kind, rows, rate, float64(w.nbytes.Load())/1e6, end)
			return
		}
		if !final {
			opts.Log.Info().Str("kind", kind).Int64("rows", rows).Float64("rows_per_s", rate).Msg("exporting")
		}
	}
	return ticker.Every(every, report)
}
