package edge

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/hbgraph/hbgraph/graph/codes"
)

// RateLimit bounds the requests of each client: a token bucket per key,
// Rate tokens a second and Burst at most. A
// request that finds its bucket empty is answered 429 with Retry-After,
// and is never queued.
type RateLimit struct {
	Rate  rate.Limit
	Burst int
	// Key names the client of a request; nil: its address (the host of
	// RemoteAddr, never a header a client could forge).
	Key func(*http.Request) string
	// OnLimit, if set, is called with each request refused.
	OnLimit func(*http.Request)
	// now is the clock; nil: time.Now (tests set it).
	now func() time.Time
}

// maxClients bounds the buckets kept (evict): many addresses cannot grow
// the memory without bound.
const maxClients = 1 << 16

// Middleware refuses what exceeds l before next sees it; a zero Rate lets
// everything through.
func (l RateLimit) Middleware(next http.Handler) http.Handler {
	if l.Rate <= 0 {
		return next
	}
	if l.Key == nil {
		l.Key = ClientAddress
	}
	if l.now == nil {
		l.now = time.Now
	}
	b := l.buckets()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wait := b.take(l.Key(r), l.now())
		if wait == 0 {
			next.ServeHTTP(w, r)
			return
		}
		l.refuse(w, r, wait)
	})
}

// buckets are l's token buckets, one per key; nil when l limits nothing.
func (l RateLimit) buckets() *buckets {
	if l.Rate <= 0 {
		return nil
	}
	return &buckets{limit: l, m: map[string]*bucket{}}
}

// refuse answers r 429: its bucket has a token again after wait.
func (l RateLimit) refuse(w http.ResponseWriter, r *http.Request, wait time.Duration) {
	if l.OnLimit != nil {
		l.OnLimit(r)
	}
	secs := max(int(math.Ceil(wait.Seconds())), 1)
	w.Header().Set("Retry-After", fmt.Sprint(secs))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	fmt.Fprintf(w, `{"errors":[{"message":"rate limit exceeded: %g requests a second, %d at once; retry after %d s","extensions":{"code":%q}}]}`+"\n",
		float64(l.Rate), l.Burst, secs, codes.RateLimited)
}

type buckets struct {
	limit RateLimit
	mu    sync.Mutex
	m     map[string]*bucket
}

// bucket is one key's tokens as of last. Not rate.Limiter: a token taken
// before a token is checked must be given back later when it verifies,
// and a Limiter only cancels reservations that have not yet acted.
type bucket struct {
	tokens float64
	last   time.Time
}

// at refills k up to now and returns its tokens.
func (k *bucket) at(now time.Time, l RateLimit) float64 {
	if now.After(k.last) {
		k.tokens = min(float64(l.Burst), k.tokens+float64(l.Rate)*now.Sub(k.last).Seconds())
		k.last = now
	}
	return k.tokens
}

// take spends a token of key's bucket at now, or says how long until one
// is there.
func (b *buckets) take(key string, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.bucketLocked(key, now)
	tokens := k.at(now, b.limit)
	if tokens >= 1 {
		k.tokens--
		return 0
	}
	return time.Duration((1 - tokens) / float64(b.limit.Rate) * float64(time.Second))
}

// giveBack returns the token take spent from key's bucket (a bucket
// evicted since is full anyway).
func (b *buckets) giveBack(key string, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if k, ok := b.m[key]; ok {
		k.tokens = min(float64(b.limit.Burst), k.at(now, b.limit)+1)
	}
}

// bucketLocked is key's bucket, made full when key has none; b.mu is held.
func (b *buckets) bucketLocked(key string, now time.Time) *bucket {
	k, ok := b.m[key]
	if !ok {
		if len(b.m) >= maxClients {
			b.evict(now)
		}
		k = &bucket{tokens: float64(b.limit.Burst), last: now}
		b.m[key] = k
	}
	return k
}

// evict makes room for an eighth of maxClients at once, so that a flood of
// new addresses costs a sweep per maxClients/8 of them, not one each: it
// drops the buckets full again (forgetting them changes nothing) among a
// sample, then any, in Go's random map order.
func (b *buckets) evict(now time.Time) {
	target := maxClients - maxClients/8
	looked := 0
	for k, bk := range b.m {
		if len(b.m) <= target || looked == maxClients/4 {
			break
		}
		looked++
		if bk.at(now, b.limit) >= float64(b.limit.Burst) {
			delete(b.m, k)
		}
	}
	for k := range b.m {
		if len(b.m) <= target {
			break
		}
		delete(b.m, k)
	}
}

// ClientAddress is the host of r's RemoteAddr.
func ClientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
