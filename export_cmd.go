package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/tsuna/gohbase"

	"github.com/hbgraph/hbgraph/backup"
	"github.com/hbgraph/hbgraph/exporter"
	"github.com/hbgraph/hbgraph/importer"
	"github.com/hbgraph/hbgraph/store"
	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/keys"
)

// runExport writes the store of --data-dir (a stopped data directory, or
// a backup) or of the cluster (--hbase-zk) into --out as the JSON Lines
// files import reads, and prints a line per file and a summary.
func runExport(cfg config, log zerolog.Logger) error {
	if cfg.exportOut == "" {
		return errors.New("export needs --out DIR: a new or empty directory")
	}
	out := absDir(cfg.exportOut)
	if cfg.hbaseZK == "" && backup.Inside(out, absDir(cfg.dataDir)) {
		return errors.New("export: --out must be outside the data directory")
	}
	if err := exporter.CheckDir(out); err != nil {
		if errors.Is(err, exporter.ErrNotEmpty) {
			return fmt.Errorf("export: %s is not empty; export into a new or empty directory", out)
		}
		return fmt.Errorf("export: %w", err)
	}
	hc, st, from, err := openForExport(cfg, log)
	if err != nil {
		return err
	}
	defer hc.Close()
	opts := exporter.Options{Log: log}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		opts.Progress = os.Stderr // a terminal: redraw a progress line
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	results, err := exporter.Run(ctx, st, out, opts)
	if errors.Is(err, exporter.ErrNotEmpty) {
		return fmt.Errorf("export: %s is not empty; export into a new or empty directory", out)
	}
	if err != nil {
		if errors.Is(err, store.ErrArticleLayout) {
			return fmt.Errorf("export: the articles table is of an older layout: run `hbgraph repair` on a copy of it (restore the backup, or copy the stopped directory) and export that: %w", err)
		}
		return fmt.Errorf("%w (the files written are removed)", err)
	}
	var rows, size int64
	for _, r := range results {
		fmt.Printf("%-13s %10d rows %9.1f MB in %v (%.0f rows/s)  %s\n",
			r.Kind, r.Rows, float64(r.Bytes)/1e6, r.Elapsed.Round(time.Millisecond), r.Rate(), r.File)
		if r.Gone > 0 {
			fmt.Printf("  %d %s left out: a node they name is gone or being deleted (a deletion cut short; `hbgraph repair` finishes it)\n", r.Gone, r.Kind)
		}
		rows, size = rows+r.Rows, size+r.Bytes
	}
	fmt.Printf("exported %s into %s: %d rows, %.1f MB, in %v\n", from, out, rows, float64(size)/1e6, time.Since(start).Round(time.Millisecond))
	return nil
}

// openForExport opens the store to export, without writing to it: the
// cluster, or the embedded engine read-only over --data-dir or, when that
// is a backup (it holds embedded.BackupManifestName), over its checkpoint.
// It refuses a directory that holds no store, and one a running server
// holds. from names what was opened, for the summary.
func openForExport(cfg config, log zerolog.Logger) (hc gohbase.Client, st *store.Store, from string, err error) {
	if cfg.hbaseZK != "" {
		hc, st, err := openStore(cfg, log)
		return hc, st, "the cluster at " + cfg.hbaseZK, err
	}
	dir := absDir(cfg.dataDir)
	from = dir
	if _, err := os.Stat(filepath.Join(dir, embedded.BackupManifestName)); err == nil {
		if _, err := embedded.ReadBackupManifest(dir); err != nil {
			return nil, nil, "", fmt.Errorf("export: %w", err)
		}
		dir, from = filepath.Join(dir, embedded.BackupStoreDir), "the backup in "+dir
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, "", fmt.Errorf("export: %w", err)
	}
	holds, err := holdsStore(dir)
	if err != nil {
		return nil, nil, "", fmt.Errorf("export: %w", err)
	}
	if !holds {
		return nil, nil, "", fmt.Errorf("export: %s holds no hbgraph store (is --data-dir right?); export reads a stopped data directory or a backup, and creates nothing", dir)
	}
	// A scan reads each block once: caches would only hold memory (the
	// defaults, 256 MiB of blocks and 128 MiB of results, are the
	// server's).
	ehc, err := embedded.Open(embedded.Options{Dir: dir, Tables: keys.Tables(), ReadOnly: true, Logger: log,
		CacheBytes: 16 << 20, ResultCacheBytes: -1})
	if dirLocked(err) {
		return nil, nil, "", fmt.Errorf("export: data directory %s is in use: a running hbgraph (or another process) holds it. Stop the server first, or back it up while it runs (hbgraph backup --to BACKUP) and export the backup (hbgraph export --data-dir BACKUP --out DIR)", dir)
	}
	if err != nil {
		return nil, nil, "", fmt.Errorf("export: %w", err)
	}
	st, err = store.New(ehc, store.Options{})
	if err != nil {
		ehc.Close()
		return nil, nil, "", err
	}
	return ehc, st, from, nil
}

// openImportStore opens the store an import writes to, with the import's
// call timeouts (importer.DefaultCallTimeout).
func openImportStore(cfg config, log zerolog.Logger) (gohbase.Client, *store.Store, error) {
	hc, err := openHBase(cfg, log)
	if err != nil {
		return nil, nil, err
	}
	st, err := store.New(hc, store.Options{CallTimeout: cfg.importCallTimeout, BatchRowTimeout: importer.BatchRowTimeout, Feed: cfg.feed.options(),
		OverlapCalls: cfg.hbaseZK != ""})
	if err == nil {
		err = checkFamilies(st)
	}
	if err != nil {
		hc.Close()
		return nil, nil, err
	}
	return hc, st, nil
}
