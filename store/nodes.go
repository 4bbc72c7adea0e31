package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Node is a vertex of the property graph.
type Node struct {
	ID string
	// Owner is the subject that created the node; empty when nobody owns
	// it (created while authentication was off, imported without one).
	Owner      string
	Properties PropertySet
	Created    time.Time
	Updated    time.Time
}

func encodeMs(ms int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(ms)) }

// A tentative mark (x) is its time and the byte 't'.
func encodeTentative(ms int64) []byte { return append(encodeMs(ms), 't') }

func decodeTentative(b []byte) (int64, bool) {
	if len(b) != 9 || b[8] != 't' {
		return 0, false
	}
	return decodeMs(b[:8])
}

// A deletion without detach confirms its mark (x) as its time and the
// byte 'a'.
func encodeAloneMark(ms int64) []byte { return append(encodeMs(ms), 'a') }

func decodeAloneMark(b []byte) (int64, bool) {
	if len(b) != 9 || b[8] != 'a' {
		return 0, false
	}
	return decodeMs(b[:8])
}

func decodeMs(b []byte) (int64, bool) {
	if len(b) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(b)), true
}

// entity is the common part of node and relationship rows: c, p, u, and
// a node's o and x.
type entity struct {
	created, updated int64
	props            []byte
	owner            []byte
	// deleting is when a node's deletion started (x), 0 for a live node:
	// a node being deleted reads as gone (see DeleteNode).
	deleting int64
	// tentative is when a deletion without detach marked the node
	// tentatively (x, flagged), 0 for none: the node is live until that
	// deletion confirms its mark (see confirmMark).
	tentative int64
	// alone: the mark (deleting) is a deletion's without detach,
	// confirmed (confirmMark).
	alone bool
	// The ops of the writes that made the row (see once.go): its create
	// (xc), its last updates (xu), the deletion that marked it (xd).
	createOp  OpID
	updateOps []byte
	deleteOp  OpID
	// gone is the row's residue g, if it has one: of the row's last
	// deletion. The row is deleted (decodeEntity's ok is false) while the
	// residue is at least u; a row created again keeps it.
	gone *residue
	// pending is a relationship create under way (xp).
	pending *pendingCreate
	// ends are a relationship's start and end nodes' creation times when
	// it was created (xe; zero: not recorded, a row of an older version
	// or an import).
	ends [2]int64
}

// deleted reports whether e is a residue: a row deleted, read as absent.
func (e entity) deleted() bool { return e.gone != nil && e.gone.at >= e.updated }

// decodeEntity reads c, p, u of the row with key row; ok is false when the
// row does not exist, or is a residue (then e has its u and residue).
func decodeEntity[K rowKey, C cellSource](row K, c C) (e entity, ok bool, err error) {
	if g, has := c.lookup(keys.QualGone); has {
		r, okr := decodeResidue(g)
		if !okr {
			return e, false, corrupt(row, "g=%x", g)
		}
		e.gone = &r
	}
	if xp, has := c.lookup(keys.QualPendingCreate); has {
		p, okp := decodePending(xp)
		if !okp {
			return e, false, corrupt(row, "xp=%x", xp)
		}
		e.pending = &p
	}
	c0, _ := c.lookup(keys.QualCreated)
	if c0 == nil {
		return e, false, nil
	}
	u, _ := c.lookup(keys.QualUpdated)
	created, okc := decodeMs(c0)
	updated, oku := decodeMs(u)
	if !okc || !oku {
		return e, false, corrupt(row, "c=%x u=%x", c0, u)
	}
	props, _ := c.lookup(keys.QualProperties)
	owner, _ := c.lookup(keys.QualOwner)
	var deleting, tentative int64
	alone := false
	if x, ok := c.lookup(keys.QualDeleting); ok {
		if t, ok := decodeTentative(x); ok {
			tentative = t
		} else if t, ok := decodeAloneMark(x); ok {
			deleting, alone = t, true
		} else if deleting, ok = decodeMs(x); !ok {
			return e, false, corrupt(row, "x=%x", x)
		}
	}
	createOp, okc := decodeOp(get(c, keys.QualCreateOp))
	deleteOp, okd := decodeOp(get(c, keys.QualDeleteOp))
	if !okc || !okd {
		return e, false, corrupt(row, "xc or xd")
	}
	updateOps, _ := c.lookup(keys.QualUpdateOps)
	xe, _ := c.lookup(keys.QualEnds)
	ends := decodeEnds(xe)
	e = entity{created: created, updated: updated, props: props, owner: owner, deleting: deleting, tentative: tentative, alone: alone,
		createOp: createOp, updateOps: updateOps, deleteOp: deleteOp, gone: e.gone, pending: e.pending, ends: ends}
	return e, !e.deleted(), nil
}

func get[C cellSource](c C, q string) []byte {
	v, _ := c.lookup(q)
	return v
}

// Qualifiers as bytes, for the cells rowCells makes.
var (
	qualCreated    = []byte(keys.QualCreated)
	qualProperties = []byte(keys.QualProperties)
	qualUpdated    = []byte(keys.QualUpdated)
	qualOwner      = []byte(keys.QualOwner)
)

// rowCells are e's cells as a read returns them (a page scan's primed
// rows), from slab if it has room (three or four cells).
func (e entity) rowCells(slab *[]hrpc.Cell) rowCells {
	n := 3
	if len(e.owner) > 0 {
		n = 4
	}
	if len(*slab) < n {
		*slab = make([]hrpc.Cell, 4*n)
	}
	cells := (*slab)[:n:n]
	*slab = (*slab)[n:]
	cells[0] = hrpc.Cell{Qualifier: qualCreated, Value: encodeMs(e.created)}
	cells[1] = hrpc.Cell{Qualifier: qualProperties, Value: e.props}
	cells[2] = hrpc.Cell{Qualifier: qualUpdated, Value: encodeMs(e.updated)}
	if n == 4 {
		cells[3] = hrpc.Cell{Qualifier: qualOwner, Value: e.owner}
	}
	out := make(rowCells, n)
	for i := range cells {
		out[i] = &cells[i]
	}
	return out
}

func (e entity) cells() cells {
	c := cells{keys.QualCreated: encodeMs(e.created), keys.QualProperties: e.props, keys.QualUpdated: encodeMs(e.updated)}
	if len(e.owner) > 0 {
		c[keys.QualOwner] = e.owner
	}
	if e.deleting != 0 {
		c[keys.QualDeleting] = encodeMs(e.deleting)
	}
	return c
}

// createCells are the cells of a create of e by op; over a residue, also
// the columns the deleted row may hold, reset.
func (e entity) createCells(op OpID, overResidue bool) cells {
	c := e.cells()
	c[keys.QualCreateOp] = append([]byte(nil), op[:]...)
	if e.ends != [2]int64{} || overResidue {
		c[keys.QualEnds] = e.endsCell()
	}
	if overResidue {
		c[keys.QualOwner] = append([]byte{}, e.owner...)
		c[keys.QualDeleting] = encodeMs(e.deleting)
		// The deleted creations' update ops stay: a retry of an update
		// that applied to one of them finds its op, and does not apply
		// again to this one.
		c[keys.QualUpdateOps] = append([]byte{}, e.updateOps...)
		c[keys.QualDeleteOp] = []byte{}
	}
	return c
}

// endsCell is e's xe: empty when its ends are not recorded.
func (e entity) endsCell() []byte {
	if e.ends == [2]int64{} {
		return []byte{}
	}
	return append(encodeMs(e.ends[0]), encodeMs(e.ends[1])...)
}

// decodeEnds decodes a relationship's or index row's xe: zero when it is
// not recorded (nor 16 bytes, as before it was checked anywhere).
func decodeEnds(xe []byte) (ends [2]int64) {
	if len(xe) == 16 {
		ends[0], _ = decodeMs(xe[:8])
		ends[1], _ = decodeMs(xe[8:])
	}
	return ends
}

// endsAre reports whether a relationship row e belongs to the end nodes
// created at created (a row that does not record its ends does).
func (e entity) endsAre(created [2]int64) bool {
	return e.ends == [2]int64{} || e.ends == created
}

func nodeFrom(id string, e entity) (Node, error) {
	props, err := storedProperties(e.props)
	if err != nil {
		return Node{}, err
	}
	return Node{ID: id, Owner: string(e.owner), Properties: props, Created: time.UnixMilli(e.created), Updated: time.UnixMilli(e.updated)}, nil
}

// ownerCell is owner as stored: nil for none.
func ownerCell(owner string) []byte {
	if owner == "" {
		return nil
	}
	return []byte(owner)
}

// Errors of createEntity that say what its caller may do next.
var (
	// errHidden: the row is a residue at or after the times the create
	// must keep (an import's, a relationship's whose index rows are
	// written), or a delete marker hides it.
	errHidden = fmt.Errorf("%w: the row was deleted after the time it is imported at", ErrConflict)
)

// createEntity writes e as a new row by the ctx's op: a CheckAndMutate "c
// absent", or "u is the residue's" over a deleted row's residue, its cells
// stamped e.updated.
//
// When the CheckAndMutate answers false, the row is read: if it holds the
// op's own create (a re-send applied, or a retry with the same op), that
// is a success with the stored entity, never ErrAlreadyExists. A live row
// of another create is ErrAlreadyExists. Over a residue a live create
// (keep unset) stamps its cells after the residue (max(now, u+1)), so a
// delete from a replica whose clock is ahead never hides it; a create that
// must keep its times (keep: an import, a relationship whose index rows
// name its creation time) is errHidden if they are not after the residue.
// A create the op made and somebody deleted since answers its entity as
// created (errCreatedThenDeleted tells the caller), also when another op
// has created the row again since (live, or being deleted): never
// ErrAlreadyExists for the op's own create.
//
// verify reads the row back after a CheckAndMutate that wrote: an import's
// times may be before an old delete marker's, which would hide the cells.
func (s *Store) createEntity(ctx context.Context, row []byte, e entity, keep, verify bool) (entity, error) {
	return s.createEntityOver(ctx, row, e, keep, verify, nil)
}

// createEntityOver is createEntity; before it writes over a residue, it
// calls finish with it (nil: nothing), which does what the residue's
// deletion may not have done yet: a relationship's deletion counts its
// degrees down after its row has become the residue, and once a create
// has replaced the residue nothing else says what was deleted.
func (s *Store) createEntityOver(ctx context.Context, row []byte, e entity, keep, verify bool, finish func(residue) error) (entity, error) {
	ctx, op := withOp(ctx)
	qualifier, expected := keys.QualCreated, []byte(nil)
	over := false
	var out entity
	err := s.casLoop(ctx, "create", func(int) (bool, error) {
		ok, err := s.checkAndPut(ctx, keys.TableGraph, keys.FamilyGraph, row, qualifier, expected, e.createCells(op, over), e.updated)
		if err != nil {
			return false, err
		}
		if ok && !verify {
			out = e
			return true, nil
		}
		c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, row)
		if err != nil {
			return false, err
		}
		old, live, err := decodeEntity(row, c)
		switch {
		case err != nil:
			return false, err
		case live && old.createOp == op:
			out = old // ours: this call's, or an earlier one's of the same op
			return true, nil
		case createdThenDeleted(old, op):
			// Before live: the row created again by another op since
			// (live, or marked by a deletion of that one) keeps our
			// creation in its residue, and our create happened, once.
			out = e
			out.created, _, _ = old.gone.createdBy(op)
			return false, errCreatedThenDeleted
		case live:
			return false, ErrAlreadyExists
		case old.gone != nil && old.deleted():
			if keep && old.updated >= e.created {
				return false, errHidden
			}
			if finish != nil {
				if err := finish(*old.gone); err != nil {
					return false, err
				}
			}
			if !keep {
				next := max(s.nowMs(), old.updated+1)
				if e.deleting != 0 {
					e.deleting = next
				}
				e.created, e.updated = next, next
			}
			qualifier, expected, over = keys.QualUpdated, encodeMs(old.updated), true
			e.updateOps = old.updateOps
			return false, nil
		case keep:
			return false, errHidden // an older delete marker hides it
		}
		// Hidden by a delete marker (a version of hbgraph before the
		// residues): one millisecond later.
		next := max(s.nowMs(), e.updated+1)
		e.created, e.updated = next, next
		qualifier, expected, over = keys.QualCreated, nil, false
		return false, nil
	})
	if err != nil {
		return out, err
	}
	return out, nil
}

// createdThenDeleted reports whether the row e (live or not) keeps, in its
// residue, a creation by op that a deletion took: the last one, or an
// earlier one (the row was created again by another, and perhaps deleted
// again, since).
func createdThenDeleted(e entity, op OpID) bool {
	_, _, ok := e.gone.createdBy(op)
	return ok
}

// errCreatedThenDeleted: the op's create was applied, and the row deleted
// since (a retry that comes after someone deleted what it created).
var errCreatedThenDeleted = fmt.Errorf("%w: created, then deleted", ErrNotFound)

// CreateNode creates a node owned by owner (empty: nobody). It fails with
// ErrAlreadyExists if the id is taken, ErrConflict while a node of that id
// is being deleted (DeleteNode), and ErrInvalidInput for a bad id, owner or
// property map.
//
// A node never adopts what an earlier node of its id left behind
// (relationships or articles left by a crash racing that node's deletion,
// or by a version of hbgraph whose deleteNode kept articles). If there is
// any, the row is written marked as being deleted, so that the node reads
// as gone, the remains are deleted, and then the mark is cleared; a crash
// in between leaves a node being deleted, which DeleteNode and Repair
// finish.
func (s *Store) CreateNode(ctx context.Context, id, owner string, props Properties) (Node, error) {
	if err := validateID("node id", id); err != nil {
		return Node{}, err
	}
	if err := validateOwner(owner); err != nil {
		return Node{}, err
	}
	encoded, err := encodeProperties(props)
	if err != nil {
		return Node{}, err
	}
	ctx, op := withOp(ctx)
	remains, err := s.hasRemains(ctx, id)
	if err != nil {
		return Node{}, fmt.Errorf("create node %q: %w", id, err)
	}
	now := s.nowMs()
	e := entity{created: now, updated: now, props: encoded, owner: ownerCell(owner)}
	if remains {
		e.deleting = now
	}
	row := keys.Node(id)
	e, err = s.createEntity(ctx, row, e, false, false)
	if errors.Is(err, errCreatedThenDeleted) {
		// This op created it (an earlier try of a retried call), and
		// somebody deleted it since: the create happened, once.
		return nodeFrom(id, e)
	}
	if err == nil && e.deleting != 0 {
		if !e.deleteOp.IsZero() {
			// Ours (an earlier try of this op), and a deletion has marked
			// it since (a create's own mark records no op): the create
			// happened, once; its remains are the deletion's to remove.
			return nodeFrom(id, e)
		}
		remains = true // ours, cut short while removing remains
	} else if err == nil {
		// Live and unmarked: written now without remains, or ours from an
		// earlier try that finished; what names the node now is its own
		// (written since), never remains to remove.
		remains = false
	}
	if errors.Is(err, ErrAlreadyExists) {
		// The row was live; read again, it may be marked, or gone already
		// (its deletion finished in between): either way a deletion was
		// under way, not a node there to answer ALREADY_EXISTS for.
		again, deleting, rerr := s.readNode(ctx, id)
		if rerr != nil {
			return Node{}, fmt.Errorf("create node %q: %w", id, rerr) // not known to be there
		}
		if deleting || again == nil {
			return Node{}, fmt.Errorf("create node %q: %w: a node of this id is being deleted; "+
				"try again once its deletion has finished", id, ErrConflict)
		}
	}
	if err != nil {
		return Node{}, fmt.Errorf("create node %q: %w", id, err)
	}
	if remains {
		if err := s.faultPoint(pointNodeRemains); err != nil {
			return Node{}, err
		}
		if err := s.removeRemains(ctx, id, e.created); err != nil {
			return Node{}, fmt.Errorf("create node %q: remove what an earlier node of this id left: %w", id, err)
		}
		if err := s.faultPoint(pointNodeLive); err != nil {
			return Node{}, err
		}
		next := s.nextUpdate(e.updated)
		won, err := s.checkAndPut(ctx, keys.TableGraph, keys.FamilyGraph, row, keys.QualUpdated, encodeMs(e.updated),
			cells{keys.QualDeleting: encodeMs(0), keys.QualUpdated: encodeMs(next)}, next)
		if err != nil {
			return Node{}, fmt.Errorf("create node %q: %w", id, err)
		}
		if !won {
			// Ours applied already (a re-send), or deleted meanwhile
			// (DeleteNode finishing it).
			again, deleting, err := s.readNode(ctx, id)
			if err != nil {
				return Node{}, fmt.Errorf("create node %q: %w", id, err)
			}
			if again == nil || deleting || again.createOp != op {
				return Node{}, fmt.Errorf("create node %q: deleted while it was being created: %w", id, ErrConflict)
			}
			return nodeFrom(id, *again)
		}
		e.updated, e.deleting = next, 0
	}
	return nodeFrom(id, e)
}

// hasRemains reports whether relationships or articles name node id:
// adjacency rows, or timeline or category rows. With no node of that id,
// they are an earlier node's. (Counters and word counts at zero are what a
// deletion leaves by design; counts a crash left are Repair's.)
func (s *Store) hasRemains(ctx context.Context, id string) (bool, error) {
	has, err := s.hasRelationships(ctx, id)
	if err != nil || has {
		return has, err
	}
	lo := keys.TimelinePrefix(id)
	hi := keys.Counters(id) // sorts after the timeline and category rows
	rows, err := s.scan(ctx, scanRange{table: keys.TableArticles, family: keys.FamilyArticles,
		start: lo, stop: hi, limit: 1, keyOnly: true})
	return len(rows) > 0, err
}

// removeRemains deletes every relationship and article of node id, with
// the full protocols, and category rows left without their article, for
// the create of its node at created, written marked. Like a deletion
// (finishNodeDeletion), it checks before each relationship and article
// that the node is still that marked one, and stops if not: a deletion
// that found the node marked may have finished it, and the id been
// created again, with relationships and articles of its own, which a slow
// create must not take for remains. The create then finds its node gone
// (ErrConflict).
func (s *Store) removeRemains(ctx context.Context, id string, created int64) error {
	if err := s.detachMarked(ctx, id, created); errors.Is(err, errNoLongerMarked) {
		return nil
	} else if err != nil {
		return err
	}
	if err := s.deleteArticlesOfMarked(articlesCtx(ctx), id, math.MaxInt64, created); errors.Is(err, errNoLongerMarked) {
		return nil
	} else if err != nil {
		return err
	}
	if still, err := s.stillMarked(ctx, id, created); err != nil || !still {
		return err
	}
	return s.deleteStrayCategoryRows(ctx, id)
}

// readNode reads node id's row as it is: nil if there is none, and whether
// it is being deleted.
func (s *Store) readNode(ctx context.Context, id string) (*entity, bool, error) {
	row := keys.Node(id)
	c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, row)
	if err != nil {
		return nil, false, err
	}
	e, ok, err := decodeEntity(row, c)
	if err != nil || !ok {
		return nil, false, err
	}
	return &e, e.deleting != 0, nil
}

// getNode returns a node, or an error wrapping ErrNotFound.
func (s *Store) getNode(ctx context.Context, id string) (Node, error) {
	if err := validateID("node id", id); err != nil {
		return Node{}, err
	}
	e, err := s.readLiveNode(ctx, id)
	if err != nil {
		return Node{}, err
	}
	return nodeFrom(id, e)
}

// readLiveNode reads node id's row: an error wrapping ErrNotFound when
// the node does not exist or is being deleted.
func (s *Store) readLiveNode(ctx context.Context, id string) (entity, error) {
	row := keys.Node(id)
	c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, row)
	if err != nil {
		return entity{}, err
	}
	e, ok, err := decodeEntity(row, c)
	if err != nil {
		return entity{}, err
	}
	if !ok || e.deleting != 0 {
		return entity{}, fmt.Errorf("node %q: %w", id, ErrNotFound)
	}
	return e, nil
}

// getNodes returns the nodes in the order of ids, with nil for those that
// do not exist, reading them with one batch of Gets.
func (s *Store) getNodes(ctx context.Context, ids []string) ([]*Node, error) {
	return readEach(ctx, s, ids, NodeGet, func(id string, r Row) (*Node, error) { return r.Node(id) })
}

// UpdateNodeProperties sets and removes properties in one compare-and-set on
// the node's update time (seed 002), retrying on contention up to
// Options.MaxAttempts, then ErrConflict.
func (s *Store) UpdateNodeProperties(ctx context.Context, id string, set Properties, remove []string) (Node, error) {
	if err := validateID("node id", id); err != nil {
		return Node{}, err
	}
	e, err := s.updateEntity(ctx, keys.Node(id), set, remove, true, nil)
	if err != nil {
		return Node{}, fmt.Errorf("update node %q: %w", id, err)
	}
	return nodeFrom(id, e)
}

// updateEntity is the compare-and-set loop shared by nodes and
// relationships: read p and u, merge, write p and the new u if u is still
// the one read, and the op among the row's recent updates (xu). A row
// whose recent updates hold the op is this write applied already (a
// re-send, a retry with the same op): success with the row as it is. With
// owned (a node), the ctx's Writer must be allowed to write the owner read
// with the u the write compares (ErrForbidden otherwise), so a node
// deleted and created again by another subject meanwhile is not written.
// A relationship's update names its ends: read with the row, an end that
// does not exist or is being deleted makes it ErrNotFound (see
// getWithEnds).
func (s *Store) updateEntity(ctx context.Context, row []byte, set Properties, remove []string, owned bool, ends []string) (entity, error) {
	ctx, op := withOp(ctx)
	w := writerOf(ctx)
	if _, err := encodeProperties(set); err != nil {
		return entity{}, err
	}
	if err := validateRemove(set, remove); err != nil {
		return entity{}, err
	}
	var next entity
	err := s.casLoop(ctx, "update", func(int) (bool, error) {
		c, endsLive, endsCreated, err := s.getWithEnds(ctx, row, ends)
		if err != nil {
			return false, err
		}
		old, ok, err := decodeEntity(row, c)
		if err != nil {
			return false, err
		}
		if old.created != 0 && hasOp(old.updateOps, op) {
			// Ours applied (a re-send, or an earlier try): before any
			// deletion that has marked or deleted the row since.
			next = old
			return true, nil
		}
		if !ok || old.deleting != 0 {
			return false, ErrNotFound
		}
		if !endsLive || len(ends) > 0 && !old.endsAre(endsCreated) {
			return false, ErrNotFound
		}
		if owned && !w.mayWrite(string(old.owner)) {
			return false, errNotYours
		}
		props, err := decodeProperties(old.props)
		if err != nil {
			return false, err
		}
		encoded, err := encodeProperties(mergeProperties(props, set, remove))
		if err != nil {
			return false, err // e.g. the merged map is too large: nothing written
		}
		next = entity{created: old.created, updated: s.nextUpdate(old.updated), props: encoded, owner: old.owner,
			createOp: old.createOp, updateOps: pushOp(old.updateOps, op), ends: old.ends}
		return s.checkAndPut(ctx, keys.TableGraph, keys.FamilyGraph, row, keys.QualUpdated, encodeMs(old.updated),
			cells{keys.QualProperties: encoded, keys.QualUpdated: encodeMs(next.updated), keys.QualUpdateOps: next.updateOps}, next.updated)
	})
	if err != nil {
		return entity{}, err
	}
	return next, nil
}

// errNotYours is a write to a node the ctx's Writer may not write.
var errNotYours = &Refusal{Kind: ErrForbidden, Reason: "the node belongs to another subject (or to nobody): only its owner or an admin may change it"}

// deleteEntity deletes a c/p/u row with a compare-and-set on u, and returns
// the row as it was and the delete's timestamp (one past u, seed 002).
func (s *Store) deleteEntity(ctx context.Context, row []byte) (entity, int64, error) {
	return s.deleteEntityCreated(ctx, row, 0, nil)
}

// errDeletedEarlier: a relationship's deletion retried finds that it
// applied, and that a create has replaced its residue since, finishing it.
var errDeletedEarlier = errors.New("deleted by this op, and created again since")

// getWithEnds reads row and, in the same batch of Gets, the node rows of
// ends (a relationship's start and end; none: row alone). endsLive is
// false when one of them does not exist or is being deleted: a node's
// deletion takes its relationships with it at its mark (DeleteNode), so a
// write of the relationship after the mark is ErrNotFound, as a read
// after it finds nothing (Row.Relationship).
func (s *Store) getWithEnds(ctx context.Context, row []byte, ends []string) (c cells, endsLive bool, endsCreated [2]int64, err error) {
	if len(ends) == 0 {
		c, err = s.get(ctx, keys.TableGraph, keys.FamilyGraph, row)
		return c, true, endsCreated, err
	}
	rows := make([][]byte, 1, 1+len(ends))
	rows[0] = row
	for _, id := range ends {
		rows = append(rows, keys.Node(id))
	}
	res, err := s.getBatch(ctx, keys.TableGraph, rows)
	if err != nil {
		return nil, false, endsCreated, err
	}
	endsLive = true
	for i, r := range res[1:] {
		e, ok, err := decodeEntity(rows[1+i], r)
		if err != nil {
			return nil, false, endsCreated, err
		}
		endsLive = endsLive && ok && e.deleting == 0
		if i < len(endsCreated) {
			endsCreated[i] = e.created
		}
	}
	return res[0].asMap(), endsLive, endsCreated, nil
}

// deleteEntityCreated is deleteEntity of the row only if it was created at
// created (0: whenever): a row of another creation is ErrNotFound.
//
// The row is not deleted but turned into a residue: a compare-and-set on u
// puts u and g (the deletion's timestamp, op and the creation it deleted),
// after which the row reads as absent. No delete marker is written, so a
// clock ahead of the others hides nothing a later create writes (which
// stamps its cells after the residue), and a re-sent or retried delete
// finds its own residue: a success, with the row's creation time and the
// deletion's timestamp, for the steps that follow to be redone with the
// same stamps. A node marked as being deleted (x) records its marking op
// (xd) in the residue: whoever finishes the deletion, it is that op's.
//
// With ends (a relationship's, deleted by its caller, not by a node's
// deletion), an end that does not exist or is being deleted makes it
// ErrNotFound, unless the row is the op's own residue (see getWithEnds).
func (s *Store) deleteEntityCreated(ctx context.Context, row []byte, created int64, ends []string) (entity, int64, error) {
	return s.deleteEntityRecorded(ctx, row, created, ends, nil)
}

// deleteEntityRecorded is deleteEntityCreated of a relationship by the
// caller's op, which records the creation it deletes in op row opRow (nil:
// none) before its compare-and-set (see graphOpRecord): a retry after more
// deletions of the key than a residue keeps deletes that creation only,
// and answers success if it is gone, or ErrNotFound if the residue says
// another op deleted it (then this op's compare-and-set did not apply).
func (s *Store) deleteEntityRecorded(ctx context.Context, row []byte, created int64, ends []string, opRow []byte) (entity, int64, error) {
	return s.deleteEntityWhere(ctx, row, created, ends, opRow, nil, nil)
}

// deleteMarkedNode is deleteEntityCreated of a node row that must still be
// marked as being deleted: errNoLongerMarked if it is live and unmarked
// (the mark was a create's, which it has cleared since: see DeleteNode).
//
// seen is the row as the deletion last read it (nil: none), which its
// first compare-and-set takes for the row as it is: if it changed since,
// that compare-and-set fails and the row is read again.
func (s *Store) deleteMarkedNode(ctx context.Context, row []byte, created int64, seen cells) error {
	_, _, err := s.deleteEntityWhere(ctx, row, created, nil, nil, func(e entity) bool { return e.deleting != 0 }, seen)
	return err
}

// deleteEntityWhere is deleteEntityRecorded, which deletes a row only if
// need (nil: always) holds of it as read for the compare-and-set, and is
// otherwise errNoLongerMarked. seen (without ends) is the row as read
// last, taken for its first read (nil: it reads the row).
func (s *Store) deleteEntityWhere(ctx context.Context, row []byte, created int64, ends []string, opRow []byte, need func(entity) bool, seen cells) (entity, int64, error) {
	ctx, op := withOp(ctx)
	var (
		old entity
		ts  int64
	)
	var record *graphOpRecord
	if opRow != nil {
		var err error
		if record, err = s.readGraphOp(ctx, opRow, graphOpRelDelete, graphOpRelDeleteDone); err != nil {
			return entity{}, 0, err
		}
	}
	err := s.casLoop(ctx, "delete", func(attempt int) (bool, error) {
		var (
			c           cells
			endsLive    = true
			endsCreated [2]int64
			err         error
		)
		if attempt > 0 || seen == nil || len(ends) > 0 {
			if c, endsLive, endsCreated, err = s.getWithEnds(ctx, row, ends); err != nil {
				return false, err
			}
		} else {
			c = seen
		}
		var ok bool
		if old, ok, err = decodeEntity(row, c); err != nil {
			return false, err
		}
		// Ours, applied: also when the row was created again since (the
		// residue stays in it), which is not this op's to delete.
		if g := old.gone; g != nil && g.deleteOp == op && (created == 0 || g.created == created) {
			old.created, old.createOp, ts = g.created, g.createOp, g.at // ours, applied
			return true, nil
		}
		if g := old.gone; g != nil && len(ends) > 0 && g.deletedEarlierBy(op) {
			// Ours, applied, and the row created (and perhaps deleted)
			// again since: the create that replaced our residue finished
			// our deletion (finishDeletion).
			return false, errDeletedEarlier
		}
		if record != nil && (record.kind == graphOpRelDeleteDone || !(ok && record.of(old))) {
			// The creation this op set out to delete is gone.
			if by, found := old.gone.deletionOf(record.created, record.createOp); record.kind != graphOpRelDeleteDone && found && by != op {
				return false, ErrNotFound // by another op: ours did not apply
			}
			return false, errDeletedEarlier
		}
		if !ok || (created != 0 && old.created != created) || !endsLive || len(ends) > 0 && !old.endsAre(endsCreated) {
			return false, ErrNotFound
		}
		if need != nil && !need(old) {
			return false, errNoLongerMarked
		}
		if opRow != nil && record == nil {
			r := graphOpRecord{kind: graphOpRelDelete, created: old.created, createOp: old.createOp}
			if err := s.writeGraphOp(ctx, opRow, r); err != nil {
				return false, err
			}
			record = &r
		}
		by := op
		if old.deleting != 0 && !old.deleteOp.IsZero() {
			by = old.deleteOp
		}
		ts = s.nextUpdate(old.updated)
		gone := residue{at: ts, deleteOp: by, created: old.created, createOp: old.createOp, earlier: old.gone.next()}
		return s.checkAndPut(ctx, keys.TableGraph, keys.FamilyGraph, row, keys.QualUpdated, encodeMs(old.updated),
			cells{keys.QualUpdated: encodeMs(ts), keys.QualGone: gone.encode()}, ts)
	})
	if err != nil {
		return entity{}, 0, err
	}
	return old, ts, nil
}

// Fault points of a node's deletion and creation (see Store.fault), each
// named after the step that follows it.
const (
	pointNodeMark     = "node-mark"
	pointNodeDetach   = "node-detach"
	pointNodeArticles = "node-articles"
	pointNodeRow      = "node-row"
	pointNodeDegrees  = "degree-rows"
	pointNodeRemains  = "node-remains"
	pointNodeLive     = "node-live"
)

// DeleteNode deletes a node and everything that hangs from it, so that
// nothing of it is left for a later node of the same id to adopt.
//
// A node that still has relationships or articles is ErrConflict unless
// detach is set. The deletion then
//
//  1. marks the node row as being deleted (x, with a compare-and-set on u):
//     from then on the node reads as gone, writes to it and posts under it
//     are ErrNotFound, and CreateNode of its id is ErrConflict;
//  2. deletes every relationship that touches it, whoever owns the other
//     end (an edge never outlives either end), each with the full
//     relationship protocol so the other ends' index rows and counters
//     stay right;
//  3. deletes every article it wrote with the full article protocol
//     (timeline row, category row, counters, word counts), then category
//     rows a crash left without their article;
//  4. deletes the node row, then its degree counter rows.
//
// A crash after step 1 leaves a node being deleted: DeleteNode of it again
// (whatever detach says) and Repair finish the deletion, recounting what
// the crash left counted (see finishNodeDeletion). A relationship or
// article written concurrently is either seen by steps 2 and 3 or removed
// by its own writer, which reads the node again after writing
// (CreateRelationship, PostArticle). The article counters and word counts
// are left at zero, not deleted: a concurrent writer's Increments and their
// undoing must add up (Repair deletes them).
//
// What is left to the other ends: a crash between a relationship's two
// index rows (CreateRelationship, DeleteRelationship on their own) can
// leave the far end's row alone, which no deletion of this node finds;
// it shows in the far end's list until Repair deletes it.
func (s *Store) DeleteNode(ctx context.Context, id string, detach bool) error {
	if err := validateID("node id", id); err != nil {
		return err
	}
	_, derived := OpFrom(ctx)
	caller := ctx // (a restart starts from it: see the end)
	ctx, op := withOp(ctx)
	w := writerOf(ctx)
	row := keys.Node(id)
	// With the caller's op (a retry is possible), the creation it deletes
	// is recorded before it is marked (see graphOpRecord): a retry after
	// more deletions of the id than a residue keeps deletes that creation
	// only, never a node created since.
	var opRow []byte
	var record *graphOpRecord
	if derived {
		var err error
		if opRow, err = s.graphOpRow(ctx, id, op); err != nil {
			return err
		}
	}
	if opRow != nil {
		var err error
		if record, err = s.readGraphOp(ctx, opRow, graphOpNodeDelete); err != nil {
			return err
		}
	}
	recordIt := func(e entity) error {
		if opRow == nil || record != nil {
			return nil
		}
		r := graphOpRecord{kind: graphOpNodeDelete, created: e.created, createOp: e.createOp}
		if err := s.writeGraphOp(ctx, opRow, r); err != nil {
			return err
		}
		record = &r
		return nil
	}
	resumed, done, gone := false, false, false
	var marked int64 // the creation time of the node this deletion marked (or found marked)
	ownMark := false // marked by this op
	err := s.casLoop(ctx, "delete node", func(int) (bool, error) {
		c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, row)
		if err != nil {
			return false, err
		}
		e, ok, err := decodeEntity(row, c)
		switch {
		case err != nil:
			return false, err
		case e.gone.deletedBy(op):
			// This op deleted it already (a retry), or marked it for
			// another deletion to finish; a node created (and perhaps
			// deleted) since is not ours to touch.
			done, gone = true, !ok
			return true, nil
		case record != nil && !(ok && record.of(e)):
			// The node this op set out to delete is gone (by this op, or
			// by another deletion this one then helped): a node there now
			// was created since, and is not this op's to delete.
			done, gone = true, !ok
			return true, nil
		case !ok:
			return false, fmt.Errorf("node %q: %w", id, ErrNotFound)
		case !w.mayWrite(string(e.owner)):
			return false, errNotYours
		case e.deleting != 0:
			if err := recordIt(e); err != nil {
				return false, err
			}
			resumed, marked = true, e.created // a deletion cut short
			ownMark = e.deleteOp == op
			return true, nil
		}
		if !detach {
			if _, err := s.refuseAttached(ctx, id); err != nil {
				return false, err
			}
		}
		if err := recordIt(e); err != nil {
			return false, err
		}
		if err := s.faultPoint(pointNodeMark); err != nil {
			return false, err
		}
		ts := s.nextUpdate(e.updated)
		marked, ownMark = e.created, true
		x := encodeMs(ts)
		if !detach {
			x = encodeTentative(ts) // confirmed by confirmMark
		}
		return s.checkAndPut(ctx, keys.TableGraph, keys.FamilyGraph, row, keys.QualUpdated, encodeMs(e.updated),
			cells{keys.QualDeleting: x, keys.QualUpdated: encodeMs(ts), keys.QualDeleteOp: op[:]}, ts)
	})
	if err != nil {
		return err
	}
	if done {
		if !gone {
			return nil
		}
		// The row's deletion was the last step but the counters'.
		return s.deleteDegreeRows(ctx, id, false)
	}
	if !detach && ownMark && !resumed {
		deleted, err := s.confirmMark(ctx, id, op)
		if err != nil {
			return err
		}
		if deleted {
			return s.deleteDegreeRows(ctx, id, false) // (the rest was the confirmation's)
		}
	}
	if err := s.finishNodeDeletion(ctx, id, marked, resumed); err != nil || !resumed || ownMark {
		return err
	}
	// The mark this deletion found and finished may have been a create's
	// (CreateNode over what an earlier node left), which that create
	// clears once it has removed them: then the node, live again, was
	// never deleted, and finishNodeDeletion stopped (its node no longer
	// marked). This deletion starts again, on the live node.
	again, deleting, err := s.readNode(ctx, id)
	if err != nil {
		return err
	}
	if again != nil && !deleting && again.created == marked {
		if restarts, _ := ctx.Value(nodeDeleteRestarts{}).(int); restarts < 4 {
			return s.DeleteNode(context.WithValue(caller, nodeDeleteRestarts{}, restarts+1), id, detach)
		}
		return fmt.Errorf("node %q: being created and deleted at once: %w", id, ErrConflict)
	}
	return nil
}

// nodeDeleteRestarts counts a DeleteNode's restarts (see DeleteNode).
type nodeDeleteRestarts struct{}

// confirmMark confirms the tentative mark a deletion without detach (op)
// put on node id, once no relationship or article hangs from it: from
// then on the node reads as gone. A tentative mark leaves the node live
// for readers and writers, so that a deletion that ends in ErrConflict
// was never seen to take the node away. A relationship or article written
// meanwhile is either seen by the scan here (the mark is taken back:
// ErrConflict) or its writer, checking the node again after writing
// (CreateRelationship, PostArticle), takes the tentative mark back itself
// (cancelTentative), which fails the compare-and-set that would confirm
// it (ErrConflict too), or finds the mark confirmed and undoes its write.
//
// It reads the row afresh, never starting from the row as the mark left
// it: a create may place its intent after the deletion read the row and
// before the mark, and an intent leaves u as it was, so the mark's
// compare-and-set does not fail on it (the replica simulation's concurrent
// runs found the deletion then confirming beside a create in flight).
//
// When nothing at all hangs from the node, no stray category row either,
// the one compare-and-set confirms the mark and deletes the row, as
// finishNodeDeletion would have right after it with nothing to delete in
// between (deleted: only the degree rows are left to delete). A writer
// that wrote under the node after the scans then finds it gone, as it
// would have found it marked, and undoes its write. Fault points name the
// steps of the longer way, so a test that cuts an operation short at them
// (s.fault) takes that way.
func (s *Store) confirmMark(ctx context.Context, id string, op OpID) (deleted bool, err error) {
	row := keys.Node(id)
	err = s.casLoop(ctx, "delete node", func(int) (bool, error) {
		deleted = false // (a lost answer's read again: the longer way)
		c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, row)
		if err != nil {
			return false, err
		}
		e, ok, err := decodeEntity(row, c)
		switch {
		case err != nil:
			return false, err
		case e.gone.deletedBy(op):
			// Confirmed (its answer lost: a re-send applied), and finished
			// since by another deletion, which found the mark: the residue
			// keeps this op's, also when the node has been created again
			// since (TestNodeDeletionConfirmedFinishedAndCreatedAgain).
			// (A tentative mark reads as live: a deletion that finds one
			// marks the node as its own.)
			return true, nil
		case !ok:
			return false, fmt.Errorf("node %q: %w", id, ErrNotFound) // another deletion finished it
		case e.deleting != 0 && e.deleteOp == op:
			return true, nil // confirmed (a re-send applied)
		case e.deleting != 0:
			return false, fmt.Errorf("node %q: %w", id, ErrNotFound) // another deletion marked it
		case e.tentative == 0 || e.deleteOp != op:
			return false, fmt.Errorf("node %q: a relationship or article was written, or another deletion began, meanwhile: %w", id, ErrConflict)
		}
		strays := false
		refusal := s.refuseIntents(ctx, id, c, e, op)
		if refusal == nil {
			strays, refusal = s.refuseAttached(ctx, id)
		}
		if refusal != nil && !errors.Is(refusal, ErrConflict) {
			return false, refusal
		}
		next := s.nextUpdate(e.updated)
		if refusal != nil {
			won, err := s.checkAndPut(ctx, keys.TableGraph, keys.FamilyGraph, row, keys.QualUpdated, encodeMs(e.updated),
				cells{keys.QualDeleting: encodeMs(0), keys.QualUpdated: encodeMs(next), keys.QualDeleteOp: []byte{}}, next)
			if err != nil || !won {
				return false, err // (lost: read again)
			}
			return false, refusal
		}
		confirm := cells{keys.QualDeleting: encodeAloneMark(next), keys.QualUpdated: encodeMs(next)}
		deleted = !strays && s.fault == nil && s.CheckArticleLayout(ctx) == nil
		if deleted {
			// (as deleteMarkedNode's residue)
			gone := residue{at: next, deleteOp: op, created: e.created, createOp: e.createOp, earlier: e.gone.next()}
			confirm[keys.QualGone] = gone.encode()
		}
		return s.checkAndPut(ctx, keys.TableGraph, keys.FamilyGraph, row, keys.QualUpdated, encodeMs(e.updated), confirm, next)
	})
	return deleted && err == nil, err
}

// cancelTentative takes back a tentative mark on node id, whose row read
// as e, for a writer that has written under the node and checks it again
// (see confirmMark): the deletion without detach that marked it then
// answers ErrConflict. Whatever it answers, the caller reads the node
// again.
func (s *Store) cancelTentative(ctx context.Context, id string, e entity) error {
	next := s.nextUpdate(e.updated)
	_, err := s.checkAndPut(ctx, keys.TableGraph, keys.FamilyGraph, keys.Node(id), keys.QualUpdated, encodeMs(e.updated),
		cells{keys.QualDeleting: encodeMs(0), keys.QualUpdated: encodeMs(next), keys.QualDeleteOp: []byte{}}, next)
	return err
}

// recheckNode is getNode for a writer checking the node it wrote under
// again: a tentative mark on it is taken back first (cancelTentative).
func (s *Store) recheckNode(ctx context.Context, id string) (Node, error) {
	for {
		e, err := s.readLiveNode(ctx, id)
		if err != nil {
			return Node{}, err
		}
		if e.tentative == 0 {
			return nodeFrom(id, e)
		}
		if err := s.cancelTentative(ctx, id, e); err != nil {
			return Node{}, err
		}
	}
}

// refuseIntents is ErrConflict if node id, whose row read as c (e), has
// an intent of a relationship create younger than intentStale (see
// relIntent); older ones are undone by the deletion op. A create that
// placed one before the deletion's tentative mark is seen here; one after
// it would have taken that mark back first.
func (s *Store) refuseIntents(ctx context.Context, id string, c cells, e entity, op OpID) error {
	now := s.nowMs()
	for q, in := range intentsOf(c) {
		if in.node != e.created || in.undone() {
			continue
		}
		if now-in.placed < intentStale.Milliseconds() {
			return fmt.Errorf("node %q: a relationship of it is being created: %w", id, ErrConflict)
		}
		in.undoneBy = op
		if err := s.put(ctx, keys.TableGraph, keys.FamilyGraph, keys.Node(id), cells{q: in.encode()}, in.ts); err != nil {
			return err
		}
	}
	return nil
}

// refuseAttached is ErrConflict if node id still has relationships or
// articles. strays reports category rows a crash left without their
// article, which keep no node from its deletion (finishNodeDeletion
// deletes them).
func (s *Store) refuseAttached(ctx context.Context, id string) (strays bool, err error) {
	has, err := s.hasRelationships(ctx, id)
	if err != nil {
		return false, err
	}
	if has {
		return false, fmt.Errorf("node %q still has relationships (delete with detach): %w", id, ErrConflict)
	}
	articles, strays, err := s.probeAuthorRows(ctx, id)
	if err != nil {
		return false, err
	}
	if articles {
		return false, fmt.Errorf("node %q still has articles (delete with detach): %w", id, ErrConflict)
	}
	return strays, nil
}

// finishNodeDeletion runs steps 2 to 4 of DeleteNode on a node marked as
// being deleted. Each step is safe to run again. resumed says that an
// earlier run may have been cut short in the middle of an article's
// deletion, after which the counters and word counts it had still to
// decrement are recounted (recountAuthor). A fresh deletion trusts the
// deltas instead: a post racing it adds and removes its own counts.
//
// created is the creation time of the node marked (0: whichever is
// marked, Repair's). Another deletion may finish this one's work while it
// runs (DeleteNode helps a deletion it finds under way), after which the
// id may be created again: a deletion that finds its node no longer
// marked stops, and deletes the row only if it is still that creation's,
// so that a slow deletion never deletes a node created after it.
func (s *Store) finishNodeDeletion(ctx context.Context, id string, created int64, resumed bool) error {
	if err := s.faultPoint(pointNodeDetach); err != nil {
		return err
	}
	if !resumed {
		// The mark is this deletion's own, just made (its op is the
		// ctx's): no read of the row first. If another deletion has
		// finished it since, and the id been created again, the checks
		// before each relationship and article, and before the row, stop
		// it (stillMarked).
		return s.finishMarkedNode(ctx, id, created, resumed)
	}
	e, _, err := s.readNode(ctx, id)
	if err != nil {
		return err
	}
	if e != nil && (e.deleting == 0 || (created != 0 && e.created != created)) {
		return nil // finished by another deletion, and created again
	}
	if e != nil && !e.deleteOp.IsZero() {
		// Whoever finishes a deletion does it as the op that marked the
		// node: a relationship or article deletion cut short is then
		// recognised (its residue) and finished, its Increments repeating
		// the same nonces, by any DeleteNode that helps, and by Repair.
		ctx = WithOp(ctx, e.deleteOp)
	}
	return s.finishMarkedNode(ctx, id, created, resumed)
}

// finishMarkedNode is finishNodeDeletion once the ctx's op is the
// marking op's.
func (s *Store) finishMarkedNode(ctx context.Context, id string, created int64, resumed bool) error {
	if err := s.detachMarked(ctx, id, created); errors.Is(err, errNoLongerMarked) {
		return nil
	} else if err != nil {
		return fmt.Errorf("detach node %q: %w", id, err)
	}
	if err := s.faultPoint(pointNodeArticles); err != nil {
		return err
	}
	still, seen, err := s.stillMarkedRow(ctx, id, created)
	if err != nil || !still {
		return err
	}
	// One scan of the author's rows says whether there are articles to
	// delete, and which category rows to check when there are none.
	strays, articles, err := s.authorRows(ctx, id)
	if err != nil {
		return fmt.Errorf("delete the articles of node %q: %w", id, err)
	}
	if articles {
		if err := s.deleteArticlesOfMarked(articlesCtx(ctx), id, math.MaxInt64, created); errors.Is(err, errNoLongerMarked) {
			return nil
		} else if err != nil {
			return fmt.Errorf("delete the articles of node %q: %w", id, err)
		}
		err = s.deleteStrayCategoryRows(ctx, id)
	} else {
		err = s.deleteStrays(ctx, strays)
	}
	if err != nil {
		return fmt.Errorf("delete the articles of node %q: %w", id, err)
	}
	if resumed {
		if err := s.recountAuthor(ctx, id); err != nil {
			return fmt.Errorf("recount the articles of node %q: %w", id, err)
		}
	}
	if err := s.faultPoint(pointNodeRow); err != nil {
		return err
	}
	// The row as read before the articles (a deletion of articles does
	// not write it): its compare-and-set fails if anything did.
	if err := s.deleteMarkedNode(ctx, keys.Node(id), created, seen); errors.Is(err, errNoLongerMarked) {
		return nil // a create's mark, cleared since (see DeleteNode)
	} else if errors.Is(err, ErrNotFound) {
		// A concurrent deletion finished first; if the id was created
		// again since, its counters are the new node's.
		if still, err := s.stillMarked(ctx, id, created); err != nil || !still {
			return err
		}
	} else if err != nil {
		return fmt.Errorf("delete node %q: %w", id, err)
	}
	if err := s.faultPoint(pointNodeDegrees); err != nil {
		return err
	}
	// Counters that still count go too only for Repair (created 0): a
	// DeleteNode finishing another's deletion runs as its op, so the
	// relationship deletions that one cut short were finished above with
	// their own decrements, and a counter that counts is a concurrent
	// DeleteRelationship's whose decrement is still to come (deleting it
	// first would leave that decrement at -1).
	return s.deleteDegreeRows(ctx, id, resumed && created == 0)
}

// stillMarked reports whether node id's deletion of the creation at
// created (0: any) is still to be finished: the row is that node's,
// marked as being deleted, or gone (a residue, no row). A live node is
// another creation's, or ours no longer marked: nothing of it is this
// deletion's to delete.
func (s *Store) stillMarked(ctx context.Context, id string, created int64) (bool, error) {
	still, _, err := s.stillMarkedRow(ctx, id, created)
	return still, err
}

// stillMarkedRow is stillMarked, with the row's cells as read.
func (s *Store) stillMarkedRow(ctx context.Context, id string, created int64) (bool, cells, error) {
	row := keys.Node(id)
	c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, row)
	if err != nil {
		return false, nil, err
	}
	e, ok, err := decodeEntity(row, c)
	if err != nil || !ok {
		return err == nil, c, err
	}
	return e.deleting != 0 && (created == 0 || e.created == created), c, nil
}

// adjacencyOf is the scan range of every adjacency row of a node, both
// directions, all types.
func adjacencyOf(id string) scanRange {
	prefix, err := keys.AdjacencyLayout.Prefix(id)
	if err != nil {
		panic(err) // id was validated
	}
	return scanRange{table: keys.TableGraph, family: keys.FamilyGraph, start: prefix, stop: keys.PrefixEnd(prefix)}
}

// degreeRowsOf is the scan range of every degree row of a node.
func degreeRowsOf(id string) scanRange {
	prefix, err := keys.DegreeLayout.Prefix(id)
	if err != nil {
		panic(err) // id was validated
	}
	return scanRange{table: keys.TableGraph, family: keys.FamilyGraph, start: prefix, stop: keys.PrefixEnd(prefix)}
}

func (s *Store) hasRelationships(ctx context.Context, id string) (bool, error) {
	r := adjacencyOf(id)
	r.limit, r.keyOnly = 1, true
	rows, err := s.scan(ctx, r)
	return len(rows) > 0, err
}

// detach deletes every relationship of a node, sweeping its index again
// until a sweep finds none, so that relationships created meanwhile go
// too. It deletes relationships that start at other nodes too, whoever
// owns them: an edge never outlives either of its ends.
func (s *Store) detach(ctx context.Context, id string) error {
	return s.detachMarked(ctx, id, 0)
}

// errNoLongerMarked: a node's deletion found its node no longer marked
// (finished by another, and the id perhaps created again).
var errNoLongerMarked = errors.New("the node is no longer being deleted")

// detachMarked is detach by the deletion of node id's creation at created
// (0: no deletion, or Repair's): before each relationship it deletes, it
// checks that the node is still marked (stillMarked), and stops with
// errNoLongerMarked if not, so that a slow deletion that another finished
// never deletes the relationships of a node created after it.
func (s *Store) detachMarked(ctx context.Context, id string, created int64) error {
	// Most nodes deleted have nothing to detach.
	if empty, err := s.probedEmpty(ctx, adjacencyOf(id)); err != nil || empty {
		return err
	}
	r := adjacencyOf(id)
	r.limit, r.keyOnly = 256, true
	removed := false
	swept := map[string]bool{}
	for {
		rows, err := s.scan(ctx, r)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			if !removed {
				return nil
			}
			r.start, removed = adjacencyOf(id).start, false
			swept = map[string]bool{}
			continue
		}
		for _, rw := range rows {
			r.start = keys.After(rw.key)
			a, err := keys.DecodeAdjacency(rw.key)
			if err != nil {
				return err
			}
			// A self-loop's two index rows come in one sweep: its
			// deletion (which recognises its own residue) runs once.
			rel := fmt.Sprintf("%s %d", relationshipOf(a).row(), a.Created)
			if swept[rel] {
				continue
			}
			swept[rel] = true
			if created != 0 {
				if still, err := s.stillMarked(ctx, id, created); err != nil {
					return err
				} else if !still {
					return errNoLongerMarked
				}
			}
			if err := s.removeIndexed(ctx, a, rw.ts); err != nil {
				return err
			}
			removed = true
		}
		if len(rows) < r.limit {
			// The sweep reached the end (a short page): no scan past it,
			// the next sweep starts over, or this one found nothing to do.
			if !removed {
				return nil
			}
			r.start, removed = adjacencyOf(id).start, false
			swept = map[string]bool{}
		}
	}
}

// removeIndexed deletes the relationship adjacency row a indexes, if it is
// the one a indexes (created then), with the full relationship protocol;
// otherwise (a crash left index rows without their relationship, or a
// self-loop's second row) it deletes both index rows of that creation.
// ts is the index row's timestamp, which both rows of a creation share.
func (s *Store) removeIndexed(ctx context.Context, a keys.Adjacency, ts int64) error {
	k := relationshipOf(a)
	err := s.deleteRelationshipCreated(ctx, k, a.Created, a.Node)
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	// The row may be the residue of that creation's deletion by another
	// op, cut short (its decrements still to do): finished, not only
	// unindexed, or nothing would count it down once its index rows go.
	c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, k.row())
	if err != nil {
		return err
	}
	if e, _, err := decodeEntity(k.row(), c); err != nil {
		return err
	} else if e.gone != nil && e.gone.created == a.Created {
		return s.finishDeletion(ctx, k, *e.gone)
	}
	out, in, err := k.index(a.Created)
	if err != nil {
		return err
	}
	for _, ix := range [][]byte{out, in} {
		if err := s.deleteRow(ctx, keys.TableGraph, ix, max(ts, s.nowMs())); err != nil {
			return err
		}
	}
	return nil
}

// deleteDegreeRows removes a deleted node's degree counters once they count
// nothing. A delete marker at the counter's timestamp T would also hide an
// Increment stamped T or earlier, silently losing a count of a re-created
// node. Increments stamp max(now, previous+1), so a hot counter's T can run
// ahead of the clock (tens of milliseconds after a burst); the rows are
// deleted once the clock has passed the newest T, waiting at most
// s.clockWait, and otherwise left at zero (harmless; Repair deletes them
// later).
//
// With whatever set, counters that count something go too: a deletion cut
// short between a relationship's index rows and its counters leaves them
// counting relationships that are gone, and nothing may count for a node
// that is gone.
func (s *Store) deleteDegreeRows(ctx context.Context, id string, whatever bool) error {
	r := degreeRowsOf(id)
	// Most nodes have no degree row.
	if empty, err := s.probedEmpty(ctx, r); err != nil || empty {
		return err
	}
	rows, err := s.scan(ctx, r)
	if err != nil {
		return err
	}
	var zero []row
	newest := int64(0)
	for _, rw := range rows {
		if n, ok := decodeMs(rw.cells[keys.QualDegree]); whatever || (ok && n == 0) {
			zero = append(zero, rw)
			newest = max(newest, rw.ts)
		}
	}
	if len(zero) == 0 || s.waitCounterPast(ctx, newest) != nil {
		return nil
	}
	for _, rw := range zero {
		if err := s.deleteRow(ctx, keys.TableGraph, rw.key, rw.ts); err != nil {
			return err
		}
	}
	return nil
}

// counterSettle is the real time a counter's deletion waits after reading
// it, whatever the clock says: the region server stamps the next Increment
// with its own clock, which a gateway's clock ahead of it (skew) says has
// passed the counter's timestamp when it has not. An engine that stamps
// with the store's own clock (Options.EngineSharesClock) needs none.
const counterSettle = 2 * time.Millisecond

// waitCounterPast waits until a delete marker stamped t (a counter's own
// timestamp, the region server's) can no longer hide an Increment: the
// clock past t (waitClockPast), and s.counterSettle of real time.
func (s *Store) waitCounterPast(ctx context.Context, t int64) error {
	settled := time.Now().Add(s.counterSettle)
	if err := s.waitClockPast(ctx, t, s.clockWait); err != nil {
		return err
	}
	timer := time.NewTimer(time.Until(settled))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// waitClockPast waits until the clock reads after t (ms), so that every
// write the clock stamps from then on is newer than t (a delete stamped
// after a counter's last Increment, a rebuild after the cells it read). It
// fails at once when t is more than budget ahead of the clock, and when ctx
// is done or the clock has not passed t in budget, or in a second more
// than it should have taken (a test's frozen clock).
func (s *Store) waitClockPast(ctx context.Context, t int64, budget time.Duration) error {
	now := s.nowMs()
	if now > t {
		return nil
	}
	ahead := time.Duration(t-now+1) * time.Millisecond
	if ahead > budget {
		return fmt.Errorf("cells are stamped %v ahead of the clock", ahead)
	}
	giveUp := time.Now().Add(min(budget, ahead+time.Second))
	for s.nowMs() <= t {
		if time.Now().After(giveUp) {
			return fmt.Errorf("the clock did not pass %d ms", t)
		}
		timer := time.NewTimer(time.Millisecond)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
	return nil
}

// articlesCtx is ctx for the deletion of a node's articles: with the
// node's op, since the article writes give each article's Increments a
// nonce purpose of its own (its timeline row), so a retry of the deletion
// repeats their nonces.
func articlesCtx(ctx context.Context) context.Context {
	return ctx
}
