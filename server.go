// Command hbgraph serves a property graph and per-author article timelines
// out of HBase as a GraphQL API, on an embedded engine with HBase semantics
// by default or on a real cluster.
//
//	hbgraph [flags]                 serve (GraphiQL at /, GraphQL at /query)
//	hbgraph [flags] create-tables   create the tables on a cluster (--hbase-zk)
//	hbgraph [flags] repair          put index rows and counters back in step
//	hbgraph [flags] import          load JSON Lines files (--nodes, --relationships, --articles)
//	hbgraph [flags] export --out DIR     the store as the files import reads
//	hbgraph [flags] backup --to DIR      a verified copy of the data directory, while it serves
//	hbgraph [flags] restore --from DIR   a backup into an empty --data-dir
//
// This file is the only place that wires things together.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
	"github.com/tsuna/gohbase"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"golang.org/x/time/rate"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/backup"
	"github.com/hbgraph/hbgraph/edge"
	"github.com/hbgraph/hbgraph/example"
	"github.com/hbgraph/hbgraph/explain"
	"github.com/hbgraph/hbgraph/graph/codes"
	"github.com/hbgraph/hbgraph/graph/errcode"
	"github.com/hbgraph/hbgraph/graph/generated"
	"github.com/hbgraph/hbgraph/graph/jsonpost"
	"github.com/hbgraph/hbgraph/graph/limits"
	"github.com/hbgraph/hbgraph/graph/nointrospection"
	"github.com/hbgraph/hbgraph/graph/plan"
	"github.com/hbgraph/hbgraph/graph/querycache"
	"github.com/hbgraph/hbgraph/graph/resolvers"
	"github.com/hbgraph/hbgraph/graph/shed"
	"github.com/hbgraph/hbgraph/graph/subgraphsdl"
	"github.com/hbgraph/hbgraph/graph/trusted"
	"github.com/hbgraph/hbgraph/graphiql"
	"github.com/hbgraph/hbgraph/importer"
	"github.com/hbgraph/hbgraph/loaders"
	"github.com/hbgraph/hbgraph/store"
	"github.com/hbgraph/hbgraph/tracing"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "hbgraph:", err)
		os.Exit(1)
	}
}

// defaultGCPercent trades memory for CPU: a request allocates tens of KB
// and the live heap is small (Pebble's block cache is not on the Go heap),
// so at Go's default of 100 the collector ran many times a second under
// load. Q3 at concurrency 16: 745 req/s at 100, 1,074 at 400, 1,160 at
// 800, 1,172 at 1600; peak RSS 133, 166 and 194 MB for the first three.
const defaultGCPercent = 800

// defaultMemoryLimit bounds the Go heap the server lets grow before it
// collects regardless of defaultGCPercent: at 800 a burst of concurrent
// heavy queries grew the heap to 6.9 GB and kept it. Pebble's block cache
// (256 MiB) is outside the Go heap and outside this limit.
const defaultMemoryLimit = 768 << 20

// defaultMaxResponseBytes bounds one response. The largest a legitimate
// query within the default complexity returns is a few MB (a page of 100
// nodes with 64 KiB of properties each is 6.4 MB); a response is held
// about twice while it is built and written, so 16 MiB costs at most some
// 50 MB of heap, a sixteenth of defaultMemoryLimit.
const defaultMaxResponseBytes = 16 << 20

// defaultMaxResponseBytesInFlight bounds the responses held at once: eight
// of the largest. At about three bytes of heap per byte of response (the
// buffer's growth, the data the executor read) that is under 400 MB,
// which with the server's ordinary use (about 110 MB at peak under the
// heavy burst of the README) stays under defaultMemoryLimit.
const defaultMaxResponseBytesInFlight = 128 << 20

func run(args []string) error {
	cfg, err := parseConfig(args)
	if err != nil {
		return err
	}
	log, err := newLogger(cfg)
	if err != nil {
		return err
	}
	if gc := cfg.gcPercentFor(); gc > 0 {
		debug.SetGCPercent(gc)
	}
	if cfg.memoryLimit > 0 && cfg.command == "" {
		debug.SetMemoryLimit(cfg.memoryLimit)
	}
	switch cfg.command {
	case "":
	case "create-tables":
		if cfg.hbaseZK == "" {
			return errNeedCluster
		}
		admin := gohbase.NewAdminClient(cfg.hbaseZK, clusterOptions()...)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		return createTables(ctx, admin, cfg.regions, os.Stdout)
	case "repair":
		return repair(cfg, log)
	case "import":
		return runImport(cfg, log)
	case "export":
		return runExport(cfg, log)
	case "backup":
		return runBackup(cfg, log)
	case "restore":
		return runRestore(cfg)
	default:
		return fmt.Errorf("unknown command %q (want create-tables, repair, import, export, backup or restore)", cfg.command)
	}
	log.Info().Str("listen", cfg.listen).Str("data_dir", absDir(cfg.dataDir)).Bool("cluster", cfg.hbaseZK != "").
		Str("hbase_zk", cfg.hbaseZK).Bool("sync", cfg.sync).Bool("introspection", cfg.introspection).
		Bool("explain", cfg.explain).Dict("limits", limitsDict(cfg.limits)).
		Int64("max_body_bytes", cfg.maxBodyBytes).Float64("request_timeout_ms", milliseconds(cfg.requestTimeout)).
		Float64("batch_wait_ms", milliseconds(cfg.batchWait)).Int("batch_size", cfg.batchSize).Str("executor", cfg.executor).Int("scan_concurrency", cfg.scanConcurrency()).
		Str("admin_listen", cfg.adminListen).Strs("cors_origins", cfg.cors.parsed.Origins).Float64("rate_limit", cfg.rateLimit).Int("rate_burst", cfg.rateBurstOrDefault()).Msg("starting")

	if err := checkListen(cfg, log); err != nil {
		return err
	}
	shutdownTracing, err := tracing.Setup(context.Background(), log, moduleVersion())
	if err != nil {
		return err
	}
	defer func() { // the spans still buffered, sent before exit
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdownTracing(ctx); err != nil {
			log.Warn().Err(err).Msg("tracing: spans not exported at shutdown")
		}
	}()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	hc, st, err := openStore(cfg, log)
	if err != nil {
		return err
	}
	defer hc.Close()
	// A data directory written before the current article layout is
	// served while it is migrated in the background (migrate.go); one of
	// a newer layout is refused here.
	layoutCtx, cancelLayout := context.WithTimeout(context.Background(), 30*time.Second)
	err = st.CheckArticleLayout(layoutCtx)
	cancelLayout()
	if err == nil || errors.Is(err, store.ErrArticleLayout) {
		err = startArticleMigration(ctx, st, cfg, log)
	}
	if err != nil {
		return err
	}
	if cfg.exampleData {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		sum, err := example.Load(ctx, st)
		cancel()
		if err != nil {
			return fmt.Errorf("example data: %w", err)
		}
		log.Info().Msg(sum.String())
	}
	sec, err := loadSecurity(ctx, cfg, log)
	if err != nil {
		return err
	}
	gateway, admin := newGateway(cfg, st, log, sec)
	srv := &http.Server{
		Addr:              cfg.listen,
		Handler:           gateway,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       cfg.requestTimeout, // a body sent slowly counts against the request's time too
		WriteTimeout:      cfg.requestTimeout + 10*time.Second,
		IdleTimeout:       120 * time.Second,
		BaseContext:       edge.BaseContext(cfg.auth.Enabled()),
	}
	adminSrv := &http.Server{
		Addr:              cfg.adminListen,
		Handler:           admin,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		IdleTimeout:       120 * time.Second,
		// No WriteTimeout: a CPU profile streams for as long as it asks.
	}
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	adminLn, err := net.Listen("tcp", cfg.adminListen)
	if err != nil {
		ln.Close()
		return err
	}
	log.Info().Str("listen", ln.Addr().String()).Str("admin_listen", adminLn.Addr().String()).
		Str("graphql", "http://"+ln.Addr().String()+"/query").Msg("listening")
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	go func() { errc <- adminSrv.Serve(adminLn) }()
	select {
	case err := <-errc:
		srv.Close()
		adminSrv.Close()
		return err
	case <-ctx.Done():
	}
	log.Info().Msg("shutting down: finishing requests in flight")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.requestTimeout+5*time.Second)
	defer cancel()
	shutdownSubscriptions(gateway, shutdownCtx) // subscriptions.go; http.Server does not track sockets
	err = errors.Join(srv.Shutdown(shutdownCtx), adminSrv.Shutdown(shutdownCtx))
	if errors.Is(err, context.DeadlineExceeded) {
		// The grace period is over: what is left is cut off, as an
		// orchestrator would (net/http counts a connection accepted but
		// not yet read from as busy for 5 s, longer than a short
		// --request-timeout's grace).
		log.Warn().Float64("grace_ms", milliseconds(cfg.requestTimeout+5*time.Second)).Msg("shutdown: grace period over, closing the connections left")
		err = errors.Join(srv.Close(), adminSrv.Close())
	}
	if err != nil {
		return err
	}
	for range 2 {
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	log.Info().Msg("stopped")
	return nil
}

// security is what authentication and trusted documents need at start.
type security struct {
	verifier *auth.Verifier   // nil: authentication off
	manifest trusted.Manifest // nil: no --trusted-documents
}

// loadSecurity fetches or reads the token keys and reads the trusted
// documents; the key set's refresh stops with ctx.
func loadSecurity(ctx context.Context, cfg config, log zerolog.Logger) (sec security, err error) {
	if cfg.auth.Enabled() {
		if sec.verifier, err = auth.NewVerifier(ctx, cfg.auth, log); err != nil {
			return sec, err
		}
	}
	if cfg.trustedDocuments != "" {
		if sec.manifest, err = trusted.Load(cfg.trustedDocuments); err != nil {
			return sec, err
		}
		log.Info().Int("operations", len(sec.manifest)).Bool("only", cfg.trustedDocumentsOnly).Msg("trusted documents loaded")
	}
	return sec, nil
}

// checkListen refuses to serve beyond loopback while hbgraph authenticates
// nobody, unless --insecure-no-auth says to, and says so at start either
// way.
func checkListen(cfg config, log zerolog.Logger) error {
	if cfg.auth.Enabled() {
		log.Info().Str("jwks_url", cfg.auth.JWKSURL).Str("jwks_file", cfg.auth.JWKSFile).Bool("hs256", cfg.auth.HS256SecretFile != "").
			Str("issuer", cfg.auth.Issuer).Str("audience", cfg.auth.Audience).Str("admin_scope", cfg.auth.AdminScope).
			Str("reads", cfg.authRead).Msg("authentication on: writes need a token and the node's owner or the admin scope")
		// Tokens guard /query; the admin listener answers anyone who
		// reaches it.
		if !edge.Loopback(cfg.adminListen) {
			log.Warn().Str("admin_listen", cfg.adminListen).Bool("pprof", cfg.pprof).
				Msg("the admin listener (metrics, health, the profiler with --pprof) is beyond loopback and asks for no token: expose it to your monitoring network only")
		}
		return nil
	}
	var exposed []string
	for _, addr := range []string{cfg.listen, cfg.adminListen} {
		if !edge.Loopback(addr) {
			exposed = append(exposed, addr)
		}
	}
	switch {
	case len(exposed) == 0:
		log.Warn().Msg("authentication off: every caller may read and write everything; listening on loopback only")
	case !cfg.insecureNoAuth:
		return fmt.Errorf("refusing to listen on %s beyond loopback: hbgraph authenticates nobody, so anyone who reaches it could rewrite everything; listen on 127.0.0.1 (the default), or pass --insecure-no-auth", strings.Join(exposed, " and "))
	default:
		log.Warn().Strs("listen", exposed).Msg("INSECURE: authentication off and listening beyond loopback (--insecure-no-auth): anyone who reaches these addresses may read and write everything")
	}
	return nil
}

// newGateway builds every HTTP route over st: the gateway's (the GraphQL
// endpoint with its extensions and middleware, GraphiQL, health and
// readiness) and the admin listener's (metrics, the profiler with --pprof,
// health and readiness).
func newGateway(cfg config, st *store.Store, log zerolog.Logger, sec security) (gateway, admin http.Handler) {
	m := newMetrics()
	limiter := shed.New(cfg.maxInFlight, cfg.maxComplexityInFlight, time.Second)
	limiter.LimitResponses(cfg.maxResponseBytes, cfg.maxResponseBytesInFlight)
	shedCount := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hbgraph_shed_total", Help: "GraphQL requests answered 503 to shed load, by the limit they met.",
	}, []string{"reason"})
	m.registry.MustRegister(shedCount)
	m.registry.MustRegister(migrationMetrics(st)...)
	limiter.OnShed = func(reason string) { shedCount.WithLabelValues(reason).Inc() }

	loaderCfg := loaders.Config{Wait: cfg.batchWait, BatchSize: cfg.batchSize, ScanConcurrency: cfg.scanConcurrency()}
	bus := newEventBus(cfg, st, log, m.registry) // subscriptions.go
	var es graphql.ExecutableSchema = generated.NewExecutableSchema(generated.Config{
		Resolvers:  &resolvers.Resolver{Store: st, Events: bus},
		Complexity: limits.Pricing(),
	})
	if cfg.executor == "plan" {
		es = plan.Wrap(es, plan.Options{Store: st, Loaders: loaderCfg, Log: log, Registerer: m.registry})
	}
	gql := handler.New(es)
	subs := newSubscriptions(gql, bus, cfg, log, sec, st, loaderCfg, m.registry) // WebSocket first, before GET
	gql.AddTransport(transport.Options{})
	gql.AddTransport(jsonpost.GET{})       // GraphQL over HTTP: GET, queries only
	gql.AddTransport(jsonpost.Transport{}) // and POST; the data written as the executor wrote it
	gql.AddTransport(jsonpost.OtherMethods{})
	// First, so outermost: gqlgen's executor counts the large values the
	// other field middleware has let through, as they resolve. _service's
	// SDL without the auth directives is made inside it, as one middleware
	// (gqlgen allocates per field for each).
	countFields := shed.CountFields
	if !cfg.authDirectives() {
		countFields = shed.CountFieldsAround(subgraphsdl.StripAuthDirectives)
	}
	gql.AroundFields(countFields)
	docs := querycache.Documents(cfg.queryCacheEntries, cfg.queryCacheBytes, cfg.queryCacheMaxQuery)
	gql.SetQueryCache(docs)
	m.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hbgraph_query_cache_entries", Help: "Parsed documents in the query cache."},
			func() float64 { n, _ := docs.Len(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hbgraph_query_cache_bytes", Help: "Estimated memory of the parsed documents in the query cache."},
			func() float64 { _, b := docs.Len(); return float64(b) }))
	// gqlgen's switch also turns off federation's _service { sdl }, which a
	// gateway needs; with --introspection=false the Refuse extension turns
	// away only __schema and __type, before execution.
	gql.Use(extension.Introspection{})
	if !cfg.introspection {
		gql.Use(nointrospection.Refuse{})
		gql.SetValidationRulesFn(nointrospection.Rules)
		gql.SetDisableSuggestion(true)
	}
	// Persisted queries keep their text: bounded like the documents, with
	// the same longest query, at 1 byte a byte.
	if sec.manifest != nil {
		// Before the persisted queries: a trusted id is answered from the
		// manifest, never from (or into) the bounded cache.
		gql.Use(trusted.Extension{Manifest: sec.manifest, Only: cfg.trustedDocumentsOnly})
	}
	gql.Use(extension.AutomaticPersistedQuery{Cache: querycache.PersistedQueries(cfg.queryCacheEntries, cfg.queryCacheBytes/querycache.BytesPerQueryByte, cfg.queryCacheMaxQuery)})
	// After the persisted queries (which fill in a hash's text), before
	// load shedding (which charges the complexity computed here).
	gql.SetParserTokenLimit(cfg.limits.Tokens)
	gql.Use(limits.New(cfg.limits, docs))
	gql.Use(limiter.Extension(operationComplexity))
	gql.Use(explain.Extension{Always: cfg.explain})
	if tracing.Enabled() {
		gql.Use(tracing.Extension{Executor: cfg.executor, Complexity: operationComplexity})
	}
	backupGate := &backup.Gate{} // POST /backup waits for the mutations in flight
	gql.Use(backupGate)
	gql.SetErrorPresenter(presentError(log))
	gql.SetRecoverFunc(func(ctx context.Context, v any) error {
		id := ""
		if r := explain.From(ctx); r != nil {
			id = r.ID
		}
		log.Error().Str("request_id", id).Interface("panic", v).Bytes("stack", debug.Stack()).Msg("resolver panic")
		return errors.New("panic in resolver")
	})

	healthz := func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") }
	readyz := func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := st.Ping(ctx); err != nil {
			http.Error(w, "store unreachable", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	}

	rateLimited := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hbgraph_rate_limited_total", Help: "GraphQL requests answered 429: their caller (subject, or address when anonymous), or their address's refused tokens, over --rate-limit.",
	})
	m.registry.MustRegister(rateLimited)
	onLimit := func(r *http.Request) {
		rateLimited.Inc()
		noteRefusal(r.Context(), codes.RateLimited, "rate_limited")
	}
	perClient := edge.RateLimit{Rate: rate.Limit(cfg.rateLimit), Burst: cfg.rateBurstOrDefault(), OnLimit: onLimit, Key: rateKey}
	authRefused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hbgraph_unauthenticated_total", Help: "GraphQL requests answered 401, by reason: missing (with --auth-read=required), malformed or invalid token.",
	}, []string{"reason"})
	m.registry.MustRegister(authRefused)
	authenticate := edge.Authenticate{
		ReadsNeedToken: cfg.authRead == "required",
		// Every 401 counts against its client address, before the token
		// is checked (a valid token's charge is given back).
		Refusals: edge.RateLimit{Rate: rate.Limit(cfg.rateLimit), Burst: cfg.rateBurstOrDefault(), OnLimit: func(r *http.Request) {
			rateLimited.Inc()
			noteRefusal(r.Context(), codes.RateLimited, "refused_tokens")
		}},
		OnRefused: func(r *http.Request, class, reason string) {
			authRefused.WithLabelValues(class).Inc()
			noteRefusal(r.Context(), codes.Unauthenticated, reason)
		},
		OnAuthenticated: func(ctx context.Context, p auth.Principal) {
			if rec := explain.From(ctx); rec != nil {
				rec.SetSubject(p.Subject)
			}
		},
	}
	if sec.verifier != nil {
		authenticate.Verifier = sec.verifier
	}

	mux := http.NewServeMux()
	// CORS first (a preflight is answered before anything counts it), then
	// the request id and log line, the caller, the caller's rate, load
	// shedding.
	// Every answer of /query (401, 429 and 503 too) is the caller's alone.
	httpEdge := func(h http.Handler) http.Handler {
		return tracing.Handler(cfg.cors.parsed.Handler(edge.NoStore(observe(log, m, cfg.maxBodyBytes, cfg.requestTimeout,
			authenticate.Middleware(perClient.Middleware(h))))))
	}
	// A graphql-sse event stream skips load shedding (subscriptions_sse.go).
	mux.Handle("/query", subs.route(gql, httpEdge(limiter.Middleware(loaders.Middleware(st, loaderCfg, gql))), httpEdge(gql)))
	graphiql.Register(mux, "/query")        // GraphiQL at /, every asset served from here (offline)
	mux.HandleFunc("GET /healthz", healthz) // load balancers probe the gateway's own port
	mux.HandleFunc("GET /readyz", readyz)

	// Metrics and the profiler expose internals: on their own listener,
	// loopback by default, never beside /query.
	adminMux := http.NewServeMux()
	adminMux.Handle("GET /metrics", promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{}))
	adminMux.HandleFunc("GET /healthz", healthz)
	adminMux.HandleFunc("GET /readyz", readyz)
	adminMux.Handle("POST "+backup.Route, &backup.Handler{Store: st, Gate: backupGate, DataDir: cfg.dataDir, Log: log,
		Allowed: edge.Loopback(cfg.adminListen) || cfg.allowRemoteBackup})
	if cfg.pprof {
		adminMux.HandleFunc("GET /debug/pprof/", pprof.Index)
		adminMux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		adminMux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		adminMux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		adminMux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return gatewayHandler{edge.Headers(logRoutes(log, mux)), subs}, edge.Headers(logRoutes(log, adminMux))
}

// rateKey is whose bucket a request spends: its token's subject, or its
// client address when anonymous.
func rateKey(r *http.Request) string {
	if p := auth.From(r.Context()); p.Subject != "" {
		return "sub:" + p.Subject
	}
	return "addr:" + edge.ClientAddress(r)
}

// presentError is the one place GraphQL error messages are chosen, and
// codes given (by graph/errcode's policy). An internal error is logged with the request id and reaches the
// client only as that id: no message or stack of ours leaks; any other
// message is clientMessage's, in our words.
func presentError(log zerolog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gerr := graphql.DefaultErrorPresenter(ctx, err)
		code, given := errcode.Of(err, gerr)
		if given {
			gerr.Message = clientMessage(err, gerr, code, mutationOf(ctx))
			return gerr
		}
		if other, ok := gerr.Extensions["code"].(string); ok {
			// A library's code outside the vocabulary (the README lists
			// every code a client can receive): a bug of ours to map.
			log.Warn().Str("code", other).Msg("error code outside the vocabulary")
		}
		if code == codes.Internal {
			id := ""
			if r := explain.From(ctx); r != nil {
				id = r.ID
			}
			log.Error().Str("request_id", id).Err(err).Str("path", gerr.Path.String()).Msg("internal error")
			gerr.Message = "internal error (request id " + id + ")"
		} else {
			gerr.Message = clientMessage(err, gerr, code, mutationOf(ctx))
		}
		if gerr.Extensions == nil {
			gerr.Extensions = map[string]any{}
		}
		gerr.Extensions["code"] = code
		return gerr
	}
}

// operationComplexity is the complexity graph/limits computed for the
// operation.
func operationComplexity(ctx context.Context, _ *graphql.OperationContext) int {
	if stats := extension.GetComplexityStats(ctx); stats != nil {
		return stats.Complexity
	}
	return 0
}

// openStore opens HBase (a cluster or the embedded engine) and the store
// over it; the caller closes the client.
func openStore(cfg config, log zerolog.Logger) (gohbase.Client, *store.Store, error) {
	hc, err := openHBase(cfg, log)
	if err != nil {
		return nil, nil, err
	}
	// On a cluster a write's independent calls go at once: each is a
	// round trip (store.Options.OverlapCalls). The embedded engine stamps
	// cells with the process's clock, as the store does.
	embedded := cfg.hbaseZK == ""
	st, err := store.New(hc, store.Options{Feed: cfg.feed.options(), OverlapCalls: !embedded, EngineSharesClock: embedded})
	if err == nil {
		err = checkFamilies(st)
	}
	if err != nil {
		hc.Close()
		return nil, nil, err
	}
	return hc, st, nil
}

// checkFamilies refuses a cluster whose tables lack a family this hbgraph
// writes (made by an older one), naming the command that adds it; one
// that does not answer is left to the caller's first call, as before.
func checkFamilies(st *store.Store) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.CheckFamilies(ctx); errors.Is(err, store.ErrMissingFamily) {
		return err
	}
	return nil
}

// repair runs store.Repair once and prints what it fixed.
func repair(cfg config, log zerolog.Logger) error {
	if err := requireStore(cfg, "repair"); err != nil {
		return err
	}
	hc, st, err := openStore(cfg, log)
	if err != nil {
		return err
	}
	defer hc.Close()
	report, err := st.Repair(context.Background())
	fmt.Print(report)
	return err
}

// runImport loads the --nodes, --relationships and --articles files and
// prints a summary; it fails if any line failed.
func runImport(cfg config, log zerolog.Logger) error {
	if cfg.importFiles == (importer.Files{}) {
		return errors.New("import needs --nodes, --relationships and/or --articles")
	}
	hc, st, err := openImportStore(cfg, log)
	if err != nil {
		return err
	}
	defer hc.Close()
	opts := importer.Options{Workers: cfg.importWorkers, Log: log}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		opts.Progress = os.Stderr // a terminal: redraw a progress line
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	results, err := importer.Run(ctx, st, cfg.importFiles, opts)
	var failed int64
	for _, r := range results {
		fmt.Printf("%-13s %9d lines %9d imported %9d skipped %7d failed in %v (%.0f rows/s)\n",
			r.Kind, r.Lines, r.Imported, r.Skipped, r.Failed, r.Elapsed.Round(time.Millisecond), r.Rate())
		for _, e := range r.Errors {
			fmt.Printf("  %s line %d: %v\n", r.File, e.Line, e.Err)
		}
		if r.Failed > int64(len(r.Errors)) {
			fmt.Printf("  ... and %d more failed lines\n", r.Failed-int64(len(r.Errors)))
		}
		failed += r.Failed
	}
	if err != nil {
		return err
	}
	if err := compactAfterImport(ctx, st, results, cfg.hbaseZK == ""); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("import: %d lines failed", failed)
	}
	return nil
}

// compactAfterImport compacts the store once an import has written
// anything (store.Compact: 3-5% more req/s on the benchmark's queries on
// the embedded engine; nothing on a cluster, where it is the operator's).
func compactAfterImport(ctx context.Context, st *store.Store, results []importer.Result, embeddedEngine bool) error {
	var imported int64
	for _, r := range results {
		imported += r.Imported
	}
	if imported == 0 {
		return nil
	}
	start := time.Now()
	if embeddedEngine { // the files' lines said 0s left: say what takes the time now
		fmt.Println("compacting the store")
	}
	compacted, err := st.Compact(ctx)
	if err != nil {
		return fmt.Errorf("import: compacting: %w", err)
	}
	if compacted {
		fmt.Printf("compacted in %v\n", time.Since(start).Round(time.Millisecond))
	}
	return nil
}
