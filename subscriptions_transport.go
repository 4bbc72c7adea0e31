package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/events"
	"github.com/hbgraph/hbgraph/graph/codes"
)

// graphql-transport-ws close codes beyond RFC 6455's.
const (
	closeNormal          = 1000
	closeInvalidMessage  = 4400
	closeInitTimeout     = 4408
	closeDuplicateID     = 4409
	closeTooManyInitReqs = 4429
	transportWSProtocol  = "graphql-transport-ws"
)

// wsTransport serves graphql-transport-ws (the npm graphql-ws client's
// protocol) itself, and hands the older graphql-ws subprotocol to
// gqlgen's transport (legacy). gqlgen runs a goroutine per subscription,
// blocked on its channel for as long as it lives (8 KB of stack and the
// response chain it holds, some 19 KB per idle subscription); here each
// connection has two goroutines, its reader and its writer, and a
// subscription tells the writer when its channel has something
// (events.Notifier): an idle subscription costs its channel and its
// bus entry only.
type wsTransport struct {
	s            *subscriptionServer
	legacy       transport.Websocket
	impl         transport.WebsocketImplementation
	initTimeout  time.Duration
	pingInterval time.Duration
	readLimit    int64
}

var _ graphql.Transport = wsTransport{}

func (t wsTransport) Supports(r *http.Request) bool { return r.Header.Get("Upgrade") != "" }

// offersSubprotocol reports whether r's upgrade offers subprotocol p.
func offersSubprotocol(r *http.Request, p string) bool {
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for part := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(part) == p {
				return true
			}
		}
	}
	return false
}

func (t wsTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if !offersSubprotocol(r, transportWSProtocol) {
		t.legacy.Do(w, r, exec)
		return
	}
	ws, err := t.impl.Accept(w, r, transport.WebsocketAcceptOptions{ResponseHeader: http.Header{}, Subprotocols: []string{transportWSProtocol}})
	if err != nil {
		// Accept answered the request.
		t.s.log.Debug().Err(err).Msg("subscription socket: upgrade failed")
		return
	}
	if l, ok := ws.(transport.WebsocketReadLimiter); ok && t.readLimit > 0 {
		l.SetReadLimit(t.readLimit)
	}
	c := &wsSession{t: t, ws: ws, conn: wsConnFrom(r.Context()), exec: exec, headers: r.Header,
		ops: map[string]*wsOperation{}, wake: make(chan struct{}, 1)}
	// Not r's context: net/http cancels it when the handler returns,
	// which it does below; the socket's reader ends the session.
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(r.Context()))
	if c.conn != nil {
		c.conn.mu.Lock()
		c.conn.session = c // Shutdown waits for its operations
		c.conn.mu.Unlock()
	}
	if !c.init() {
		c.cancel()
		return
	}
	go c.writer()
	if c.conn == nil || c.conn.ended == nil {
		c.read()
		return
	}
	// The handler returns, and with it the HTTP server's goroutine of the
	// connection, whose stack, some 16 KB deep in the server's and the
	// middleware's frames, would stay for the socket's life: a goroutine
	// of its own reads, from a shallow stack.
	c.conn.detached.Store(true)
	go func() {
		defer c.conn.ended()
		c.read()
	}()
}

// wsSession is one graphql-transport-ws connection.
type wsSession struct {
	t       wsTransport
	ws      transport.WebsocketConn
	conn    *wsConn // the server's (nil in no test of ours)
	exec    graphql.GraphExecutor
	headers http.Header
	ctx     context.Context // the connection's, authenticated once initialised
	cancel  context.CancelFunc

	writeMu sync.Mutex

	mu     sync.Mutex
	ops    map[string]*wsOperation
	queue  []*wsOperation // live subscriptions with values to send
	ending int            // operations gone from ops whose complete is being written
	pong   bool           // a pong came since the last ping
	closed bool
	wake   chan struct{}
}

// wsOperation is one operation (subscribe message) of a session.
type wsOperation struct {
	id     string
	cancel context.CancelFunc

	// sending is held from the check that op is not done to the end of
	// its send, and by finish: once the client's complete is handled no
	// response of op follows (its id may be reused at once).
	sending sync.Mutex

	// A live subscription: the writer calls responses once per Notify,
	// on ctx (set before live, under the session's mu).
	ctx       context.Context
	responses graphql.ResponseHandler
	live      bool
	pending   int  // Notifies not yet answered
	queued    bool // in the session's queue
	done      bool
}

// operations is the number of the session's operations not yet over,
// their complete written.
func (c *wsSession) operations() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ops) + c.ending
}

// wsMessage is a graphql-transport-ws message.
type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

func (c *wsSession) next() (wsMessage, error) {
	_, r, err := c.ws.NextReader()
	if err != nil {
		return wsMessage{}, err
	}
	var m wsMessage
	if err := json.NewDecoder(r).Decode(&m); err != nil || m.Type == "" {
		return wsMessage{}, errInvalidWSMessage
	}
	return m, nil
}

var errInvalidWSMessage = errors.New("invalid message")

func (c *wsSession) write(m wsMessage) {
	c.writeMu.Lock()
	err := c.ws.WriteJSON(m)
	c.writeMu.Unlock()
	if err != nil {
		c.t.s.log.Debug().Err(err).Msg("subscription socket: write")
	}
}

// close closes the socket with code (once) and ends every operation.
func (c *wsSession) close(code int, reason string) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	if c.conn != nil {
		c.conn.closeWith(code, reason)
	} else {
		_ = c.ws.WriteClose(code, reason)
	}
	c.cancel()
	_ = c.ws.Close()
}

// init waits for connection_init (within initTimeout, else 4408) and
// authenticates the connection with it. Before it, a ping is answered, a
// pong or a complete ignored, and a subscribe closes the socket with 4401,
// as graphql-transport-ws asks.
func (c *wsSession) init() bool {
	timeout := time.AfterFunc(c.t.initTimeout, func() { c.close(closeInitTimeout, "connection initialisation timeout") })
	var m wsMessage
	for {
		var err error
		m, err = c.next()
		switch {
		case err == nil && m.Type == "ping":
			c.write(wsMessage{Type: "pong", Payload: m.Payload})
			continue
		case err == nil && (m.Type == "pong" || m.Type == "complete"):
			continue
		}
		if !timeout.Stop() {
			return false
		}
		switch {
		case errors.Is(err, errInvalidWSMessage):
			c.close(closeInvalidMessage, "invalid message")
			return false
		case err != nil:
			c.close(closeNormal, "terminated")
			return false
		case m.Type == "subscribe":
			c.close(closeUnauthorized, "unauthorized: subscribe before connection_ack")
			return false
		case m.Type != "connection_init":
			c.close(closeInvalidMessage, "invalid message type")
			return false
		}
		break
	}
	var payload transport.InitPayload
	if len(m.Payload) > 0 && !bytes.Equal(m.Payload, []byte("null")) {
		if err := json.Unmarshal(m.Payload, &payload); err != nil {
			c.close(closeInvalidMessage, "invalid connection_init payload")
			return false
		}
	}
	ctx, _, err := c.t.s.init(c.ctx, payload)
	if err != nil {
		code, reason := closeUnauthorized, err.Error()
		if re := (*wsRefusal)(nil); errors.As(err, &re) {
			code, reason = re.code, re.reason
		}
		c.close(code, reason)
		return false
	}
	c.ctx, c.cancel = context.WithCancel(ctx)
	c.write(wsMessage{Type: "connection_ack"})
	return true
}

// read handles the client's messages until the socket closes.
func (c *wsSession) read() {
	defer c.close(closeNormal, "terminated")
	if d, ok := c.ws.(transport.WebsocketReadDeadliner); ok && c.t.pingInterval > 0 {
		// A client must answer the server's pings.
		_ = d.SetReadDeadline(time.Now().Add(2 * c.t.pingInterval))
	}
	for {
		start := graphql.Now()
		m, err := c.next()
		if errors.Is(err, errInvalidWSMessage) {
			c.close(closeInvalidMessage, "invalid message")
			return
		}
		if err != nil {
			return
		}
		switch m.Type {
		case "subscribe":
			c.subscribe(start, m)
		case "complete":
			c.stop(m.ID)
		case "ping":
			c.write(wsMessage{Type: "pong", Payload: m.Payload})
		case "pong":
			c.mu.Lock()
			c.pong = true
			c.mu.Unlock()
			if d, ok := c.ws.(transport.WebsocketReadDeadliner); ok {
				_ = d.SetReadDeadline(time.Time{})
			}
		case "connection_init":
			c.close(closeTooManyInitReqs, "too many initialisation requests")
			return
		default:
			c.close(closeInvalidMessage, "invalid message type")
			return
		}
	}
}

// writer pings and sends the live subscriptions' values as they come.
func (c *wsSession) writer() {
	var tick <-chan time.Time
	if c.t.pingInterval > 0 {
		t := time.NewTicker(c.t.pingInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-tick:
			c.write(wsMessage{Type: "ping"})
			c.mu.Lock()
			if c.pong {
				if d, ok := c.ws.(transport.WebsocketReadDeadliner); ok {
					_ = d.SetReadDeadline(time.Now().Add(2 * c.t.pingInterval))
				}
			}
			c.pong = false
			c.mu.Unlock()
		case <-c.wake:
			c.drain()
		}
	}
}

// notify is a live subscription's Notify: one more value (or its end)
// waits in its channel.
func (c *wsSession) notify(op *wsOperation) {
	c.mu.Lock()
	op.pending++
	c.enqueueLocked(op)
	c.mu.Unlock()
}

func (c *wsSession) enqueueLocked(op *wsOperation) {
	if !op.live || op.queued || op.pending == 0 {
		return
	}
	op.queued = true
	c.queue = append(c.queue, op)
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// drain answers the queued subscriptions: one response per Notify, none
// of which blocks (its value is in the channel, or the channel is closed).
func (c *wsSession) drain() {
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.queue = nil // let a burst's backing array go
			c.mu.Unlock()
			return
		}
		op := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		op.queued = false
		n := op.pending
		op.pending = 0
		c.mu.Unlock()
		for range n {
			if !c.respond(op) {
				break
			}
		}
	}
}

// respond sends op's next response: false when op is over.
func (c *wsSession) respond(op *wsOperation) (more bool) {
	op.sending.Lock()
	defer op.sending.Unlock()
	if c.doneLocked(op) {
		return false
	}
	defer func() {
		if r := recover(); r != nil {
			c.t.s.log.Error().Interface("panic", r).Msg("subscription: event not sent")
			c.sendErrors(op.id, internalError("the event could not be sent"))
			c.endSending(op, false) // nothing follows an error
			more = false
		}
	}()
	resp := op.responses(op.ctx)
	if resp == nil {
		c.endSending(op, true)
		return false
	}
	c.sendResponse(op.id, resp)
	return true
}

// doneLocked reports whether op ended; the caller holds op.sending.
func (c *wsSession) doneLocked(op *wsOperation) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return op.done
}

// finish ends op (once), with a complete message when complete, after
// any response of op being sent.
func (c *wsSession) finish(op *wsOperation, complete bool) {
	op.sending.Lock()
	defer op.sending.Unlock()
	c.endSending(op, complete)
}

// endSending is finish for a caller holding op.sending.
func (c *wsSession) endSending(op *wsOperation, complete bool) {
	c.mu.Lock()
	if op.done {
		c.mu.Unlock()
		return
	}
	op.done = true
	if c.ops[op.id] == op {
		delete(c.ops, op.id) // its id may be used again once complete is sent
	}
	if complete {
		c.ending++ // a shutdown waits for the complete to be written
	}
	c.mu.Unlock()
	op.cancel()
	if complete {
		c.write(wsMessage{ID: op.id, Type: "complete"})
		c.mu.Lock()
		c.ending--
		c.mu.Unlock()
	}
}

// stop is the client's complete: the operation ends, and nothing of it
// is sent after (not even complete: the protocol forbids the echo).
func (c *wsSession) stop(id string) {
	c.mu.Lock()
	op := c.ops[id]
	c.mu.Unlock()
	if op != nil {
		c.finish(op, false)
	}
}

// internalError is the error of an operation that failed on the server's
// side (a panic, logged): no detail of it.
func internalError(msg string) *gqlerror.Error {
	return &gqlerror.Error{Message: "internal error: " + msg, Extensions: map[string]any{"code": codes.Internal}}
}

func (c *wsSession) sendResponse(id string, resp *graphql.Response) {
	b, err := json.Marshal(resp)
	if err != nil {
		c.t.s.log.Error().Err(err).Msg("subscription: response not encoded")
		return
	}
	c.write(wsMessage{ID: id, Type: "next", Payload: b})
}

// sendUnlessDone sends resp unless op ended (the client's complete).
func (c *wsSession) sendUnlessDone(op *wsOperation, resp *graphql.Response) bool {
	op.sending.Lock()
	defer op.sending.Unlock()
	if c.doneLocked(op) {
		return false
	}
	c.sendResponse(op.id, resp)
	return true
}

func (c *wsSession) sendErrors(id string, errs ...*gqlerror.Error) {
	b, err := json.Marshal(errs)
	if err != nil {
		return
	}
	c.write(wsMessage{ID: id, Type: "error", Payload: b})
}

// subscribe starts the operation of a subscribe message, as gqlgen's
// transport does; a subscription goes live (driven by its Notify), any
// other operation runs in a goroutine until its last response.
func (c *wsSession) subscribe(start time.Time, m wsMessage) {
	if m.ID == "" {
		c.close(closeInvalidMessage, "subscribe without an id")
		return
	}
	c.mu.Lock()
	_, dup := c.ops[m.ID]
	c.mu.Unlock()
	if dup {
		c.close(closeDuplicateID, truncate(fmt.Sprintf("subscriber for %s already exists", m.ID), 120))
		return
	}
	ctx := graphql.StartOperationTrace(c.ctx)
	params := &graphql.RawParams{}
	dec := json.NewDecoder(bytes.NewReader(m.Payload))
	dec.UseNumber()
	if err := dec.Decode(params); err != nil {
		// An error message ends the operation: no complete follows.
		c.sendErrors(m.ID, &gqlerror.Error{Message: "the subscribe message's payload is not a GraphQL request (a JSON object with query, variables, operationName, extensions)",
			Extensions: map[string]any{"code": codes.BadUserInput}})
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	params.Headers = c.headers

	rc, errs := c.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		resp := c.exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs)
		if errcode.GetErrorKind(errs) == errcode.KindProtocol {
			c.sendErrors(m.ID, resp.Errors...) // no complete after an error
			return
		}
		c.sendResponse(m.ID, &graphql.Response{Errors: errs})
		c.write(wsMessage{ID: m.ID, Type: "complete"})
		return
	}
	ctx = graphql.WithOperationContext(ctx, rc)
	ctx, cancel := context.WithCancel(ctx)
	op := &wsOperation{id: m.ID, cancel: cancel}
	var notifier *events.Notifier
	if rc.Operation != nil && rc.Operation.Operation == ast.Subscription {
		notifier = &events.Notifier{Ready: func() { c.notify(op) }}
		ctx = events.WithNotifier(ctx, notifier)
	}
	c.mu.Lock()
	c.ops[m.ID] = op
	c.mu.Unlock()

	var responses graphql.ResponseHandler
	func() {
		defer func() {
			if r := recover(); r != nil {
				c.t.s.log.Error().Interface("panic", r).Msg("subscription: operation failed")
				responses = graphql.OneShot(&graphql.Response{Errors: gqlerror.List{internalError("the operation failed")}})
			}
		}()
		responses, ctx = c.exec.DispatchOperation(ctx, rc)
	}()
	if notifier != nil && notifier.Claimed() {
		c.mu.Lock()
		op.ctx, op.responses, op.live = ctx, responses, true
		c.enqueueLocked(op) // values that came while it started
		c.mu.Unlock()
		return
	}
	go func() {
		complete := true
		defer func() { c.finish(op, complete) }()
		defer func() {
			if r := recover(); r != nil {
				c.t.s.log.Error().Interface("panic", r).Msg("subscription: operation failed")
				c.sendErrors(op.id, internalError("the operation failed"))
				complete = false // nothing follows an error
			}
		}()
		for {
			resp := responses(ctx)
			if resp == nil {
				return
			}
			if !c.sendUnlessDone(op, resp) {
				return
			}
		}
	}()
}
