package embedded

import (
	"context"
	"sync"
	"time"
)

// DefaultNonceGracePeriod is how long an applied Increment's or Append's
// nonce is remembered when Options.NonceGracePeriod is zero: HBase's
// hbase.server.hashNonce.gracePeriod default.
const DefaultNonceGracePeriod = 30 * time.Minute

// DefaultMaxNonces caps the nonces remembered when Options.MaxNonces is
// zero: about 60 bytes each, so some 30 MiB at most, and the whole grace
// period for up to about 290 Increments a second.
const DefaultMaxNonces = 1 << 19

// nonceKey is HBase's NonceKey: a nonce group (a client) and a nonce.
type nonceKey struct{ group, nonce uint64 }

// nonceTable is HBase's ServerNonceManager, for one engine: the nonces of
// the Increments and Appends applied within the grace period, and those in
// flight. An operation starts (start) before it takes its row's lock and
// ends (end) after its commit, so of two requests with one nonce the second
// waits for the first and then either finds it applied (a duplicate) or,
// if it failed, proceeds: never both applied.
//
// Memory is bounded by age and by count. An applied nonce is forgotten
// once older than the grace period, and when the table holds max of them,
// the oldest is forgotten first: past the cap the grace period shrinks to
// the last max operations, and a re-send of an older one applies again.
// The first time that happens the engine logs a warning.
type nonceTable struct {
	grace time.Duration
	max   int

	mu      sync.Mutex
	applied map[nonceKey]int64         // ms it was applied at
	order   []nonceEntry               // applied, oldest first, from head
	head    int                        //
	running map[nonceKey]chan struct{} // closed when the operation ends (nil: nobody waits)
	capped  bool                       // the cap has dropped a young nonce
}

type nonceEntry struct {
	key nonceKey
	at  int64
}

func newNonceTable(grace time.Duration, max int) *nonceTable {
	return &nonceTable{
		grace: grace, max: max,
		applied: make(map[nonceKey]int64),
		running: make(map[nonceKey]chan struct{}),
	}
}

// start begins the operation of key at now (ms). proceed is false for a
// duplicate: an operation with key was applied within the grace period.
// When proceed is true the caller must call end. start waits for an
// operation with key in flight to end, or for ctx to be done.
func (n *nonceTable) start(ctx context.Context, key nonceKey, now int64) (proceed bool, err error) {
	for {
		n.mu.Lock()
		if at, ok := n.applied[key]; ok && now-at < n.grace.Milliseconds() {
			n.mu.Unlock()
			return false, nil
		}
		wait, running := n.running[key]
		if !running {
			n.running[key] = nil // a channel only once someone waits
			n.mu.Unlock()
			return true, nil
		}
		if wait == nil {
			wait = make(chan struct{})
			n.running[key] = wait
		}
		n.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// end ends the operation started with key: applied records it (at now,
// ms), otherwise a later request with key may proceed.
func (n *nonceTable) end(key nonceKey, applied bool, now int64) (dropped bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if wait := n.running[key]; wait != nil {
		close(wait)
	}
	delete(n.running, key)
	if !applied {
		return false
	}
	n.applied[key] = now
	n.order = append(n.order, nonceEntry{key, now})
	return n.evict(now)
}

// evict forgets the nonces older than the grace period, then the oldest
// until at most max remain; it reports whether the cap forgot a nonce
// still inside its grace period, the first time it does.
func (n *nonceTable) evict(now int64) (firstCapped bool) {
	cutoff := now - n.grace.Milliseconds()
	for n.head < len(n.order) {
		e := n.order[n.head]
		young := e.at > cutoff
		if young && len(n.applied) <= n.max {
			break
		}
		if young && !n.capped {
			n.capped, firstCapped = true, true
		}
		// A key forgotten and applied again has a newer entry; this one
		// no longer stands for it.
		if at, ok := n.applied[e.key]; ok && at == e.at {
			delete(n.applied, e.key)
		}
		n.order[n.head] = nonceEntry{}
		n.head++
	}
	if n.head > len(n.order)/2 && n.head > 1024 {
		n.order = append(n.order[:0], n.order[n.head:]...)
		n.head = 0
	}
	return firstCapped
}
