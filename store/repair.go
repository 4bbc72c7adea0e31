package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hbgraph/hbgraph/store/keys"
)

// RepairReport counts what Repair fixed, by kind of fix.
type RepairReport map[string]int

func (r RepairReport) fix(kind string, n int) {
	if n > 0 {
		r[kind] += n
	}
}

// String lists the fixes, one per line, or says there was nothing to fix.
func (r RepairReport) String() string {
	if len(r) == 0 {
		return "nothing to fix\n"
	}
	kinds := make([]string, 0, len(r))
	for k := range r {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var b bytes.Buffer
	for _, k := range kinds {
		fmt.Fprintf(&b, "%s: %d\n", k, r[k])
	}
	return b.String()
}

// Repair brings the rows that multi-row operations keep in step back in
// step after a crash between their writes (DESIGN.md, "Writes without
// locks"): every relationship gets exactly its two index rows with its
// current properties, index rows without their relationship go, every
// degree counter is set to the number of index rows it counts, (see
// repairArticles) every article gets exactly its category row and every
// article counter its exact count, and (see repairWordCounts) every
// author's word counts equal a recount of the author's articles, and the
// author's top-words list a pick of those counts. First it
// finishes the deletions of nodes that a crash cut short (DeleteNode), and
// it deletes what belongs to no node: relationships with an end that does
// not exist, and the articles (their rows and counters, and so their word
// counts) of an author that does not exist. Before
// all that it migrates a table articles of an older layout to the current
// one (migrateArticleLayout), after which the store serves articles again.
//
// It reads each table once, holding one entry per relationship, index row
// and counter of the graph in memory, and then each author's articles
// again for the word counts. It may run beside writers: what it would undo
// because its scan did not see it is checked again first (repair_live.go),
// so it loses no row a write acknowledged; and it never makes a correct
// counter or word count wrong: it makes the Increments of the writes in
// flight first, with their own nonces, reads a counter between two scans
// of what it counts, and corrects it by a difference (settleAttempts,
// recountDegreesNow). What kept changing is left to the next run, and
// (rarely) an index row to rewrite.
func (s *Store) Repair(ctx context.Context) (RepairReport, error) {
	report := RepairReport{}
	if err := s.migrateArticleLayout(ctx, report.fix); err != nil {
		return report, fmt.Errorf("migrate articles: %w", err)
	}
	if err := s.repairGraph(ctx, report.fix); err != nil {
		return report, fmt.Errorf("repair graph: %w", err)
	}
	if err := s.repairArticles(ctx, report.fix); err != nil {
		return report, fmt.Errorf("repair articles: %w", err)
	}
	if err := s.repairWordCounts(ctx, report.fix); err != nil {
		return report, fmt.Errorf("repair word counts: %w", err)
	}
	if err := s.repairFeeds(ctx, report.fix); err != nil {
		return report, fmt.Errorf("repair feeds: %w", err)
	}
	return report, nil
}

// Kinds of fixes repairWordCounts reports, in cells. A corrupt cell (not
// an int64) counts as neither corrected nor deleted but as fixed corrupt,
// whether the recount was Put over it or it was deleted.
const (
	fixWordCountCorrected = "word count cells corrected"
	fixWordCountDeleted   = "word count cells deleted"
	fixWordCountCorrupt   = "corrupt word count cells fixed"
	fixWordCountTopLists  = "top word lists rebuilt"
)

// repairWordCounts rebuilds the word counts and top-words list
// (rebuildWordCounts) of every author that has articles (timeline rows), a
// word count row or a top-words row: one that lost all its articles may
// still count their words.
//
// A rebuild waits a millisecond or two for the clock (see
// RebuildWordCounts), so the authors are split into wordCountRanges ranges
// of the row hash H(author), and wordCountWorkers ranges are rebuilt at a
// time, each walking its authors in row order; the first error stops them
// all. A range's authors are found with one short key-only scan of each
// table per author, so memory holds one author's word counts per worker,
// never the table, and the articles' text is read by the rebuilds alone.
//
// fix is called once per kind, after the rebuilds, with the cells that
// were corrected, deleted or, being corrupt, fixed (those written before
// an error too). It is safe beside writers as RebuildWordCounts is.
func (s *Store) repairWordCounts(ctx context.Context, fix func(kind string, n int)) error {
	splits, err := keys.SplitKeys(wordCountRanges)
	if err != nil {
		return err
	}
	bounds := append(append([][]byte{nil}, splits...), nil) // nil: either end of the table
	var corrected, deleted, corrupt, topLists atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(wordCountWorkers)
	for i := range wordCountRanges {
		if gctx.Err() != nil {
			break // an error stopped the others
		}
		start, stop := bounds[i], bounds[i+1]
		g.Go(func() error {
			return s.eachWordCountAuthor(gctx, start, stop, func(author string) error {
				f, err := s.rebuildWordCounts(gctx, author)
				corrected.Add(int64(f.corrected))
				deleted.Add(int64(f.deleted))
				corrupt.Add(int64(f.corrupt))
				topLists.Add(int64(f.topList))
				if err != nil {
					return fmt.Errorf("author %q: %w", author, err)
				}
				return nil
			})
		})
	}
	err = g.Wait()
	fix(fixWordCountCorrected, int(corrected.Load()))
	fix(fixWordCountDeleted, int(deleted.Load()))
	fix(fixWordCountCorrupt, int(corrupt.Load()))
	fix(fixWordCountTopLists, int(topLists.Load()))
	return err
}

// repairWordCounts' split: ranges enough to keep the workers evenly busy
// to the end, workers enough to hide the clock waits and round trips.
const (
	wordCountRanges  = 64
	wordCountWorkers = 8
)

// eachWordCountAuthor calls fn, in row order, for every author in the row
// range [start, stop) (nil: the table's end) with a timeline row or a word
// count row. Authors sort alike in both tables (keys.AuthorPrefix), so one
// walk of each, side by side, yields each author once.
func (s *Store) eachWordCountAuthor(ctx context.Context, start, stop []byte, fn func(author string) error) error {
	articles := authorWalk{r: scanRange{table: keys.TableArticles, family: keys.FamilyArticles,
		start: start, stop: stop, limit: 1, keyOnly: true}, author: timelineAuthor}
	words := authorWalk{r: scanRange{table: keys.TableWordCounts, family: keys.FamilyWordCounts,
		start: start, stop: stop, limit: 1, keyOnly: true}, author: wordCountAuthor}
	for _, w := range []*authorWalk{&articles, &words} {
		if err := w.next(ctx, s); err != nil {
			return err
		}
	}
	for !articles.done || !words.done {
		c := articles.compare(&words)
		author := articles.name
		if c > 0 {
			author = words.name
		}
		if err := fn(author); err != nil {
			return err
		}
		if c <= 0 {
			if err := articles.next(ctx, s); err != nil {
				return err
			}
		}
		if c >= 0 {
			if err := words.next(ctx, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// authorWalk steps through the authors of one table within a row range, one
// key-only scan of one row per author: the first row at or after r.start
// names the next author, and the walk then skips past all of its rows.
type authorWalk struct {
	r scanRange // start moves past each author seen
	// author returns the author of a row, and whether the walk yields it
	// (false: skip the author). An error means the row is not one of the
	// table's layouts: skip the row.
	author func(row []byte) (string, bool, error)

	name   string // the current author
	prefix []byte // keys.AuthorPrefix(name)
	done   bool   // no author left; name and prefix are stale
}

// timelineAuthor yields the authors of table articles that have a
// timeline row: the first row of an author is one if any is, as the
// timeline's tag sorts first.
func timelineAuthor(row []byte) (string, bool, error) {
	if a, err := keys.DecodeTimeline(row); err == nil {
		return a.Author, true, nil
	}
	author, err := keys.DecodeAuthor(row)
	return author, false, err
}

// wordCountAuthor yields the authors of table wordcounts: by their word
// count row, or their top-words row when that is all they have (a list
// left behind by a crash, which the rebuild empties).
func wordCountAuthor(row []byte) (string, bool, error) {
	if author, err := keys.DecodeWordCounts(row); err == nil {
		return author, true, nil
	}
	author, err := keys.DecodeTopWords(row)
	return author, true, err
}

// next moves to the next author the walk yields, or sets done.
func (w *authorWalk) next(ctx context.Context, s *Store) error {
	for !w.done {
		if w.r.stop != nil && bytes.Compare(w.r.start, w.r.stop) >= 0 {
			w.done = true // HBase would read start == stop as a Get of that row
			break
		}
		rows, err := s.scan(ctx, w.r)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			w.done = true
			break
		}
		author, yield, err := w.author(rows[0].key)
		if err != nil {
			// Not a row of the table's layouts: nothing to rebuild from.
			w.r.start = keys.After(rows[0].key)
			continue
		}
		prefix := keys.AuthorPrefix(author)
		w.r.start = keys.PrefixEnd(prefix)
		if yield {
			w.name, w.prefix = author, prefix
			return nil
		}
	}
	return nil
}

// compare orders the current authors of two walks, a done walk last.
func (w *authorWalk) compare(o *authorWalk) int {
	switch {
	case w.done && o.done:
		return 0
	case w.done:
		return 1
	case o.done:
		return -1
	}
	return bytes.Compare(w.prefix, o.prefix)
}

// Kinds of fixes of deleted nodes' remains.
const (
	fixNodeDeletionFinished     = "node deletions finished"
	fixRelationshipOfGoneNode   = "relationships of deleted nodes deleted"
	fixStaleIntentCleared       = "relationship intents older than a day cleared"
	fixArticleOfGoneNode        = "articles of deleted nodes deleted"
	fixCountersOfGoneNodeDelete = "article counters of deleted nodes deleted"
)

// graphScan is what one pass over the graph table finds.
type graphScan struct {
	nodes         map[string]bool   // ids of nodes that exist, not being deleted
	created       map[string]int64  // their creation times
	deleting      []string          // ids of nodes being deleted
	relationships map[string]relRow // by relationship row key
	index         map[string]row    // adjacency rows by key
	degrees       map[string]row    // degree rows by key
	// residues are deleted node and relationship rows (see
	// deleteEntityCreated) and creates of relationships that never got
	// their row (xp alone), kept a day: by key, the u to compare.
	residues map[string]residueRow
	// intents are relationship creates' intents on node rows (see
	// relIntent) older than residueKept: a create's retry after that is
	// not recognised anyway.
	intents []staleIntent
}

type staleIntent struct {
	row       []byte
	qualifier string
	ts        int64
}

type residueRow struct {
	key    []byte
	at     int64 // the residue's u, or the abandoned create's time
	absent bool  // no c: compare "c absent"
}

type relRow struct {
	key RelationshipKey
	e   entity
}

func (s *Store) scanGraph(ctx context.Context) (graphScan, error) {
	g := graphScan{nodes: map[string]bool{}, created: map[string]int64{}, relationships: map[string]relRow{}, index: map[string]row{}, degrees: map[string]row{},
		residues: map[string]residueRow{}}
	all := scanRange{table: keys.TableGraph, family: keys.FamilyGraph}
	err := s.scanAll(ctx, all, func(rw row) (bool, error) {
		if id, err := keys.DecodeNode(rw.key); err == nil {
			e, ok, err := decodeEntity(rw.key, rw.cells)
			if err != nil {
				return false, err
			}
			switch {
			case !ok && e.deleted():
				g.residues[string(rw.key)] = residueRow{key: rw.key, at: e.updated}
			case ok && e.deleting != 0:
				g.deleting = append(g.deleting, id)
			case ok:
				g.nodes[id] = true
				g.created[id] = e.created
			}
			if !e.deleted() {
				// (A residue's go with it, removeResidues.)
				limit := s.nowMs() - residueKept.Milliseconds()
				for q, in := range intentsOf(rw.cells) {
					if in.placed < limit {
						g.intents = append(g.intents, staleIntent{row: rw.key, qualifier: q, ts: in.ts})
					}
				}
			}
		} else if r, err := keys.DecodeRelationship(rw.key); err == nil {
			e, ok, err := decodeEntity(rw.key, rw.cells)
			switch {
			case err != nil:
				return false, fmt.Errorf("relationship row %q: %v", rw.key, err)
			case ok:
				g.relationships[string(rw.key)] = relRow{RelationshipKey{r.Start, r.Type, r.End}, e}
			case e.deleted():
				g.residues[string(rw.key)] = residueRow{key: rw.key, at: e.updated}
			case e.pending != nil && e.created == 0:
				g.residues[string(rw.key)] = residueRow{key: rw.key, at: e.pending.created, absent: true}
			default:
				return false, fmt.Errorf("relationship row %q: no creation time", rw.key)
			}
		} else if _, err := keys.DecodeAdjacency(rw.key); err == nil {
			g.index[string(rw.key)] = rw
		} else if _, err := keys.DecodeDegree(rw.key); err == nil {
			g.degrees[string(rw.key)] = rw
		}
		return true, nil
	})
	return g, err
}

func (s *Store) repairGraph(ctx context.Context, fix func(kind string, n int)) error {
	g, err := s.scanGraph(ctx)
	if err != nil {
		return err
	}
	// Deletions a crash cut short are finished first (relationships,
	// articles, node row: DeleteNode), then the graph read again.
	if len(g.deleting) > 0 {
		for _, id := range g.deleting {
			if err := s.finishNodeDeletion(ctx, id, 0, true); err != nil {
				return fmt.Errorf("finish the deletion of node %q: %w", id, err)
			}
			fix(fixNodeDeletionFinished, 1)
		}
		if g, err = s.scanGraph(ctx); err != nil {
			return err
		}
	}
	if err := s.removeResidues(ctx, g.residues, fix); err != nil {
		return err
	}
	for _, in := range g.intents {
		// At its own stamp (a create of the op placing it again over the
		// same u, a day later, would be hidden: it is not recognised then).
		if err := s.deleteColumns(ctx, keys.TableGraph, keys.FamilyGraph, in.row, []string{in.qualifier}, in.ts); err != nil {
			return err
		}
		fix(fixStaleIntentCleared, 1)
	}
	// A relationship whose end is gone goes, and so does one of an
	// earlier node of an end's id (its xe, when recorded, is not the
	// ends' creations: a create that read that node wrote it after its
	// deletion, and was cut short before its recheck took it back); its
	// index rows are then orphans, deleted below. (The relationship's own
	// creation time is not compared with its ends': an import keeps a
	// source's, which need not be in order.)
	for key, rel := range g.relationships {
		if g.nodes[rel.key.Start] && g.nodes[rel.key.End] &&
			rel.e.endsAre([2]int64{g.created[rel.key.Start], g.created[rel.key.End]}) {
			continue
		}
		if live, err := s.endsExistNow(ctx, rel.key, rel.e); err != nil || live {
			if err != nil {
				return err
			}
			continue // both ends exist now: created since the scan
		}
		if _, _, err := s.deleteEntityCreated(ctx, []byte(key), rel.e.created, nil); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		fix(fixRelationshipOfGoneNode, 1)
		delete(g.relationships, key)
	}
	// Index rows each relationship should have, with its properties at u.
	want := map[string]bool{}
	for _, rel := range g.relationships {
		out, in, err := rel.key.index(rel.e.created)
		if err != nil {
			return err
		}
		for _, ix := range [][]byte{out, in} {
			want[string(ix)] = true
			have, ok := g.index[string(ix)]
			if ok && bytes.Equal(have.cells[keys.QualProperties], rel.e.props) && have.ts >= rel.e.updated {
				continue
			}
			kind := "index row written"
			if ok {
				kind = "index row refreshed"
			}
			if err := s.putIndexRowVisible(ctx, ix, rel.e); err != nil {
				return err
			}
			fix(kind, 1)
			g.index[string(ix)] = row{key: ix, cells: cells{keys.QualProperties: rel.e.props}, ts: rel.e.updated}
		}
	}
	for key, ix := range g.index {
		if want[key] {
			continue
		}
		// Checked once the clock has passed the row's stamp: a relationship
		// created after the check writes its index rows (the same key if
		// created in the same millisecond) after the delete's stamp.
		_ = s.waitClockPast(ctx, ix.ts, 5*time.Millisecond)
		if live, err := s.indexRowLiveNow(ctx, ix.key); err != nil || live {
			if err != nil {
				return err
			}
			continue // its relationship was created since the scan
		}
		if err := s.deleteRow(ctx, keys.TableGraph, ix.key, ix.ts); err != nil {
			return err
		}
		fix("orphan index row deleted", 1)
		delete(g.index, key)
	}
	// Degree counters equal the index rows they count.
	counts := map[string]int64{}
	for _, ix := range g.index {
		a, err := keys.DecodeAdjacency(ix.key)
		if err != nil {
			return err
		}
		d, err := keys.Degree{Node: a.Node, Dir: a.Dir, Type: a.Type}.Key()
		if err != nil {
			return err
		}
		counts[string(d)]++
	}
	for key := range g.degrees {
		if _, ok := counts[key]; !ok {
			counts[key] = 0 // counts nothing any more
		}
	}
	var recount []string // counters off, recounted beside the writers
	for key, n := range counts {
		have := g.degrees[key]
		if n == 0 && have.key != nil {
			// A counter of a node that is gone: delete it once that
			// cannot hide a later Increment (deleteDegreeRows).
			d, err := keys.DecodeDegree(have.key)
			if err != nil {
				return err
			}
			if !g.nodes[d.Node] && s.waitCounterPast(ctx, have.ts) == nil {
				if err := s.deleteRow(ctx, keys.TableGraph, have.key, have.ts); err != nil {
					return err
				}
				fix("orphan degree counter deleted", 1)
				continue
			}
		}
		v, ok := decodeMs(have.cells[keys.QualDegree])
		if ok && v == n {
			continue
		}
		if ok || have.cells[keys.QualDegree] == nil {
			recount = append(recount, key)
			continue
		}
		// A corrupt counter: a Put older than the counter's cell would lose: stamp it after.
		ts := max(s.nowMs(), have.ts+1)
		if err := s.put(ctx, keys.TableGraph, keys.FamilyGraph, []byte(key), cells{keys.QualDegree: encodeMs(n)}, ts); err != nil {
			return err
		}
		fix("degree counter corrected", 1)
	}
	n, err := s.recountDegreesNow(ctx, recount)
	fix("degree counter corrected", n)
	return err
}

// residueKept is how long a deleted row's residue is kept: longer than a
// client retries a write (a retry after it may apply again) and than any
// clock is ahead of another.
const residueKept = 24 * time.Hour

// removeResidues deletes the residues older than residueKept, each with a
// compare-and-set on the u (or absent c) it was read with, stamped with its
// own time: a create over it meanwhile, or a clock behind, loses nothing.
func (s *Store) removeResidues(ctx context.Context, residues map[string]residueRow, fix func(kind string, n int)) error {
	limit := s.nowMs() - residueKept.Milliseconds()
	for _, r := range residues {
		if r.at >= limit {
			continue
		}
		qualifier, expected := keys.QualUpdated, encodeMs(r.at)
		if r.absent {
			qualifier, expected = keys.QualCreated, nil
		}
		if _, err := s.checkAndDeleteRow(ctx, keys.TableGraph, keys.FamilyGraph, r.key, qualifier, expected, r.at); err != nil {
			return err
		}
		fix("residue of a deleted row removed", 1)
	}
	return nil
}
