package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/rs/zerolog"
	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/importer"
	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/keys"
)

// Client options for a real cluster, chosen for latency:
//   - FlushInterval 0: gohbase otherwise holds a lone RPC up to 20 ms
//     waiting for others to batch with; with 0 it sends what is queued at
//     once. The loaders already batch Gets into one SendBatch.
//   - RegionLookupTimeout 5 s and RegionReadTimeout 10 s (defaults: 30 s
//     and 30 s): a region server that does not answer is given up on well
//     before a GraphQL request's own timeout.
//
// Every store call carries its own deadline as well (store.Options).
func clusterOptions() []gohbase.Option {
	return []gohbase.Option{
		gohbase.FlushInterval(0),
		gohbase.RegionLookupTimeout(5 * time.Second),
		gohbase.RegionReadTimeout(10 * time.Second),
	}
}

// openHBase returns the cluster's client when cfg names a ZooKeeper quorum,
// otherwise the embedded engine over cfg.dataDir. A data directory that
// holds no store yet gets a new one, and the log says so, naming it: a
// mistyped --data-dir would otherwise serve an empty graph without a word.
func openHBase(cfg config, log zerolog.Logger) (gohbase.Client, error) {
	if cfg.hbaseZK != "" {
		return gohbase.NewClient(cfg.hbaseZK, clusterOptions()...), nil
	}
	if cfg.dataDir != "" {
		holds, err := holdsStore(cfg.dataDir)
		if err != nil {
			return nil, err
		}
		if !holds {
			log.Warn().Str("data_dir", absDir(cfg.dataDir)).Msg("no store in the data directory: creating a new, empty one")
		}
	}
	// import remembers no nonces: its calls reach the engine in this
	// process and are never re-sent, and each batch is its own op, so a
	// nonce could only ever be seen once; a 100,000-node import makes
	// millions of Increments in the grace period, past any cap. Nor does
	// it write a log (unless --sync): a kill loses the writes since the
	// last flush, which its rerun makes again, as it does those of the
	// batches in flight.
	// It sizes the key filter for its files once, rather than building
	// it again, from the whole store, each time the store doubles: at
	// 100,000 nodes, relationships 29,745-30,523 -> 31,482-31,858 rows/s
	// (3 pairs), 4% less CPU, 250 MB less peak RSS.
	var expected int64
	if cfg.command == "import" {
		expected = importer.ExpectedRecords(cfg.importFiles)
	}
	hc, err := embedded.Open(embedded.Options{Dir: cfg.dataDir, Tables: keys.Tables(), Sync: cfg.sync, Logger: log,
		CacheBytes: cfg.blockCacheFor(), ResultCacheBytes: cfg.resultCacheOption(),
		MaxNonces: cfg.maxNonces, NoNonces: cfg.command == "import", NoWAL: cfg.command == "import",
		ExpectedRecords: expected})
	if dirLocked(err) {
		return nil, fmt.Errorf("data directory %s is in use: another hbgraph (or another process) holds its lock; stop it first, or give each server its own --data-dir", absDir(cfg.dataDir))
	}
	return hc, err
}

// requireStore refuses a data directory that holds no store: what reads
// or copies a store (repair, export, backup) must not create an empty one
// where --data-dir was mistyped and then report on it.
func requireStore(cfg config, command string) error {
	if cfg.hbaseZK != "" {
		return nil
	}
	holds, err := holdsStore(cfg.dataDir)
	if err != nil {
		return err
	}
	if !holds {
		return fmt.Errorf("%s: %s holds no hbgraph store (is --data-dir right?); %s creates none", command, absDir(cfg.dataDir), command)
	}
	return nil
}

// holdsStore reports whether dir holds an embedded store (a Pebble
// database); a directory that does not exist holds none.
func holdsStore(dir string) (bool, error) {
	if dir == "" { // the in-memory engine
		return false, nil
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	desc, err := pebble.Peek(dir, vfs.Default)
	if err != nil {
		return false, fmt.Errorf("data directory %s: %w", absDir(dir), err)
	}
	return desc.Exists, nil
}

// dirLocked reports whether err is Pebble failing to take its data
// directory's lock (fcntl's EAGAIN: another process holds it).
func dirLocked(err error) bool {
	return err != nil && (errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK))
}

// absDir is dir as an absolute path, for messages: "./data" says little
// about which directory was meant.
func absDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// familyAttributes overrides gohbase's create-table defaults where hbgraph
// relies on HBase's: one version per cell (gohbase asks for 3).
var familyAttributes = map[string]string{
	"VERSIONS":    "1",
	"BLOOMFILTER": "ROW",
}

// createTables creates hbgraph's tables on a cluster, pre-split on the hash
// prefix every row key starts with. Tables that exist are left alone.
func createTables(ctx context.Context, admin gohbase.AdminClient, regions int, out io.Writer) error {
	splits, err := keys.SplitKeys(regions)
	if err != nil {
		return err
	}
	var failed []string
	for table, families := range keys.Tables() {
		fams := make(map[string]map[string]string, len(families))
		for _, f := range families {
			fams[f] = familyAttributes
		}
		var opts []func(*hrpc.CreateTable)
		if len(splits) > 0 {
			opts = append(opts, hrpc.SplitKeys(splits))
		}
		err := admin.CreateTable(hrpc.NewCreateTable(ctx, []byte(table), fams, opts...))
		switch {
		case err == nil:
			fmt.Fprintf(out, "created %s (families %s, %d regions)\n", table, strings.Join(families, ","), regions)
		case strings.Contains(err.Error(), "TableExistsException"):
			fmt.Fprintf(out, "exists  %s\n", table)
		default:
			fmt.Fprintf(out, "failed  %s: %v\n", table, err)
			failed = append(failed, table)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("create-tables: %d tables failed", len(failed))
	}
	return nil
}

var errNeedCluster = errors.New("create-tables needs --hbase-zk (HBGRAPH_HBASE_ZK): the embedded engine declares its tables itself")

// resultCacheOption is --result-cache-bytes as embedded.Options takes it:
// 0 there means the default, and a negative size none.
func (cfg config) resultCacheOption() int64 {
	if cfg.resultCacheBytes == 0 {
		return -1
	}
	return cfg.resultCacheBytes
}
