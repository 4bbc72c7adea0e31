package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/edge"
	"github.com/hbgraph/hbgraph/events"
	"github.com/hbgraph/hbgraph/graph/limits"
	"github.com/hbgraph/hbgraph/importer"
	"github.com/hbgraph/hbgraph/loaders"
	"github.com/hbgraph/hbgraph/store"
	"github.com/hbgraph/hbgraph/store/embedded"
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
	// federationAuthDirectives keeps @authenticated in _service's SDL,
	// when federationAuthDirectivesSet says the flag was given; else
	// authDirectives decides.
	federationAuthDirectives    bool
	federationAuthDirectivesSet bool

	dataDir string
	hbaseZK string
	// blockCacheBytes and resultCacheBytes size the embedded engine's
	// caches (with --memory-limit, what bounds its RSS).
	blockCacheBytes, resultCacheBytes int64
	// blockCacheSet tells whether a flag or HBGRAPH_BLOCK_CACHE_BYTES gave
	// blockCacheBytes (see blockCacheFor).
	blockCacheSet bool
	regions       int
	sync          bool
	logLevel      string
	logFormat     string

	// maxNonces caps the Increments the embedded engine remembers to
	// answer a re-send (not in import, which remembers none).
	maxNonces int

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

	maxInFlight int
	// migrateBatchRows and migratePause pace the background migration of
	// an older article layout (store.MigrateArticles).
	migrateBatchRows      int
	migratePause          time.Duration
	maxComplexityInFlight int
	queryCacheEntries     int
	queryCacheBytes       int64
	queryCacheMaxQuery    int
	memoryLimit           int64

	// maxResponseBytes bounds one response, maxResponseBytesInFlight the
	// responses of the requests in flight (graph/shed).
	maxResponseBytes         int64
	maxResponseBytesInFlight int64

	importFiles   importer.Files
	importWorkers int
	// importCallTimeout bounds each store call of an import (a batched
	// call gets more by its rows: importer.BatchRowTimeout).
	importCallTimeout time.Duration
	// exportOut is the directory the export command writes into.
	exportOut string

	// backupTo and restoreFrom are the backup directories of the backup
	// and restore commands; allowRemoteBackup serves POST /backup on an
	// admin listener beyond loopback.
	backupTo, restoreFrom string
	allowRemoteBackup     bool

	pprof       bool
	exampleData bool
	// executor runs queries: "gqlgen", or "plan" (graph/plan's compiled
	// plans, gqlgen for what they do not cover).
	executor string
	// gcPercent is GOGC for this process (0 keeps the environment's);
	// gcPercentSet tells whether a flag or HBGRAPH_GC_PERCENT gave it.
	gcPercent    int
	gcPercentSet bool

	// subscriptions are the --subscription* and --events-* flags.
	subscriptions subscriptionFlags
	// feed are the --feed-* flags (feed_config.go).
	feed feedFlags

	command string
}

// subscriptionFlags bound the GraphQL subscriptions and choose their bus.
type subscriptionFlags struct {
	perConnection, perCaller, buffer int
	natsURL                          string
	// feeds caps the home feeds watched (articlePosted(feedOf:)), and
	// feedsPerCaller those of one caller.
	feeds, feedsPerCaller int
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

// newCommand is hbgraph's command line (urfave/cli): serving is the root
// command, with its flags; create-tables, repair and import are commands
// with theirs. The flags every command uses (data directory, cluster,
// durability, logging, GC) may stand before or after the command. Each
// flag has an HBGRAPH_* environment variable. chosen is called with the
// command that was asked for ("" to serve) once its flags are parsed.
func newCommand(cfg *config, chosen func(cmd *cli.Command, name string) error) *cli.Command {
	def := limits.DefaultConfig
	shared := []cli.Flag{
		&cli.StringFlag{Name: "data-dir", Value: "./data", Usage: "embedded engine's data directory", Sources: cli.EnvVars("HBGRAPH_DATA_DIR"), Destination: &cfg.dataDir},
		&cli.Int64Flag{Name: "block-cache-bytes", Value: embedded.DefaultCacheBytes, Usage: "embedded engine: Pebble's block cache (outside the Go heap); import uses 1 GiB unless this is given", Sources: cli.EnvVars("HBGRAPH_BLOCK_CACHE_BYTES"), Destination: &cfg.blockCacheBytes},
		&cli.Int64Flag{Name: "result-cache-bytes", Value: embedded.DefaultResultCacheBytes, Usage: "embedded engine: decoded rows and first pages of scans kept (outside the Go heap); 0: none", Sources: cli.EnvVars("HBGRAPH_RESULT_CACHE_BYTES"), Destination: &cfg.resultCacheBytes},
		&cli.IntFlag{Name: "max-nonces", Value: embedded.DefaultMaxNonces, Usage: "embedded engine: Increments and Appends whose nonces are remembered for their grace period, so that a re-send counts once; past it the oldest are forgotten (import remembers none)", Sources: cli.EnvVars("HBGRAPH_MAX_NONCES"), Destination: &cfg.maxNonces},
		&cli.StringFlag{Name: "hbase-zk", Usage: "ZooKeeper quorum of an HBase cluster, e.g. zk1:2181,zk2:2181; empty: the embedded engine", Sources: cli.EnvVars("HBGRAPH_HBASE_ZK"), Destination: &cfg.hbaseZK},
		&cli.BoolFlag{Name: "sync", Usage: "fsync every commit for power-loss safety; import writes a log only with it", Sources: cli.EnvVars("HBGRAPH_SYNC"), Destination: &cfg.sync},
		&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error", Sources: cli.EnvVars("HBGRAPH_LOG_LEVEL"), Destination: &cfg.logLevel},
		&cli.StringFlag{Name: "log-format", Value: "json", Usage: "json or console", Sources: cli.EnvVars("HBGRAPH_LOG_FORMAT"), Destination: &cfg.logFormat},
		&cli.StringFlag{Name: "feed-types", Value: "follows", Usage: "comma-separated relationship types whose home feeds (Node.feed) are kept: a post fans out into its author's followers' feeds of each; empty: none", Sources: cli.EnvVars("HBGRAPH_FEED_TYPES"), Destination: &cfg.feed.types},
		&cli.Int64Flag{Name: "feed-fanout-max", Value: store.DefaultFeedFanoutMax, Usage: "followers an author's post is written to; an author with more is merged into its followers' feeds when they are read", Sources: cli.EnvVars("HBGRAPH_FEED_FANOUT_MAX"), Destination: &cfg.feed.fanoutMax},
		&cli.IntFlag{Name: "feed-backfill", Value: store.DefaultFeedBackfill, Usage: "newest articles of a node that following it brings into the follower's feed; 0: none", Sources: cli.EnvVars("HBGRAPH_FEED_BACKFILL"), Destination: &cfg.feed.backfill},
		&cli.IntFlag{Name: "gc-percent", Value: defaultGCPercent, Usage: "Go's GOGC for this process: heap growth between collections, in percent; 0 keeps GOGC from the environment; repair uses Go's 100 unless this is given", Sources: cli.EnvVars("HBGRAPH_GC_PERCENT"), Destination: &cfg.gcPercent},
	}
	serve := []cli.Flag{
		&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8080", Usage: "address to serve GraphQL and GraphiQL on; beyond loopback only when tokens are checked (--auth-jwks-url, --auth-jwks-file or --auth-hs256-secret-file) or with --insecure-no-auth", Sources: cli.EnvVars("HBGRAPH_LISTEN"), Destination: &cfg.listen, Local: true},
		&cli.StringFlag{Name: "admin-listen", Value: "127.0.0.1:9090", Usage: "address to serve /metrics, /debug/pprof/ (with --pprof), /healthz and /readyz on, apart from GraphQL", Sources: cli.EnvVars("HBGRAPH_ADMIN_LISTEN"), Destination: &cfg.adminListen, Local: true},
		&cli.BoolFlag{Name: "insecure-no-auth", Usage: "listen beyond loopback although hbgraph authenticates nobody: anyone who reaches it can rewrite everything", Sources: cli.EnvVars("HBGRAPH_INSECURE_NO_AUTH"), Destination: &cfg.insecureNoAuth, Local: true},
		&cli.StringFlag{Name: "cors-origins", Usage: "comma-separated origins whose browser pages may call /query (e.g. https://app.example.com); empty: none", Sources: cli.EnvVars("HBGRAPH_CORS_ORIGINS"), Destination: &cfg.cors.origins, Local: true},
		&cli.FloatFlag{Name: "rate-limit", Value: 0.0, Usage: "GraphQL requests a second each caller may send: a token's subject, or a client address when anonymous (a token bucket; past it 429 with Retry-After); 0: no limit. Behind a proxy anonymous clients share its address", Sources: cli.EnvVars("HBGRAPH_RATE_LIMIT"), Destination: &cfg.rateLimit, Local: true},
		&cli.IntFlag{Name: "rate-burst", Usage: "requests a caller may send at once before --rate-limit applies; 0: twice the rate", Sources: cli.EnvVars("HBGRAPH_RATE_BURST"), Destination: &cfg.rateBurst, Local: true},
		&cli.BoolFlag{Name: "cors-credentials", Usage: "let those pages send cookies and HTTP authentication", Sources: cli.EnvVars("HBGRAPH_CORS_CREDENTIALS"), Destination: &cfg.cors.credentials, Local: true},
		&cli.StringFlag{Name: "cors-headers", Usage: "comma-separated request headers those pages may send beyond Content-Type, Authorization, Accept and X-Request-Id", Sources: cli.EnvVars("HBGRAPH_CORS_HEADERS"), Destination: &cfg.cors.headers, Local: true},
		&cli.StringFlag{Name: "auth-jwks-url", Usage: "URL of the JSON Web Key Set whose keys sign bearer tokens (fetched at start, refreshed periodically and on an unknown kid); setting any key source turns authentication on", Sources: cli.EnvVars("HBGRAPH_AUTH_JWKS_URL"), Destination: &cfg.auth.JWKSURL, Local: true},
		&cli.StringFlag{Name: "auth-jwks-file", Usage: "file of a JSON Web Key Set, or PEM public keys, that sign bearer tokens", Sources: cli.EnvVars("HBGRAPH_AUTH_JWKS_FILE"), Destination: &cfg.auth.JWKSFile, Local: true},
		&cli.StringFlag{Name: "auth-hs256-secret-file", Usage: "file holding a shared secret (32 bytes or more) for HS256 tokens; only when you cannot use public keys", Sources: cli.EnvVars("HBGRAPH_AUTH_HS256_SECRET_FILE"), Destination: &cfg.auth.HS256SecretFile, Local: true},
		&cli.StringFlag{Name: "auth-issuer", Usage: "the iss claim tokens must carry; empty: not checked", Sources: cli.EnvVars("HBGRAPH_AUTH_ISSUER"), Destination: &cfg.auth.Issuer, Local: true},
		&cli.StringFlag{Name: "auth-audience", Usage: "an aud the tokens must carry; empty: not checked", Sources: cli.EnvVars("HBGRAPH_AUTH_AUDIENCE"), Destination: &cfg.auth.Audience, Local: true},
		&cli.DurationFlag{Name: "auth-leeway", Value: auth.DefaultLeeway, Usage: "clock skew allowed on exp, nbf and iat", Sources: cli.EnvVars("HBGRAPH_AUTH_LEEWAY"), Destination: &cfg.auth.Leeway, Local: true},
		&cli.DurationFlag{Name: "auth-max-token-lifetime", Usage: "refuse tokens that live longer than this (exp - iat, or exp - now without iat); 0: no bound. Every token must carry exp", Sources: cli.EnvVars("HBGRAPH_AUTH_MAX_TOKEN_LIFETIME"), Destination: &cfg.auth.MaxTokenLifetime, Local: true},
		&cli.StringFlag{Name: "auth-admin-scope", Value: auth.DefaultAdminScope, Usage: "the scope that lets a caller change every node, whoever owns it", Sources: cli.EnvVars("HBGRAPH_AUTH_ADMIN_SCOPE"), Destination: &cfg.auth.AdminScope, Local: true},
		&cli.StringFlag{Name: "auth-read", Value: "public", Usage: "public: queries need no token; required: every request needs a valid token", Sources: cli.EnvVars("HBGRAPH_AUTH_READ"), Destination: &cfg.authRead, Local: true},
		&cli.StringFlag{Name: "trusted-documents", Usage: "an Apollo persisted query manifest (JSON, ids the sha256 of each body): its operations can be sent by id", Sources: cli.EnvVars("HBGRAPH_TRUSTED_DOCUMENTS"), Destination: &cfg.trustedDocuments, Local: true},
		&cli.BoolFlag{Name: "trusted-documents-only", Usage: "run only the operations of --trusted-documents (by id, or by a body that hashes to one); callers with the admin scope may send others", Sources: cli.EnvVars("HBGRAPH_TRUSTED_DOCUMENTS_ONLY"), Destination: &cfg.trustedDocumentsOnly, Local: true},
		&cli.BoolFlag{Name: "federation-auth-directives", DefaultText: "with authentication", Usage: "tell gateways which fields need authentication (@authenticated in _service's SDL, for Apollo Router); on by default when authentication is configured, off without it; false for @apollo/gateway, which refuses supergraphs that carry it. hbgraph enforces the rules either way", Sources: cli.EnvVars("HBGRAPH_FEDERATION_AUTH_DIRECTIVES"), Destination: &cfg.federationAuthDirectives, Local: true},
		&cli.BoolFlag{Name: "introspection", Value: true, Usage: "answer introspection queries", Sources: cli.EnvVars("HBGRAPH_INTROSPECTION"), Destination: &cfg.introspection, Local: true},
		&cli.BoolFlag{Name: "explain", Usage: "add the store calls to every response's extensions; without it a request asks with \"extensions\": {\"explain\": true}", Sources: cli.EnvVars("HBGRAPH_EXPLAIN"), Destination: &cfg.explain, Local: true},
		&cli.IntFlag{Name: "max-complexity", Value: def.Complexity, Usage: "refuse operations more complex than this; a connection counts its page size times its fields", Sources: cli.EnvVars("HBGRAPH_MAX_COMPLEXITY"), Destination: &cfg.limits.Complexity, Local: true},
		&cli.IntFlag{Name: "max-depth", Value: def.Depth, Usage: "refuse operations nested deeper than this many fields", Sources: cli.EnvVars("HBGRAPH_MAX_DEPTH"), Destination: &cfg.limits.Depth, Local: true},
		&cli.IntFlag{Name: "max-tokens", Value: def.Tokens, Usage: "refuse documents of more lexical tokens, before parsing them", Sources: cli.EnvVars("HBGRAPH_MAX_TOKENS"), Destination: &cfg.limits.Tokens, Local: true},
		&cli.IntFlag{Name: "max-nesting", Value: def.Nesting, Usage: "refuse documents whose braces, brackets and parentheses nest deeper, before parsing them; more than --max-depth", Sources: cli.EnvVars("HBGRAPH_MAX_NESTING"), Destination: &cfg.limits.Nesting, Local: true},
		&cli.IntFlag{Name: "max-fields", Value: def.Fields, Usage: "refuse documents of more selections, each fragment spread counted as its fragment's, before validating them", Sources: cli.EnvVars("HBGRAPH_MAX_FIELDS"), Destination: &cfg.limits.Fields, Local: true},
		&cli.IntFlag{Name: "max-aliases", Value: def.Aliases, Usage: "refuse documents of more aliased fields", Sources: cli.EnvVars("HBGRAPH_MAX_ALIASES"), Destination: &cfg.limits.Aliases, Local: true},
		&cli.IntFlag{Name: "max-repeats", Value: def.Repeats, Usage: "refuse documents with more selections repeating a response name already in their selection set", Sources: cli.EnvVars("HBGRAPH_MAX_REPEATS"), Destination: &cfg.limits.Repeats, Local: true},
		&cli.IntFlag{Name: "max-fragments", Value: def.Fragments, Usage: "refuse documents of more fragment definitions", Sources: cli.EnvVars("HBGRAPH_MAX_FRAGMENTS"), Destination: &cfg.limits.Fragments, Local: true},
		&cli.IntFlag{Name: "max-variables", Value: def.Variables, Usage: "refuse documents of more variable definitions", Sources: cli.EnvVars("HBGRAPH_MAX_VARIABLES"), Destination: &cfg.limits.Variables, Local: true},
		&cli.IntFlag{Name: "max-errors", Value: def.Errors, Usage: "errors in one response; the rest are counted in a last one", Sources: cli.EnvVars("HBGRAPH_MAX_ERRORS"), Destination: &cfg.limits.Errors, Local: true},
		&cli.Int64Flag{Name: "max-body-bytes", Value: int64(1 << 20), Usage: "largest request body accepted", Sources: cli.EnvVars("HBGRAPH_MAX_BODY_BYTES"), Destination: &cfg.maxBodyBytes, Local: true},
		&cli.DurationFlag{Name: "request-timeout", Value: 10 * time.Second, Usage: "time one GraphQL request may take", Sources: cli.EnvVars("HBGRAPH_REQUEST_TIMEOUT"), Destination: &cfg.requestTimeout, Local: true},
		&cli.DurationFlag{Name: "batch-wait", Value: loaders.DefaultConfig.Wait, Usage: "how long a loader gathers keys before one batched store call", Sources: cli.EnvVars("HBGRAPH_BATCH_WAIT"), Destination: &cfg.batchWait, Local: true},
		&cli.IntFlag{Name: "batch-size", Value: loaders.DefaultConfig.BatchSize, Usage: "keys per batched store call; 1 turns batching off", Sources: cli.EnvVars("HBGRAPH_BATCH_SIZE"), Destination: &cfg.batchSize, Local: true},
		&cli.IntFlag{Name: "scan-concurrency", Usage: "page scans of one batch run at once; 0: 1 on the embedded engine (its scans use CPU, not round trips), 16 on a cluster", Sources: cli.EnvVars("HBGRAPH_SCAN_CONCURRENCY"), Destination: &cfg.scanConc, Local: true},
		&cli.IntFlag{Name: "migrate-batch-rows", Value: store.DefaultMigrateBatchRows, Usage: "rows of an older article layout read and moved per batch by the background migration at start", Sources: cli.EnvVars("HBGRAPH_MIGRATE_BATCH_ROWS"), Destination: &cfg.migrateBatchRows, Local: true},
		&cli.DurationFlag{Name: "migrate-pause", Value: 10 * time.Millisecond, Usage: "wait between two batches of the background migration", Sources: cli.EnvVars("HBGRAPH_MIGRATE_PAUSE"), Destination: &cfg.migratePause, Local: true},
		&cli.IntFlag{Name: "max-in-flight", Value: 256, Usage: "GraphQL requests in flight at once; more are answered 503 with Retry-After at once, never queued", Sources: cli.EnvVars("HBGRAPH_MAX_IN_FLIGHT"), Destination: &cfg.maxInFlight, Local: true},
		&cli.IntFlag{Name: "max-complexity-in-flight", Value: 10000, Usage: "sum of the complexity of the operations executing at once; an operation that would pass it is answered 503 with Retry-After (one operation alone always runs)", Sources: cli.EnvVars("HBGRAPH_MAX_COMPLEXITY_IN_FLIGHT"), Destination: &cfg.maxComplexityInFlight, Local: true},
		&cli.Int64Flag{Name: "max-response-bytes", Value: int64(defaultMaxResponseBytes), Usage: "largest response sent; one that grows past it is stopped and refused with RESPONSE_TOO_LARGE", Sources: cli.EnvVars("HBGRAPH_MAX_RESPONSE_BYTES"), Destination: &cfg.maxResponseBytes, Local: true},
		&cli.Int64Flag{Name: "max-response-bytes-in-flight", Value: int64(defaultMaxResponseBytesInFlight), Usage: "bytes of the responses being produced and written at once; a request that would pass it is answered 503 with Retry-After (one request alone always may reach --max-response-bytes)", Sources: cli.EnvVars("HBGRAPH_MAX_RESPONSE_BYTES_IN_FLIGHT"), Destination: &cfg.maxResponseBytesInFlight, Local: true},
		&cli.IntFlag{Name: "query-cache-entries", Value: 1000, Usage: "parsed and validated documents kept", Sources: cli.EnvVars("HBGRAPH_QUERY_CACHE_ENTRIES"), Destination: &cfg.queryCacheEntries, Local: true},
		&cli.Int64Flag{Name: "query-cache-bytes", Value: int64(64 << 20), Usage: "estimated memory of the documents kept, at 32 bytes per byte of query text", Sources: cli.EnvVars("HBGRAPH_QUERY_CACHE_BYTES"), Destination: &cfg.queryCacheBytes, Local: true},
		&cli.IntFlag{Name: "query-cache-max-query", Value: 16 << 10, Usage: "longest query text whose document is kept; longer ones are parsed every time", Sources: cli.EnvVars("HBGRAPH_QUERY_CACHE_MAX_QUERY"), Destination: &cfg.queryCacheMaxQuery, Local: true},
		&cli.Int64Flag{Name: "memory-limit", Value: int64(defaultMemoryLimit), Usage: "Go's soft memory limit (GOMEMLIMIT) in bytes: past it the collector runs whatever --gc-percent says; 0 keeps GOMEMLIMIT from the environment", Sources: cli.EnvVars("HBGRAPH_MEMORY_LIMIT"), Destination: &cfg.memoryLimit, Local: true},
		&cli.BoolFlag{Name: "example-data", Usage: "serve: write a small example graph (40 people, their follows, 105 articles) if the store is empty; a store that holds data is left as it is", Sources: cli.EnvVars("HBGRAPH_EXAMPLE_DATA"), Destination: &cfg.exampleData, Local: true},
		&cli.StringFlag{Name: "executor", Value: "plan", Usage: "what executes queries: gqlgen, or plan (each distinct query compiled once into a plan that reads the store level by level and writes the response in one buffer; mutations, introspection and what a plan does not cover go to gqlgen)", Sources: cli.EnvVars("HBGRAPH_EXECUTOR"), Destination: &cfg.executor, Local: true},
		&cli.BoolFlag{Name: "allow-remote-backup", Usage: "serve POST /backup (it writes a copy of the store into a directory the caller names) although --admin-listen is beyond loopback", Sources: cli.EnvVars("HBGRAPH_ALLOW_REMOTE_BACKUP"), Destination: &cfg.allowRemoteBackup, Local: true},
		&cli.IntFlag{Name: "subscriptions-per-connection", Value: 100, Usage: "active subscriptions one WebSocket connection may hold; more are refused with RATE_LIMITED", Sources: cli.EnvVars("HBGRAPH_SUBSCRIPTIONS_PER_CONNECTION"), Destination: &cfg.subscriptions.perConnection, Local: true},
		&cli.IntFlag{Name: "subscriptions-per-caller", Value: 1000, Usage: "active subscriptions one caller (a token's subject, or a client address when anonymous) may hold across its connections; 0: no cap", Sources: cli.EnvVars("HBGRAPH_SUBSCRIPTIONS_PER_CALLER"), Destination: &cfg.subscriptions.perCaller, Local: true},
		&cli.IntFlag{Name: "subscription-buffer", Value: events.DefaultBuffer, Usage: "events one subscription may have waiting to be sent; past it the connection is closed as a slow consumer (code 4008)", Sources: cli.EnvVars("HBGRAPH_SUBSCRIPTION_BUFFER"), Destination: &cfg.subscriptions.buffer, Local: true},
		&cli.IntFlag{Name: "subscriptions-feeds", Value: events.DefaultFeedReaders, Usage: "distinct home feeds (articlePosted(feedOf:)) this replica's subscriptions may watch; each post is checked against them in one batched read; more are refused with RATE_LIMITED", Sources: cli.EnvVars("HBGRAPH_SUBSCRIPTIONS_FEEDS"), Destination: &cfg.subscriptions.feeds, Local: true},
		&cli.IntFlag{Name: "subscriptions-feeds-per-caller", Value: events.DefaultFeedsPerCaller, Usage: "distinct home feeds (articlePosted(feedOf:)) one caller's subscriptions may watch, so that no caller takes every one of --subscriptions-feeds; more are refused with RATE_LIMITED; negative: no cap", Sources: cli.EnvVars("HBGRAPH_SUBSCRIPTIONS_FEEDS_PER_CALLER"), Destination: &cfg.subscriptions.feedsPerCaller, Local: true},
		&cli.StringFlag{Name: "events-nats", Usage: "URL of a NATS server (nats://host:4222) that carries subscription events between replicas; empty: this process only", Sources: cli.EnvVars("HBGRAPH_EVENTS_NATS"), Destination: &cfg.subscriptions.natsURL, Local: true},
		&cli.BoolFlag{Name: "pprof", Usage: "serve Go's profiler at /debug/pprof/ on the admin listener; off by default: it exposes internals", Sources: cli.EnvVars("HBGRAPH_PPROF"), Destination: &cfg.pprof, Local: true},
	}
	choose := func(name string) cli.ActionFunc {
		return func(_ context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				if name == "" {
					return fmt.Errorf("unknown command %q (want create-tables, repair, import, export, backup or restore)", cmd.Args().First())
				}
				return fmt.Errorf("one command at most, got %q after %q", cmd.Args().Slice(), name)
			}
			return chosen(cmd, name)
		}
	}
	root := &cli.Command{
		Name:            "hbgraph",
		Usage:           "serve a property graph and article timelines out of HBase as a GraphQL API (GraphiQL at /, GraphQL at /query)",
		Flags:           append(shared, serve...),
		Action:          choose(""),
		HideHelpCommand: true,
		// --version (and the version command) print versionText; cli's
		// own printer says only "hbgraph version X".
		Version: moduleVersion(),
		Commands: []*cli.Command{
			{
				Name:  "version",
				Usage: "print the version, the commit and the Go version this binary was built from",
				Action: func(_ context.Context, cmd *cli.Command) error {
					printVersion(cmd.Root().Writer)
					return nil
				},
			},
			{
				Name:  "create-tables",
				Usage: "create the tables on the cluster named by --hbase-zk",
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "regions", Value: 16, Usage: "regions per table, pre-split on the row hash", Sources: cli.EnvVars("HBGRAPH_REGIONS"), Destination: &cfg.regions},
				},
				Action: choose("create-tables"),
			},
			{
				Name:   "repair",
				Usage:  "put index rows, counters and word counts back in step",
				Action: choose("repair"),
			},
			{
				Name:  "import",
				Usage: "load JSON Lines files (--nodes, --relationships, --articles)",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "nodes", Usage: "JSON Lines file of nodes", Sources: cli.EnvVars("HBGRAPH_IMPORT_NODES"), Destination: &cfg.importFiles.Nodes},
					&cli.StringFlag{Name: "relationships", Usage: "JSON Lines file of relationships", Sources: cli.EnvVars("HBGRAPH_IMPORT_RELATIONSHIPS"), Destination: &cfg.importFiles.Relationships},
					&cli.StringFlag{Name: "articles", Usage: "JSON Lines file of articles", Sources: cli.EnvVars("HBGRAPH_IMPORT_ARTICLES"), Destination: &cfg.importFiles.Articles},
					&cli.IntFlag{Name: "import-workers", Usage: "batches of lines imported at once (0: 4 per CPU)", Sources: cli.EnvVars("HBGRAPH_IMPORT_WORKERS"), Destination: &cfg.importWorkers},
					&cli.DurationFlag{Name: "import-call-timeout", Value: importer.DefaultCallTimeout, Usage: "time one store call of an import may take; a batched call gets 2ms more for each row it carries", Sources: cli.EnvVars("HBGRAPH_IMPORT_CALL_TIMEOUT"), Destination: &cfg.importCallTimeout},
				},
				Action: choose("import"),
			},
			{
				Name:  "export",
				Usage: "write the nodes, relationships and articles of --data-dir (a stopped data directory or a backup) or of the cluster (--hbase-zk) as JSON Lines files that import reads, into --out",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "out", Usage: "directory to write nodes.jsonl, relationships.jsonl and articles.jsonl into: absent or empty", Sources: cli.EnvVars("HBGRAPH_EXPORT_OUT"), Destination: &cfg.exportOut},
				},
				Action: choose("export"),
			},
			{
				Name:  "backup",
				Usage: "write a verified point-in-time copy of the embedded engine's data directory into --to, asking the server that runs on it (over --admin-listen) if there is one",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "to", Usage: "directory to write the backup into: absent or empty", Sources: cli.EnvVars("HBGRAPH_BACKUP_TO"), Destination: &cfg.backupTo},
					&cli.StringFlag{Name: "admin-listen", Value: "127.0.0.1:9090", Usage: "admin listener of the server that holds the data directory", Sources: cli.EnvVars("HBGRAPH_ADMIN_LISTEN"), Destination: &cfg.adminListen},
				},
				Action: choose("backup"),
			},
			{
				Name:  "restore",
				Usage: "verify the backup in --from and copy it into --data-dir, which must be absent or empty",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "from", Usage: "directory of a backup written by backup", Sources: cli.EnvVars("HBGRAPH_RESTORE_FROM"), Destination: &cfg.restoreFrom},
				},
				Action: choose("restore"),
			},
		},
		// Errors are returned to main, which prints them once and exits 1.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		OnUsageError: func(_ context.Context, _ *cli.Command, err error, _ bool) error {
			return err
		},
	}
	showTrueDefaults(root)
	return root
}

// showTrueDefaults makes --help show the default of the bool flags that
// are on unless turned off: cli prints a default only for flags that take
// a value, so "--introspection" read as off.
func showTrueDefaults(cmd *cli.Command) {
	for _, f := range cmd.Flags {
		if b, ok := f.(*cli.BoolFlag); ok && b.Value && b.DefaultText == "" {
			b.DefaultText = "true"
		}
	}
	for _, sub := range cmd.Commands {
		showTrueDefaults(sub)
	}
}

// parseConfig parses args (without the program's name) and the
// environment. It returns flag.ErrHelp when help was asked for and shown.
func parseConfig(args []string) (config, error) {
	var cfg config
	ran := false
	root := newCommand(&cfg, func(cmd *cli.Command, name string) error {
		ran = true
		cfg.command = name
		cfg.gcPercentSet = cmd.IsSet("gc-percent")
		cfg.blockCacheSet = cmd.IsSet("block-cache-bytes")
		cfg.federationAuthDirectivesSet = cmd.IsSet("federation-auth-directives")
		return nil
	})
	if err := root.Run(context.Background(), append([]string{"hbgraph"}, args...)); err != nil {
		return cfg, err
	}
	if !ran {
		return cfg, flag.ErrHelp
	}
	return cfg, cfg.validate()
}

// validate checks what one flag alone cannot.
func (cfg *config) validate() error {
	switch {
	case cfg.maxBodyBytes < 1, cfg.requestTimeout <= 0,
		cfg.batchWait < 0, cfg.batchSize < 1, cfg.gcPercent < 0, cfg.scanConc < 0,
		cfg.maxInFlight < 1, cfg.maxComplexityInFlight < 1, cfg.queryCacheEntries < 0,
		cfg.maxResponseBytes < 1, cfg.maxResponseBytesInFlight < 1,
		cfg.queryCacheBytes < 0, cfg.queryCacheMaxQuery < 0, cfg.memoryLimit < 0,
		cfg.rateLimit < 0, cfg.rateBurst < 0, cfg.migrateBatchRows < 1, cfg.migratePause < 0:
		return errors.New("limits must be positive (batch-wait, scan-concurrency, memory-limit, rate-limit, rate-burst, migrate-pause and the query cache's may be 0)")
	case cfg.blockCacheBytes < 1<<20 || cfg.resultCacheBytes < 0:
		return errors.New("--block-cache-bytes must be at least 1 MiB (1048576), and --result-cache-bytes at least 0")
	case cfg.maxNonces < 1:
		return errors.New("--max-nonces must be positive")
	case cfg.feed.validate() != nil:
		return cfg.feed.validate()
	case cfg.command == "import" && cfg.importCallTimeout <= 0:
		return errors.New("--import-call-timeout must be positive")
	case cfg.limits.Nesting <= cfg.limits.Depth:
		return fmt.Errorf("--max-nesting (%d) must be more than --max-depth (%d): a query n fields deep nests n+1 braces", cfg.limits.Nesting, cfg.limits.Depth)
	case cfg.executor != "gqlgen" && cfg.executor != "plan":
		return fmt.Errorf("executor %q: want gqlgen or plan", cfg.executor)
	case cfg.logFormat != "json" && cfg.logFormat != "console":
		return fmt.Errorf("log format %q: want json or console", cfg.logFormat)
	case cfg.authRead != "public" && cfg.authRead != "required":
		return fmt.Errorf("--auth-read %q: want public or required", cfg.authRead)
	case cfg.authRead == "required" && !cfg.auth.Enabled():
		return errors.New("--auth-read=required needs a key source: --auth-jwks-url, --auth-jwks-file or --auth-hs256-secret-file")
	case cfg.auth.Leeway < 0:
		return errors.New("--auth-leeway must not be negative")
	case cfg.auth.MaxTokenLifetime < 0:
		return errors.New("--auth-max-token-lifetime must not be negative")
	case cfg.trustedDocumentsOnly && cfg.trustedDocuments == "":
		return errors.New("--trusted-documents-only needs --trusted-documents")
	}
	return cfg.cors.validate()
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

// importBlockCacheBytes is import's block cache unless one is given.
const importBlockCacheBytes = 1 << 30

// blockCacheFor is --block-cache-bytes, or its default for the command.
// import reads its files' worth of store back (each relationship's two
// nodes and degree counters), in rows spread over the whole table by their
// hashed keys, and exits when done: at 100,000 nodes, 1.1 GB of store,
// 1 GiB in place of 256 MiB took relationships from 19,076 to 21,372 rows
// a second. The cache fills only as blocks are read, so a small import
// uses no more than the server would.
func (cfg config) blockCacheFor() int64 {
	if cfg.command == "import" && !cfg.blockCacheSet {
		return importBlockCacheBytes
	}
	return cfg.blockCacheBytes
}

// authDirectives is --federation-auth-directives when given, else whether
// authentication is on: without it every caller may write, and
// @apollo/gateway (a newcomer's first gateway) refuses the directives.
func (cfg config) authDirectives() bool {
	if cfg.federationAuthDirectivesSet {
		return cfg.federationAuthDirectives
	}
	return cfg.auth.Enabled()
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
