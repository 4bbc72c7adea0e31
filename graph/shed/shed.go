// Package shed turns load away instead of queueing it.
//
// Three bounds, each checked without waiting: the number of GraphQL
// requests in flight, the sum of the complexity of the operations
// executing, and the bytes of the responses they hold (responses.go, which
// also bounds one response's size). A request over any is answered at
// once with 503 Service Unavailable, Retry-After and the code UNAVAILABLE,
// so a burst of expensive queries
// costs the server a refusal each rather than a queue of work that would
// finish past every client's timeout, and cheap queries keep being served
// beside the few expensive ones that fit.
//
// A client refused for complexity that sends the same request again at
// once (a load tool, a hostile client: neither reads Retry-After) would
// make the server decode, parse and price it again just to refuse it. So
// while the complexity executing is past half its limit, the request's
// bytes are fingerprinted, and one whose fingerprint was refused for
// complexity within the Retry-After period is refused before any of that.
package shed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/graph/codes"
)

// Reasons a request is shed, as reported to OnShed.
const (
	ReasonInFlight   = "in_flight"
	ReasonComplexity = "complexity"
	// ReasonRepeated: the same request was refused for complexity less
	// than Retry-After ago, and the complexity executing is still high.
	ReasonRepeated = "repeated"
)

// maxRemembered bounds the fingerprints of refused requests kept; past it
// they are all forgotten (a client varying its requests pays the full
// price of a refusal, which is bounded anyway).
const maxRemembered = 4096

// Limiter bounds requests in flight and the complexity executing at once.
type Limiter struct {
	maxInFlight   int64
	maxComplexity int64
	retryAfter    string
	retryPeriod   time.Duration
	// OnShed, if set, is called once for every request shed.
	OnShed func(reason string)

	// Response bytes (responses.go): 0 is no bound.
	maxResponse         int64
	maxResponseInFlight int64

	inFlight      atomic.Int64
	complexity    atomic.Int64
	responseBytes atomic.Int64

	seed    maphash.Seed
	mu      sync.Mutex
	refused map[uint64]time.Time // fingerprint -> when it may be tried again
}

// New returns a Limiter for at most maxInFlight requests and a total
// complexity of maxComplexity executing at once; refused clients are told
// to retry after retryAfter (rounded up to whole seconds).
func New(maxInFlight, maxComplexity int, retryAfter time.Duration) *Limiter {
	secs := max(1, int((retryAfter+time.Second-1)/time.Second))
	return &Limiter{
		maxInFlight:   int64(maxInFlight),
		maxComplexity: int64(maxComplexity),
		retryAfter:    strconv.Itoa(secs),
		retryPeriod:   time.Duration(secs) * time.Second,
		seed:          maphash.MakeSeed(),
		refused:       make(map[uint64]time.Time),
	}
}

// InFlight returns the requests and the complexity in flight now.
func (l *Limiter) InFlight() (requests, complexity int64) {
	return l.inFlight.Load(), l.complexity.Load()
}

type ticketKey struct{}

// ticket is a request's share of the limits, released when it ends.
type ticket struct {
	l           *Limiter
	complexity  int64
	fingerprint uint64 // of the request's bytes, if hasPrint
	hasPrint    bool

	// mu guards what gqlgen's resolvers, which run concurrently, charge.
	mu      sync.Mutex
	shed    bool            // refused for complexity or response bytes in flight: 503
	bytes   int64           // response bytes charged to l.responseBytes
	pending int64           // response bytes counted, not yet charged
	refusal *gqlerror.Error // the response was refused: too large, or shed
}

func (t *ticket) isShed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.shed
}

// Middleware admits a request if fewer than maxInFlight are in flight,
// and answers 503 at once otherwise. It also gives the request the ticket
// Extension charges the operation's complexity to, and releases both when
// the request ends.
func (l *Limiter) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l.inFlight.Add(1) > l.maxInFlight {
			l.inFlight.Add(-1)
			l.refuse(w, ReasonInFlight, fmt.Sprintf("server busy: %d requests in flight; retry after %s s", l.maxInFlight, l.retryAfter))
			return
		}
		t := &ticket{l: l}
		defer func() {
			l.complexity.Add(-t.complexity)
			t.mu.Lock()
			l.responseBytes.Add(-t.bytes)
			t.mu.Unlock()
			l.inFlight.Add(-1)
		}()
		if 2*l.complexity.Load() > l.maxComplexity {
			t.fingerprint, t.hasPrint = l.fingerprint(r)
			if t.hasPrint && l.refusedRecently(t.fingerprint) {
				l.refuse(w, ReasonRepeated, fmt.Sprintf("server busy: this request was refused for complexity less than %s s ago; retry after %s s", l.retryAfter, l.retryAfter))
				return
			}
		}
		ctx := context.WithValue(r.Context(), ticketKey{}, t)
		next.ServeHTTP(&shedWriter{ResponseWriter: w, t: t, retryAfter: l.retryAfter}, r.WithContext(ctx))
	})
}

// fingerprint hashes what identifies r's operation: its URL for a GET, its
// body otherwise. It reads the body and puts back a reader of what it read,
// followed by the error reading stopped at, if any.
func (l *Limiter) fingerprint(r *http.Request) (uint64, bool) {
	if r.Method == http.MethodGet {
		return maphash.String(l.seed, r.URL.RawQuery), true
	}
	if r.Body == nil {
		return 0, false
	}
	body, err := io.ReadAll(r.Body)
	var rest io.Reader = bytes.NewReader(body)
	if err != nil {
		rest = io.MultiReader(rest, errReader{err})
	}
	r.Body = io.NopCloser(rest)
	return maphash.Bytes(l.seed, body), err == nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// refusedRecently reports whether a request of this fingerprint was
// refused for complexity less than the Retry-After period ago.
func (l *Limiter) refusedRecently(fp uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	until, ok := l.refused[fp]
	return ok && time.Now().Before(until)
}

// rememberRefused records that a request of this fingerprint was refused
// for complexity now.
func (l *Limiter) rememberRefused(fp uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.refused) >= maxRemembered {
		clear(l.refused)
	}
	l.refused[fp] = time.Now().Add(l.retryPeriod)
}

func (l *Limiter) refuse(w http.ResponseWriter, reason, msg string) {
	if l.OnShed != nil {
		l.OnShed(reason)
	}
	w.Header().Set("Retry-After", l.retryAfter)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	b, _ := json.Marshal(map[string]any{
		"errors": []map[string]any{{"message": msg, "extensions": map[string]any{"code": codes.Unavailable}}},
	})
	_, _ = w.Write(b)
}

// Admit charges an operation's complexity to its request, refusing it if
// the complexity executing would then exceed the limit. An operation
// alone is always admitted, so a limit below the largest complexity
// allowed cannot starve it. Outside Middleware it admits everything.
func (l *Limiter) Admit(ctx context.Context, complexity int) *gqlerror.Error {
	t, ok := ctx.Value(ticketKey{}).(*ticket)
	if !ok || complexity <= 0 {
		return nil
	}
	c := int64(complexity)
	if now := l.complexity.Add(c); now > l.maxComplexity && now != c {
		l.complexity.Add(-c)
		t.mu.Lock()
		t.shed = true
		t.mu.Unlock()
		if t.hasPrint {
			l.rememberRefused(t.fingerprint)
		}
		if l.OnShed != nil {
			l.OnShed(ReasonComplexity)
		}
		err := gqlerror.Errorf("server busy: operations of complexity %d executing at once, the limit is %d; retry after %s s",
			now-c, l.maxComplexity, l.retryAfter)
		err.Extensions = map[string]any{"code": codes.Unavailable}
		return err
	}
	t.complexity += c
	return nil
}

// Extension is a gqlgen extension that admits each operation by the
// complexity complexityOf gives it. Install it after the extensions that
// refuse operations over the per-operation limits.
func (l *Limiter) Extension(complexityOf func(context.Context, *graphql.OperationContext) int) graphql.HandlerExtension {
	return extension{l: l, complexityOf: complexityOf}
}

type extension struct {
	l            *Limiter
	complexityOf func(context.Context, *graphql.OperationContext) int
}

var (
	_ graphql.HandlerExtension        = extension{}
	_ graphql.OperationContextMutator = extension{}
)

func (extension) ExtensionName() string                   { return "LoadShedding" }
func (extension) Validate(graphql.ExecutableSchema) error { return nil }
func (e extension) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	return e.l.Admit(ctx, e.complexityOf(ctx, oc))
}

// shedWriter turns the response of an operation refused for complexity
// into a 503 with Retry-After, whatever status the transport chose.
type shedWriter struct {
	http.ResponseWriter
	t           *ticket
	retryAfter  string
	wroteHeader bool
}

func (w *shedWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	if w.t.isShed() {
		w.Header().Set("Retry-After", w.retryAfter)
		code = http.StatusServiceUnavailable
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *shedWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *shedWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
