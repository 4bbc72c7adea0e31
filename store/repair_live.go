package store

import (
	"bytes"
	"context"
	"errors"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Repair may run while writers write (a server on the same cluster). It
// decides from one scan of each table, so what it would undo because the
// scan did not see it is checked again, row by row, just before: the
// helpers below. They cost a Get or a short scan per fix, none when the
// scan found nothing to fix.

// nodesExistNow reports whether every node of ids exists now: a
// relationship whose end the scan did not see may have been created with
// that node since.
func (s *Store) nodesExistNow(ctx context.Context, ids ...string) (bool, error) {
	for _, id := range ids {
		if _, err := s.getNode(ctx, id); errors.Is(err, ErrNotFound) {
			return false, nil
		} else if err != nil {
			return false, err
		}
	}
	return true, nil
}

// indexRowLiveNow reports whether the adjacency row ix is an index row of
// a relationship that exists now: one created after the scan passed its
// relationship row, whose index rows are then no orphans.
func (s *Store) indexRowLiveNow(ctx context.Context, ix []byte) (bool, error) {
	_, live, err := s.relationshipOfIndexRow(ctx, ix)
	return live, err
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

// recountDegreeNow brings the degree counter key to the index rows it
// counts now, by an Increment of the difference, so that the writes since
// the scan (each an index row and an Increment) are kept; only a write
// between this recount and the Increment can leave it one off. It
// reports whether it changed the counter; ok is false if the counter's
// cell is corrupt, which the caller overwrites.
func (s *Store) recountDegreeNow(ctx context.Context, key []byte) (changed, ok bool, err error) {
	d, err := keys.DecodeDegree(key)
	if err != nil {
		return false, false, err
	}
	prefix, err := keys.AdjacencyPrefix(d.Node, d.Dir, d.Type)
	if err != nil {
		return false, false, err
	}
	var n int64
	rng := scanRange{table: keys.TableGraph, family: keys.FamilyGraph, start: prefix, stop: keys.PrefixEnd(prefix), keyOnly: true}
	if err := s.scanAll(ctx, rng, func(row) (bool, error) { n++; return true, nil }); err != nil {
		return false, false, err
	}
	c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, key)
	if err != nil {
		return false, false, err
	}
	var have int64
	if raw := c[keys.QualDegree]; raw != nil {
		if have, ok = decodeMs(raw); !ok {
			return false, false, nil
		}
	}
	if have == n {
		return false, true, nil
	}
	if _, err := s.increment(ctx, keys.TableGraph, keys.FamilyGraph, key, keys.QualDegree, n-have); err != nil {
		return false, false, err
	}
	return true, true, nil
}

// putIndexRowVisible writes the index row ix of a relationship with its
// properties at ts, the relationship's update time, and reads it back: a
// delete marker stamped at ts or later (the index row of an earlier
// relationship of the same key, created in the same millisecond, deleted
// while Repair ran) hides a write at ts, so it is written again at the
// clock, where it shows, if its relationship (as it is now) still
// exists: a relationship deleted since the scan stays deleted.
func (s *Store) putIndexRowVisible(ctx context.Context, ix, props []byte, ts int64) error {
	if err := s.put(ctx, keys.TableGraph, keys.FamilyGraph, ix, cells{keys.QualProperties: props}, ts); err != nil {
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
	return s.put(ctx, keys.TableGraph, keys.FamilyGraph, ix, cells{keys.QualProperties: e.props}, max(s.nowMs(), e.updated, ts+1))
}
