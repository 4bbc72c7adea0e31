package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/backup"
	"github.com/hbgraph/hbgraph/store"
	"github.com/hbgraph/hbgraph/store/embedded"
)

// runBackup writes a verified backup of the data directory into --to: the
// server that holds the directory takes it (POST /backup on its admin
// listener); with no server, this process opens the directory itself.
func runBackup(cfg config, log zerolog.Logger) error {
	if cfg.hbaseZK != "" {
		return errors.New("backup copies the embedded engine's data directory; back a cluster up with HBase snapshots")
	}
	if cfg.backupTo == "" {
		return errors.New("backup needs --to DIR: a new or empty directory")
	}
	to, err := filepath.Abs(cfg.backupTo)
	if err != nil {
		return err
	}
	dataDir, err := filepath.Abs(cfg.dataDir)
	if err != nil {
		return err
	}
	if backup.Inside(to, dataDir) {
		return errors.New("the backup directory must be outside the data directory")
	}
	if entries, err := os.ReadDir(to); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty; back up into a new directory", to)
	}
	if !embedded.HoldsStore(dataDir) {
		return fmt.Errorf("%s holds no store: check --data-dir", dataDir)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	var m *embedded.BackupManifest
	by := "the server on " + cfg.adminListen
	if embedded.InUse(dataDir) {
		m, err = backup.Ask(ctx, cfg.adminListen, to, dataDir)
		if errors.Is(err, backup.ErrNoServer) {
			return fmt.Errorf("another process holds %s open and no hbgraph answers on --admin-listen %s: give backup the server's --admin-listen (or HBGRAPH_ADMIN_LISTEN)", dataDir, cfg.adminListen)
		}
	} else {
		by = "this process (no server holds the directory)"
		m, err = backupDirectly(ctx, cfg, log, to)
	}
	if err != nil {
		return fmt.Errorf("backup into %s failed, do not restore from it: %w", to, err)
	}
	var rows int64
	for _, name := range slices.Sorted(maps.Keys(m.Tables)) {
		fmt.Printf("%-22s %10d rows %10d records  sha256 %.16s\n", name, m.Tables[name].Rows, m.Tables[name].Records, m.Tables[name].SHA256)
		rows += m.Tables[name].Rows
	}
	fmt.Printf("backup of %s written to %s by %s and verified: %d rows, %.1f MB, in %v\n",
		dataDir, to, by, rows, float64(m.Bytes)/1e6, time.Since(start).Round(time.Millisecond))
	return nil
}

// backupDirectly opens the data directory, which no process holds, and
// backs it up.
func backupDirectly(ctx context.Context, cfg config, log zerolog.Logger, to string) (*embedded.BackupManifest, error) {
	hc, st, err := openStore(cfg, log)
	if err != nil {
		return nil, err
	}
	defer hc.Close()
	labels := backup.Labels()
	if err := st.CheckArticleLayout(ctx); errors.Is(err, store.ErrArticleLayout) {
		labels["article_layout_version"] = "older: run repair after restoring"
	} else if err != nil {
		return nil, err
	}
	return store.Backup[*embedded.BackupManifest](ctx, st, to, labels, nil)
}

// runRestore verifies the backup in --from and copies it into --data-dir.
func runRestore(cfg config) error {
	if cfg.hbaseZK != "" {
		return errors.New("restore writes the embedded engine's data directory; it has no cluster to restore into")
	}
	if cfg.restoreFrom == "" {
		return errors.New("restore needs --from DIR: a directory backup wrote")
	}
	from, err := filepath.Abs(cfg.restoreFrom)
	if err != nil {
		return err
	}
	dataDir, err := filepath.Abs(cfg.dataDir)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	m, err := embedded.RestoreBackup(ctx, from, dataDir)
	if err != nil {
		return err
	}
	fmt.Printf("restored %s (taken %s, %s) into %s and verified, in %v\n",
		from, m.Created.Format(time.RFC3339), m.Labels["hbgraph_version"], dataDir, time.Since(start).Round(time.Millisecond))
	return nil
}
