package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Kinds of fixes repairFeeds reports.
const (
	fixFeedFanouts = "feed fan-outs finished"
	fixFeedStale   = "stale feed rows deleted"
)

// feedStaleAge is how old a feed row must be before Repair deletes it as
// stale: a fan-out writes the rows of a follow whose create is still
// under way (its index rows come before its row), which a younger row may
// be.
const feedStaleAge = time.Minute

// repairFeeds finishes the fan-outs a crash (or an import) left pending
// (FinishFanouts) and deletes the feed rows no read would return: of an
// article gone, of a follow gone or newer than the row. Rows of a type
// this store does not keep (a repair run without the serving
// --feed-types, or a type dropped for a while) are judged by the same
// rules, never deleted for their type alone: nothing would write them
// again. Without kept types it does nothing.
func (s *Store) repairFeeds(ctx context.Context, fix func(kind string, n int)) error {
	if !s.feedPending() {
		return nil
	}
	n, err := s.FinishFanouts(ctx)
	fix(fixFeedFanouts, n)
	if err != nil {
		return err
	}
	stale, err := s.deleteStaleFeedRows(ctx)
	fix(fixFeedStale, stale)
	return err
}

// FinishFanouts makes the fan-out of every post whose timeline row is
// still marked pending (keys.QualArticleFanout): those a crash cut short,
// and every article an import wrote while feeds are kept (the import
// command calls it once its files are in). It returns how many it made.
// Each is fanOutPost again: idempotent, so a post still under way is
// harmless to finish twice.
func (s *Store) FinishFanouts(ctx context.Context) (int, error) {
	if !s.feedPending() {
		return 0, nil
	}
	if err := s.CheckArticleLayout(ctx); err != nil {
		return 0, err
	}
	var done atomic.Int64
	var start []byte
	for {
		rows, err := s.scanColumn(ctx, keys.TableArticles, keys.FamilyOnce, keys.QualArticleFanout, start, defaultChunkRows)
		if err != nil {
			return int(done.Load()), err
		}
		// The rows come in key order: an author's are together. Each
		// author's go out at once (its followers read once), a few
		// authors at a time.
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(fanOutWorkers)
		var arts []keys.Article
		for i, row := range rows {
			k, err := keys.DecodeTimeline(row)
			if err == nil {
				arts = append(arts, k)
			}
			if len(arts) > 0 && (i == len(rows)-1 || !bytes.HasPrefix(rows[i+1], keys.TimelinePrefix(arts[0].Author))) {
				batch := arts
				arts = nil
				g.Go(func() error {
					if err := s.fanOut(gctx, batch[0].Author, batch); err != nil {
						return err
					}
					done.Add(int64(len(batch)))
					return nil
				})
			}
		}
		if err := g.Wait(); err != nil {
			return int(done.Load()), err
		}
		if len(rows) < defaultChunkRows {
			return int(done.Load()), nil
		}
		start = keys.After(rows[len(rows)-1])
	}
}

// fanOutWorkers is how many authors' pending fan-outs FinishFanouts makes
// at once.
const fanOutWorkers = 4

// scanColumn returns the keys of up to limit rows of table from start on
// that hold qualifier in family: one scan, filtered by the server (a
// ColumnPrefixFilter on the family alone), so rows without it cost
// nothing to send.
func (s *Store) scanColumn(ctx context.Context, table, family, qualifier string, start []byte, limit int) ([][]byte, error) {
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	call := Call{Op: "Scan", Table: table, StartRow: start, Start: time.Now()}
	sc, err := hrpc.NewScanRange(ctx, []byte(table), start, nil,
		hrpc.Families(map[string][]string{family: nil}),
		hrpc.Filters(filter.NewColumnPrefixFilter([]byte(qualifier))),
		hrpc.NumberOfRows(uint32(limit)))
	if err != nil {
		return nil, err
	}
	scanner := s.hc.Scan(sc)
	defer scanner.Close()
	var out [][]byte
	for len(out) < limit {
		res, err := scanner.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			call.Err = err
			trace(ctx, call)
			return nil, classify("scan "+table, err)
		}
		for _, c := range res.Cells {
			if string(c.Qualifier) == qualifier {
				out = append(out, c.Row)
				break
			}
		}
	}
	call.RowsRead = len(out)
	trace(ctx, call)
	return out, nil
}

// staleFeedRow is a feed row Repair found, with its timestamp.
type staleFeedRow struct {
	key []byte
	f   keys.Feed
	ts  int64
}

// deleteStaleFeedRows walks table graph's feed rows (keys only) and
// checks them a chunk at a time, with one batch of Gets each, as a read
// does; the stale ones older than feedStaleAge go, each by a delete at
// its own timestamp (a row written again since stays).
func (s *Store) deleteStaleFeedRows(ctx context.Context) (int, error) {
	deleted := 0
	var chunk []staleFeedRow
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		stale, err := s.staleOf(ctx, chunk)
		chunk = chunk[:0]
		if err != nil {
			return err
		}
		for _, r := range stale {
			if err := s.deleteRow(ctx, keys.TableGraph, r.key, r.ts); err != nil {
				return err
			}
			deleted++
		}
		return nil
	}
	limit := s.nowMs() - feedStaleAge.Milliseconds()
	all := scanRange{table: keys.TableGraph, family: keys.FamilyGraph, keyOnly: true}
	err := s.scanAll(ctx, all, func(rw row) (bool, error) {
		f, err := keys.DecodeFeed(rw.key)
		if err != nil || rw.ts >= limit {
			return true, nil
		}
		chunk = append(chunk, staleFeedRow{key: rw.key, f: f, ts: rw.ts})
		if len(chunk) >= defaultChunkRows {
			return true, flush()
		}
		return true, nil
	})
	if err == nil {
		err = flush()
	}
	return deleted, err
}

// staleOf returns the rows of chunk that no read returns.
func (s *Store) staleOf(ctx context.Context, chunk []staleFeedRow) ([]staleFeedRow, error) {
	var set getSet
	add := set.add
	type need struct{ art, rel, start, end int }
	needs := make([]need, len(chunk))
	var stale []staleFeedRow
	for i, r := range chunk {
		row, err := r.f.Article.Key()
		if err != nil {
			return nil, err
		}
		rk := RelationshipKey{Start: r.f.Reader, Type: r.f.Type, End: r.f.Article.Author}
		rel, start, end, err := rk.Gets()
		if err != nil {
			needs[i].art = -2 // ids no node may have: stale
			continue
		}
		needs[i] = need{art: add(Get{keys.TableArticles, string(row)}), rel: add(rel), start: add(start), end: add(end)}
	}
	var rows []Row
	if len(set.gets) > 0 {
		var err error
		if rows, err = s.Read(ctx, set.gets); err != nil {
			return nil, err
		}
	}
	for i, r := range chunk {
		n := needs[i]
		if n.art < 0 {
			stale = append(stale, r)
			continue
		}
		rk := RelationshipKey{Start: r.f.Reader, Type: r.f.Type, End: r.f.Article.Author}
		rel, err := rows[n.rel].Relationship(rk, rows[n.start], rows[n.end])
		if err != nil {
			return nil, err
		}
		ar := rows[n.art]
		_, ok, err := decodeArticleCells(ar.key, ar.cells)
		if err != nil {
			return nil, err
		}
		if rel == nil || r.ts < rel.Created.UnixMilli() || !ok {
			stale = append(stale, r)
		}
	}
	return stale, nil
}
