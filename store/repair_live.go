package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Repair may run while writers write (a server on the same cluster). It
// decides from one scan of each table, so what it would undo because the
// scan did not see it is checked again, row by row, just before: the
// helpers below. They cost a Get or a short scan per fix, none when the
// scan found nothing to fix; counters found off cost more (see
// recountDegreesNow, settleAttempts): a degree recount reads the graph's
// relationship rows once more per attempt.

// endsExistNow reports whether both ends of relationship k, its row read
// as e, exist now and are the nodes it was created for (e's xe, when
// recorded): an end the scan did not see, or saw as an earlier node, may
// have been created since.
func (s *Store) endsExistNow(ctx context.Context, k RelationshipKey, e entity) (bool, error) {
	var created [2]int64
	for i, id := range []string{k.Start, k.End} {
		n, err := s.getNode(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return false, nil
		} else if err != nil {
			return false, err
		}
		created[i] = n.Created.UnixMilli()
	}
	return e.endsAre(created), nil
}

// indexRowLiveNow reports whether the adjacency row ix is an index row of
// a relationship that exists now: one created after the scan passed its
// relationship row, whose index rows are then no orphans. Or of one being
// created (createInFlight): CreateRelationship writes the index rows
// before the row, and deleting them between the two would leave the
// relationship, once made, with none.
func (s *Store) indexRowLiveNow(ctx context.Context, ix []byte) (bool, error) {
	a, err := keys.DecodeAdjacency(ix)
	if err != nil {
		return false, err
	}
	k := relationshipOf(a)
	e, ok, err := s.readRelationshipRow(ctx, k.row())
	if err != nil {
		return false, err
	}
	if !ok || e.created != a.Created {
		return s.createInFlight(ctx, k, e, a.Created)
	}
	return true, nil
}

// createInFlight reports whether relationship k, its row read as e, is
// being created at created: the create claimed that time in xp (younger
// than staleAfter, the row not made with it) and recorded it in its
// intents on both ends, as it does before it writes the index rows. A
// create cut short there reads the same until staleAfter: its index rows
// are left to a Repair after that. One whose intent an end's deletion has
// undone, or whose end is gone, makes no relationship that stays (its
// recheck takes its row back), so its index rows may go.
func (s *Store) createInFlight(ctx context.Context, k RelationshipKey, e entity, created int64) (bool, error) {
	p := e.pending
	if p == nil || p.created != created || s.stale(p.created) ||
		e.created == p.created || e.gone != nil && e.gone.created == p.created {
		return false, nil
	}
	for _, id := range []string{k.Start, k.End} {
		c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, keys.Node(id))
		if err != nil {
			return false, err
		}
		n, live, err := decodeEntity(keys.Node(id), c)
		if err != nil || !live {
			return false, err
		}
		in, ok := ownIntent(c, p.op)
		if !ok || in.created != created || in.node != n.created || in.undoneBy != (OpID{}) {
			return false, nil
		}
	}
	return true, nil
}

// relationshipOfIndexRow returns the relationship that the adjacency row
// ix is an index row of, if it exists now.
func (s *Store) relationshipOfIndexRow(ctx context.Context, ix []byte) (entity, bool, error) {
	a, err := keys.DecodeAdjacency(ix)
	if err != nil {
		return entity{}, false, err
	}
	k := RelationshipKey{Start: a.Node, Type: a.Type, End: a.Other}
	if a.Dir == keys.Incoming {
		k.Start, k.End = a.Other, a.Node
	}
	row := k.row()
	c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, row)
	if err != nil {
		return entity{}, false, err
	}
	e, ok, err := decodeEntity(row, c)
	if err != nil || !ok {
		return entity{}, false, err
	}
	out, in, err := k.index(e.created)
	if err != nil {
		return entity{}, false, err
	}
	return e, bytes.Equal(out, ix) || bytes.Equal(in, ix), nil
}

// recountDegreesNow brings the degree counters keys to the index rows
// they count now, beside writers, and returns how many it changed. A
// relationship's create writes its index rows before it increments the
// counters, and its deletion deletes them before it decrements, so a
// recount from the index rows and a counter read would count a write in
// flight twice. For each attempt: the index rows of every counter are
// counted; then the counters' Increments of every relationship write
// possibly in flight (younger than staleAfter) that the relationship rows
// show, a live row's create and a residue's create and deletion, are made
// with their writers' ops and purposes (the server applies each once);
// then each counter is read and its index rows scanned again: if they are
// as counted, the difference is made by an Increment, else the counter
// waits for the next attempt. A counter of a create still pending (its
// row not yet created: it may yet lose and unindex) waits too; after
// settleAttempts the counters left are left to the next run.
func (s *Store) recountDegreesNow(ctx context.Context, keyList []string) (int, error) {
	changed := 0
	for attempt := 0; attempt < settleAttempts && len(keyList) > 0; attempt++ {
		first := map[string]indexCount{}
		for _, key := range keyList {
			c, err := s.countIndexRows(ctx, []byte(key))
			if err != nil {
				return changed, err
			}
			first[key] = c
		}
		pending, err := s.replayRelationshipWrites(ctx, first)
		if err != nil {
			return changed, err
		}
		var left []string
		for _, key := range keyList {
			c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, []byte(key))
			if err != nil {
				return changed, err
			}
			var have int64
			if raw := c[keys.QualDegree]; raw != nil {
				var ok bool
				if have, ok = decodeMs(raw); !ok {
					continue // corrupt since the scan: the next Repair overwrites it
				}
			}
			again, err := s.countIndexRows(ctx, []byte(key))
			if err != nil {
				return changed, err
			}
			if again.digest != first[key].digest {
				left = append(left, key) // a write began meanwhile
				continue
			}
			n := int64(len(first[key].rows))
			created := false
			for ix := range first[key].rows {
				rel, ok := pending[ix]
				if !ok {
					continue
				}
				// Still not created? Else it may have counted itself
				// since: the next attempt replays it.
				if e, live, err := s.readRelationshipRow(ctx, rel); err != nil {
					return changed, err
				} else if live && e.pending != nil && e.created == e.pending.created {
					created = true
				}
				n--
			}
			if created {
				left = append(left, key)
				continue
			}
			if n != have {
				if _, err := s.increment(ctx, keys.TableGraph, keys.FamilyGraph, []byte(key), keys.QualDegree, n-have); err != nil {
					return changed, err
				}
				changed++
			}
		}
		keyList = left
	}
	return changed, nil
}

// indexCount is what countIndexRows found for one counter.
type indexCount struct {
	rows   map[string]bool
	digest uint64
}

// countIndexRows returns the index rows the degree counter key counts,
// and a digest of their keys and stamps.
func (s *Store) countIndexRows(ctx context.Context, key []byte) (indexCount, error) {
	d, err := keys.DecodeDegree(key)
	if err != nil {
		return indexCount{}, err
	}
	prefix, err := keys.AdjacencyPrefix(d.Node, d.Dir, d.Type)
	if err != nil {
		return indexCount{}, err
	}
	rows := map[string]bool{}
	h := fnv.New64a()
	rng := scanRange{table: keys.TableGraph, family: keys.FamilyGraph, start: prefix, stop: keys.PrefixEnd(prefix), keyOnly: true}
	err = s.scanAll(ctx, rng, func(rw row) (bool, error) {
		rows[string(rw.key)] = true
		h.Write(rw.key)
		fmt.Fprintf(h, "/%d/", rw.ts)
		return true, nil
	})
	return indexCount{rows, h.Sum64()}, err
}

// replayRelationshipWrites reads every relationship row and, for those
// that count in one of the counters of wanted, makes the counters'
// Increments of the writes possibly in flight (see recountDegreesNow). It
// returns the index rows of creates pending, with their relationship rows.
func (s *Store) replayRelationshipWrites(ctx context.Context, wanted map[string]indexCount) (map[string][]byte, error) {
	pending := map[string][]byte{}
	var replays []func() error
	all := scanRange{table: keys.TableGraph, family: keys.FamilyGraph}
	err := s.scanAll(ctx, all, func(rw row) (bool, error) {
		r, err := keys.DecodeRelationship(rw.key)
		if err != nil {
			return true, nil
		}
		k := RelationshipKey{Start: r.Start, Type: r.Type, End: r.End}
		out, in, err := k.degrees()
		if err != nil {
			return true, nil
		}
		_, wantOut := wanted[string(out)]
		_, wantIn := wanted[string(in)]
		if !wantOut && !wantIn {
			return true, nil
		}
		e, ok, err := decodeEntity(rw.key, rw.cells)
		if err != nil {
			return true, nil // not for this pass to judge
		}
		replay := func(op OpID, delta, created int64) {
			if op != (OpID{}) {
				replays = append(replays, func() error { return s.replayCountDegrees(WithOp(ctx, op), k, delta, created, wantOut, wantIn) })
			}
		}
		// CreateRelationship's creates (xp names them; an import's
		// Increments are its own, its rows have no xp) and deletions.
		p := e.pending
		if ok && !s.stale(e.created) && p != nil && p.op == e.createOp && p.created == e.created {
			replay(e.createOp, +1, e.created)
		}
		if g := e.gone; g != nil && !s.stale(g.at) {
			if g.created != 0 && !s.stale(g.created) && p != nil && p.op == g.createOp && p.created == g.created {
				replay(g.createOp, +1, g.created)
			}
			replay(g.deleteOp, -1, g.created)
		}
		if p != nil && !s.stale(p.created) && (!ok || e.created != p.created) && (e.gone == nil || e.gone.created != p.created) {
			// A create not made yet (or never to be): its index rows do
			// not count until its row is created, which it counts then.
			pOut, pIn, err := k.index(p.created)
			if err != nil {
				return false, err
			}
			pending[string(pOut)] = rw.key
			pending[string(pIn)] = rw.key
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	for _, r := range replays {
		if err := r(); err != nil {
			return nil, err
		}
	}
	return pending, nil
}

// readRelationshipRow reads and decodes a relationship row.
func (s *Store) readRelationshipRow(ctx context.Context, row []byte) (entity, bool, error) {
	c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, row)
	if err != nil {
		return entity{}, false, err
	}
	return decodeEntity(row, c)
}

// replayCountDegrees is countDegrees without its fault points, of the
// outgoing or incoming counter or both: the Increments of a relationship
// write, by the write's op (ctx's) and purposes, which the server applies
// once whoever makes them. Only the counters being recounted: another may
// be an orphan's, deleted, which an Increment would make again.
func (s *Store) replayCountDegrees(ctx context.Context, k RelationshipKey, delta, created int64, outgoing, incoming bool) error {
	out, in, err := k.degrees()
	if err != nil {
		return err
	}
	for _, d := range []struct {
		point string
		row   []byte
		want  bool
	}{{"degree-outgoing", out, outgoing}, {"degree-incoming", in, incoming}} {
		if !d.want {
			continue
		}
		if err := s.countDegree(ctx, k, d.point, d.row, delta, created); err != nil {
			return err
		}
	}
	return nil
}

// putIndexRowVisible writes the index row ix of relationship e with its
// index cells (indexCellsOf) at ts, e's update time, and reads it back: a
// delete marker stamped at ts or later (the index row of an earlier
// relationship of the same key, created in the same millisecond, deleted
// while Repair ran) hides a write at ts, so it is written again at the
// clock, where it shows, if its relationship (as it is now) still
// exists: a relationship deleted since the scan stays deleted.
func (s *Store) putIndexRowVisible(ctx context.Context, ix []byte, rel entity) error {
	ts := rel.updated
	if err := s.put(ctx, keys.TableGraph, keys.FamilyGraph, ix, indexCellsOf(rel), ts); err != nil {
		return err
	}
	c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, ix)
	if err != nil || c[keys.QualProperties] != nil {
		return err
	}
	e, live, err := s.relationshipOfIndexRow(ctx, ix)
	if err != nil || !live {
		return err
	}
	return s.put(ctx, keys.TableGraph, keys.FamilyGraph, ix, indexCellsOf(e), max(s.nowMs(), e.updated, ts+1))
}

// Counters and word counts are rebuilt while writers write: a write makes
// its row change (post, update's xp, deletion's mark) before its
// Increments, so a rebuild that counts the rows and then reads a counter
// would count a write in flight twice (its row, then its Increment) or
// not at all. So the rebuild (settledTimeline) first makes the Increments
// of every write its scan found possibly in flight (younger than
// staleAfter), with that write's own op and purpose: the server applies
// each nonce once, so the writer's own Increment, before or after, counts
// once. It then reads the counters, and scans the timeline again: if any
// row changed (a write started), it starts over, and after
// settleAttempts leaves the author to the next run; else the counters
// read are those of the rows counted, and their difference is made by an
// Increment (or a compare-and-set), never a Put over a count.

// settleAttempts is how many times a rebuild starts over when writes go
// on under an author before it leaves the author to the next run.
const settleAttempts = 8

// timelinePass scans author's timeline, calling visit (if not nil) for
// each row (ok false: not an article), makes the Increments of the writes
// possibly in flight that touch word counts (words) or article counters
// (counts), and returns a digest of the articles' states (key, u, mark,
// pending update).
func (s *Store) timelinePass(ctx context.Context, author string, words, counts bool, visit func(rw row, t timelineState, ok bool) error) (uint64, error) {
	h := fnv.New64a()
	var inFlight []row
	err := s.scanAll(ctx, timelineRange(author), func(rw row) (bool, error) {
		t, ok, err := decodeTimelineState(rw.key, rw.cells)
		if err != nil {
			return false, err
		}
		if visit != nil {
			if err := visit(rw, t, ok); err != nil {
				return false, err
			}
		}
		if !ok {
			return true, nil
		}
		h.Write(rw.key)
		fmt.Fprintf(h, "/%d/%x/%x/", t.updated, t.deleting, t.prev)
		if (words || counts) && s.mayBeInFlight(rw.key, t) {
			inFlight = append(inFlight, rw)
		}
		return true, nil
	})
	if err != nil {
		return 0, err
	}
	for _, rw := range inFlight {
		t, _, _ := decodeTimelineState(rw.key, rw.cells)
		if err := s.replayArticleWrite(ctx, author, rw.key, t, words, counts); err != nil {
			return 0, err
		}
	}
	return h.Sum64(), nil
}

// mayBeInFlight reports whether the article's row shows a write that may
// still be making its Increments: a post, an update or a deletion younger
// than staleAfter (older ones are taken for cut short, and finished
// without their counts, which a rebuild recounts).
func (s *Store) mayBeInFlight(row []byte, t timelineState) bool {
	k, err := keys.DecodeTimeline(row)
	if err != nil {
		return false
	}
	return !s.stale(k.Posted) || !s.stale(t.updated)
}

// replayArticleWrite makes the Increments of the writes under way that
// the article's row shows, each with its op and purpose as its writer
// makes it (so each counts once, whoever makes it first): the post (if
// the article was never updated, so its cells are the post's), a pending
// update (xp), a deletion (mark).
func (s *Store) replayArticleWrite(ctx context.Context, author string, row []byte, t timelineState, words, counts bool) error {
	k, err := keys.DecodeTimeline(row)
	if err != nil {
		return err
	}
	wrow, crow := keys.WordCounts(author), keys.Counters(author)
	apply := func(op OpID, what string, w, c map[string]int64) error {
		octx := WithOp(ctx, op)
		if words && len(w) > 0 {
			if err := s.incrementColumnsFor(octx, purposeWords(what, row), keys.TableWordCounts, keys.FamilyWordCounts, wrow, w); err != nil {
				return err
			}
		}
		if counts && len(c) > 0 {
			if err := s.incrementColumnsFor(octx, purposeCount(what, row), keys.TableArticles, keys.FamilyArticles, crow, c); err != nil {
				return err
			}
		}
		return nil
	}
	var op OpID
	if !s.stale(k.Posted) && len(t.createdBy) == len(op) && len(t.ops) == 0 && t.prev == nil {
		copy(op[:], t.createdBy)
		if err := apply(op, "post", articleWords(t.articleCells),
			map[string]int64{keys.QualArticleCount: 1, keys.QualCategoryCount + t.category: 1}); err != nil {
			return err
		}
	}
	if t.prev != nil && !s.stale(t.updated) {
		if uop, old, ok := decodePrev(t.prev); ok {
			var w, c map[string]int64
			if old.title != t.title || old.body != t.body {
				w = articleWordDeltas(old, t.articleCells)
			}
			if old.category != t.category {
				c = map[string]int64{keys.QualCategoryCount + t.category: 1, keys.QualCategoryCount + old.category: -1}
			}
			if err := apply(uop, "update", w, c); err != nil {
				return err
			}
		}
	}
	if t.isMarked() && !s.stale(t.updated) {
		if err := apply(t.markOp(), "delete", wordDeltas(articleWords(t.articleCells), nil),
			map[string]int64{keys.QualArticleCount: -1, keys.QualCategoryCount + t.category: -1}); err != nil {
			return err
		}
	}
	return nil
}
