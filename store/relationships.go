package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Direction of a relationship as seen from one of its nodes.
type Direction = keys.Direction

const (
	Outgoing = keys.Outgoing
	Incoming = keys.Incoming
)

// Relationship is a typed edge from Start to End.
type Relationship struct {
	Start, Type, End string
	Properties       PropertySet
	Created          time.Time
	Updated          time.Time
}

// RelationshipKey names a relationship.
type RelationshipKey struct{ Start, Type, End string }

// Validate reports whether k names a valid relationship (ErrInvalidInput
// otherwise).
func (k RelationshipKey) Validate() error {
	if err := validateID("start node id", k.Start); err != nil {
		return err
	}
	if err := validateID("end node id", k.End); err != nil {
		return err
	}
	return validateType("relationship type", k.Type)
}

func (k RelationshipKey) row() []byte {
	return keys.Relationship{Start: k.Start, Type: k.Type, End: k.End}.Key()
}

// index returns the relationship's two adjacency rows (outgoing from Start,
// incoming to End) for its creation time.
func (k RelationshipKey) index(created int64) (out, in []byte, err error) {
	out, err = keys.Adjacency{Node: k.Start, Dir: keys.Outgoing, Type: k.Type, Created: created, Other: k.End}.Key()
	if err != nil {
		return nil, nil, err
	}
	in, err = keys.Adjacency{Node: k.End, Dir: keys.Incoming, Type: k.Type, Created: created, Other: k.Start}.Key()
	return out, in, err
}

// degrees returns the two counter rows a relationship counts in.
func (k RelationshipKey) degrees() (out, in []byte, err error) {
	out, err = keys.Degree{Node: k.Start, Dir: keys.Outgoing, Type: k.Type}.Key()
	if err != nil {
		return nil, nil, err
	}
	in, err = keys.Degree{Node: k.End, Dir: keys.Incoming, Type: k.Type}.Key()
	return out, in, err
}

// ID is the relationship's public id: opaque, URL-safe, and parsed back by
// ParseRelationshipID.
func (k RelationshipKey) ID() string {
	b, _ := json.Marshal([3]string{k.Start, k.Type, k.End})
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseRelationshipID reverses RelationshipKey.ID; a malformed id is
// ErrInvalidInput.
func ParseRelationshipID(id string) (RelationshipKey, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(id)
	var parts [3]string
	if err != nil || json.Unmarshal(b, &parts) != nil {
		return RelationshipKey{}, invalid("malformed relationship id")
	}
	k := RelationshipKey{Start: parts[0], Type: parts[1], End: parts[2]}
	if err := k.Validate(); err != nil {
		return RelationshipKey{}, err
	}
	return k, nil
}

// Key returns the relationship's key.
func (r Relationship) Key() RelationshipKey { return RelationshipKey{r.Start, r.Type, r.End} }

func relationshipFrom(k RelationshipKey, e entity) (Relationship, error) {
	props, err := storedProperties(e.props)
	if err != nil {
		return Relationship{}, err
	}
	return Relationship{Start: k.Start, Type: k.Type, End: k.End, Properties: props,
		Created: time.UnixMilli(e.created), Updated: time.UnixMilli(e.updated)}, nil
}

// relationshipOf is the relationship an adjacency row indexes.
func relationshipOf(a keys.Adjacency) RelationshipKey {
	if a.Dir == keys.Outgoing {
		return RelationshipKey{Start: a.Node, Type: a.Type, End: a.Other}
	}
	return RelationshipKey{Start: a.Other, Type: a.Type, End: a.Node}
}

// Fault points of CreateRelationship besides writeIndex's and
// countDegrees' (see Store.fault), named after the step that follows.
const (
	pointRelationshipRow     = "relationship-row"
	pointRelationshipRecheck = "relationship-recheck"
)

// CreateRelationship writes the outgoing and incoming index rows, then the
// relationship row (CheckAndMutate "c absent"), then increments both degree
// counters, then reads both nodes again. Both nodes must exist
// (ErrNotFound); a second create is ErrAlreadyExists.
//
// The index rows come first so that whatever a crash leaves is found
// through the index of either end, by a DeleteNode of it and by Repair: no
// relationship row is ever left that no index row names. The last read
// catches an end deleted (or deleted and created again) while this ran,
// after that deletion's scan of its index: the relationship is then
// deleted again and the create is ErrNotFound.
func (s *Store) CreateRelationship(ctx context.Context, k RelationshipKey, props Properties) (Relationship, error) {
	if err := k.Validate(); err != nil {
		return Relationship{}, err
	}
	encoded, err := encodeProperties(props)
	if err != nil {
		return Relationship{}, err
	}
	ends, err := s.relationshipEnds(ctx, k, true)
	if errors.Is(err, ErrAlreadyExists) {
		return Relationship{}, fmt.Errorf("create relationship: %w", err)
	}
	if err != nil {
		return Relationship{}, err
	}
	var e entity
	err = s.casLoop(ctx, "create relationship hidden by a delete marker", func(int) (bool, error) {
		now := max(s.nowMs(), e.created+1) // after a try hidden by a marker
		e = entity{created: now, updated: now, props: encoded}
		if err := s.writeIndex(ctx, k, e); err != nil {
			return false, err
		}
		if err := s.faultPoint(pointRelationshipRow); err != nil {
			return false, err
		}
		_, err := s.createEntity(ctx, k.row(), e, false)
		if err == nil {
			return true, nil
		}
		if errors.Is(err, ErrAlreadyExists) || errors.Is(err, ErrConflict) {
			// Lost to another create, or hidden by a recent delete's
			// marker (then try again a millisecond later): our index rows
			// index nothing.
			if uerr := s.unindexLoser(ctx, k, e); uerr != nil {
				return false, uerr
			}
			if errors.Is(err, ErrConflict) {
				return false, nil
			}
		}
		return false, err
	})
	if err != nil {
		return Relationship{}, fmt.Errorf("create relationship: %w", err)
	}
	if err := s.countDegrees(ctx, k, +1); err != nil {
		return Relationship{}, err
	}
	if err := s.faultPoint(pointRelationshipRecheck); err != nil {
		return Relationship{}, err
	}
	again, err := s.relationshipEnds(ctx, k, false)
	if err == nil && again != ends {
		err = fmt.Errorf("node %q or %q: %w", k.Start, k.End, ErrNotFound)
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Relationship{}, fmt.Errorf("create relationship: %w", err) // as a crash
	}
	if err != nil {
		if derr := s.deleteRelationshipCreated(ctx, k, e.created, ""); derr != nil && !errors.Is(derr, ErrNotFound) {
			return Relationship{}, derr
		}
		return Relationship{}, fmt.Errorf("create relationship: an end was deleted meanwhile: %w", err)
	}
	return relationshipFrom(k, e)
}

// relationshipEnds returns the creation times of k's start and end nodes,
// which say which node of each id it is, or ErrNotFound if one does not
// exist (or is being deleted); with absent set, ErrAlreadyExists if the
// relationship exists. It reads the rows with one batch of Gets.
func (s *Store) relationshipEnds(ctx context.Context, k RelationshipKey, absent bool) ([2]int64, error) {
	ids := []string{k.Start, k.End}
	gets := make([]Get, 0, 3)
	for _, id := range ids {
		g, err := NodeGet(id)
		if err != nil {
			return [2]int64{}, err
		}
		gets = append(gets, g)
	}
	if absent {
		g, err := k.Get()
		if err != nil {
			return [2]int64{}, err
		}
		gets = append(gets, g)
	}
	rows, err := s.Read(ctx, gets)
	if err != nil {
		return [2]int64{}, err
	}
	var out [2]int64
	for i, id := range ids {
		n, err := rows[i].Node(id)
		if err != nil {
			return [2]int64{}, err
		}
		if n == nil {
			return [2]int64{}, fmt.Errorf("node %q: %w", id, ErrNotFound)
		}
		out[i] = n.Created.UnixMilli()
	}
	if absent {
		if rel, err := rows[2].Relationship(k); err != nil || rel != nil {
			if err == nil {
				err = ErrAlreadyExists
			}
			return [2]int64{}, err
		}
	}
	return out, nil
}

// unindexLoser deletes the index rows a create wrote for e before its
// relationship row lost. If the row that won has the same creation time,
// the rows are the winner's too and are written again with its cells.
func (s *Store) unindexLoser(ctx context.Context, k RelationshipKey, e entity) error {
	c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, k.row())
	if err != nil {
		return err
	}
	winner, ok, err := decodeEntity(k.row(), c)
	if err != nil {
		return err
	}
	if ok && winner.created == e.created {
		return s.writeIndex(ctx, k, winner)
	}
	out, in, err := k.index(e.created)
	if err != nil {
		return err
	}
	for _, ix := range [][]byte{out, in} {
		if err := s.deleteRow(ctx, keys.TableGraph, ix, e.updated); err != nil {
			return err
		}
	}
	return nil
}

// writeIndex puts both index rows with the relationship's properties at its
// update time: a later update's put wins, an earlier one's loses.
func (s *Store) writeIndex(ctx context.Context, k RelationshipKey, e entity) error {
	out, in, err := k.index(e.created)
	if err != nil {
		return err
	}
	for _, ix := range []struct {
		point string
		row   []byte
	}{{"index-outgoing", out}, {"index-incoming", in}} {
		if err := s.faultPoint(ix.point); err != nil {
			return err
		}
		if err := s.put(ctx, keys.TableGraph, keys.FamilyGraph, ix.row, cells{keys.QualProperties: e.props}, e.updated); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) countDegrees(ctx context.Context, k RelationshipKey, delta int64) error {
	out, in, err := k.degrees()
	if err != nil {
		return err
	}
	for _, d := range []struct {
		point string
		row   []byte
	}{{"degree-outgoing", out}, {"degree-incoming", in}} {
		if err := s.faultPoint(d.point); err != nil {
			return err
		}
		if _, err := s.increment(ctx, keys.TableGraph, keys.FamilyGraph, d.row, keys.QualDegree, delta); err != nil {
			return err
		}
	}
	return nil
}

// UpdateRelationshipProperties is the compare-and-set loop of seed 002 on
// the relationship row, then a put of both index rows at the new update
// time, so concurrent updates leave the index with the newest properties.
func (s *Store) UpdateRelationshipProperties(ctx context.Context, k RelationshipKey, set Properties, remove []string) (Relationship, error) {
	if err := k.Validate(); err != nil {
		return Relationship{}, err
	}
	e, err := s.updateEntity(ctx, k.row(), set, remove)
	if err != nil {
		return Relationship{}, fmt.Errorf("update relationship %s: %w", k.ID(), err)
	}
	if err := s.writeIndex(ctx, k, e); err != nil {
		return Relationship{}, err
	}
	return relationshipFrom(k, e)
}

// DeleteRelationship deletes the relationship row (compare-and-set on u),
// then its index rows with the delete's timestamp, then decrements both
// degree counters.
func (s *Store) DeleteRelationship(ctx context.Context, k RelationshipKey) error {
	if err := k.Validate(); err != nil {
		return err
	}
	return s.deleteRelationship(ctx, k)
}

func (s *Store) deleteRelationship(ctx context.Context, k RelationshipKey) error {
	return s.deleteRelationshipCreated(ctx, k, 0, "")
}

// deleteRelationshipCreated is deleteRelationship of the relationship
// created at created (0: whenever); another one of the same key is
// ErrNotFound. The index row of node near (a node being deleted) goes
// last, so that a crash leaves the row its deletion's re-run finds.
func (s *Store) deleteRelationshipCreated(ctx context.Context, k RelationshipKey, created int64, near string) error {
	old, ts, err := s.deleteEntityCreated(ctx, k.row(), created)
	if err != nil {
		return fmt.Errorf("delete relationship %s: %w", k.ID(), err)
	}
	out, in, err := k.index(old.created)
	if err != nil {
		return err
	}
	type unindex struct {
		point string
		row   []byte
	}
	order := []unindex{{"unindex-outgoing", out}, {"unindex-incoming", in}}
	if near == k.Start && near != k.End {
		order[0], order[1] = order[1], order[0]
	}
	for _, ix := range order {
		if err := s.faultPoint(ix.point); err != nil {
			return err
		}
		if err := s.deleteRow(ctx, keys.TableGraph, ix.row, ts); err != nil {
			return err
		}
	}
	return s.countDegrees(ctx, k, -1)
}

// RelationshipPage is one page of a node's adjacent relationships.
type RelationshipPage struct {
	Relationships []Relationship
	Cursors       Cursors
	PageInfo
	props [][]byte // the relationships' stored properties, for Primed
}

// Primed are the relationship rows, rebuilt from the index rows: built
// when asked for, since most pages are a request's last read.
func (p RelationshipPage) Primed() []Primed {
	out := make([]Primed, len(p.Relationships))
	slab := make([]hrpc.Cell, 3*len(p.Relationships)) // the page's cells in one allocation
	for i, rel := range p.Relationships {
		k := RelationshipKey{Start: rel.Start, Type: rel.Type, End: rel.End}
		e := entity{created: rel.Created.UnixMilli(), updated: rel.Updated.UnixMilli(), props: p.props[i]}
		key := string(k.row())
		out[i] = Primed{Get{keys.TableGraph, key}, Row{key, e.rowCells(&slab)}}
	}
	return out
}

// Adjacent returns a page of node's relationships of one type and
// direction, newest first, from the adjacency index alone (the properties
// are denormalised there; Updated is the index cell's timestamp).
func (s *Store) Adjacent(ctx context.Context, node, relType string, dir Direction, req PageRequest) (RelationshipPage, error) {
	pr, err := adjacencyRange(node, relType, dir)
	if err != nil {
		return RelationshipPage{}, err
	}
	rows, cursors, info, err := s.page(ctx, pr, req)
	if err != nil {
		return RelationshipPage{}, err
	}
	page := RelationshipPage{Relationships: make([]Relationship, len(rows)), Cursors: cursors, PageInfo: info,
		props: make([][]byte, len(rows))}
	for i, rw := range rows {
		a, err := keys.DecodeAdjacency(rw.key)
		if err != nil {
			return RelationshipPage{}, err
		}
		props, err := storedProperties(rw.raw.get(keys.QualProperties))
		if err != nil {
			return RelationshipPage{}, err
		}
		k := relationshipOf(a)
		page.Relationships[i] = Relationship{Start: k.Start, Type: k.Type, End: k.End, Properties: props,
			Created: time.UnixMilli(a.Created), Updated: time.UnixMilli(rw.ts)}
		page.props[i] = rw.raw.get(keys.QualProperties)
	}
	return page, nil
}

func adjacencyRange(node, relType string, dir Direction) (pageRange, error) {
	if err := validateID("node id", node); err != nil {
		return pageRange{}, err
	}
	if err := validateType("relationship type", relType); err != nil {
		return pageRange{}, err
	}
	prefix, err := keys.AdjacencyPrefix(node, dir, relType)
	if err != nil {
		return pageRange{}, invalid("direction must be INCOMING or OUTGOING")
	}
	return pageRange{layout: keys.AdjacencyLayout, table: keys.TableGraph, family: keys.FamilyGraph, prefix: prefix}, nil
}

// DegreeKey names one degree counter.
type DegreeKey struct {
	Node string
	Dir  Direction
	Type string
}
