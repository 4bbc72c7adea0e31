package store

import (
	"bytes"
	"context"
	"encoding/binary"

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
	// earlier are the ops of the row's earlier deletions, newest first
	// (at most earlierDeletes): a node's deletion finished by another
	// DeleteNode (which records the marking op), then created again and
	// deleted again, is still recognised by a retry of its op.
	earlier []byte
}

const residueLen = 8 + 16 + 8 + 16

// earlierDeletes is how many earlier deletions' ops a residue keeps.
const earlierDeletes = 7

func (r residue) encode() []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, residueLen+len(r.earlier)), uint64(r.at))
	b = append(b, r.deleteOp[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(r.created))
	b = append(b, r.createOp[:]...)
	return append(b, r.earlier...)
}

func decodeResidue(b []byte) (residue, bool) {
	if len(b) < residueLen || (len(b)-residueLen)%16 != 0 {
		return residue{}, false
	}
	var r residue
	r.at = int64(binary.BigEndian.Uint64(b))
	copy(r.deleteOp[:], b[8:24])
	r.created = int64(binary.BigEndian.Uint64(b[24:32]))
	copy(r.createOp[:], b[32:48])
	if len(b) > residueLen {
		r.earlier = b[residueLen:]
	}
	return r, true
}

// deletedBy reports whether op made the row's last deletion or one of
// the earlier ones it keeps.
func (r *residue) deletedBy(op OpID) bool {
	return r != nil && (r.deleteOp == op || hasOp(r.earlier, op))
}

// next is the residue's ops as the earlier ones of the row's next
// deletion: its op first, the oldest dropped.
func (r *residue) next() []byte {
	if r == nil {
		return nil
	}
	return pushOp(r.earlier[:16*min(len(r.earlier)/16, earlierDeletes-1)], r.deleteOp)
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
