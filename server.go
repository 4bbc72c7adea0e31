// Command hbgraph serves the hbgraph GraphQL gateway. So far it opens the
// store and answers health checks; the GraphQL endpoint comes next.
//
//	hbgraph [flags]                 serve
//	hbgraph [flags] create-tables   create the tables on a cluster (--hbase-zk)
//	hbgraph [flags] repair          put index rows and counters back in step
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store"
	"github.com/hbgraph/hbgraph/store/keys"
)

type config struct {
	listen   string
	dataDir  string
	hbaseZK  string
	regions  int
	sync     bool
	logLevel string
	command  string
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func parseConfig(args []string) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("hbgraph", flag.ContinueOnError)
	fs.StringVar(&cfg.listen, "listen", envOr("HBGRAPH_LISTEN", ":8080"), "address to serve on (HBGRAPH_LISTEN)")
	fs.StringVar(&cfg.dataDir, "data-dir", envOr("HBGRAPH_DATA_DIR", "./data"), "embedded engine's data directory (HBGRAPH_DATA_DIR)")
	fs.StringVar(&cfg.hbaseZK, "hbase-zk", envOr("HBGRAPH_HBASE_ZK", ""), "ZooKeeper quorum of an HBase cluster, e.g. zk1:2181,zk2:2181; empty: the embedded engine (HBGRAPH_HBASE_ZK)")
	fs.IntVar(&cfg.regions, "regions", 16, "create-tables: regions per table, pre-split on the row hash")
	syncDefault, err := strconv.ParseBool(envOr("HBGRAPH_SYNC", "false"))
	if err != nil {
		return cfg, fmt.Errorf("HBGRAPH_SYNC: %w", err)
	}
	fs.BoolVar(&cfg.sync, "sync", syncDefault, "fsync every commit for power-loss safety (HBGRAPH_SYNC)")
	fs.StringVar(&cfg.logLevel, "log-level", envOr("HBGRAPH_LOG_LEVEL", "info"), "debug, info, warn or error (HBGRAPH_LOG_LEVEL)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: hbgraph [flags] [create-tables | repair]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	switch rest := fs.Args(); {
	case len(rest) > 1:
		return cfg, fmt.Errorf("one command at most, got %q", rest)
	case len(rest) == 1:
		cfg.command = rest[0]
	}
	return cfg, nil
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

func run(args []string) error {
	cfg, err := parseConfig(args)
	if err != nil {
		return err
	}
	level, err := zerolog.ParseLevel(cfg.logLevel)
	if err != nil {
		return fmt.Errorf("log level: %w", err)
	}
	log := zerolog.New(os.Stderr).Level(level).With().Timestamp().Logger()
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
	default:
		return fmt.Errorf("unknown command %q (want create-tables or repair)", cfg.command)
	}
	log.Info().Str("listen", cfg.listen).Str("data_dir", cfg.dataDir).Bool("cluster", cfg.hbaseZK != "").
		Bool("sync", cfg.sync).Msg("starting")

	db, err := openHBase(cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		get, err := hrpc.NewGetStr(ctx, keys.TableGraph, "readyz")
		if err == nil {
			_, err = db.Get(get)
		}
		if err != nil {
			http.Error(w, "store unreachable", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	srv := &http.Server{
		Addr:              cfg.listen,
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info().Msg("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// repair runs store.Repair once and prints what it fixed.
func repair(cfg config, log zerolog.Logger) error {
	db, err := openHBase(cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	st, err := store.New(db, store.Options{})
	if err != nil {
		return err
	}
	report, err := st.Repair(context.Background())
	fmt.Print(report)
	return err
}
