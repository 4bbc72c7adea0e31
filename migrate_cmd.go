package main

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/store"
)

// startArticleMigration serves a table articles of an older layout while
// it is migrated: it records the migration (so every request is answered
// from the start), or finds it recorded by the last run, then moves the rows in the background, paced by
// --migrate-batch-rows and --migrate-pause, logging its progress every 5 s
// and at the end. A table of a newer layout is refused.
func startArticleMigration(ctx context.Context, st *store.Store, cfg config, log zerolog.Logger) error {
	beginCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	migrating, err := st.BeginArticleMigration(beginCtx)
	cancel()
	if err != nil || !migrating {
		return err
	}
	log.Info().Int("batch_rows", cfg.migrateBatchRows).Int64("pause_ms", cfg.migratePause.Milliseconds()).
		Msg("article layout migration: the articles table is of an older layout; serving it while it is migrated in the background")
	go func() {
		start := time.Now()
		last := start
		err := st.MigrateArticles(ctx, store.MigrateOptions{BatchRows: cfg.migrateBatchRows, Pause: cfg.migratePause,
			Progress: func(p store.MigrationProgress) {
				if !p.Done && time.Since(last) < 5*time.Second {
					return
				}
				last = time.Now()
				log.Info().Int64("rows_read", p.Scanned).Int64("rows_migrated", p.Migrated).Bool("done", p.Done).
					Int64("duration_ms", time.Since(start).Milliseconds()).Msg("article layout migration")
			}})
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled):
			log.Info().Msg("article layout migration: stopped with the server; the next start resumes it")
		default:
			log.Error().Err(err).Msg("article layout migration failed; every read is still answered, and the next start (or repair) resumes it")
		}
	}()
	return nil
}

// migrationMetrics are the gauges of the article layout migration.
func migrationMetrics(st *store.Store) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hbgraph_article_migration_rows_migrated",
			Help: "Rows of an older article layout moved to the current one since start."},
			func() float64 { return float64(st.ArticleMigration().Migrated) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hbgraph_article_migration_rows_read",
			Help: "Rows of the articles table read by the background layout migration since start."},
			func() float64 { return float64(st.ArticleMigration().Scanned) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hbgraph_article_layout_current",
			Help: "1 once the articles table is known to be of the current layout, 0 while it is migrated."},
			func() float64 {
				if st.ArticleMigration().Done {
					return 1
				}
				return 0
			}),
	}
}
