// Command hbgraph serves a property graph and per-author article timelines
// out of HBase as a GraphQL API, on an embedded engine with HBase semantics
// by default or on a real cluster.
//
//	hbgraph [flags]                 serve (GraphiQL at /, GraphQL at /query)
//	hbgraph [flags] create-tables   create the tables on a cluster (--hbase-zk)
//	hbgraph [flags] repair          put index rows and counters back in step
//	hbgraph [flags] import          load JSON Lines files (--nodes, --relationships, --articles)
//
// This file is the only place that wires things together.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
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
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"golang.org/x/time/rate"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/edge"
	"github.com/hbgraph/hbgraph/example"
	"github.com/hbgraph/hbgraph/explain"
	"github.com/hbgraph/hbgraph/graph/codes"
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
)

type config struct {
	listen      string
	adminListen string
	// insecureNoAuth lets the server listen beyond loopback although it
	// authenticates nobody.
	insecureNoAuth bool
	cors           corsFlags
	rateLimit      float64
	rateBurst      int
	// auth says where token keys come from; none: authentication off.
	auth auth.Config
	// authRead is "public" (queries need no token) or "required".
	authRead string
	// trustedDocuments is an Apollo persisted query manifest; with
	// trustedDocumentsOnly, only its operations run.
	trustedDocuments     string
	trustedDocumentsOnly bool
	// federationAuthDirectives keeps @authenticated in _service's SDL.
	federationAuthDirectives bool

	dataDir   string
	hbaseZK   string
	regions   int
	sync      bool
	logLevel  string
	logFormat string

	introspection bool
	explain       bool
	// limits bounds each document: tokens, nesting, fields, aliases,
	// repeats, fragments, variables, depth, complexity, errors.
	limits         limits.Config
	maxBodyBytes   int64
	requestTimeout time.Duration
	batchWait      time.Duration
	batchSize      int
	scanConc       int

	maxInFlight           int
	maxComplexityInFlight int
	queryCacheEntries     int
	queryCacheBytes       int64
	queryCacheMaxQuery    int
	memoryLimit           int64

	importFiles   importer.Files
	importWorkers int

	pprof       bool
	exampleData bool
	// executor runs queries: "gqlgen", or "plan" (graph/plan's compiled
	// plans, gqlgen for what they do not cover).
	executor string
	// gcPercent is GOGC for this process (0 keeps the environment's);
	// gcPercentSet tells whether a flag or HBGRAPH_GC_PERCENT gave it.
	gcPercent    int
	gcPercentSet bool

	command string
}

// corsFlags are the --cors-* flags, parsed into edge.CORS.
type corsFlags struct {
	origins, headers string
	credentials      bool
	parsed           edge.CORS
}

func (c *corsFlags) validate() (err error) {
	c.parsed, err = edge.ParseCORS(c.origins, c.headers, c.credentials)
	return err
}

// env returns the environment's value for name, or def.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// envParsed parses the environment's value for name with parse, or returns
// def; a value that does not parse is reported by parseConfig.
func envParsed[T any](name string, def T, parse func(string) (T, error), bad *[]string) T {
	v, ok := os.LookupEnv(name)
	if !ok {
		return def
	}
	t, err := parse(v)
	if err != nil {
		*bad = append(*bad, fmt.Sprintf("%s=%q: %v", name, v, err))
		return def
	}
	return t
}

func parseInt64(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }

func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }

func parseConfig(args []string) (config, error) {
	var cfg config
	var bad []string
	fs := flag.NewFlagSet("hbgraph", flag.ContinueOnError)
	fs.StringVar(&cfg.listen, "listen", env("HBGRAPH_LISTEN", "127.0.0.1:8080"), "address to serve GraphQL and GraphiQL on; beyond loopback only with --insecure-no-auth (HBGRAPH_LISTEN)")
	fs.StringVar(&cfg.adminListen, "admin-listen", env("HBGRAPH_ADMIN_LISTEN", "127.0.0.1:9090"), "address to serve /metrics, /debug/pprof/ (with --pprof), /healthz and /readyz on, apart from GraphQL (HBGRAPH_ADMIN_LISTEN)")
	fs.BoolVar(&cfg.insecureNoAuth, "insecure-no-auth", envParsed("HBGRAPH_INSECURE_NO_AUTH", false, strconv.ParseBool, &bad), "listen beyond loopback although hbgraph authenticates nobody: anyone who reaches it can rewrite everything (HBGRAPH_INSECURE_NO_AUTH)")
	fs.StringVar(&cfg.cors.origins, "cors-origins", env("HBGRAPH_CORS_ORIGINS", ""), "comma-separated origins whose browser pages may call /query (e.g. https://app.example.com); empty: none (HBGRAPH_CORS_ORIGINS)")
	fs.Float64Var(&cfg.rateLimit, "rate-limit", envParsed("HBGRAPH_RATE_LIMIT", 0.0, parseFloat, &bad), "GraphQL requests a second each caller may send: a token's subject, or a client address when anonymous (a token bucket; past it 429 with Retry-After); 0: no limit. Behind a proxy anonymous clients share its address (HBGRAPH_RATE_LIMIT)")
	fs.IntVar(&cfg.rateBurst, "rate-burst", envParsed("HBGRAPH_RATE_BURST", 0, strconv.Atoi, &bad), "requests a caller may send at once before --rate-limit applies; 0: twice the rate (HBGRAPH_RATE_BURST)")
	fs.BoolVar(&cfg.cors.credentials, "cors-credentials", envParsed("HBGRAPH_CORS_CREDENTIALS", false, strconv.ParseBool, &bad), "let those pages send cookies and HTTP authentication (HBGRAPH_CORS_CREDENTIALS)")
	fs.StringVar(&cfg.cors.headers, "cors-headers", env("HBGRAPH_CORS_HEADERS", ""), "comma-separated request headers those pages may send beyond Content-Type, Authorization and X-Request-Id (HBGRAPH_CORS_HEADERS)")
	fs.StringVar(&cfg.auth.JWKSURL, "auth-jwks-url", env("HBGRAPH_AUTH_JWKS_URL", ""), "URL of the JSON Web Key Set whose keys sign bearer tokens (fetched at start, refreshed periodically and on an unknown kid); setting any key source turns authentication on (HBGRAPH_AUTH_JWKS_URL)")
	fs.StringVar(&cfg.auth.JWKSFile, "auth-jwks-file", env("HBGRAPH_AUTH_JWKS_FILE", ""), "file of a JSON Web Key Set, or PEM public keys, that sign bearer tokens (HBGRAPH_AUTH_JWKS_FILE)")
	fs.StringVar(&cfg.auth.HS256SecretFile, "auth-hs256-secret-file", env("HBGRAPH_AUTH_HS256_SECRET_FILE", ""), "file holding a shared secret (32 bytes or more) for HS256 tokens; only when you cannot use public keys (HBGRAPH_AUTH_HS256_SECRET_FILE)")
	fs.StringVar(&cfg.auth.Issuer, "auth-issuer", env("HBGRAPH_AUTH_ISSUER", ""), "the iss claim tokens must carry; empty: not checked (HBGRAPH_AUTH_ISSUER)")
	fs.StringVar(&cfg.auth.Audience, "auth-audience", env("HBGRAPH_AUTH_AUDIENCE", ""), "an aud the tokens must carry; empty: not checked (HBGRAPH_AUTH_AUDIENCE)")
	fs.DurationVar(&cfg.auth.Leeway, "auth-leeway", envParsed("HBGRAPH_AUTH_LEEWAY", auth.DefaultLeeway, time.ParseDuration, &bad), "clock skew allowed on exp, nbf and iat (HBGRAPH_AUTH_LEEWAY)")
	fs.StringVar(&cfg.auth.AdminScope, "auth-admin-scope", env("HBGRAPH_AUTH_ADMIN_SCOPE", auth.DefaultAdminScope), "the scope that lets a caller change every node, whoever owns it (HBGRAPH_AUTH_ADMIN_SCOPE)")
	fs.StringVar(&cfg.authRead, "auth-read", env("HBGRAPH_AUTH_READ", "public"), "public: queries need no token; required: every request needs a valid token (HBGRAPH_AUTH_READ)")
	fs.StringVar(&cfg.trustedDocuments, "trusted-documents", env("HBGRAPH_TRUSTED_DOCUMENTS", ""), "an Apollo persisted query manifest (JSON, ids the sha256 of each body): its operations can be sent by id (HBGRAPH_TRUSTED_DOCUMENTS)")
	fs.BoolVar(&cfg.trustedDocumentsOnly, "trusted-documents-only", envParsed("HBGRAPH_TRUSTED_DOCUMENTS_ONLY", false, strconv.ParseBool, &bad), "run only the operations of --trusted-documents (by id, or by a body that hashes to one); callers with the admin scope may send others (HBGRAPH_TRUSTED_DOCUMENTS_ONLY)")
	fs.BoolVar(&cfg.federationAuthDirectives, "federation-auth-directives", envParsed("HBGRAPH_FEDERATION_AUTH_DIRECTIVES", true, strconv.ParseBool, &bad), "tell gateways which fields need authentication (@authenticated in _service's SDL, for Apollo Router); false for @apollo/gateway, which refuses supergraphs that carry it. hbgraph enforces the rules either way (HBGRAPH_FEDERATION_AUTH_DIRECTIVES)")
	fs.StringVar(&cfg.dataDir, "data-dir", env("HBGRAPH_DATA_DIR", "./data"), "embedded engine's data directory (HBGRAPH_DATA_DIR)")
	fs.StringVar(&cfg.hbaseZK, "hbase-zk", env("HBGRAPH_HBASE_ZK", ""), "ZooKeeper quorum of an HBase cluster, e.g. zk1:2181,zk2:2181; empty: the embedded engine (HBGRAPH_HBASE_ZK)")
	fs.IntVar(&cfg.regions, "regions", 16, "create-tables: regions per table, pre-split on the row hash")
	fs.BoolVar(&cfg.sync, "sync", envParsed("HBGRAPH_SYNC", false, strconv.ParseBool, &bad), "fsync every commit for power-loss safety (HBGRAPH_SYNC)")
	fs.StringVar(&cfg.logLevel, "log-level", env("HBGRAPH_LOG_LEVEL", "info"), "debug, info, warn or error (HBGRAPH_LOG_LEVEL)")
	fs.StringVar(&cfg.logFormat, "log-format", env("HBGRAPH_LOG_FORMAT", "json"), "json or console (HBGRAPH_LOG_FORMAT)")
	fs.BoolVar(&cfg.introspection, "introspection", envParsed("HBGRAPH_INTROSPECTION", true, strconv.ParseBool, &bad), "answer introspection queries (HBGRAPH_INTROSPECTION)")
	fs.BoolVar(&cfg.explain, "explain", envParsed("HBGRAPH_EXPLAIN", false, strconv.ParseBool, &bad), "add the store calls to every response's extensions; without it a request asks with \"extensions\": {\"explain\": true} (HBGRAPH_EXPLAIN)")
	def := limits.DefaultConfig
	fs.IntVar(&cfg.limits.Complexity, "max-complexity", envParsed("HBGRAPH_MAX_COMPLEXITY", def.Complexity, strconv.Atoi, &bad), "refuse operations more complex than this; a connection counts its page size times its fields (HBGRAPH_MAX_COMPLEXITY)")
	fs.IntVar(&cfg.limits.Depth, "max-depth", envParsed("HBGRAPH_MAX_DEPTH", def.Depth, strconv.Atoi, &bad), "refuse operations nested deeper than this many fields (HBGRAPH_MAX_DEPTH)")
	fs.IntVar(&cfg.limits.Tokens, "max-tokens", envParsed("HBGRAPH_MAX_TOKENS", def.Tokens, strconv.Atoi, &bad), "refuse documents of more lexical tokens, before parsing them (HBGRAPH_MAX_TOKENS)")
	fs.IntVar(&cfg.limits.Nesting, "max-nesting", envParsed("HBGRAPH_MAX_NESTING", def.Nesting, strconv.Atoi, &bad), "refuse documents whose braces, brackets and parentheses nest deeper, before parsing them; more than --max-depth (HBGRAPH_MAX_NESTING)")
	fs.IntVar(&cfg.limits.Fields, "max-fields", envParsed("HBGRAPH_MAX_FIELDS", def.Fields, strconv.Atoi, &bad), "refuse documents of more selections, each fragment spread counted as its fragment's, before validating them (HBGRAPH_MAX_FIELDS)")
	fs.IntVar(&cfg.limits.Aliases, "max-aliases", envParsed("HBGRAPH_MAX_ALIASES", def.Aliases, strconv.Atoi, &bad), "refuse documents of more aliased fields (HBGRAPH_MAX_ALIASES)")
	fs.IntVar(&cfg.limits.Repeats, "max-repeats", envParsed("HBGRAPH_MAX_REPEATS", def.Repeats, strconv.Atoi, &bad), "refuse documents with more selections repeating a response name already in their selection set (HBGRAPH_MAX_REPEATS)")
	fs.IntVar(&cfg.limits.Fragments, "max-fragments", envParsed("HBGRAPH_MAX_FRAGMENTS", def.Fragments, strconv.Atoi, &bad), "refuse documents of more fragment definitions (HBGRAPH_MAX_FRAGMENTS)")
	fs.IntVar(&cfg.limits.Variables, "max-variables", envParsed("HBGRAPH_MAX_VARIABLES", def.Variables, strconv.Atoi, &bad), "refuse documents of more variable definitions (HBGRAPH_MAX_VARIABLES)")
	fs.IntVar(&cfg.limits.Errors, "max-errors", envParsed("HBGRAPH_MAX_ERRORS", def.Errors, strconv.Atoi, &bad), "errors in one response; the rest are counted in a last one (HBGRAPH_MAX_ERRORS)")
	fs.Int64Var(&cfg.maxBodyBytes, "max-body-bytes", envParsed("HBGRAPH_MAX_BODY_BYTES", int64(1<<20), parseInt64, &bad), "largest request body accepted (HBGRAPH_MAX_BODY_BYTES)")
	fs.DurationVar(&cfg.requestTimeout, "request-timeout", envParsed("HBGRAPH_REQUEST_TIMEOUT", 10*time.Second, time.ParseDuration, &bad), "time one GraphQL request may take (HBGRAPH_REQUEST_TIMEOUT)")
	fs.DurationVar(&cfg.batchWait, "batch-wait", envParsed("HBGRAPH_BATCH_WAIT", loaders.DefaultConfig.Wait, time.ParseDuration, &bad), "how long a loader gathers keys before one batched store call (HBGRAPH_BATCH_WAIT)")
	fs.IntVar(&cfg.batchSize, "batch-size", envParsed("HBGRAPH_BATCH_SIZE", loaders.DefaultConfig.BatchSize, strconv.Atoi, &bad), "keys per batched store call; 1 turns batching off (HBGRAPH_BATCH_SIZE)")
	fs.IntVar(&cfg.scanConc, "scan-concurrency", envParsed("HBGRAPH_SCAN_CONCURRENCY", 0, strconv.Atoi, &bad), "page scans of one batch run at once; 0: 1 on the embedded engine (its scans use CPU, not round trips), 16 on a cluster (HBGRAPH_SCAN_CONCURRENCY)")
	fs.IntVar(&cfg.gcPercent, "gc-percent", envParsed("HBGRAPH_GC_PERCENT", defaultGCPercent, strconv.Atoi, &bad), "Go's GOGC for this process: heap growth between collections, in percent; 0 keeps GOGC from the environment; repair uses Go's 100 unless this is given (HBGRAPH_GC_PERCENT)")
	fs.IntVar(&cfg.maxInFlight, "max-in-flight", envParsed("HBGRAPH_MAX_IN_FLIGHT", 256, strconv.Atoi, &bad), "GraphQL requests in flight at once; more are answered 503 with Retry-After at once, never queued (HBGRAPH_MAX_IN_FLIGHT)")
	fs.IntVar(&cfg.maxComplexityInFlight, "max-complexity-in-flight", envParsed("HBGRAPH_MAX_COMPLEXITY_IN_FLIGHT", 10000, strconv.Atoi, &bad), "sum of the complexity of the operations executing at once; an operation that would pass it is answered 503 with Retry-After (one operation alone always runs) (HBGRAPH_MAX_COMPLEXITY_IN_FLIGHT)")
	fs.IntVar(&cfg.queryCacheEntries, "query-cache-entries", envParsed("HBGRAPH_QUERY_CACHE_ENTRIES", 1000, strconv.Atoi, &bad), "parsed and validated documents kept (HBGRAPH_QUERY_CACHE_ENTRIES)")
	fs.Int64Var(&cfg.queryCacheBytes, "query-cache-bytes", envParsed("HBGRAPH_QUERY_CACHE_BYTES", int64(64<<20), parseInt64, &bad), "estimated memory of the documents kept, at 32 bytes per byte of query text (HBGRAPH_QUERY_CACHE_BYTES)")
	fs.IntVar(&cfg.queryCacheMaxQuery, "query-cache-max-query", envParsed("HBGRAPH_QUERY_CACHE_MAX_QUERY", 16<<10, strconv.Atoi, &bad), "longest query text whose document is kept; longer ones are parsed every time (HBGRAPH_QUERY_CACHE_MAX_QUERY)")
	fs.Int64Var(&cfg.memoryLimit, "memory-limit", envParsed("HBGRAPH_MEMORY_LIMIT", int64(defaultMemoryLimit), parseInt64, &bad), "Go's soft memory limit (GOMEMLIMIT) in bytes: past it the collector runs whatever --gc-percent says; 0 keeps GOMEMLIMIT from the environment (HBGRAPH_MEMORY_LIMIT)")
	fs.BoolVar(&cfg.exampleData, "example-data", envParsed("HBGRAPH_EXAMPLE_DATA", false, strconv.ParseBool, &bad), "serve: write a small example graph (40 people, their follows, 105 articles) if the store is empty; a store that holds data is left as it is (HBGRAPH_EXAMPLE_DATA)")
	fs.StringVar(&cfg.executor, "executor", env("HBGRAPH_EXECUTOR", "plan"), "what executes queries: gqlgen, or plan (each distinct query compiled once into a plan that reads the store level by level and writes the response in one buffer; mutations, introspection and what a plan does not cover go to gqlgen) (HBGRAPH_EXECUTOR)")
	fs.BoolVar(&cfg.pprof, "pprof", envParsed("HBGRAPH_PPROF", false, strconv.ParseBool, &bad), "serve Go's profiler at /debug/pprof/ (HBGRAPH_PPROF); off by default: it exposes internals")
	fs.StringVar(&cfg.importFiles.Nodes, "nodes", "", "import: JSON Lines file of nodes")
	fs.StringVar(&cfg.importFiles.Relationships, "relationships", "", "import: JSON Lines file of relationships")
	fs.StringVar(&cfg.importFiles.Articles, "articles", "", "import: JSON Lines file of articles")
	fs.IntVar(&cfg.importWorkers, "import-workers", 0, "import: batches of lines imported at once (0: 4 per CPU)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: hbgraph [flags] [create-tables | repair | import] [flags]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if len(bad) > 0 {
		return cfg, fmt.Errorf("bad environment: %v", bad)
	}
	// Flags may also follow the command, as in "hbgraph import --nodes F".
	if rest := fs.Args(); len(rest) > 0 {
		cfg.command = rest[0]
		if err := fs.Parse(rest[1:]); err != nil {
			return cfg, err
		}
		if rest := fs.Args(); len(rest) > 0 {
			return cfg, fmt.Errorf("one command at most, got %q after %q", rest, cfg.command)
		}
	}
	_, cfg.gcPercentSet = os.LookupEnv("HBGRAPH_GC_PERCENT")
	fs.Visit(func(f *flag.Flag) { cfg.gcPercentSet = cfg.gcPercentSet || f.Name == "gc-percent" })
	switch {
	case cfg.maxBodyBytes < 1, cfg.requestTimeout <= 0,
		cfg.batchWait < 0, cfg.batchSize < 1, cfg.gcPercent < 0, cfg.scanConc < 0,
		cfg.maxInFlight < 1, cfg.maxComplexityInFlight < 1, cfg.queryCacheEntries < 0,
		cfg.queryCacheBytes < 0, cfg.queryCacheMaxQuery < 0, cfg.memoryLimit < 0,
		cfg.rateLimit < 0, cfg.rateBurst < 0:
		return cfg, errors.New("limits must be positive (batch-wait, scan-concurrency, memory-limit, rate-limit, rate-burst and the query cache's may be 0)")
	case cfg.limits.Nesting <= cfg.limits.Depth:
		return cfg, fmt.Errorf("--max-nesting (%d) must be more than --max-depth (%d): a query n fields deep nests n+1 braces", cfg.limits.Nesting, cfg.limits.Depth)
	case cfg.executor != "gqlgen" && cfg.executor != "plan":
		return cfg, fmt.Errorf("executor %q: want gqlgen or plan", cfg.executor)
	case cfg.logFormat != "json" && cfg.logFormat != "console":
		return cfg, fmt.Errorf("log format %q: want json or console", cfg.logFormat)
	case cfg.authRead != "public" && cfg.authRead != "required":
		return cfg, fmt.Errorf("--auth-read %q: want public or required", cfg.authRead)
	case cfg.authRead == "required" && !cfg.auth.Enabled():
		return cfg, errors.New("--auth-read=required needs a key source: --auth-jwks-url, --auth-jwks-file or --auth-hs256-secret-file")
	case cfg.auth.Leeway < 0:
		return cfg, errors.New("--auth-leeway must not be negative")
	case cfg.trustedDocumentsOnly && cfg.trustedDocuments == "":
		return cfg, errors.New("--trusted-documents-only needs --trusted-documents")
	}
	if err := cfg.cors.validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// gcPercentFor is --gc-percent, or its default for the command. The server
// and import allocate fast over a small live heap, so collecting less often
// pays (defaultGCPercent). Repair holds every relationship, index row and
// counter of the graph in memory: at 800 its heap grew to nine times that,
// and it ran slower. On the benchmark store: 15.8 s and 3.1 GB peak RSS at
// 800, 11.6 s and 1.1 GB at 100.
func (cfg config) gcPercentFor() int {
	if cfg.command == "repair" && !cfg.gcPercentSet {
		return 100
	}
	return cfg.gcPercent
}

// rateBurstOrDefault is --rate-burst, or twice --rate-limit (at least 1).
func (cfg config) rateBurstOrDefault() int {
	if cfg.rateBurst > 0 {
		return cfg.rateBurst
	}
	return max(1, int(2*cfg.rateLimit))
}

// scanConcurrency is --scan-concurrency, or its default for the backend.
// The embedded engine's scans spend CPU, not round trips, so running one
// batch's scans at once only adds goroutines (and their stack growth) on
// cores the concurrent requests already keep busy; a cluster's scans wait
// on the network, so they overlap.
func (cfg config) scanConcurrency() int {
	switch {
	case cfg.scanConc > 0:
		return cfg.scanConc
	case cfg.hbaseZK == "":
		return 1
	}
	return loaders.DefaultConfig.ScanConcurrency
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "hbgraph:", err)
		os.Exit(1)
	}
}

func newLogger(cfg config) (zerolog.Logger, error) {
	level, err := zerolog.ParseLevel(cfg.logLevel)
	if err != nil {
		return zerolog.Logger{}, fmt.Errorf("log level: %w", err)
	}
	out := zerolog.New(os.Stderr)
	if cfg.logFormat == "console" {
		out = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr})
	}
	return out.Level(level).With().Timestamp().Logger(), nil
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
	default:
		return fmt.Errorf("unknown command %q (want create-tables, repair or import)", cfg.command)
	}
	log.Info().Str("listen", cfg.listen).Str("data_dir", cfg.dataDir).Bool("cluster", cfg.hbaseZK != "").
		Str("hbase_zk", cfg.hbaseZK).Bool("sync", cfg.sync).Bool("introspection", cfg.introspection).
		Bool("explain", cfg.explain).Interface("limits", cfg.limits).
		Int64("max_body_bytes", cfg.maxBodyBytes).Dur("request_timeout", cfg.requestTimeout).
		Dur("batch_wait", cfg.batchWait).Int("batch_size", cfg.batchSize).Str("executor", cfg.executor).Int("scan_concurrency", cfg.scanConcurrency()).
		Str("admin_listen", cfg.adminListen).Strs("cors_origins", cfg.cors.parsed.Origins).Float64("rate_limit", cfg.rateLimit).Int("rate_burst", cfg.rateBurstOrDefault()).Msg("starting")

	if err := checkListen(cfg, log); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	hc, st, err := openStore(cfg, log)
	if err != nil {
		return err
	}
	defer hc.Close()
	// A data directory written before the current article layout is
	// refused here, naming the command that migrates it, rather than
	// failing every request that reads articles.
	layoutCtx, cancelLayout := context.WithTimeout(context.Background(), 30*time.Second)
	err = st.CheckArticleLayout(layoutCtx)
	cancelLayout()
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
	}
	adminSrv := &http.Server{
		Addr:              cfg.adminListen,
		Handler:           admin,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		IdleTimeout:       120 * time.Second,
		// No WriteTimeout: a CPU profile streams for as long as it asks.
	}
	errc := make(chan error, 2)
	go func() { errc <- srv.ListenAndServe() }()
	go func() { errc <- adminSrv.ListenAndServe() }()
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
	if err := errors.Join(srv.Shutdown(shutdownCtx), adminSrv.Shutdown(shutdownCtx)); err != nil {
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
	shedCount := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hbgraph_shed_total", Help: "GraphQL requests answered 503 to shed load, by the limit they met.",
	}, []string{"reason"})
	m.registry.MustRegister(shedCount)
	limiter.OnShed = func(reason string) { shedCount.WithLabelValues(reason).Inc() }

	loaderCfg := loaders.Config{Wait: cfg.batchWait, BatchSize: cfg.batchSize, ScanConcurrency: cfg.scanConcurrency()}
	var es graphql.ExecutableSchema = generated.NewExecutableSchema(generated.Config{
		Resolvers:  &resolvers.Resolver{Store: st},
		Complexity: limits.Pricing(),
	})
	if cfg.executor == "plan" {
		es = plan.Wrap(es, plan.Options{Store: st, Loaders: loaderCfg, Log: log, Registerer: m.registry})
	}
	gql := handler.New(es)
	gql.AddTransport(transport.Options{})
	gql.AddTransport(jsonpost.GET{})       // GraphQL over HTTP: GET, queries only
	gql.AddTransport(jsonpost.Transport{}) // and POST; the data written as the executor wrote it
	gql.AddTransport(jsonpost.OtherMethods{})
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
	if !cfg.federationAuthDirectives {
		gql.AroundFields(subgraphsdl.StripAuthDirectives)
	}
	if !cfg.introspection {
		gql.Use(nointrospection.Refuse{})
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
		Name: "hbgraph_rate_limited_total", Help: "GraphQL requests answered 429: their client address was over --rate-limit.",
	})
	m.registry.MustRegister(rateLimited)
	perClient := edge.RateLimit{Rate: rate.Limit(cfg.rateLimit), Burst: cfg.rateBurstOrDefault(), OnLimit: rateLimited.Inc, Key: rateKey}
	authRefused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hbgraph_unauthenticated_total", Help: "GraphQL requests answered 401, by reason: missing (with --auth-read=required), malformed or invalid token.",
	}, []string{"reason"})
	m.registry.MustRegister(authRefused)
	authenticate := edge.Authenticate{ReadsNeedToken: cfg.authRead == "required", OnRefused: func(reason string) { authRefused.WithLabelValues(reason).Inc() }}
	if sec.verifier != nil {
		authenticate.Verifier = sec.verifier
	}

	mux := http.NewServeMux()
	// CORS first (a preflight is answered before anything counts it), then
	// the request id and log line, the caller, the caller's rate, load
	// shedding.
	mux.Handle("/query", cfg.cors.parsed.Handler(observe(log, m, cfg.maxBodyBytes, cfg.requestTimeout,
		authenticate.Middleware(perClient.Middleware(limiter.Middleware(loaders.Middleware(st, loaderCfg, gql)))))))
	graphiql.Register(mux, "/query")        // GraphiQL at /, every asset served from here (offline)
	mux.HandleFunc("GET /healthz", healthz) // load balancers probe the gateway's own port
	mux.HandleFunc("GET /readyz", readyz)

	// Metrics and the profiler expose internals: on their own listener,
	// loopback by default, never beside /query.
	adminMux := http.NewServeMux()
	adminMux.Handle("GET /metrics", promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{}))
	adminMux.HandleFunc("GET /healthz", healthz)
	adminMux.HandleFunc("GET /readyz", readyz)
	if cfg.pprof {
		adminMux.HandleFunc("GET /debug/pprof/", pprof.Index)
		adminMux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		adminMux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		adminMux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		adminMux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return edge.Headers(mux), edge.Headers(adminMux)
}

// rateKey is whose bucket a request spends: its token's subject, or its
// client address when anonymous.
func rateKey(r *http.Request) string {
	if p := auth.From(r.Context()); p.Subject != "" {
		return "sub:" + p.Subject
	}
	return "addr:" + edge.ClientAddress(r)
}

// errorCode chooses the code of an error a resolver returned.
func errorCode(err error) string {
	switch {
	case errors.Is(err, auth.ErrUnauthenticated):
		return codes.Unauthenticated
	case errors.Is(err, auth.ErrForbidden):
		return codes.Forbidden
	case errors.Is(err, store.ErrInvalidInput):
		return codes.BadUserInput
	case errors.Is(err, store.ErrNotFound):
		return codes.NotFound
	case errors.Is(err, store.ErrAlreadyExists):
		return codes.AlreadyExists
	case errors.Is(err, store.ErrConflict):
		return codes.Conflict
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return codes.Unavailable
	case errors.Is(err, store.ErrCorrupt):
		// Damage or a bug: the row key goes to the log, not the client.
		return codes.Internal
	}
	return codes.Internal
}

// presentError is the one place GraphQL error codes are chosen. An internal
// error is logged with the request id and reaches the client only as that
// id: no message or stack of ours leaks.
func presentError(log zerolog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gerr := graphql.DefaultErrorPresenter(ctx, err)
		code := errorCode(err)
		if given, ok := gerr.Extensions["code"].(string); ok {
			if codes.Known(given) {
				return gerr
			}
			// A library's code outside the vocabulary (the README lists
			// every code a client can receive): a bug of ours to map.
			log.Warn().Str("code", given).Msg("error code outside the vocabulary")
		}
		// gqlgen's own errors about the request (a malformed body, a
		// persisted-query hash that does not match, introspection turned
		// off) wrap no error of ours: the client has to change the request.
		if direct, ok := err.(*gqlerror.Error); ok && direct.Err == nil && code == codes.Internal {
			code = codes.BadUserInput
		}
		// The entity resolvers report per representation (_entities.N); an
		// error of _entities itself is gqlgen refusing a representation (an
		// unknown __typename, a missing key field): the caller's input.
		if code == codes.Internal && len(gerr.Path) == 1 && gerr.Path[0] == ast.PathName("_entities") {
			code = codes.BadUserInput
		}
		if code == codes.Internal {
			id := ""
			if r := explain.From(ctx); r != nil {
				id = r.ID
			}
			log.Error().Str("request_id", id).Err(err).Str("path", gerr.Path.String()).Msg("internal error")
			gerr.Message = "internal error (request id " + id + ")"
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
	st, err := store.New(hc, store.Options{})
	if err != nil {
		hc.Close()
		return nil, nil, err
	}
	return hc, st, nil
}

// repair runs store.Repair once and prints what it fixed.
func repair(cfg config, log zerolog.Logger) error {
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
	hc, st, err := openStore(cfg, log)
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
	if err := compactAfterImport(ctx, st, results); err != nil {
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
func compactAfterImport(ctx context.Context, st *store.Store, results []importer.Result) error {
	var imported int64
	for _, r := range results {
		imported += r.Imported
	}
	if imported == 0 {
		return nil
	}
	start := time.Now()
	compacted, err := st.Compact(ctx)
	if err != nil {
		return fmt.Errorf("import: compacting: %w", err)
	}
	if compacted {
		fmt.Printf("compacted in %v\n", time.Since(start).Round(time.Millisecond))
	}
	return nil
}
