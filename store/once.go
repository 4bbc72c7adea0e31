package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"time"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Exactly once for node and relationship rows (docs/design.md, "Exactly
// once"): a row records the ops of the writes that made it (xc, xu, xd),
// and a deleted row leaves a residue g in place of a delete marker, so
// that a write re-sent by gohbase or retried by its caller with the same
// op recognises its own earlier effect, and a delete stamped by a clock
// ahead of ours never hides a later create.

// withOp fixes the op of a write at its start: ctx's, or a fresh one, so
// that every RPC of the write (and every re-send of it) carries the same.
func withOp(ctx context.Context) (context.Context, OpID) {
	if op, ok := OpFrom(ctx); ok {
		return ctx, op
	}
	op := NewOpID()
	return WithOp(ctx, op), op
}

// residue is a deleted row's g: the row reads as absent.
type residue struct {
	at       int64 // the deletion's timestamp (the row's u from then on)
	deleteOp OpID
	created  int64 // the creation it deleted
	createOp OpID
	// earlier are the row's earlier deletions, newest first (at most
	// earlierDeletes): a node's deletion finished by another DeleteNode
	// (which records the marking op), then created again and deleted
	// again, is still recognised by a retry of its op; and so is a create
	// whose row was deleted, created again by another and deleted again
	// since (a retry of it is not a create to make again).
	earlier []pastDeletion
}

// pastDeletion is one of a residue's earlier deletions: its op, and the
// creation it deleted.
type pastDeletion struct {
	deleteOp, createOp OpID
	created            int64
}

const residueLen = 8 + 16 + 8 + 16

// earlierDeletes is how many earlier deletions a residue keeps.
const earlierDeletes = 7

// The encoding of earlier: residueMark, then 40 bytes a deletion (its op,
// the create's op, the creation time). A residue of an older version
// holds the deletions' ops alone, 16 bytes each (an even length; this
// one's is odd).
const (
	residueMark = 'e'
	pastLen     = 16 + 16 + 8
	oldPastLen  = 16
)

func (r residue) encode() []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, residueLen+1+pastLen*len(r.earlier)), uint64(r.at))
	b = append(b, r.deleteOp[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(r.created))
	b = append(b, r.createOp[:]...)
	if len(r.earlier) == 0 {
		return b
	}
	b = append(b, residueMark)
	for _, d := range r.earlier {
		b = append(b, d.deleteOp[:]...)
		b = append(b, d.createOp[:]...)
		b = binary.BigEndian.AppendUint64(b, uint64(d.created))
	}
	return b
}

func decodeResidue(b []byte) (residue, bool) {
	if len(b) < residueLen {
		return residue{}, false
	}
	var r residue
	r.at = int64(binary.BigEndian.Uint64(b))
	copy(r.deleteOp[:], b[8:24])
	r.created = int64(binary.BigEndian.Uint64(b[24:32]))
	copy(r.createOp[:], b[32:48])
	rest := b[residueLen:]
	switch {
	case len(rest) == 0:
	case len(rest)%oldPastLen == 0:
		for i := 0; i < len(rest); i += oldPastLen {
			var d pastDeletion
			copy(d.deleteOp[:], rest[i:i+16])
			r.earlier = append(r.earlier, d)
		}
	case rest[0] == residueMark && (len(rest)-1)%pastLen == 0:
		for i := 1; i < len(rest); i += pastLen {
			var d pastDeletion
			copy(d.deleteOp[:], rest[i:i+16])
			copy(d.createOp[:], rest[i+16:i+32])
			d.created = int64(binary.BigEndian.Uint64(rest[i+32 : i+40]))
			r.earlier = append(r.earlier, d)
		}
	default:
		return residue{}, false
	}
	return r, true
}

// deletedBy reports whether op made the row's last deletion or one of
// the earlier ones it keeps.
func (r *residue) deletedBy(op OpID) bool {
	return r != nil && (r.deleteOp == op || r.deletedEarlierBy(op))
}

// deletedEarlierBy reports whether op made one of the earlier deletions
// the residue keeps.
func (r *residue) deletedEarlierBy(op OpID) bool {
	return r != nil && slices.ContainsFunc(r.earlier, func(d pastDeletion) bool { return d.deleteOp == op })
}

// createdBy finds the creation by op among the deletions the residue
// keeps (the last, then the earlier ones): its time, and the op that
// deleted it.
func (r *residue) createdBy(op OpID) (created int64, deleteOp OpID, ok bool) {
	if r == nil || op.IsZero() {
		return 0, OpID{}, false
	}
	if r.createOp == op && r.created != 0 {
		return r.created, r.deleteOp, true
	}
	for _, d := range r.earlier {
		if d.createOp == op && d.created != 0 {
			return d.created, d.deleteOp, true
		}
	}
	return 0, OpID{}, false
}

// replacedDeletion is the op that deleted the creation which op's
// creation was written over (the deletion kept just before it), if the
// residue keeps both.
func (r *residue) replacedDeletion(op OpID) (OpID, bool) {
	if r == nil || op.IsZero() {
		return OpID{}, false
	}
	chain := r.next()
	for i, d := range chain {
		if d.createOp == op && d.created != 0 && i+1 < len(chain) {
			return chain[i+1].deleteOp, true
		}
	}
	return OpID{}, false
}

// afterDetachOf reports whether op's creation, deleted by by, was written
// over the residue of another creation that by deleted too: by is a
// node's deletion (only a node's detach deletes two creations of one
// relationship), and took the other after its mark, so op's create came
// after the mark: NOT_FOUND, as its recheck would have answered.
func (r *residue) afterDetachOf(op, by OpID) bool {
	prev, ok := r.replacedDeletion(op)
	return ok && prev == by
}

// next is the residue's deletions as the earlier ones of the row's next
// deletion: its last first, the oldest dropped.
func (r *residue) next() []pastDeletion {
	if r == nil {
		return nil
	}
	out := make([]pastDeletion, 0, earlierDeletes)
	out = append(out, pastDeletion{deleteOp: r.deleteOp, createOp: r.createOp, created: r.created})
	return append(out, r.earlier[:min(len(r.earlier), earlierDeletes-1)]...)
}

// pendingCreate is a relationship row's xp: a create under way.
type pendingCreate struct {
	op      OpID
	created int64
}

func (p pendingCreate) encode() []byte {
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, 24), p.op[:]...), uint64(p.created))
}

func decodePending(b []byte) (pendingCreate, bool) {
	if len(b) != 24 {
		return pendingCreate{}, false
	}
	var p pendingCreate
	copy(p.op[:], b[:16])
	p.created = int64(binary.BigEndian.Uint64(b[16:]))
	return p, true
}

func decodeOp(b []byte) (OpID, bool) {
	var o OpID
	if len(b) == 0 {
		return o, true
	}
	if len(b) != len(o) {
		return o, false
	}
	copy(o[:], b)
	return o, true
}

// recentUpdates is how many update ops a row keeps (xu): a retry is
// recognised while fewer than this many updates came after it.
const recentUpdates = 16

// hasOp reports whether the op list ops (xu) holds op.
func hasOp(ops []byte, op OpID) bool {
	for i := 0; i+16 <= len(ops); i += 16 {
		if bytes.Equal(ops[i:i+16], op[:]) {
			return true
		}
	}
	return false
}

// pushOp returns the op list ops with op first, the oldest dropped.
func pushOp(ops []byte, op OpID) []byte {
	n := min(len(ops)/16, recentUpdates-1)
	out := make([]byte, 0, 16*(n+1))
	out = append(out, op[:]...)
	return append(out, ops[:16*n]...)
}

// isResidue reports whether a scanned row of the graph table is what a
// deletion left (a residue, or a relationship create's xp alone): a row
// that reads as absent.
func isResidue(rw row) bool {
	if rw.cells == nil {
		return false
	}
	_, g := rw.cells[keys.QualGone]
	_, xp := rw.cells[keys.QualPendingCreate]
	if !g && !xp {
		return false
	}
	_, live, err := decodeEntity(rw.key, rw.cells)
	return err == nil && !live
}

// A deletion with a caller's op (an Idempotency-Key) records, before it
// deletes, which creation it deletes, in an op row of the articles table
// (keys.ArticleOpLayout, under the node's id, or a relationship's start
// node's; expired by Repair after a day, as the articles' op rows are):
// a residue keeps the row's last 8 deletions only, so a retry after more
// deletions of its key would find none of its own and take the node or
// relationship there now, someone else's, for its own. The record tells
// it which creation was its to delete: that one if it is still there,
// and nothing else. Kinds of the record (the article kinds are 'p' and
// 'd'):
const (
	graphOpNodeDelete    byte = 'n' // a node's deletion, before its mark
	graphOpRelDelete     byte = 'r' // a relationship's, before its compare-and-set
	graphOpRelDeleteDone byte = 'R' // a relationship's, all of it done
)

// graphOpRecord is an op row's record of a node's or relationship's
// deletion: the creation (time, op) it deletes.
type graphOpRecord struct {
	kind     byte
	created  int64
	createOp OpID
}

func (r graphOpRecord) encode() []byte {
	b := binary.BigEndian.AppendUint64([]byte{r.kind}, uint64(r.created))
	return append(b, r.createOp[:]...)
}

func decodeGraphOpRecord(b []byte) (graphOpRecord, bool) {
	if len(b) != 1+8+16 {
		return graphOpRecord{}, false
	}
	r := graphOpRecord{kind: b[0], created: int64(binary.BigEndian.Uint64(b[1:9]))}
	copy(r.createOp[:], b[9:])
	return r, true
}

// of reports whether the row e (live or being deleted) is the creation r
// records.
func (r graphOpRecord) of(e entity) bool {
	return e.created == r.created && e.createOp == r.createOp
}

// graphOpRow is the op row of op's deletion under node author: nil when
// the articles table is of an older layout (not migrated: then nothing is
// recorded, and a retry after more deletions than a residue keeps is not
// recognised). Like every write to the articles table, it first makes the
// table's layout, and author's rows, current.
func (s *Store) graphOpRow(ctx context.Context, author string, op OpID) ([]byte, error) {
	if err := s.CheckArticleLayout(ctx); errors.Is(err, ErrArticleLayout) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if err := s.migrateAuthorFirst(ctx, author); err != nil {
		return nil, err
	}
	return keys.ArticleOp(author, op), nil
}

// readGraphOp reads the deletion record of op row opRow: nil if none (or
// not a graph deletion's).
func (s *Store) readGraphOp(ctx context.Context, opRow []byte, kinds ...byte) (*graphOpRecord, error) {
	c, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, opRow)
	if err != nil {
		return nil, err
	}
	r, ok := decodeGraphOpRecord(c[keys.QualArticleOpRecord])
	if !ok || !slices.Contains(kinds, r.kind) {
		return nil, nil
	}
	return &r, nil
}

// writeGraphOp writes record r in op row opRow (a Put: a re-send writes
// the same).
func (s *Store) writeGraphOp(ctx context.Context, opRow []byte, r graphOpRecord) error {
	if err := s.faultPoint(pointGraphOpRow); err != nil {
		return err
	}
	return s.put(ctx, keys.TableArticles, keys.FamilyArticles, opRow, cells{keys.QualArticleOpRecord: r.encode()}, s.nowMs())
}

// pointGraphOpRow is the fault point before a deletion's op row is written.
const pointGraphOpRow = "graph-op-row"

// deletionOf finds, among the deletions the residue keeps, the one of the
// creation at created by createOp: the op that deleted it.
func (r *residue) deletionOf(created int64, createOp OpID) (OpID, bool) {
	if r == nil {
		return OpID{}, false
	}
	if r.created == created && r.createOp == createOp {
		return r.deleteOp, true
	}
	for _, d := range r.earlier {
		if d.created == created && d.createOp == createOp {
			return d.deleteOp, true
		}
	}
	return OpID{}, false
}

// A relationship create's intent on an end node (a cell xr+op in the node
// row): placed before the create writes anything, with a compare-and-set
// on the node's u as read, so only while no deletion has marked the node
// (nor deleted it, nor has the id been created again); cleared once the
// create has answered. A deletion without
// detach does not confirm its mark while an intent younger than
// intentStale is on the node (ErrConflict): between its tentative mark
// and its confirmation no create can place one (it would take the
// tentative mark back first), so a confirmed deletion without detach
// never races a create of a relationship of the node. An older intent is
// a create cut short: the deletion undoes it (undoneBy), and the create's
// retry, finding its intent undone and its relationship deleted by that
// deletion, answers NOT_FOUND: the deletion came first.
type relIntent struct {
	node   int64 // the creation of the node it was placed on
	placed int64 // when (the placing gateway's clock), for its age
	ts     int64 // its cell's timestamp: the node's u when placed
	// created is the creation time of the relationship the create writes
	// index rows for (0: none yet): its retry deletes them if the row went
	// to another create (the row's xp, which says so too, may have been
	// replaced by a third's).
	created  int64
	undoneBy OpID // the deletion that undid it; zero: pending
}

const relIntentLen = 8 + 8 + 8 + 8

// intentStale is the age after which an intent is taken for a create cut
// short: far longer than a create takes.
const intentStale = time.Minute

func (in relIntent) encode() []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, relIntentLen+16), uint64(in.node))
	b = binary.BigEndian.AppendUint64(b, uint64(in.placed))
	b = binary.BigEndian.AppendUint64(b, uint64(in.ts))
	b = binary.BigEndian.AppendUint64(b, uint64(in.created))
	if !in.undoneBy.IsZero() {
		b = append(b, in.undoneBy[:]...)
	}
	return b
}

func decodeRelIntent(b []byte) (relIntent, bool) {
	if len(b) != relIntentLen && len(b) != relIntentLen+16 {
		return relIntent{}, false
	}
	in := relIntent{node: int64(binary.BigEndian.Uint64(b)), placed: int64(binary.BigEndian.Uint64(b[8:])),
		ts: int64(binary.BigEndian.Uint64(b[16:])), created: int64(binary.BigEndian.Uint64(b[24:]))}
	copy(in.undoneBy[:], b[relIntentLen:])
	return in, true
}

func (in relIntent) undone() bool { return !in.undoneBy.IsZero() }

// intentQualifier is the qualifier of op's intent.
func intentQualifier(op OpID) string { return keys.QualRelIntentPrefix + string(op[:]) }

// ownIntent is op's intent in a node row's cells c, if there is one.
func ownIntent(c cellSource, op OpID) (relIntent, bool) {
	v, ok := c.lookup(intentQualifier(op))
	if !ok {
		return relIntent{}, false
	}
	return decodeRelIntent(v)
}

// intentsOf are the intents in a node row's cells c, by qualifier.
func intentsOf(c cells) map[string]relIntent {
	var out map[string]relIntent
	for q, v := range c {
		if len(q) != len(keys.QualRelIntentPrefix)+16 || q[:len(keys.QualRelIntentPrefix)] != keys.QualRelIntentPrefix {
			continue
		}
		if in, ok := decodeRelIntent(v); ok {
			if out == nil {
				out = map[string]relIntent{}
			}
			out[q] = in
		}
	}
	return out
}

// deletionAt is deletionOf by the creation's time alone.
func (r *residue) deletionAt(created int64) (OpID, bool) {
	if r == nil || created == 0 {
		return OpID{}, false
	}
	if r.created == created {
		return r.deleteOp, true
	}
	for _, d := range r.earlier {
		if d.created == created {
			return d.deleteOp, true
		}
	}
	return OpID{}, false
}
