package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"

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
