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

// RateLimit bounds the requests of each client: a token bucket per key
// (golang.org/x/time/rate), Rate tokens a second and Burst at most. A
// request that finds its bucket empty is answered 429 with Retry-After,
// and is never queued.
type RateLimit struct {
	Rate  rate.Limit
	Burst int
	// Key names the client of a request; nil: its address (the host of
	// RemoteAddr, never a header a client could forge).
	Key func(*http.Request) string
	// OnLimit, if set, is called for each request refused.
	OnLimit func()
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
	b := &buckets{limit: l, m: map[string]*rate.Limiter{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wait := b.take(l.Key(r), l.now())
		if wait == 0 {
			next.ServeHTTP(w, r)
			return
		}
		if l.OnLimit != nil {
			l.OnLimit()
		}
		secs := int(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", fmt.Sprint(max(secs, 1)))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(w, `{"errors":[{"message":"rate limit exceeded: %g requests a second, %d at once; retry after %d s","extensions":{"code":%q}}]}`+"\n",
			float64(l.Rate), l.Burst, max(secs, 1), codes.RateLimited)
	})
}

type buckets struct {
	limit RateLimit
	mu    sync.Mutex
	m     map[string]*rate.Limiter
}

// take spends a token of key's bucket at now, or says how long until one
// is there.
func (b *buckets) take(key string, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	lim, ok := b.m[key]
	if !ok {
		if len(b.m) >= maxClients {
			b.evict(now)
		}
		lim = rate.NewLimiter(b.limit.Rate, b.limit.Burst)
		b.m[key] = lim
	}
	if lim.AllowN(now, 1) {
		return 0
	}
	r := lim.ReserveN(now, 1)
	defer r.CancelAt(now) // only asked how long: nothing is reserved
	if !r.OK() {
		return time.Second
	}
	return r.DelayFrom(now)
}

// evict makes room for an eighth of maxClients at once, so that a flood of
// new addresses costs a sweep per maxClients/8 of them, not one each: it
// drops the buckets full again (forgetting them changes nothing) among a
// sample, then any, in Go's random map order.
func (b *buckets) evict(now time.Time) {
	target := maxClients - maxClients/8
	looked := 0
	for k, lim := range b.m {
		if len(b.m) <= target || looked == maxClients/4 {
			break
		}
		looked++
		if lim.TokensAt(now) >= float64(b.limit.Burst) {
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
