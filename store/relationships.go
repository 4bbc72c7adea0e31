package store

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	pointRelationshipClaim   = "relationship-claim"
	pointRelationshipPending = "relationship-pending"
	pointRelationshipRow     = "relationship-row"
	pointRelationshipRecheck = "relationship-recheck"
)

// CreateRelationship writes the outgoing and incoming index rows, then the
// relationship row (CheckAndMutate "c absent", or "u is the residue's"),
// then increments both degree counters, then reads both nodes again. Both
// nodes must exist (ErrNotFound); a second create is ErrAlreadyExists; the
// ctx's Writer must be allowed to write the start node (ErrForbidden).
//
// The index rows come first so that whatever a crash leaves is found
// through the index of either end, by a DeleteNode of it and by Repair: no
// relationship row is ever left that no index row names. The last read
// catches an end deleted (or deleted and created again) while this ran,
// after that deletion's scan of its index: the relationship is then
// deleted again and the create is ErrNotFound.
//
// Exactly once: before its index rows, the create puts its op and its
// creation time in the relationship row (xp), so that a retry of the same
// op writes the same index rows; a retry that finds the relationship
// created by its op finishes the steps after it (the Increments carry
// nonces) and answers success.
func (s *Store) CreateRelationship(ctx context.Context, k RelationshipKey, props Properties) (Relationship, error) {
	if err := k.Validate(); err != nil {
		return Relationship{}, err
	}
	encoded, err := encodeProperties(props)
	if err != nil {
		return Relationship{}, err
	}
	ctx, op := withOp(ctx)
	var r Relationship
	err = s.atomically(ctx, func(ctx context.Context) error {
		var intents relIntents
		var err error
		r, err = s.createRelationship(ctx, k, encoded, &intents)
		if definite(err) {
			// Answered: its intents go (an undone one stays, for a retry).
			if cerr := s.clearIntents(ctx, k, op, intents); cerr != nil {
				return cerr
			}
		}
		return err
	})
	if err != nil {
		r = Relationship{}
	}
	if err == nil {
		// A follow brings the followee's newest articles into the feed.
		if ferr := s.backfillFollow(ctx, r); ferr != nil {
			return Relationship{}, fmt.Errorf("create relationship: feed: %w", ferr)
		}
	}
	return r, err
}

// countAndRecheck counts a relationship created at created into its
// ends' degrees, then reads its ends again (recheckEnds): stepErr is the
// counts' error or the fault point's, err the recheck's. The recheck
// comes after the counts, also on a cluster: a deletion of an end that
// the recheck does not see began after it, and deletes the end's degree
// rows after the counts went in (an Increment sent at once with the
// recheck could land after that deletion and leave a count of 1 on a
// node that has nothing: the concurrent simulation found it).
func (s *Store) countAndRecheck(ctx context.Context, k RelationshipKey, created int64) (again relEnds, stepErr, err error) {
	if err := s.countDegrees(ctx, k, +1, created); err != nil {
		return relEnds{}, err, nil
	}
	if err := s.faultPoint(pointRelationshipRecheck); err != nil {
		return relEnds{}, err, nil
	}
	again, _, err = s.recheckEnds(ctx, k)
	return again, nil, err
}

// definite reports whether err is a write's definite answer: success, or
// an error that says what happened (not UNAVAILABLE).
func definite(err error) bool {
	return err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrAlreadyExists) ||
		errors.Is(err, ErrForbidden) || errors.Is(err, ErrConflict)
}

// relIntents are the intents a create placed on its end nodes (see
// relIntent), for clearClear to clear; all: every one it has, so that
// clearIntents need not read the nodes to find an earlier try's.
type relIntents struct {
	placed []placedIntent
	all    bool
}

type placedIntent struct {
	id string
	in relIntent
}

// createRelationship is CreateRelationship once the input is checked and
// the op fixed; it notes the intents it placed in intents.
func (s *Store) createRelationship(ctx context.Context, k RelationshipKey, encoded []byte, intents *relIntents) (Relationship, error) {
	ctx, op := withOp(ctx)
	ends, rel, err := s.relationshipEnds(ctx, k, true)
	if errors.Is(err, ErrNotFound) {
		return s.createRelationshipEndGone(ctx, k, encoded, err)
	}
	if err != nil {
		return Relationship{}, err
	}
	if !writerOf(ctx).mayWrite(ends.startOwner) {
		return Relationship{}, fmt.Errorf("create relationship: %w", errNotYours)
	}
	var e entity
	// replaced is the residue this call's create wrote over, if any.
	var replaced *residue
	// earlier: the relationship is an earlier try's, found live with its
	// index rows by this call's first reads.
	var earlier bool
	// atomicEnds: the create placed no intents, in a transaction.
	var atomicEnds bool
	live := rel.created != 0 && !rel.deleted()
	switch {
	case live && rel.createOp == op:
		// Ours, from an earlier try: its index rows were written before
		// it, unless an end's deletion has found and deleted them since
		// (the row written after its detach's scan): then the earlier
		// try's relationship belongs to a node that is gone, whatever the
		// ends are now, and goes (finishUndo).
		// The same when the row was made for ends that are not these
		// (xe: an end deleted and created again since).
		hidden := !rel.endsAre(ends.created)
		if !hidden {
			if hidden, err = s.indexHidden(ctx, k, rel.created); err != nil {
				return Relationship{}, err
			}
		}
		if hidden {
			// (If the deletion took the row too, after this read, the
			// relationship was there, others may have seen it: the
			// create happened, then that deletion.)
			if err := s.finishUndo(ctx, k, rel.created); !errors.Is(err, errDeletedByAnother) {
				return Relationship{}, err
			}
			return relationshipFrom(k, rel)
		}
		e, earlier = rel, true
	case createdThenDeleted(rel, op):
		// (Also when live: created by this op, deleted by somebody, and
		// created again by another op since; the residue stays in the
		// row, with the deletions before its last. The deletion counted
		// it down: this op counts it up.)
		created, by, _ := rel.gone.createdBy(op)
		if by == takenBackOp(op) {
			// Our own recheck took it back having answered success (an
			// end marked after it): success again, its steps finished.
			return s.finishTakenBack(ctx, k, rel, created, encoded)
		}
		if by == op && created == rel.gone.created { // our own recheck took it back
			return Relationship{}, s.finishUndo(ctx, k, created)
		}
		if by == op {
			// Our own recheck took it back, and the create that wrote
			// over that residue finished the undo (createEntityOver's
			// finish): the create's own counts are left.
			if err := s.countDegrees(ctx, k, +1, created); err != nil {
				return Relationship{}, err
			}
			return Relationship{}, fmt.Errorf("create relationship: an end was deleted meanwhile: %w", ErrNotFound)
		}
		// Created by this op, deleted by somebody since: its counts are
		// the create's and the deletion's (nonces make a repeat count once).
		e = entity{created: created, updated: created, props: encoded}
		if err := s.countDegrees(ctx, k, +1, e.created); err != nil {
			return Relationship{}, err
		}
		if rel.gone.afterDetachOf(op, by) {
			return Relationship{}, fmt.Errorf("create relationship: an end was deleted meanwhile: %w", ErrNotFound)
		}
		if after, err := s.overEndDeletion(ctx, k, rel); err != nil || after {
			return Relationship{}, cmp.Or(err, fmt.Errorf("create relationship: an end was deleted meanwhile: %w", ErrNotFound))
		}
		if undone, err := s.intentUndoneBy(ctx, k, by); err != nil || undone {
			// By the deletion of an end that found this create's intent
			// stale (cut short): that deletion came first.
			return Relationship{}, cmp.Or(err, fmt.Errorf("create relationship: an end was deleted meanwhile: %w", ErrNotFound))
		}
		return relationshipFrom(k, e)
	case live && !rel.endsAre(ends.created):
		// A relationship of an end deleted since it was made (and
		// created again), which its create or the deletion is taking
		// away: it reads as absent, and is not there to be created over.
		// (An answer: the index rows of an earlier try of ours go.)
		if err := s.unindexLostTry(ctx, k, rel, ends); err != nil {
			return Relationship{}, err
		}
		return Relationship{}, fmt.Errorf("create relationship: a relationship of a deleted node of the same id is being removed; try again: %w", ErrConflict)
	case live:
		if err := s.unindexLostTry(ctx, k, rel, ends); err != nil {
			return Relationship{}, err
		}
		return Relationship{}, fmt.Errorf("create relationship: %w", ErrAlreadyExists)
	default:
		// Intents on both ends first: from here on, no deletion without
		// detach of either confirms its mark, and one with detach that
		// marks it comes after this create (see relIntent).
		created, reuse := s.firstCreation(rel, op)
		if !reuse {
			// The creation time is claimed in xp before anything names
			// it: no other op's index rows are ever of this time.
			if err := s.faultPoint(pointRelationshipClaim); err != nil {
				return Relationship{}, err
			}
			if created, err = s.claimCreation(ctx, k, rel.pending, created); err != nil {
				return Relationship{}, err
			}
		}
		if s.inTx(ctx) && ends.tentative == "" && !ends.holdIntentOf(op) {
			// In one transaction, which holds both ends' rows since it
			// read them live and unmarked: no deletion marks either
			// before the create is whole, so none needs an intent to
			// see it by, nor a recheck (see atomically). (An intent of
			// an earlier try of this op names index rows that this try
			// takes back when it places its own: recordIntentCreation.)
			atomicEnds = true
		} else if intents.placed, err = s.placeIntents(ctx, k, ends, created); err != nil {
			if errors.Is(err, ErrNotFound) {
				return s.createRelationshipEndGone(ctx, k, encoded, err)
			}
			return Relationship{}, err
		}
		intents.all = true
		if e, replaced, err = s.createRelationshipRow(ctx, k, rel, encoded, ends.created, created, reuse, intents); err != nil {
			if errors.Is(err, errCreatedThenDeleted) {
				// Its row applied (the compare-and-set's answer lost, or
				// re-sent), and somebody deleted it, counting it down,
				// before the read back: answered as a retry of the op
				// answers a creation of its own deleted since, its
				// counts made (their nonces: once).
				return s.createRelationship(ctx, k, encoded, intents)
			}
			return Relationship{}, fmt.Errorf("create relationship: %w", err)
		}
	}
	if atomicEnds {
		if err := s.countDegrees(ctx, k, +1, e.created); err != nil {
			return Relationship{}, err
		}
		return relationshipFrom(k, e)
	}
	again, stepErr, err := s.countAndRecheck(ctx, k, e.created)
	if stepErr != nil {
		return Relationship{}, stepErr
	}
	if err == nil && (again.created != ends.created || again.startOwner != ends.startOwner) {
		err = fmt.Errorf("node %q or %q: %w", k.Start, k.End, ErrNotFound)
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Relationship{}, fmt.Errorf("create relationship: %w", err) // as a crash
	}
	if err != nil {
		// An end that a deletion with detach has marked since this create
		// read it live, the same node: the create happened before the
		// mark (others may have seen the relationship meanwhile, or found
		// it there: ALREADY_EXISTS), and the deletion took it with the
		// node. Its detach may have missed the index rows (written after
		// its scan), so it is deleted here, and the create is a success.
		//
		// An end that a deletion without detach has marked (confirmed)
		// since: that deletion found nothing hanging from the node after
		// its tentative mark, so the index rows came after its check, and
		// the create after the deletion: NOT_FOUND, whoever deleted the
		// relationship (the deletion's detach may have found it).
		var d *endMarked
		sameEnd := errors.As(err, &d) && d.ends == ends.created // (both ends the nodes it read)
		//
		// A create that wrote its row over another residue than the one
		// its first read found (another relationship of the key was there
		// in between) cannot come before the mark if that one was
		// deleted after it: by that deletion's detach (the residue is the
		// marking op's), or by its own create's recheck or retry, which
		// takes its row back only once it has found an end marked or gone
		// (the residue's delete op is its create op): NOT_FOUND too.
		// Deleted by another (deleteRelationship, which reads the ends
		// live first), it may have gone before the mark, and the row been
		// read by others before it, as a fresh create's.
		fresh := replaced == nil && !rel.deleted() ||
			replaced != nil && rel.gone != nil && replaced.at == rel.gone.at && replaced.deleteOp == rel.gone.deleteOp
		//
		// A residue of that deletion's detach says so even when the
		// create's first read found it (fresh): the relationship it
		// deleted was there up to the mark, so the create came after it.
		// (Its first read of the ends, in the same batch but before the
		// row, saw them live; a retry that finds its own intents places
		// none, so no compare-and-set on the mark stops it.)
		// (The deletion of either end: the mark the recheck reports is
		// the start's when both are marked, and the other's detach may
		// have left the residue.)
		byMarker := sameEnd && replaced != nil &&
			(d.markedBy(replaced.deleteOp) || !fresh && tookOwnRowBack(replaced.createOp, replaced.deleteOp))
		//
		// The same when an end it read has gone or been created again
		// since (no mark left to say which deletion), and its row replaced
		// a residue that the deletion of that end left (its detach took
		// another relationship of the key): after the mark.
		// So does a residue of another create that took its own row
		// back (see byMarker).
		// Fresh too: the first read takes the ends before the row, and a
		// retry that finds its own intents places them again without a
		// compare-and-set on u, so a deletion may have marked an end it
		// read live, and its detach left the residue, before the row was
		// read (TestCreateRelationshipRetryReadsItsRowAfterAnEndsDeletion).
		afterMark := false
		if !sameEnd && replaced != nil {
			var aerr error
			afterMark = !fresh && tookOwnRowBack(replaced.createOp, replaced.deleteOp)
			if !afterMark {
				if afterMark, aerr = s.endDeletedBy(ctx, k, ends.created, replaced.deleteOp); aerr != nil {
					return Relationship{}, aerr
				}
			}
		}
		// The row goes; taken back by a create that answers success, with
		// an op of its own (takenBackOp), so that a retry, and another
		// create over the residue, tell it from an undo.
		//
		// Not so for a relationship of an earlier try found live with its
		// index rows: a deletion without detach confirmed since found
		// nothing hanging from the node, so somebody deleted the
		// relationship before it (the index rows were there from before
		// this call's first read, and only this op writes them): the
		// create came before both.
		notFound := sameEnd && (d.alone && !earlier || byMarker) || afterMark
		delCtx := ctx
		if !notFound && sameEnd {
			delCtx = WithOp(ctx, takenBackOp(op))
		}
		derr := s.deleteRelationshipCreated(delCtx, k, e.created, "")
		if notFound && (derr == nil || errors.Is(derr, ErrNotFound)) {
			return Relationship{}, fmt.Errorf("create relationship: an end was deleted meanwhile: %w", err)
		}
		if errors.Is(derr, ErrNotFound) || derr == nil && sameEnd {
			// Somebody else deleted it first (an end's deletion found it
			// in the index): it was created and others may have seen it,
			// so the create happened, and then that deletion.
			return relationshipFrom(k, e)
		}
		if derr != nil {
			return Relationship{}, derr
		}
		return Relationship{}, fmt.Errorf("create relationship: an end was deleted meanwhile: %w", err)
	}
	return relationshipFrom(k, e)
}

// createRelationshipEndGone answers a create that finds an end gone
// (notFound). If an earlier try of its op wrote the relationship row (its
// answer lost), the end's deletion may have found it and counted it down:
// the create's own counts are made (nonces: once), and then a live row of
// the op is undone as the recheck does (ErrNotFound); one that somebody
// deleted was created, and then deleted: success, as after the recheck.
func (s *Store) createRelationshipEndGone(ctx context.Context, k RelationshipKey, props []byte, notFound error) (Relationship, error) {
	ctx, op := withOp(ctx)
	c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, k.row())
	if err != nil {
		return Relationship{}, err
	}
	rel, live, err := decodeEntity(k.row(), c)
	if err != nil {
		return Relationship{}, err
	}
	switch {
	case live && rel.createOp == op:
		if err := s.countDegrees(ctx, k, +1, rel.created); err != nil {
			return Relationship{}, err
		}
		var d *endMarked
		// Not before the mark when it replaced a residue that came after
		// a mark: that deletion's detach's, or another create's that took
		// its own row back having answered success (takenBackOp: that one
		// was there up to an end's mark, which it found still there). (A
		// retry cannot tell whether its first read found that residue, as
		// the recheck does: a residue of an end marked before it read the
		// ends, a node of the id deleted and created again since, would
		// leave it before the new node's mark; it answers NOT_FOUND all
		// the same. A create's undo, its own op's residue, is left out:
		// its end's mark may be any earlier node's, and the row others
		// read before this one's mark.)
		marked := errors.As(notFound, &d) && !d.alone && rel.endsAre(d.ends)
		afterMark := marked && rel.gone != nil &&
			(d.markedBy(rel.gone.deleteOp) || rel.gone.deleteOp == takenBackOp(rel.gone.createOp))
		before := marked && !afterMark
		delCtx := ctx
		if before {
			delCtx = WithOp(ctx, takenBackOp(op)) // (see CreateRelationship's recheck)
		}
		derr := s.deleteRelationshipCreated(delCtx, k, rel.created, "")
		switch {
		case errors.Is(derr, ErrNotFound) && afterMark:
			// Deleted by another (the other end's detach may have found
			// it): written after the mark, so nobody read it live, and
			// the create came after the mark all the same
			// (TestCreateRelationshipRetryOverADetachResidueDeletedByTheOtherEnd).
		case errors.Is(derr, ErrNotFound):
			return relationshipFrom(k, rel) // deleted by another meanwhile
		case derr != nil:
			return Relationship{}, derr
		case before:
			// An end that a deletion with detach has marked and not yet
			// detached from it, the node it was made for: its row, still
			// live, was written before the mark unless it replaced what
			// that deletion's detach left (see CreateRelationship's
			// recheck). Others may have read it: the create happened,
			// then that deletion (its work on the row done here).
			return relationshipFrom(k, rel)
		}
	case rel.gone != nil && rel.gone.createOp == op && rel.gone.created != 0 && rel.gone.deleteOp == op:
		if err := s.finishUndo(ctx, k, rel.gone.created); !errors.Is(err, ErrNotFound) {
			return Relationship{}, err
		}
	case createdThenDeleted(rel, op):
		created, by, _ := rel.gone.createdBy(op)
		if by == takenBackOp(op) {
			return s.finishTakenBack(ctx, k, rel, created, props)
		}
		if by == op { // our own undo, finished by the create that replaced its residue
			if err := s.countDegrees(ctx, k, +1, created); err != nil {
				return Relationship{}, err
			}
			break
		}
		e := entity{created: created, updated: created, props: props}
		if err := s.countDegrees(ctx, k, +1, e.created); err != nil {
			return Relationship{}, err
		}
		if rel.gone.afterDetachOf(op, by) {
			break // written after that deletion's mark
		}
		if after, err := s.overEndDeletion(ctx, k, rel); err != nil || after {
			return Relationship{}, cmp.Or(err, notFound)
		}
		if undone, err := s.intentUndoneBy(ctx, k, by); err != nil || undone {
			return Relationship{}, cmp.Or(err, notFound) // (see CreateRelationship)
		}
		return relationshipFrom(k, e)
	}
	// Index rows an earlier try wrote before it was cut short index
	// nothing: the deletion of the end that is gone found them only if
	// that end's was written (its detach scans its own index).
	if err := s.unindexEarlierTry(ctx, k, rel, live); err != nil {
		return Relationship{}, err
	}
	return Relationship{}, notFound
}

// unindexEarlierTry deletes the index rows an earlier try of the ctx's op
// wrote for k, when its create answers NOT_FOUND: their creation time is
// in the row's xp if it is still the op's, and in the op's intents on the
// end nodes. Rows of the creation of a live row (rel, as read) are left.
func (s *Store) unindexEarlierTry(ctx context.Context, k RelationshipKey, rel entity, live bool) error {
	op := opOf(ctx)
	var times []int64
	if p := rel.pending; p != nil && p.op == op {
		times = append(times, p.created)
	}
	res, err := s.getBatch(ctx, keys.TableGraph, [][]byte{keys.Node(k.Start), keys.Node(k.End)})
	if err != nil {
		return err
	}
	for _, r := range res {
		if in, ok := ownIntent(r, op); ok && in.created != 0 {
			times = append(times, in.created)
		}
	}
	slices.Sort(times)
	for _, t := range slices.Compact(times) {
		if live && rel.created == t {
			continue
		}
		if err := s.deleteIndexRows(ctx, k, entity{created: t, updated: t}); err != nil {
			return err
		}
	}
	return nil
}

// unindexLostTry deletes the index rows an earlier try of the ctx's op
// wrote for k when another create's row (rel, live) has the key: they
// index nothing. Their creation time is in the row's xp if it is still
// the op's, or else in the op's intents on the ends (read as ends: a
// third create's xp may have replaced ours).
func (s *Store) unindexLostTry(ctx context.Context, k RelationshipKey, rel entity, ends relEnds) error {
	op := opOf(ctx)
	if p := rel.pending; p != nil && p.op == op && p.created != rel.created {
		if err := s.deleteIndexRows(ctx, k, entity{created: p.created, updated: p.created}); err != nil {
			return err
		}
	}
	// Each end's intent: they may name different times (one re-stamped,
	// the other's re-stamp cut short).
	var done int64
	for _, r := range ends.rows {
		if in, ok := ownIntent(r.cells, op); ok && in.created != 0 && in.created != rel.created && in.created != done {
			if err := s.deleteIndexRows(ctx, k, entity{created: in.created, updated: in.created}); err != nil {
				return err
			}
			done = in.created
		}
	}
	return nil
}

// finishUndo finishes what the op's recheck began when it took back the
// relationship created at created (its row is the op's residue): the
// create's counts (the Increments repeat their nonces, so they count
// once), then the deletion's index rows and counts, as the deletion
// recognises its own residue. A retry cut short there would otherwise
// leave the degrees counting a relationship whose index rows the next
// detach deletes alone. It answers ErrNotFound: the create did not happen.
//
// If another deletion took the row first, it is errDeletedByAnother.
func (s *Store) finishUndo(ctx context.Context, k RelationshipKey, created int64) error {
	if err := s.countDegrees(ctx, k, +1, created); err != nil {
		return err
	}
	if err := s.deleteRelationshipCreated(ctx, k, created, ""); errors.Is(err, ErrNotFound) {
		return errDeletedByAnother
	} else if err != nil {
		return err
	}
	return fmt.Errorf("create relationship: an end was deleted meanwhile: %w", ErrNotFound)
}

// takenBackOp is the op with which a create deletes its own row once it
// has answered success, an end marked after it (CreateRelationship's
// recheck, createRelationshipEndGone): not its own op, which marks an
// undo (NOT_FOUND), so that its retry answers success again, and another
// create whose row replaces that residue knows it came after the mark.
func takenBackOp(op OpID) OpID {
	return DeriveOpID("relationship create taken back", string(op[:]))
}

// tookOwnRowBack reports whether a deletion (deleteOp) of a creation by
// createOp was that create taking its own row back, after it found an end
// marked or gone.
func tookOwnRowBack(createOp, deleteOp OpID) bool {
	return !createOp.IsZero() && (deleteOp == createOp || deleteOp == takenBackOp(createOp))
}

// finishTakenBack answers a retry of a create whose row its own recheck
// took back having answered success (rel's residue keeps the creation at
// created): its counts (the Increments repeat their nonces), the
// deletion's steps if it is the row's last, and success.
func (s *Store) finishTakenBack(ctx context.Context, k RelationshipKey, rel entity, created int64, props []byte) (Relationship, error) {
	if err := s.countDegrees(ctx, k, +1, created); err != nil {
		return Relationship{}, err
	}
	if rel.deleted() && rel.gone.created == created {
		if err := s.finishDeletion(ctx, k, *rel.gone); err != nil {
			return Relationship{}, err
		}
	}
	return relationshipFrom(k, entity{created: created, updated: created, props: props})
}

// errDeletedByAnother: the relationship a create was taking back was
// deleted by another first (an end's deletion): it was created.
var errDeletedByAnother = fmt.Errorf("create relationship: deleted by another meanwhile: %w", ErrNotFound)

// createRelationshipRow writes the index rows and then the row of a new
// relationship, whose row read as rel (absent, a residue, a create under
// way). Its creation time is after the residue's (so a delete stamped by a
// clock ahead hides nothing), or the earlier try's of the same op (xp),
// whose index rows are then written again, not left behind.
//
// It returns the residue it wrote over, if any.
func (s *Store) createRelationshipRow(ctx context.Context, k RelationshipKey, rel entity, props []byte, endsCreated [2]int64,
	created int64, reuse bool, intents *relIntents) (entity, *residue, error) {
	ctx, op := withOp(ctx)
	var replaced *residue
	var e entity
	claimed := created // the time our xp holds
	err := s.casLoop(ctx, "create relationship hidden by a delete marker", func(attempt int) (bool, error) {
		if err := s.faultPoint(pointRelationshipPending); err != nil {
			return false, err
		}
		if attempt > 0 {
			// A new time (the earlier one's index rows hidden): claimed
			// in xp, over ours, before the intents name it.
			var err error
			if created, err = s.claimCreation(ctx, k, &pendingCreate{op: op, created: claimed}, created); err != nil {
				return false, err
			}
			claimed = created
		}
		e = entity{created: created, updated: created, props: props, ends: endsCreated}
		// The intents name the index rows before they are written.
		if err := s.recordIntentCreation(ctx, k, intents, created); err != nil {
			return false, err
		}
		if err := s.writeIndex(ctx, k, e); err != nil {
			return false, err
		}
		if reuse && attempt == 0 {
			// The earlier try's index rows may have been found and
			// deleted since (an end's detach, removeIndexed): a delete
			// marker at or after their time then hides them, rewritten
			// or not. If so, this create starts again at a new time.
			hidden, err := s.indexHidden(ctx, k, created)
			if err != nil {
				return false, err
			}
			if hidden {
				// Both rows go (one may still show), stamped their own time.
				if err := s.deleteIndexRows(ctx, k, e); err != nil {
					return false, err
				}
				reuse, created = false, max(s.nowMs(), created+1)
				return false, nil
			}
		}
		if err := s.faultPoint(pointRelationshipRow); err != nil {
			return false, err
		}
		replaced = nil
		got, err := s.createEntityOver(ctx, k.row(), e, true, false, func(g residue) error {
			if err := s.checkEndsOverTakenBack(ctx, k, g, endsCreated); err != nil {
				return err
			}
			replaced = &g
			return s.finishDeletion(ctx, k, g)
		})
		if errors.Is(err, errAfterTakenBack) {
			// Nothing of ours is written but the index rows: they go.
			if uerr := s.deleteIndexRows(ctx, k, e); uerr != nil {
				return false, uerr
			}
			return false, err
		}
		if err == nil && got.created == e.created && rel.pending != nil && rel.pending.op != op &&
			rel.pending.created != e.created && (rel.gone == nil || rel.gone.created != rel.pending.created) {
			// Another create was under way when we read the row, and ours
			// won it: that one's index rows (its creation time, in xp)
			// can index nothing now (its compare-and-set fails, and its
			// retry, which finds our xp, writes new ones), but a try of it
			// that was cut short would leave them for good.
			loser := entity{created: rel.pending.created, updated: rel.pending.created}
			if uerr := s.deleteIndexRows(ctx, k, loser); uerr != nil {
				return false, uerr
			}
		}
		if err == nil {
			if got.created != e.created { // ours, of an earlier try: these index rows are not its
				if uerr := s.deleteIndexRows(ctx, k, e); uerr != nil {
					return false, uerr
				}
				e = got
			}
			return true, nil
		}
		if errors.Is(err, ErrAlreadyExists) || errors.Is(err, errHidden) {
			// Lost to another create, or behind a deletion newer than our
			// time (then try again after it): our index rows index nothing.
			if uerr := s.unindexLoser(ctx, k, e); uerr != nil {
				return false, uerr
			}
			if errors.Is(err, errHidden) {
				c, gerr := s.get(ctx, keys.TableGraph, keys.FamilyGraph, k.row())
				if gerr != nil {
					return false, gerr
				}
				cur, _, derr := decodeEntity(k.row(), c)
				if derr != nil {
					return false, derr
				}
				created = max(s.nowMs(), created+1, cur.updated+1)
				return false, nil
			}
		}
		return false, err
	})
	return e, replaced, err
}

// checkEndsOverTakenBack is errAfterTakenBack if g, the residue a create
// of k is about to write its row over, is a create's that took its own
// row back (having found an end marked or gone: tookOwnRowBack) and an end
// this create read (endsCreated) is not the live node it read any more.
// That create's row was there until that end's mark, and taken back after
// it; if the end is one this create read, this row comes after the mark,
// and the create must answer NOT_FOUND (its recheck's byMarker says so
// while the mark is there; a retry cut short after the row, finding it
// taken since by the end's detach, could not tell). An end of another
// creation of the id (the other create read an earlier node) is live: the
// row may come before any mark of the nodes this create read. A batch Get
// of the two end rows, only over such a residue.
func (s *Store) checkEndsOverTakenBack(ctx context.Context, k RelationshipKey, g residue, endsCreated [2]int64) error {
	if !tookOwnRowBack(g.createOp, g.deleteOp) || endsCreated == [2]int64{} {
		return nil
	}
	ends, _, err := s.relationshipEnds(ctx, k, false)
	if errors.Is(err, ErrNotFound) || err == nil && ends.created != endsCreated {
		return errAfterTakenBack
	}
	return err
}

// errAfterTakenBack: see checkEndsOverTakenBack.
var errAfterTakenBack = fmt.Errorf("an end was deleted meanwhile: %w", ErrNotFound)

// claimCreation claims a creation time for the ctx's op in k's row: a
// compare-and-set of xp from seen (the row's xp as read; nil: none) to
// the op and created. Another create that claimed first (it read the same
// xp) makes it claim a later time than that one's, which it returns. So
// one op alone writes the index rows of a creation time, and a create
// that deletes the index rows of a time of its own (an earlier try's,
// one hidden, or a loser's) never deletes another's: two creates that
// chose one time (both behind a residue, or the same millisecond) would
// otherwise write the same index rows, and the loser's retry delete the
// winner's.
func (s *Store) claimCreation(ctx context.Context, k RelationshipKey, seen *pendingCreate, created int64) (int64, error) {
	op := opOf(ctx)
	var got int64
	err := s.casLoop(ctx, "create relationship", func(int) (bool, error) {
		var expected []byte
		if seen != nil {
			expected = seen.encode()
		}
		mine := pendingCreate{op: op, created: created}
		won, err := s.checkAndPut(ctx, keys.TableGraph, keys.FamilyGraph, k.row(), keys.QualPendingCreate, expected,
			cells{keys.QualPendingCreate: mine.encode()}, created)
		if err != nil || won {
			got = created
			return won, err
		}
		c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, k.row())
		if err != nil {
			return false, err
		}
		cur, _, err := decodeEntity(k.row(), c)
		if err != nil {
			return false, err
		}
		if cur.pending != nil && *cur.pending == mine {
			got = created // a re-send applied
			return true, nil
		}
		seen = cur.pending
		created = max(created+1, s.nowMs())
		if cur.pending != nil {
			created = max(created, cur.pending.created+1)
		}
		if cur.gone != nil || cur.created != 0 {
			created = max(created, cur.updated+1)
		}
		return false, nil
	})
	return got, err
}

// firstCreation is the creation time of a create of a relationship whose
// row read as rel (absent, a residue, a create under way), by op: after
// the residue's (so a delete stamped by a clock ahead hides nothing), or
// the earlier try's of the same op (xp: reuse, its index rows written
// again, not left behind).
func (s *Store) firstCreation(rel entity, op OpID) (created int64, reuse bool) {
	floor := int64(0)
	if rel.gone != nil {
		floor = rel.updated // the residue's u
	}
	created = max(s.nowMs(), floor+1)
	reuse = rel.pending != nil && rel.pending.op == op && rel.pending.created > floor
	if reuse {
		created = rel.pending.created
	} else if rel.pending != nil {
		// After another create's (or an earlier try's) time: index rows of
		// that time may have been found by an end's detach since, and
		// deleted with a marker that would hide ours of the same key.
		created = max(created, rel.pending.created+1)
	}
	return created, reuse
}

// restampIntent rewrites the create's intent on node id from in to next,
// with a compare-and-set on the node's u as read, as placeIntents places
// it: the intent outlives a deletion of the node (and its creation again),
// so a compare-and-set on the intent alone would re-stamp it on a node that
// a deletion has marked, or deleted, since the intent was placed, and the
// create would go on to write under it
// (TestCreateRelationshipRestampsItsIntentOnAMarkedEnd). A node no longer
// the live one the intent names, or an intent undone, is ErrNotFound: the
// deletion came first.
func (s *Store) restampIntent(ctx context.Context, id string, op OpID, in, next relIntent) error {
	row := keys.Node(id)
	return s.casLoop(ctx, "create relationship", func(int) (bool, error) {
		c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, row)
		if err != nil {
			return false, err
		}
		e, ok, err := decodeEntity(row, c)
		if err != nil {
			return false, err
		}
		own, has := ownIntent(c, op)
		switch {
		case has && own == next:
			return true, nil // (a re-send applied)
		case !has || own != in:
			return false, fmt.Errorf("node %q: a deletion has undone this create: %w", id, ErrNotFound)
		case !ok || e.deleting != 0 || e.created != in.node:
			return false, fmt.Errorf("node %q: deleted since this create placed its intent: %w", id, ErrNotFound)
		case e.tentative != 0:
			if err := s.cancelTentative(ctx, id, e); err != nil {
				return false, err
			}
			return false, nil // read it again
		}
		u, _ := c.lookup(keys.QualUpdated)
		return s.checkAndPut(ctx, keys.TableGraph, keys.FamilyGraph, row, keys.QualUpdated, u,
			cells{intentQualifier(op): next.encode()}, in.ts)
	})
}

// recordIntentCreation makes the create's intents name created, the
// creation time of the index rows it is about to write: an intent that
// names another's (an earlier try's, whose row went to another create, or
// this call's, hidden by a deletion) first has those index rows deleted.
// An intent a deletion has undone meanwhile is ErrNotFound: the deletion
// came first.
func (s *Store) recordIntentCreation(ctx context.Context, k RelationshipKey, intents *relIntents, created int64) error {
	op := opOf(ctx)
	for i, p := range intents.placed {
		if p.in.created == created {
			continue
		}
		if old := p.in.created; old != 0 {
			if err := s.deleteIndexRows(ctx, k, entity{created: old, updated: old}); err != nil {
				return err
			}
		}
		next := p.in
		next.created = created
		if err := s.restampIntent(ctx, p.id, op, p.in, next); err != nil {
			return err
		}
		intents.placed[i].in = next
	}
	return nil
}

// finishDeletion does the steps of the deletion that left residue g in
// k's row after the row's own compare-and-set: its degree decrements, as
// its op (their nonces make a repeat count once), and its index rows,
// deleted at its time. A create about to write over the residue calls it,
// and a detach that finds an index row of that creation (removeIndexed):
// the deletion cut short (UNAVAILABLE, a crash), or still running, would
// otherwise leave its counts for good, since its retry no longer finds
// the residue and a detach deletes the index rows of a creation whose row
// is gone without counting (removeIndexed).
func (s *Store) finishDeletion(ctx context.Context, k RelationshipKey, g residue) error {
	if g.created == 0 {
		return nil
	}
	ctx = WithOp(ctx, g.deleteOp)
	// The decrements first: while an index row is left, a detach finds
	// the relationship and finishes this again.
	if err := s.countDegrees(ctx, k, -1, g.created); err != nil {
		return err
	}
	return s.deleteIndexRows(ctx, k, entity{created: g.created, updated: g.at})
}

// indexHidden reports whether either index row of k's creation at created
// reads as absent right after it was written.
func (s *Store) indexHidden(ctx context.Context, k RelationshipKey, created int64) (bool, error) {
	out, in, err := k.index(created)
	if err != nil {
		return false, err
	}
	for _, ix := range [][]byte{out, in} {
		c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, ix)
		if err != nil {
			return false, err
		}
		if len(c) == 0 {
			return true, nil
		}
	}
	return false, nil
}

// relationshipEnds reads k's start and end nodes, and with rel set the
// relationship row too, with one batch of Gets. The ends say which node of
// each id it is (creation times) and who owns the start; an end that does
// not exist (or is being deleted) is ErrNotFound. The relationship row is
// returned as read, absent or not (see createEntity).
func (s *Store) relationshipEnds(ctx context.Context, k RelationshipKey, rel bool) (relEnds, entity, error) {
	ids := []string{k.Start, k.End}
	gets := make([]Get, 0, 3)
	for _, id := range ids {
		g, err := NodeGet(id)
		if err != nil {
			return relEnds{}, entity{}, err
		}
		gets = append(gets, g)
	}
	if rel {
		g, err := k.Get()
		if err != nil {
			return relEnds{}, entity{}, err
		}
		gets = append(gets, g)
	}
	rows, err := s.readWhole(ctx, gets)
	if err != nil {
		return relEnds{}, entity{}, err
	}
	var out relEnds
	// An end that is missing: gone (or corrupt) first, then one marked by
	// a deletion without detach, then one marked by a deletion with
	// detach (what CreateRelationship's recheck makes of it).
	var gone error
	var marked *endMarked
	var seen [2]int64 // the creation of each end's node, live or marked
	var markedBy [2]OpID
	for i, id := range ids {
		n, err := rows[i].Node(id)
		if err != nil {
			return relEnds{}, entity{}, err
		}
		if n == nil {
			e, ok, _ := decodeEntity(rows[i].key, rows[i].cells)
			if !ok && e.deleting != 0 && e.gone != nil && e.gone.created == e.created {
				// Deleted since, by the deletion that marked it: the
				// residue keeps the mark (x), and so its kind.
				ok, e.deleteOp = true, e.gone.deleteOp
			}
			switch {
			case !ok || e.deleting == 0:
				gone = fmt.Errorf("node %q: %w", id, ErrNotFound)
			case marked == nil || e.alone:
				marked = &endMarked{id: id, created: e.created, alone: e.alone, deleteOp: e.deleteOp}
			}
			if ok && e.deleting != 0 {
				markedBy[i] = e.deleteOp
			}
			seen[i] = e.created
			continue
		}
		seen[i] = n.Created.UnixMilli()
		out.created[i] = n.Created.UnixMilli()
		out.rows[i] = rows[i]
		if i == 0 {
			out.startOwner = n.Owner
		}
		if out.tentative == "" {
			e, _, err := decodeEntity(rows[i].key, rows[i].cells)
			if err != nil {
				return relEnds{}, entity{}, err
			}
			if e.tentative != 0 {
				out.tentative, out.tentativeRow = id, e
			}
		}
	}
	if gone != nil {
		return relEnds{}, entity{}, gone
	}
	if marked != nil {
		marked.ends, marked.endOps = seen, markedBy
		return relEnds{}, entity{}, marked
	}
	var e entity
	if rel {
		r := rows[2]
		var ok bool
		if e, ok, err = decodeEntity(r.key, r.cells); err != nil {
			return relEnds{}, entity{}, err
		}
		if !ok && !e.deleted() {
			e.created = 0 // absent
		}
	}
	return out, e, nil
}

// recheckEnds is relationshipEnds (without the relationship row) for a
// create checking its ends again after writing: an end a deletion without
// detach has marked tentatively has the mark taken back first
// (cancelTentative, see confirmMark), so that the deletion fails rather
// than take the relationship with it.
func (s *Store) recheckEnds(ctx context.Context, k RelationshipKey) (relEnds, entity, error) {
	for range 16 {
		ends, rel, err := s.relationshipEnds(ctx, k, false)
		if err != nil || ends.tentative == "" {
			return ends, rel, err
		}
		if err := s.cancelTentative(ctx, ends.tentative, ends.tentativeRow); err != nil {
			return relEnds{}, entity{}, err
		}
	}
	return relEnds{}, entity{}, fmt.Errorf("create relationship: an end is being deleted and written: %w", ErrConflict)
}

// endMarked is ErrNotFound for an end that a deletion has marked
// (created: the creation it marked; alone: a deletion without detach).
type endMarked struct {
	id       string
	created  int64
	alone    bool
	deleteOp OpID     // the op of the deletion that marked it
	ends     [2]int64 // the creations of both ends' nodes, marked or live
	endOps   [2]OpID  // the ops of the deletions that marked each end (zero: not marked)
}

// markedBy reports whether op is the deletion that marked either end.
func (e *endMarked) markedBy(op OpID) bool {
	return !op.IsZero() && (e.endOps[0] == op || e.endOps[1] == op)
}

func (e *endMarked) Error() string { return fmt.Sprintf("node %q: %v", e.id, ErrNotFound) }
func (e *endMarked) Unwrap() error { return ErrNotFound }

// relEnds is which nodes a relationship joins: their creation times, and
// the start's owner.
type relEnds struct {
	created    [2]int64
	startOwner string
	// tentative is an end marked tentatively by a deletion without
	// detach (recheckEnds), and tentativeRow its row as read.
	tentative    string
	tentativeRow entity
	// rows are the ends' rows as read, for placeIntents.
	rows [2]Row
}

// holdIntentOf tells whether either end, as read, holds an intent of op:
// an earlier try of the create placed it.
func (e relEnds) holdIntentOf(op OpID) bool {
	for _, r := range e.rows {
		if r.cells != nil {
			if _, ok := ownIntent(r.cells, op); ok {
				return true
			}
		}
	}
	return false
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
	return s.deleteIndexRows(ctx, k, e)
}

// deleteIndexRows deletes the index rows of e's creation, stamped e's
// update time (their own: a re-send deletes the same), in one batch.
func (s *Store) deleteIndexRows(ctx context.Context, k RelationshipKey, e entity) error {
	out, in, err := k.index(e.created)
	if err != nil {
		return err
	}
	return s.writeRows(ctx, keys.TableGraph, []rowWrite{deleteRowAt(out, e.updated), deleteRowAt(in, e.updated)})
}

// writeIndex puts both index rows with the relationship's properties at its
// update time: a later update's put wins, an earlier one's loses. Both go
// in one batch (one round trip): their order does not matter, as both
// come before the row (a create) or after it (an update), and a failure
// that leaves either alone is one a crash between them could leave.
func (s *Store) writeIndex(ctx context.Context, k RelationshipKey, e entity) error {
	out, in, err := k.index(e.created)
	if err != nil {
		return err
	}
	for _, point := range []string{"index-outgoing", "index-incoming"} {
		if err := s.faultPoint(point); err != nil {
			return err
		}
	}
	p := indexCellsOf(e)
	return s.writeRows(ctx, keys.TableGraph, []rowWrite{
		putRow(out, keys.FamilyGraph, p, e.updated), putRow(in, keys.FamilyGraph, p, e.updated)})
}

// indexCellsOf are the cells of relationship e's index rows: its
// properties, and (xe) the creation times of the ends it was created for,
// when recorded, so that a page lists it under those nodes only, not a
// later node of the same id (CheckEnds).
func indexCellsOf(e entity) cells {
	c := cells{keys.QualProperties: e.props}
	if e.ends != [2]int64{} {
		c[keys.QualEnds] = e.endsCell()
	}
	return c
}

// countDegrees adds delta to both degree counters of k's creation at
// created. Each Increment's nonce purpose names the relationship, its
// creation and the delta: stable across re-sends and retries of the write,
// different for every relationship one op counts (a detach deletes many).
func (s *Store) countDegrees(ctx context.Context, k RelationshipKey, delta, created int64) error {
	out, in, err := k.degrees()
	if err != nil {
		return err
	}
	if s.overlapCalls { // both at once: a cluster's round trip
		count := func(point string, row []byte) func() error {
			return func() error { return s.countDegreeAt(ctx, k, point, row, delta, created) }
		}
		return s.overlap(count("degree-outgoing", out), count("degree-incoming", in))
	}
	if err := s.countDegreeAt(ctx, k, "degree-outgoing", out, delta, created); err != nil {
		return err
	}
	return s.countDegreeAt(ctx, k, "degree-incoming", in, delta, created)
}

// countDegreeAt is countDegree after its fault point.
func (s *Store) countDegreeAt(ctx context.Context, k RelationshipKey, point string, row []byte, delta, created int64) error {
	if err := s.faultPoint(point); err != nil {
		return err
	}
	return s.countDegree(ctx, k, point, row, delta, created)
}

// countDegree is one of countDegrees' Increments, of the counter row
// named by point ("degree-outgoing" or "degree-incoming"): its nonce
// purpose is what makes a re-send, a retry and Repair's replay of it
// count once, so it is built here only.
func (s *Store) countDegree(ctx context.Context, k RelationshipKey, point string, row []byte, delta, created int64) error {
	purpose := fmt.Sprintf("%s %+d %s %d", point, delta, k.ID(), created)
	_, err := s.incrementPurpose(ctx, keys.TableGraph, keys.FamilyGraph, row, keys.QualDegree, delta, purpose)
	if err != nil && !errors.Is(err, errIncrementHidden) {
		// (Hidden: this count applied before, and a node's deletion has
		// deleted the counter since.)
		return err
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
	e, err := s.updateEntity(ctx, k.row(), set, remove, false, []string{k.Start, k.End})
	if err != nil {
		return Relationship{}, fmt.Errorf("update relationship %s: %w", k.ID(), err)
	}
	if err := s.writeIndex(ctx, k, e); err != nil {
		return Relationship{}, err
	}
	return relationshipFrom(k, e)
}

// DeleteRelationship deletes the relationship row (compare-and-set on u),
// then decrements both degree counters, then deletes its index rows with
// the delete's timestamp.
func (s *Store) DeleteRelationship(ctx context.Context, k RelationshipKey) error {
	if err := k.Validate(); err != nil {
		return err
	}
	// One transaction on the embedded engine (see atomically): its five
	// calls commit once.
	return s.atomically(ctx, func(ctx context.Context) error { return s.deleteRelationship(ctx, k) })
}

func (s *Store) deleteRelationship(ctx context.Context, k RelationshipKey) error {
	op, derived := OpFrom(ctx)
	var opRow []byte
	if derived {
		// The caller's op, which a retry may repeat: its record (see
		// graphOpRecord) says which creation it deletes, and once
		// everything is done, that it is.
		var err error
		if opRow, err = s.graphOpRow(ctx, k.Start, op); err != nil {
			return err
		}
	}
	if opRow == nil {
		return s.deleteRelationshipOf(ctx, k, 0, "", []string{k.Start, k.End})
	}
	if err := s.deleteRelationshipRecorded(ctx, k, 0, "", []string{k.Start, k.End}, opRow); err != nil {
		return err
	}
	return s.writeGraphOp(ctx, opRow, graphOpRecord{kind: graphOpRelDeleteDone})
}

// deleteRelationshipCreated is deleteRelationship of the relationship
// created at created (0: whenever), whether its ends exist or not (a
// node's deletion, a create taking its relationship back); another one of
// the same key is ErrNotFound. The index row of node near (a node being
// deleted) goes last, after the counters, so that a crash leaves the row
// its deletion's re-run finds.
func (s *Store) deleteRelationshipCreated(ctx context.Context, k RelationshipKey, created int64, near string) error {
	return s.deleteRelationshipOf(ctx, k, created, near, nil)
}

// deleteRelationshipOf is deleteRelationshipCreated; with ends, a
// relationship an end of which does not exist or is being deleted is
// ErrNotFound (it went with that end's mark; the deletion's detach
// removes it), unless its row is the op's own residue.
func (s *Store) deleteRelationshipOf(ctx context.Context, k RelationshipKey, created int64, near string, ends []string) error {
	return s.deleteRelationshipRecorded(ctx, k, created, near, ends, nil)
}

// deleteRelationshipRecorded is deleteRelationshipOf by the caller's op,
// recorded in op row opRow (nil: none; see deleteEntityRecorded).
func (s *Store) deleteRelationshipRecorded(ctx context.Context, k RelationshipKey, created int64, near string, ends []string, opRow []byte) error {
	ctx, _ = withOp(ctx)
	old, ts, err := s.deleteEntityRecorded(ctx, k.row(), created, ends, opRow)
	if errors.Is(err, errDeletedEarlier) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete relationship %s: %w", k.ID(), err)
	}
	out, in, err := k.index(old.created)
	if err != nil {
		return err
	}
	// The counts first: until both index rows are gone, whatever a
	// failure leaves (the residue is in place) is finished by a retry, a
	// create over the residue, or the detach of either end's deletion,
	// which finds the relationship by its index row there
	// (removeIndexed, finishDeletion; the Increments repeat this op's
	// nonces, so they count once). An index row deleted before the counts
	// would hide the relationship from that end's detach, and a deletion
	// cut short there left its counts for good (seed 887016: the far
	// end's node deleted, then created again, adopted the count).
	if err := s.countDegrees(ctx, k, -1, old.created); err != nil {
		return err
	}
	type unindex struct {
		point string
		row   []byte
	}
	order := []unindex{{"unindex-outgoing", out}, {"unindex-incoming", in}}
	if near == "" {
		// Both in one batch (one round trip).
		for _, ix := range order {
			if err := s.faultPoint(ix.point); err != nil {
				return err
			}
		}
		return s.writeRows(ctx, keys.TableGraph, []rowWrite{deleteRowAt(out, ts), deleteRowAt(in, ts)})
	}
	// The near node's row last: a re-run of its deletion finds the
	// relationship by that row until everything else is done.
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
	return nil
}

// RelationshipPage is one page of a node's adjacent relationships.
type RelationshipPage struct {
	Relationships []Relationship
	Cursors       Cursors
	PageInfo
	index []indexCells // the relationships' index cells: properties (for Primed) and ends
	// near and dir say whose page it is; unchecked is a page of
	// AdjacentIndex whose ends are still to be checked (CheckEnds).
	near      string
	dir       Direction
	unchecked bool
	// ends are the ids of EndGets and at the index in ends of each
	// relationship's far end (endIDs), worked out once with the page.
	ends []string
	at   []int
}

// Primed are the relationship rows, rebuilt from the index rows: built
// when asked for, since most pages are a request's last read. (The rows
// of their ends, EndGets, are the caller's: it read them.)
func (p RelationshipPage) Primed() []Primed {
	out := make([]Primed, len(p.Relationships))
	slab := make([]hrpc.Cell, 3*len(p.Relationships)) // the page's cells in one allocation
	for i, rel := range p.Relationships {
		k := RelationshipKey{Start: rel.Start, Type: rel.Type, End: rel.End}
		e := entity{created: rel.Created.UnixMilli(), updated: rel.Updated.UnixMilli(), props: p.index[i].props}
		key := string(k.row())
		out[i] = Primed{Get{keys.TableGraph, key}, Row{key: key, cells: e.rowCells(&slab)}}
	}
	return out
}

// Adjacent returns a page of node's relationships of one type and
// direction, newest first: AdjacentIndex, then one batch of Gets of the
// node and the far ends (EndGets) to check them (CheckEnds). A
// relationship is listed only while both its ends exist and neither is
// being deleted (see Row.Relationship), so a page may hold fewer than it
// was asked for; a node that does not exist, or is being deleted, has
// none.
func (s *Store) Adjacent(ctx context.Context, node, relType string, dir Direction, req PageRequest) (RelationshipPage, error) {
	page, err := s.AdjacentIndex(ctx, node, relType, dir, req)
	if err != nil {
		return RelationshipPage{}, err
	}
	gets := page.EndGets()
	if len(gets) == 0 {
		return page.CheckEnds(nil)
	}
	rows, err := s.Read(ctx, gets)
	if err != nil {
		return RelationshipPage{}, err
	}
	return page.CheckEnds(rows)
}

// AdjacentIndex is a page of node's relationships as the adjacency index
// lists them (the properties are denormalised there; Updated is the index
// cell's timestamp), before their ends are checked: a caller that batches
// reads reads the page's EndGets with others, and then CheckEnds.
func (s *Store) AdjacentIndex(ctx context.Context, node, relType string, dir Direction, req PageRequest) (RelationshipPage, error) {
	pr, err := adjacencyRange(node, relType, dir)
	if err != nil {
		return RelationshipPage{}, err
	}
	rows, cursors, info, err := s.page(ctx, pr, req)
	if err != nil {
		return RelationshipPage{}, err
	}
	page := RelationshipPage{Relationships: make([]Relationship, len(rows)), Cursors: cursors, PageInfo: info,
		index: make([]indexCells, len(rows)), near: node, dir: dir, unchecked: true}
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
		page.index[i].props = rw.raw.get(keys.QualProperties)
		page.index[i].ends = decodeEnds(rw.raw.get(keys.QualEnds))
	}
	if len(rows) > 0 {
		page.ends, page.at = page.endIDs()
	}
	return page, nil
}

// indexCells are what a page keeps of an index row's cells: the
// relationship's stored properties, and its ends' creation times as its
// create read them (xe; zero: not recorded, a row of an older version or
// an import).
type indexCells struct {
	props []byte
	ends  [2]int64
}

// far is the id of relationship i's far end.
func (p RelationshipPage) far(i int) string {
	if p.dir == keys.Incoming {
		return p.Relationships[i].Start
	}
	return p.Relationships[i].End
}

// EndGets are the node rows CheckEnds needs of an unchecked page (none
// when it is empty): the near node's first, then each far end's once.
func (p RelationshipPage) EndGets() []Get {
	if !p.unchecked || len(p.Relationships) == 0 {
		return nil
	}
	gets := make([]Get, len(p.ends))
	for i, id := range p.ends {
		gets[i] = Get{keys.TableGraph, keys.NodeRow(id)}
	}
	return gets
}

// endIDs are the ids of EndGets: the near node, then each far end once,
// in the order of the relationships that name them first; at[i] is the
// index in ids of relationship i's far end. (A map past a few ends: a
// page of 100 compared pairwise costs more than the check.)
func (p RelationshipPage) endIDs() (ids []string, at []int) {
	ids = make([]string, 1, len(p.Relationships)+1)
	ids[0] = p.near
	at = make([]int, len(p.Relationships))
	var seen map[string]int
	if len(p.Relationships) > 8 {
		seen = make(map[string]int, len(p.Relationships)+1)
		seen[p.near] = 0
	}
	for i := range p.Relationships {
		far := p.far(i)
		j := -1
		if seen != nil {
			if k, ok := seen[far]; ok {
				j = k
			}
		} else {
			j = slices.Index(ids, far)
		}
		if j < 0 {
			j = len(ids)
			ids = append(ids, far)
			if seen != nil {
				seen[far] = j
			}
		}
		at[i] = j
	}
	return ids, at
}

// CheckNear is CheckEnds for a caller that has only the near node's row
// (EndGets' first): done when that says the page is empty (the node is
// not there, or is being deleted) or fails (a corrupt row); otherwise the
// far ends are still to be read.
func (p RelationshipPage) CheckNear(near Row) (page RelationshipPage, done bool, err error) {
	if !p.unchecked || len(p.Relationships) == 0 {
		page, err = p.CheckEnds(nil)
		return page, true, err
	}
	live, err := near.nodeLive()
	if err != nil {
		return RelationshipPage{}, true, err
	}
	if !live {
		page, err = p.CheckEnds([]Row{near})
		return page, true, err
	}
	return p, false, nil
}

// CheckEnds is the page without the relationships an end of which does
// not exist or is being deleted, given the rows of EndGets in its order
// (rows[0], the near node's, may be all a caller read when it says the
// near node is gone: the page is then empty).
func (p RelationshipPage) CheckEnds(rows []Row) (RelationshipPage, error) {
	if !p.unchecked {
		return p, nil
	}
	p.unchecked = false
	if len(p.Relationships) == 0 {
		return p, nil
	}
	if len(rows) == 0 {
		return RelationshipPage{}, errors.New("adjacent: the near node was not read")
	}
	nearCreated, live, err := rows[0].nodeCreated()
	if err != nil || !live {
		return RelationshipPage{}, err
	}
	ids, at := p.ends, p.at
	if len(rows) < len(ids) {
		return RelationshipPage{}, errors.New("adjacent: far ends were not read")
	}
	near, far := 0, 1 // the near and far ends' places in xe
	if p.dir == keys.Incoming {
		near, far = 1, 0
	}
	kept := 0
	for i := range p.Relationships {
		farCreated, live, err := rows[at[i]].nodeCreated()
		if err != nil {
			return RelationshipPage{}, err
		}
		if !live {
			continue // being deleted with its far end, or left by a crash
		}
		if ends := p.index[i].ends; ends != [2]int64{} && (ends[near] != nearCreated || ends[far] != farCreated) {
			// Of an earlier node of either end's id: a create that read
			// that node wrote it after its deletion (its recheck or the
			// deletion of the node there now takes it back; Repair too).
			continue
		}
		p.Relationships[kept], p.index[kept], p.Cursors.rows[kept] = p.Relationships[i], p.index[i], p.Cursors.rows[i]
		kept++
	}
	p.Relationships, p.index, p.Cursors.rows = p.Relationships[:kept], p.index[:kept], p.Cursors.rows[:kept]
	return p, nil
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

// placeIntents places the create's intent (see relIntent) on each of k's
// end nodes, read as ends: a compare-and-set on the node's u as read, so
// that a deletion marking it first (or deleting it, or a create of the id
// since) fails it. An end marked since, gone
// or created again is ErrNotFound; a tentative mark is taken back first
// (its deletion answers ErrConflict). An intent of the op already there (a
// re-send, a retry) is taken as placed, unless a deletion has undone it
// and the node is not the one it was placed on any more: ErrNotFound.
func (s *Store) placeIntents(ctx context.Context, k RelationshipKey, ends relEnds, created int64) ([]placedIntent, error) {
	op := opOf(ctx)
	ids := []string{k.Start, k.End}
	if k.End == k.Start {
		ids = ids[:1]
	}
	out := make([]placedIntent, 0, len(ids))
	if !s.overlapCalls || len(ids) == 1 {
		for i, id := range ids {
			if err := s.placeIntent(ctx, k, op, id, ends.rows[i].cells, ends.created[i], created, &out); err != nil {
				return out, err
			}
		}
		return out, nil
	}
	// Both at once (a cluster's round trip): every intent placed is
	// returned, also when the other end's answers an error.
	// (The goroutines get copies of what they read: a variable of the
	// function that they captured would be on the heap on every call,
	// one after the other or not.)
	var placed [2][]placedIntent
	startRow, endRow := ends.rows[0].cells, ends.rows[1].cells
	startNode, endNode := ends.created[0], ends.created[1]
	err := s.overlap(
		func() error { return s.placeIntent(ctx, k, op, k.Start, startRow, startNode, created, &placed[0]) },
		func() error { return s.placeIntent(ctx, k, op, k.End, endRow, endNode, created, &placed[1]) },
	)
	return append(append(out, placed[0]...), placed[1]...), err
}

// placeIntent is placeIntents' intent on the end id, whose row the
// create read as first (nil: not read) and found created at node; an
// intent placed (or found placed) is appended to out.
func (s *Store) placeIntent(ctx context.Context, k RelationshipKey, op OpID, id string, first rowCells, node, created int64, out *[]placedIntent) error {
	row := keys.Node(id)
	var c cellSource = first
	return s.casLoop(ctx, "create relationship", func(attempt int) (bool, error) {
		if attempt > 0 || first == nil {
			m, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, row)
			if err != nil {
				return false, err
			}
			c = m
		}
		e, ok, err := decodeEntity(row, c)
		if err != nil {
			return false, err
		}
		live := ok && e.deleting == 0 && e.created == node
		if own, has := ownIntent(c, op); has && live && own.node == e.created && !own.undone() {
			*out = append(*out, placedIntent{id: id, in: own})
			return true, nil
		}
		if !live {
			return false, fmt.Errorf("node %q: %w", id, ErrNotFound)
		}
		if e.tentative != 0 {
			if err := s.cancelTentative(ctx, id, e); err != nil {
				return false, err
			}
			return false, nil // read it again
		}
		if err := s.faultPoint(pointRelationshipIntent); err != nil {
			return false, err
		}
		// On the node's u as read, which every mark, deletion and
		// creation of the row moves on: its mark x alone is the same
		// (cleared) on a node created over a residue and on the next
		// one created over its own residue, so a compare-and-set on x
		// applied to a node deleted and created again since it was read.
		u, _ := c.lookup(keys.QualUpdated)
		if own, has := ownIntent(c, op); has && own.created != 0 && own.created != created {
			// An earlier try's intent, on a node deleted since or undone,
			// names the index rows of another time, which it may have
			// written: they go before the one intent that names them
			// does (TestCreateRelationshipPlacedOverItsStaleIntentLeavesNoIndexRow).
			if err := s.deleteIndexRows(ctx, k, entity{created: own.created, updated: own.created}); err != nil {
				return false, err
			}
		}
		in := relIntent{node: e.created, placed: s.nowMs(), ts: e.updated, created: created}
		won, err := s.checkAndPut(ctx, keys.TableGraph, keys.FamilyGraph, row, keys.QualUpdated, u,
			cells{intentQualifier(op): in.encode()}, in.ts)
		if won {
			*out = append(*out, placedIntent{id: id, in: in})
		}
		return won, err
	})
}

// pointRelationshipIntent is the fault point before a create places an
// intent on an end node.
const pointRelationshipIntent = "relationship-intent"

// clearIntents deletes the create's pending intents from k's end nodes,
// each at its own timestamp (a re-send deletes the same; an undoing Put,
// stamped the same, is hidden too): those it placed, and unless that was
// all of them, those an earlier try of its op left, read from the nodes.
func (s *Store) clearIntents(ctx context.Context, k RelationshipKey, op OpID, intents relIntents) error {
	placed := intents.placed
	if !intents.all {
		ids := []string{k.Start, k.End}
		if k.End == k.Start {
			ids = ids[:1]
		}
		rows := make([][]byte, len(ids))
		for i, id := range ids {
			rows[i] = keys.Node(id)
		}
		res, err := s.getBatch(ctx, keys.TableGraph, rows)
		if err != nil {
			return err
		}
		placed = placed[:0:0]
		for i, r := range res {
			if in, ok := ownIntent(r, op); ok && !in.undone() {
				placed = append(placed, placedIntent{id: ids[i], in: in})
			}
		}
	}
	// In one batch (one round trip): each is its own, in its own row.
	// Intents have only ever been written to the once family, so the ones
	// this call placed are deleted there alone (a delete of a once column
	// in the data family too, as columnFamilies makes it for columns an
	// older hbgraph kept there, costs each node row a marker more, which
	// a hot node's reads step over until it is purged). Those read from
	// the nodes go from both, as any once column.
	family := keys.FamilyOnce
	if !intents.all {
		family = keys.FamilyGraph
	}
	ws := make([]rowWrite, 0, len(placed))
	for _, p := range placed {
		if err := s.faultPoint(pointRelationshipIntentClear); err != nil {
			return err
		}
		ws = append(ws, rowWrite{row: keys.Node(p.id), family: family, columns: []string{intentQualifier(op)}, ts: p.in.ts})
	}
	return s.writeRows(ctx, keys.TableGraph, ws)
}

// pointRelationshipIntentClear is the fault point before a create clears
// an intent.
const pointRelationshipIntentClear = "relationship-intent-clear"

// intentUndoneBy reports whether deletion by undid the ctx op's intent on
// an end of k (see relIntent): the relationship the op created was then
// deleted by that end's deletion without detach, which came first.
func (s *Store) intentUndoneBy(ctx context.Context, k RelationshipKey, by OpID) (bool, error) {
	op := opOf(ctx)
	res, err := s.getBatch(ctx, keys.TableGraph, [][]byte{keys.Node(k.Start), keys.Node(k.End)})
	if err != nil {
		return false, err
	}
	for _, r := range res {
		if in, ok := ownIntent(r, op); ok && in.undone() && in.undoneBy == by {
			return true, nil
		}
	}
	return false, nil
}

// overEndDeletion reports whether the ctx op's creation of k, which rel's
// residue keeps, was written over the residue of a deletion of one of the
// end nodes it was made for (the nodes its intents were placed on): that
// deletion's detach took the relationship there before, which was there
// up to its mark, so the create came after the mark (NOT_FOUND), as its
// recheck would have answered (CreateRelationship: byMarker, afterMark).
// A retry that finds its creation deleted since by another (an end's
// detach, of a node created again) has only this to tell it.
func (s *Store) overEndDeletion(ctx context.Context, k RelationshipKey, rel entity) (bool, error) {
	op := opOf(ctx)
	prev, ok := rel.gone.replacedDeletion(op)
	if !ok || prev.IsZero() {
		return false, nil
	}
	rows := [][]byte{keys.Node(k.Start), keys.Node(k.End)}
	res, err := s.getBatch(ctx, keys.TableGraph, rows)
	if err != nil {
		return false, err
	}
	for i, r := range res {
		in, ok := ownIntent(r, op)
		if !ok {
			continue
		}
		e, _, err := decodeEntity(rows[i], r)
		if err != nil {
			return false, err
		}
		if e.created == in.node && e.deleting != 0 && e.deleteOp == prev {
			return true, nil
		}
		if by, ok := e.gone.deletionAt(in.node); ok && by == prev {
			return true, nil
		}
	}
	return false, nil
}

// endDeletedBy reports whether op is the deletion of one of k's end nodes
// as created at created (the nodes a create read): the op that marks the
// row still, or that its residue names for that creation (the id created
// again since, or gone).
func (s *Store) endDeletedBy(ctx context.Context, k RelationshipKey, created [2]int64, op OpID) (bool, error) {
	rows := [][]byte{keys.Node(k.Start), keys.Node(k.End)}
	res, err := s.getBatch(ctx, keys.TableGraph, rows)
	if err != nil {
		return false, err
	}
	for i, r := range res {
		e, _, err := decodeEntity(rows[i], r)
		if err != nil {
			return false, err
		}
		if e.created == created[i] && e.deleting != 0 && e.deleteOp == op {
			return true, nil
		}
		if by, ok := e.gone.deletionAt(created[i]); ok && by == op {
			return true, nil
		}
	}
	return false, nil
}
