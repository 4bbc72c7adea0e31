package events

import (
	"context"
	"sync/atomic"
)

// Notifier lets a transport drive a subscription's channel without a
// goroutine blocked on it: the subscription calls Notify after each value
// it put in its channel and once after it closed it, so the transport
// reads the channel only when a read cannot block. An idle subscription
// then costs no goroutine (and no stack) of its own.
type Notifier struct {
	Ready   func()
	claimed atomic.Bool
}

type notifierKey struct{}

// WithNotifier returns ctx carrying n, for the subscription that starts
// with ctx.
func WithNotifier(ctx context.Context, n *Notifier) context.Context {
	return context.WithValue(ctx, notifierKey{}, n)
}

// NotifierFrom returns ctx's Notifier, or nil: the transport then reads
// the channel in a goroutine of its own.
func NotifierFrom(ctx context.Context) *Notifier {
	n, _ := ctx.Value(notifierKey{}).(*Notifier)
	if n == nil || n.Ready == nil {
		return nil
	}
	return n
}

// Notify calls Ready (nothing on a nil Notifier).
func (n *Notifier) Notify() {
	if n != nil {
		n.Ready()
	}
}

// Claim tells the transport that a subscription started and will Notify:
// called once it subscribed, so a subscription refused (a cap, a closed
// bus) leaves its transport to answer the error as for any operation.
func (n *Notifier) Claim() {
	if n != nil {
		n.claimed.Store(true)
	}
}

// Claimed reports whether a subscription claimed n.
func (n *Notifier) Claimed() bool { return n.claimed.Load() }
