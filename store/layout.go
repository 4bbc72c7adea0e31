package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/hbgraph/hbgraph/store/keys"
)

// The table articles records the version of its timeline and category
// layouts (keys.ArticleLayoutVersion) in one cell, keys.QualLayoutVersion of
// the row keys.ArticleLayoutRow: an int64. ON-DISK FORMAT.
//
// Layout 1 (before the version was recorded) put articles posted in the same
// millisecond oldest first; layout 2 puts them newest first, and its rows
// have other keys. The rows of the two layouts never read as each other
// (keys.MigrateArticleRow), so serving a table of layout 1 would not
// misorder it: its articles would be missing, and Repair would count them
// as gone. Hence the check below, and the migration in Repair.

// ErrArticleLayout: the table articles holds rows of an older layout (or of
// a newer hbgraph) and the store serves no article from it until Repair
// has migrated it. Nothing was read or written.
var ErrArticleLayout = errors.New("store: the articles table has another layout")

// pointArticleMigrate is the fault point (see Store.fault) between writing
// a migrated row and deleting its layout 1 row.
const pointArticleMigrate = "article-migrate"

// fixArticleRowMigrated is the kind of fix Repair reports for each timeline
// or category row it moves from layout 1 to the current layout.
var fixArticleRowMigrated = fmt.Sprintf("article rows migrated to layout %d", keys.ArticleLayoutVersion)

// CheckArticleLayout returns nil if the table articles is of the current
// layout, and ErrArticleLayout if it is not. An empty table is claimed for
// the current layout. Every operation on articles calls it first; once it
// has succeeded it costs nothing, so its round trips (one Get; with no
// version recorded, a one-row key-only scan, then a CheckAndMutate or a
// second Get) are paid once per Store. A server may call it at start to
// fail early.
func (s *Store) CheckArticleLayout(ctx context.Context) error {
	if s.articleLayoutOK.Load() || s.migration.active.Load() {
		return nil
	}
	c, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, keys.ArticleLayoutRow())
	if err != nil {
		return err
	}
	v, present, err := layoutVersionOf(c)
	if err != nil {
		return err
	}
	if !present && migratingFromLayout1(c) {
		// Migrating online (migrate.go): served, each author's rows
		// moved before an operation touches them.
		s.migration.active.Store(true)
		return nil
	}
	if !present {
		rows, err := s.scan(ctx, scanRange{table: keys.TableArticles, family: keys.FamilyArticles, limit: 1, keyOnly: true})
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			// An empty table: record the version before the first row,
			// so that a table with rows and no version is of layout 1.
			_, err := s.checkAndPut(ctx, keys.TableArticles, keys.FamilyArticles, keys.ArticleLayoutRow(),
				keys.QualLayoutVersion, nil, cells{keys.QualLayoutVersion: encodeMs(keys.ArticleLayoutVersion)}, s.nowMs())
			if err != nil {
				return err
			}
		}
		// Rows, or a lost race to claim the table: another Store may have
		// claimed it and written since; its version tells.
		if v, present, err = s.readArticleLayout(ctx); err != nil {
			return err
		}
		if !present {
			return fmt.Errorf("%w: it holds rows but records no layout version, so it was written "+
				"before layout %d (articles posted in one millisecond newest first): "+
				"run `hbgraph repair` to migrate it", ErrArticleLayout, keys.ArticleLayoutVersion)
		}
	}
	if v != keys.ArticleLayoutVersion {
		return fmt.Errorf("%w: it records layout %d; this hbgraph reads layout %d", ErrArticleLayout, v, keys.ArticleLayoutVersion)
	}
	s.articleLayoutOK.Store(true)
	return nil
}

// migratingFromLayout1 reports whether the layout row's cells c record an
// online migration from layout 1 (MigrateArticles).
func migratingFromLayout1(c cells) bool {
	from, ok := decodeMs(c[keys.QualLayoutMigratingFrom])
	return ok && from == 1
}

// readArticleLayout reads the recorded layout version; present is false if
// none is recorded.
func (s *Store) readArticleLayout(ctx context.Context) (v int64, present bool, err error) {
	c, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, keys.ArticleLayoutRow())
	if err != nil {
		return 0, false, err
	}
	return layoutVersionOf(c)
}

// layoutVersionOf is readArticleLayout of the layout row's cells c.
func layoutVersionOf(c cells) (v int64, present bool, err error) {
	raw := c[keys.QualLayoutVersion]
	if raw == nil {
		return 0, false, nil
	}
	v, ok := decodeMs(raw)
	if !ok {
		return 0, false, fmt.Errorf("%w: corrupt layout version %x", ErrArticleLayout, raw)
	}
	return v, true, nil
}

// migrateArticleLayout brings a table articles of layout 1 to the current
// layout and records the version: each timeline and category row of layout
// 1 is written under its current key with the same cells and timestamp,
// then deleted with a marker at that timestamp. A table that records the
// current version is left alone at the cost of one Get.
//
// It is safe to stop and run again: the version is recorded last, so until
// then CheckArticleLayout keeps article operations away, and each row is
// written again identically, at the same timestamp, before its old row
// goes. fix is called with fixArticleRowMigrated for every row moved.
func (s *Store) migrateArticleLayout(ctx context.Context, fix func(kind string, n int)) error {
	v, present, err := s.readArticleLayout(ctx)
	if err != nil {
		return err
	}
	if present {
		if v != keys.ArticleLayoutVersion {
			return fmt.Errorf("%w: it records layout %d; this hbgraph reads layout %d", ErrArticleLayout, v, keys.ArticleLayoutVersion)
		}
		return nil
	}
	if c, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, keys.ArticleLayoutRow()); err != nil {
		return err
	} else if migratingFromLayout1(c) {
		// A server is migrating it, or was: finish its migration, at full
		// speed, moving each row only if no one has.
		before := s.migration.migrated.Load()
		if err := s.MigrateArticles(ctx, MigrateOptions{BatchRows: articleChunkRows}); err != nil {
			return err
		}
		if n := s.migration.migrated.Load() - before; n > 0 {
			fix(fixArticleRowMigrated, int(n))
		}
		return nil
	}
	all := scanRange{table: keys.TableArticles, family: keys.FamilyArticles, chunkRows: articleChunkRows}
	err = s.scanAll(ctx, all, func(rw row) (bool, error) {
		to, ok := keys.MigrateArticleRow(rw.key)
		if !ok {
			return true, nil
		}
		if err := s.put(ctx, keys.TableArticles, keys.FamilyArticles, to, rw.cells, rw.ts); err != nil {
			return false, err
		}
		if err := s.faultPoint(pointArticleMigrate); err != nil {
			return false, err
		}
		if err := s.deleteRow(ctx, keys.TableArticles, rw.key, rw.ts); err != nil {
			return false, err
		}
		fix(fixArticleRowMigrated, 1)
		return true, nil
	})
	if err != nil {
		return err
	}
	if err := s.put(ctx, keys.TableArticles, keys.FamilyArticles, keys.ArticleLayoutRow(),
		cells{keys.QualLayoutVersion: encodeMs(keys.ArticleLayoutVersion)}, s.nowMs()); err != nil {
		return err
	}
	s.articleLayoutOK.Store(true)
	return nil
}
