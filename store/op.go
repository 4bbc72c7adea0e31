package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"

	"github.com/cespare/xxhash/v2"
)

// OpID names one write a client asked for (a mutation, an import line), so
// that the write recognises itself when it meets its own earlier effect: an
// RPC that gohbase re-sent after it was applied, or the client's retry after
// UNAVAILABLE with the same idempotency key. It is recorded in the rows the
// write creates or changes, and it seeds the nonces of the write's
// Increments (HBase's own de-duplication of re-sent Increments and Appends).
//
// An OpID derived from an idempotency key (DeriveOpID) is the same on every
// gateway replica and on every retry; one made by NewOpID is the request's
// own, which covers re-sends but not a client's retry.
type OpID [16]byte

// NewOpID returns a random OpID.
func NewOpID() OpID {
	var o OpID
	_, _ = rand.Read(o[:])
	return o
}

// DeriveOpID returns the OpID of a write named by parts (for a mutation:
// the caller's subject, its idempotency key, the field's position and its
// arguments): equal parts give equal ids, and different parts different
// ids (SHA-256, so a client cannot aim at another's).
func DeriveOpID(parts ...string) OpID {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	var o OpID
	copy(o[:], h.Sum(nil))
	return o
}

// String is o in hex, for logs and errors.
func (o OpID) String() string { return hex.EncodeToString(o[:]) }

// IsZero reports whether o is the zero OpID (none).
func (o OpID) IsZero() bool { return o == OpID{} }

type opKey struct{}

// WithOp returns ctx carrying op: the store's writes under ctx are op's.
func WithOp(ctx context.Context, op OpID) context.Context {
	return context.WithValue(ctx, opKey{}, op)
}

// OpFrom returns the OpID ctx carries, if any.
func OpFrom(ctx context.Context) (OpID, bool) {
	op, ok := ctx.Value(opKey{}).(OpID)
	return op, ok && !op.IsZero()
}

// opOf returns the OpID of ctx, or a fresh one: a write without one of its
// own still recognises gohbase's re-sends of its RPCs.
func opOf(ctx context.Context) OpID {
	if op, ok := OpFrom(ctx); ok {
		return op
	}
	return NewOpID()
}

// nonceGroup is the nonce group of every hbgraph Increment: nonces are
// derived from OpIDs, which are equal across gateway replicas, so one group
// serves them all and a retry on another replica is de-duplicated too.
var nonceGroup = xxhash.Sum64String("hbgraph nonce group") | 1

// nonce is the HBase nonce of the Increment op makes for purpose on row:
// the same for every re-send and every retry of op, never 0 (HBase's "no
// nonce").
func (o OpID) nonce(purpose string, row []byte) uint64 {
	d := xxhash.New()
	_, _ = d.Write(o[:])
	_, _ = d.WriteString(purpose)
	_, _ = d.Write([]byte{0})
	_, _ = d.Write(row)
	return d.Sum64() | 1
}

// Writer is who makes a write, for the ownership check the store makes
// inside the compare-and-set of the write it guards: a node deleted and
// re-created by someone else between a resolver's check and the write is
// not writable by the old owner. Admin may write every node; otherwise a
// node's owner must be Subject.
type Writer struct {
	Subject string
	Admin   bool
}

type writerKey struct{}

// WithWriter returns ctx carrying w: the store's writes under ctx check
// that w may write what they change. A ctx without a Writer writes as an
// admin (import, repair, tests).
func WithWriter(ctx context.Context, w Writer) context.Context {
	return context.WithValue(ctx, writerKey{}, w)
}

// writerOf returns the Writer of ctx, an admin when there is none.
func writerOf(ctx context.Context) Writer {
	if w, ok := ctx.Value(writerKey{}).(Writer); ok {
		return w
	}
	return Writer{Admin: true}
}

// mayWrite reports whether w may write a node whose owner is owner (empty:
// nobody, so admins only).
func (w Writer) mayWrite(owner string) bool {
	return w.Admin || (owner != "" && owner == w.Subject)
}
