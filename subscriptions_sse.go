package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/edge"
	"github.com/hbgraph/hbgraph/events"
	"github.com/hbgraph/hbgraph/graph/codes"
	"github.com/hbgraph/hbgraph/graph/jsonpost"
)

// ssePingInterval is how often an idle stream gets a comment line: it
// keeps proxies from closing it, and finds a client gone.
const ssePingInterval = 15 * time.Second

// sseWriteTimeout bounds one write to a stream: a client that reads
// nothing for that long is gone, or a slow consumer.
const sseWriteTimeout = 2 * ssePingInterval

// GraphQL over Server-Sent Events, the graphql-sse protocol's "distinct
// connections" mode: a POST of a subscription with Accept:
// text/event-stream is answered by a stream of `next` events and one
// `complete`. The request goes through the HTTP edge as any other (CORS,
// authentication with its Authorization header and --auth-read, the
// caller's rate), but not through the request timeout or load shedding:
// a stream lasts, as a socket does. Queries and mutations are not served
// here, so nothing escapes those.
//
// gqlgen's transport.SSE is not used: it echoes a body that does not
// decode in its error message, logs through the standard logger, and
// runs any operation outside those bounds.

// isEventStream reports whether r asks for a graphql-sse stream.
func isEventStream(r *http.Request) bool {
	if r.Method != http.MethodPost || !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		return false
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

type sseStreamKey struct{}

// sseStream is one event stream: its request's context before the edge's
// request timeout (its end is the client's going away).
type sseStream struct {
	client context.Context
	conn   events.Conn
}

func sseStreamFrom(ctx context.Context) *sseStream {
	s, _ := ctx.Value(sseStreamKey{}).(*sseStream)
	return s
}

// sseTransport is the gqlgen transport of the requests route sent to the
// stream chain (and of no other: Supports asks for its mark).
type sseTransport struct{ s *subscriptionServer }

var _ graphql.Transport = sseTransport{}

func (sseTransport) Supports(r *http.Request) bool {
	return sseStreamFrom(r.Context()) != nil && isEventStream(r)
}

func (t sseTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	stream := sseStreamFrom(r.Context())
	rc := http.NewResponseController(w)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// Only the limit's error is the client's body being too large; any
		// other (the client went, a broken chunk) is a body not read.
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			jsonpost.RefuseWith(w, r, http.StatusRequestEntityTooLarge, codes.BadUserInput, "the body is over --max-body-bytes")
			return
		}
		t.s.log.Debug().Err(err).Msg("event stream: the request body could not be read")
		jsonpost.RefuseWith(w, r, http.StatusBadRequest, codes.BadUserInput, "the request body could not be read")
		return
	}
	params := &graphql.RawParams{}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(params); err != nil || params.Query == "" && len(params.Extensions) == 0 {
		jsonpost.RefuseWith(w, r, http.StatusBadRequest, codes.BadUserInput, "the body is not a GraphQL request (a JSON object with query, variables, operationName, extensions)")
		return
	}
	start := graphql.Now()
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	// The stream ends when the client goes, the server shuts down, its
	// subscription overflows, or its token expires: not at the request
	// timeout.
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	defer cancel(nil)
	stop := context.AfterFunc(stream.client, func() { cancel(nil) })
	defer stop()
	p := auth.From(ctx)
	stream.conn.Caller = "addr:" + edge.ClientAddress(r)
	if p.Subject != "" {
		stream.conn.Caller = "sub:" + p.Subject
	}
	// A slow consumer's write blocked on the client ends now, not at its
	// timeout; not once the handler returned (the subscription ends a
	// moment after it: the connection may serve another request then).
	var handling sync.Mutex
	returned := false
	defer func() {
		handling.Lock()
		returned = true
		handling.Unlock()
	}()
	stream.conn.Slow = func() {
		cancel(errSlowStream)
		handling.Lock()
		defer handling.Unlock()
		if !returned {
			_ = rc.SetWriteDeadline(time.Now())
		}
	}
	if !p.Expires.IsZero() {
		expiry := time.AfterFunc(time.Until(p.Expires.Add(t.s.leeway)), func() { cancel(errStreamTokenExpired) })
		defer expiry.Stop()
	}
	ctx = events.WithConn(ctx, &stream.conn)
	ctx = withLoaders(ctx, t.s.store, t.s.loaderCfg)

	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs == nil && (opCtx.Operation == nil || opCtx.Operation.Operation != ast.Subscription) {
		errs = gqlerror.List{{Message: "only subscriptions are served as event streams: send queries and mutations as JSON (Accept: application/json)",
			Extensions: map[string]any{"code": codes.BadUserInput}}}
	}
	// The server's read and write timeouts are for requests (the read's
	// would end the stream: net/http watches the connection for the
	// client's going with a read).
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	write := func(s string) bool {
		if context.Cause(ctx) == errSlowStream {
			return false
		}
		_ = rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
		if _, err := io.WriteString(w, s); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write(":\n\n") {
		return
	}
	if errs != nil {
		// graphql-sse: what validation refuses is a next event of the
		// accepted stream, so that a client (EventSource) can read it.
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
		if b, err := json.Marshal(resp); err == nil {
			write("event: next\ndata: " + string(b) + "\n\n")
		}
		write("event: complete\ndata:\n\n")
		return
	}

	ctx = graphql.WithOperationContext(ctx, opCtx)
	// Notify counts the values (and the close) waiting in the
	// subscription's channel: each is read when the read cannot block.
	wake := make(chan struct{}, 1)
	var pending atomic.Int64
	notifier := &events.Notifier{Ready: func() {
		pending.Add(1)
		select {
		case wake <- struct{}{}:
		default:
		}
	}}
	ctx = events.WithNotifier(ctx, notifier)
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	next := func() bool {
		resp := responses(ctx)
		if resp == nil {
			return false
		}
		b, err := json.Marshal(resp)
		if err != nil {
			return false
		}
		return write("event: next\ndata: " + string(b) + "\n\n")
	}
	if !notifier.Claimed() {
		// Refused (a cap, the server shutting down): its errors, then
		// complete.
		for next() {
		}
		write("event: complete\ndata:\n\n")
		return
	}
	ping := time.NewTicker(ssePingInterval)
	defer ping.Stop()
	for {
		select {
		case <-ping.C:
			if !write(":\n\n") {
				return
			}
		case <-wake:
			for n := pending.Swap(0); n > 0; n-- {
				if next() {
					continue
				}
				if cause := context.Cause(ctx); cause == errSlowStream || cause == errStreamTokenExpired {
					b, _ := json.Marshal(graphql.Response{Errors: gqlerror.List{streamEndError(cause)}})
					write("event: next\ndata: " + string(b) + "\n\n")
				}
				write("event: complete\ndata:\n\n")
				return
			}
		}
	}
}

var (
	errSlowStream         = fmt.Errorf("slow consumer")
	errStreamTokenExpired = fmt.Errorf("token expired")
)

// streamEndError is the error a stream ends with when the server ends it.
func streamEndError(cause error) *gqlerror.Error {
	if cause == errStreamTokenExpired {
		return &gqlerror.Error{Message: "unauthenticated: the token expired", Extensions: map[string]any{"code": codes.Unauthenticated}}
	}
	return &gqlerror.Error{Message: "slow consumer: events were not read fast enough", Extensions: map[string]any{"code": codes.RateLimited}}
}
