package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	coderws "github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"golang.org/x/time/rate"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/edge"
	"github.com/hbgraph/hbgraph/events"
	"github.com/hbgraph/hbgraph/graph/codes"
	"github.com/hbgraph/hbgraph/graph/jsonpost"
	"github.com/hbgraph/hbgraph/graph/resolvers"
	"github.com/hbgraph/hbgraph/loaders"
	"github.com/hbgraph/hbgraph/store"
)

// Close codes of a subscription socket beyond the protocol's own: 4401
// is graphql-ws's Unauthorized; the slow consumer's is ours.
const (
	closeUnauthorized = 4401
	closeSlowConsumer = 4008
	closeGoingAway    = 1001
)

// Keep-alive and the wait for connection_init: graphql-transport-ws's
// ping every wsPingInterval, and a connection that sends no pong within
// two of them is closed.
const (
	wsPingInterval = 15 * time.Second
	wsInitTimeout  = 10 * time.Second
)

// subscriptionServer serves GraphQL over WebSocket (graphql-transport-ws)
// on /query beside the HTTP transports: each connection authenticated
// once, in connection_init (or by its upgrade request's Authorization),
// its subscriptions fed by the events bus.
type subscriptionServer struct {
	bus            *events.Bus
	log            zerolog.Logger
	verifier       edge.TokenVerifier // nil: authentication off
	readsNeedToken bool
	leeway         time.Duration
	origins        []string // --cors-origins
	store          *store.Store
	loaderCfg      loaders.Config

	upgradeLimit edge.RateLimit // per client address, with --rate-limit

	mu    sync.Mutex
	conns map[*wsConn]struct{}

	connections prometheus.Gauge
	refused     *prometheus.CounterVec
}

// newSubscriptions adds the WebSocket transport to gql (first: gqlgen
// picks the first transport that supports a request, and GET would take
// the upgrade) and the per-event loaders.
func newSubscriptions(gql *handler.Server, bus *events.Bus, cfg config, log zerolog.Logger, sec security, st *store.Store, loaderCfg loaders.Config, reg prometheus.Registerer) *subscriptionServer {
	s := &subscriptionServer{bus: bus, log: log, readsNeedToken: cfg.authRead == "required", leeway: cfg.auth.Leeway,
		origins: cfg.cors.parsed.Origins, store: st, loaderCfg: loaderCfg, conns: map[*wsConn]struct{}{}}
	if sec.verifier != nil {
		s.verifier = sec.verifier
	}
	s.connections = prometheus.NewGauge(prometheus.GaugeOpts{Name: "hbgraph_subscription_connections", Help: "Open GraphQL over WebSocket connections."})
	s.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hbgraph_subscription_connections_refused_total", Help: "WebSocket connections refused, by reason: origin, unauthenticated, rate_limited.",
	}, []string{"reason"})
	if reg != nil {
		reg.MustRegister(s.connections, s.refused)
	}
	s.upgradeLimit = edge.RateLimit{Rate: rate.Limit(cfg.rateLimit), Burst: cfg.rateBurstOrDefault(),
		OnLimit: func(*http.Request) { s.refused.WithLabelValues("rate_limited").Inc() }}
	readLimit := cfg.maxBodyBytes
	// The Origin is checked before the upgrade (checkOrigin), against
	// --cors-origins rather than coder/websocket's host patterns.
	impl := wsImplementation{inner: transport.CoderWebsocketImplementation{AcceptOptions: coderws.AcceptOptions{InsecureSkipVerify: true}}}
	gql.AddTransport(wsTransport{s: s, impl: impl, initTimeout: wsInitTimeout, pingInterval: wsPingInterval, readLimit: readLimit,
		// The older graphql-ws subprotocol, served by gqlgen's transport.
		legacy: transport.Websocket{
			Implementation:   impl,
			InitFunc:         s.init,
			InitTimeout:      wsInitTimeout,
			PingPongInterval: wsPingInterval,
			// The older graphql-ws subprotocol's keep-alive ("ka").
			KeepAlivePingInterval: wsPingInterval,
			PayloadReadLimit:      &readLimit,
			ErrorFunc: func(ctx context.Context, err error) {
				log.Debug().Err(err).Msg("subscription socket")
			},
		}})
	gql.AddTransport(sseTransport{s}) // route's event streams only
	gql.Use(freshLoaders{s})
	gql.Use(subscriptionsOverWebSocket{})
	return s
}

// subscriptionsOverWebSocket refuses a subscription sent over HTTP: the
// HTTP transports answer one response, and gqlgen's executor waited
// for an event until the request timed out, answering INTERNAL. It also
// refuses a query or a mutation sent over a socket (either subprotocol):
// an upgrade skips the HTTP edge's request timeout, --max-in-flight and
// --rate-limit, which bound those, as an event stream refuses them.
type subscriptionsOverWebSocket struct{}

var _ graphql.OperationContextMutator = subscriptionsOverWebSocket{}

func (subscriptionsOverWebSocket) ExtensionName() string                   { return "SubscriptionsOverWebSocket" }
func (subscriptionsOverWebSocket) Validate(graphql.ExecutableSchema) error { return nil }
func (subscriptionsOverWebSocket) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	if oc.Operation.Operation != ast.Subscription {
		if wsConnFrom(ctx) == nil {
			return nil
		}
		return &gqlerror.Error{Message: "only subscriptions are served over WebSocket: send queries and mutations as HTTP requests (POST /query)",
			Extensions: map[string]any{"code": codes.BadUserInput}}
	}
	if wsConnFrom(ctx) != nil || sseStreamFrom(ctx) != nil {
		return nil
	}
	return &gqlerror.Error{Message: "subscriptions are served over WebSocket (the graphql-transport-ws protocol) on /query, or as Server-Sent Events (graphql-sse: Accept: text/event-stream), not as one HTTP response",
		Extensions: map[string]any{"code": codes.BadUserInput}}
}

// wsConn is one WebSocket connection.
type wsConn struct {
	id          string
	client      string
	upgradeAuth []string // the upgrade request's Authorization
	events      events.Conn

	mu      sync.Mutex
	ws      transport.WebsocketConn
	session *wsSession // graphql-transport-ws's; nil: the older subprotocol
	closed  bool
	expiry  *time.Timer

	// ended is serve's end of the connection; detached: the transport
	// calls it (its handler returned, the socket served on).
	ended    func()
	detached atomic.Bool
}

type wsConnKey struct{}

func wsConnFrom(ctx context.Context) *wsConn {
	c, _ := ctx.Value(wsConnKey{}).(*wsConn)
	return c
}

// closeWith closes the socket with code (once).
func (c *wsConn) closeWith(code int, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.ws == nil {
		return
	}
	c.closed = true
	if c.expiry != nil {
		c.expiry.Stop()
	}
	_ = c.ws.WriteClose(code, reason)
}

// wsImplementation is gqlgen's coder/websocket adapter, keeping each
// accepted socket in its wsConn so the server can close it with its own
// codes (an expired token, a slow consumer, shutdown).
type wsImplementation struct {
	inner transport.CoderWebsocketImplementation
}

func (i wsImplementation) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	ws, err := i.inner.Accept(w, r, opts)
	if err == nil {
		if c := wsConnFrom(r.Context()); c != nil {
			c.mu.Lock()
			c.ws = ws
			c.mu.Unlock()
		}
	}
	return ws, err
}

// isWebSocket reports whether r asks to upgrade to WebSocket.
func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// route sends WebSocket upgrades to the subscription server and the rest
// to next. An upgrade skips next's middleware on purpose: its request
// timeout and load shedding are for requests, not for connections that
// last, and its token is checked in connection_init.
//
// With --rate-limit, each client address may open sockets at that rate:
// a socket's token is checked when it opens, so this bounds the tokens a
// client can make hbgraph check, as the refusals' bucket does for HTTP.
//
// A graphql-sse event stream (POST, Accept: text/event-stream) goes to
// streams: the HTTP edge without the request timeout and load shedding
// (see subscriptions_sse.go), after the same Origin check as a socket.
func (s *subscriptionServer) route(gql http.Handler, next, streams http.Handler) http.Handler {
	upgrades := s.upgradeLimit.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, gql) }))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isEventStream(r) {
			if !s.originAllowed(r) {
				s.refused.WithLabelValues("origin").Inc()
				jsonpost.RefuseWith(w, r, http.StatusForbidden, codes.Forbidden, "this page's origin may not open an event stream here (--cors-origins)")
				return
			}
			streams.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sseStreamKey{}, &sseStream{client: r.Context()})))
			return
		}
		if r.Header.Get("Upgrade") == "" {
			next.ServeHTTP(w, r)
			return
		}
		upgrades.ServeHTTP(w, r)
	})
}

func (s *subscriptionServer) serve(w http.ResponseWriter, r *http.Request, gql http.Handler) {
	id := requestID(w, r)
	client := edge.ClientAddress(r)
	if !isWebSocket(r) || r.Method != http.MethodGet {
		jsonpost.RefuseWith(w, r, http.StatusBadRequest, codes.BadUserInput, "only a WebSocket upgrade (GET, Upgrade: websocket) is served here")
		return
	}
	if !s.originAllowed(r) {
		s.refused.WithLabelValues("origin").Inc()
		s.log.Info().Str("request_id", id).Str("client", client).Str("origin", truncate(r.Header.Get("Origin"), maxLoggedOperation)).Msg("subscription socket refused: origin not in --cors-origins")
		jsonpost.RefuseWith(w, r, http.StatusForbidden, codes.Forbidden, "this page's origin may not open a socket here (--cors-origins)")
		return
	}
	c := &wsConn{id: id, client: client, upgradeAuth: r.Header.Values("Authorization")}
	c.events.Caller = "addr:" + client
	c.events.Slow = func() { c.closeWith(closeSlowConsumer, "slow consumer: events were not read fast enough") }
	ctx := context.WithValue(r.Context(), wsConnKey{}, c)
	ctx = events.WithConn(ctx, &c.events)
	ctx = withLoaders(ctx, s.store, s.loaderCfg)

	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	s.connections.Inc()
	start := time.Now()
	c.ended = sync.OnceFunc(func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.connections.Dec()
		c.mu.Lock()
		c.closed = true
		if c.expiry != nil {
			c.expiry.Stop()
		}
		c.mu.Unlock()
		s.log.Info().Str("request_id", id).Str("client", client).Float64("duration_ms", milliseconds(time.Since(start))).Msg("subscription socket closed")
	})
	s.log.Info().Str("request_id", id).Str("client", client).Msg("subscription socket opened")
	gql.ServeHTTP(w, r.WithContext(ctx))
	if !c.detached.Load() {
		c.ended()
	}
}

// originAllowed: a socket without Origin is not a browser's; a browser's
// comes from this server's own pages (GraphiQL) or from --cors-origins.
func (s *subscriptionServer) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	for _, o := range s.origins {
		if o == "*" || strings.EqualFold(o, origin) {
			return true
		}
	}
	host, ok := strings.CutPrefix(origin, "http://")
	if !ok {
		host, ok = strings.CutPrefix(origin, "https://")
	}
	return ok && strings.EqualFold(host, r.Host)
}

// init authenticates a connection from connection_init's payload
// (Authorization) or its upgrade request's header, as an HTTP request
// is: a token that does not verify, or none with --auth-read=required,
// closes the socket with 4401; a valid token's expiry closes it then.
func (s *subscriptionServer) init(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	c := wsConnFrom(ctx)
	if s.verifier == nil {
		return auth.With(ctx, auth.Everyone), nil, nil
	}
	header := []string{}
	if v := payload.Authorization(); v != "" {
		header = []string{v}
	} else if c != nil {
		header = c.upgradeAuth
	}
	if len(header) == 0 {
		if s.readsNeedToken {
			return s.refuse(ctx, "missing", "authentication required: send Authorization: Bearer <token> in connection_init's payload")
		}
		return auth.With(ctx, auth.Principal{}), nil, nil
	}
	token, ok := edge.Bearer(header)
	if !ok {
		return s.refuse(ctx, "malformed", "Authorization must be one \"Bearer <token>\"")
	}
	p, err := s.verifier.Verify(ctx, token)
	if err != nil {
		msg := "the token does not verify"
		if te := (*auth.TokenError)(nil); errors.As(err, &te) {
			msg = te.Message
		}
		return s.refuse(ctx, "invalid", msg)
	}
	if c != nil {
		if p.Subject != "" {
			c.events.Caller = "sub:" + p.Subject
		}
		if !p.Expires.IsZero() {
			c.mu.Lock()
			c.expiry = time.AfterFunc(time.Until(p.Expires.Add(s.leeway)), func() {
				s.log.Info().Str("request_id", c.id).Str("client", c.client).Msg("subscription socket closed: token expired")
				c.closeWith(closeUnauthorized, "unauthenticated: the token expired")
			})
			c.mu.Unlock()
		}
	}
	return auth.With(ctx, p), nil, nil
}

func (s *subscriptionServer) refuse(ctx context.Context, reason, message string) (context.Context, *transport.InitPayload, error) {
	s.refused.WithLabelValues("unauthenticated").Inc()
	id, client := "", ""
	if c := wsConnFrom(ctx); c != nil {
		id, client = c.id, c.client
	}
	s.log.Info().Str("request_id", id).Str("client", client).Str("refused", reason).Msg("subscription socket refused: unauthenticated")
	message = "unauthenticated: " + message
	if len(message) > 120 { // a close frame's reason is at most 123 bytes
		message = truncate(message, 120)
	}
	ctx = transport.WithWebsocketCloseCode(ctx, closeUnauthorized)
	ctx = transport.AppendCloseReason(ctx, message)
	return ctx, nil, &wsRefusal{code: closeUnauthorized, reason: message}
}

// wsRefusal is init's refusal of a connection: the socket is closed with
// code and reason (gqlgen's transport reads them from the context).
type wsRefusal struct {
	code   int
	reason string
}

func (e *wsRefusal) Error() string { return e.reason }

// Shutdown completes every subscription (the bus ends them: each gets
// its events left and complete), then closes every socket with 1001,
// waiting for them until ctx is done.
func (s *subscriptionServer) Shutdown(ctx context.Context) {
	s.bus.Close()
	wait := func(done func() bool) {
		for !done() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	// The completes are written by each socket's writer once it sent the
	// events before them: a graphql-transport-ws session is done when it
	// has no operation left. The bus's count drops when it closes the
	// channels, before that: it is all there is to wait for with the older
	// subprotocol, whose completes gqlgen's goroutines write a moment after.
	legacy := false
	wait(func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for c := range s.conns {
			c.mu.Lock()
			session := c.session
			c.mu.Unlock()
			if session == nil {
				legacy = true
				if c.events.Active() > 0 {
					return false
				}
			} else if session.operations() > 0 {
				return false
			}
		}
		return true
	})
	if legacy {
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	s.mu.Lock()
	for c := range s.conns {
		c.closeWith(closeGoingAway, "server shutting down")
	}
	s.mu.Unlock()
	wait(func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.conns) == 0
	})
}

// freshLoaders gives each response of a WebSocket operation loaders of
// its own: a connection lives for hours, and a subscription's events must
// not be answered from what an earlier event read.
type freshLoaders struct{ s *subscriptionServer }

var _ graphql.ResponseInterceptor = freshLoaders{}

func (freshLoaders) ExtensionName() string                   { return "SubscriptionLoaders" }
func (freshLoaders) Validate(graphql.ExecutableSchema) error { return nil }
func (f freshLoaders) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if wsConnFrom(ctx) != nil || sseStreamFrom(ctx) != nil {
		ctx = withLoaders(ctx, f.s.store, f.s.loaderCfg)
	}
	return next(ctx)
}

// withLoaders returns ctx with loaders of its own, as loaders.Middleware
// gives each HTTP request.
func withLoaders(ctx context.Context, st *store.Store, cfg loaders.Config) context.Context {
	out := ctx
	loaders.Middleware(st, cfg, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { out = r.Context() })).
		ServeHTTP(nil, (&http.Request{}).WithContext(ctx))
	return out
}

// gatewayHandler is the gateway's handler with its subscription server,
// which run shuts down before the HTTP server.
type gatewayHandler struct {
	http.Handler
	subs *subscriptionServer
}

// shutdownSubscriptions completes the subscriptions of a gateway from
// newGateway and closes its sockets.
func shutdownSubscriptions(gateway http.Handler, ctx context.Context) {
	if g, ok := gateway.(gatewayHandler); ok {
		g.subs.Shutdown(ctx)
	}
}

// newEventBus is the bus of the subscriptions: in process, and over NATS
// with --events-nats.
func newEventBus(cfg config, st *store.Store, log zerolog.Logger, reg prometheus.Registerer) *events.Bus {
	bus := events.New(events.Options{
		Buffer: cfg.subscriptions.buffer, PerConnection: cfg.subscriptions.perConnection, PerCaller: cfg.subscriptions.perCaller,
		Log: log, Registerer: reg,
	})
	bus.SetFeeds(events.FeedOptions{Following: st.Following, Readers: cfg.subscriptions.feeds, PerCaller: cfg.subscriptions.feedsPerCaller})
	if url := cfg.subscriptions.natsURL; url != "" {
		// A server down is retried (and warned about); only a URL nats.go
		// cannot use fails here, and then this replica serves its own
		// events, as without the flag.
		if _, err := events.ConnectNATS(url, bus, resolvers.Hydrate(st), log, reg); err != nil {
			log.Error().Err(err).Str("events_nats", url).Msg("events: NATS not used: subscribers see this replica's writes only")
		}
	}
	return bus
}
