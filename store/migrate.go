package store

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Online migration of the table articles from layout 1 (see layout.go).
//
// A server started on a table of layout 1 records in the layout row that
// it is migrating (keys.QualLayoutMigratingFrom), serves at once and moves
// the rows in the background, in key order, one batch at a time
// (MigrateArticles). Rows of the two layouts of one author differ only in
// their last 8 bytes and never read as each other, so the read and write
// paths read only the current layout; what keeps them correct is that an
// author's rows are all of the current layout before any operation on the
// author's articles reads or changes them (migrateAuthorFirst):
//
//   - authors below the cursor (keys.QualLayoutCursor, and this process's
//     copy of it) are done;
//   - any other author is migrated on the spot, under the author's lock,
//     by the first operation that needs it, and remembered as done.
//
// Each row moves as Repair moved it offline, but with a compare-and-set:
// its current-layout copy is written only if absent (same cells, same
// timestamp), then the layout 1 row is deleted at its own timestamp. Any
// number of migrators (this process's background one, its on-the-spot
// ones, another server's, Repair) may move the same row: the first copy
// wins and the others only delete the old row. A write to an author waits
// for the author to be done, so it always finds the current-layout row;
// within this process the background migrator moves an author's batch
// under the author's lock and only if no on-the-spot pass has done the
// author, so it never copies a row that a write has since changed or
// deleted. (Another server's migrator that read a row before this one
// deleted its copy writes it at its old timestamp, which the deletion's
// marker, at a later one, hides.)

// MigrateOptions paces MigrateArticles.
type MigrateOptions struct {
	// BatchRows is the rows read (and moved) per batch: at most
	// DefaultMigrateBatchRows if 0.
	BatchRows int
	// Pause is the wait between two batches, leaving the store to the
	// requests.
	Pause time.Duration
	// Progress, if set, is called after each batch and once at the end.
	Progress func(MigrationProgress)
}

// DefaultMigrateBatchRows is MigrateOptions.BatchRows when unset.
const DefaultMigrateBatchRows = 256

// MigrationProgress is how far a migration of the table articles is.
type MigrationProgress struct {
	Scanned  int64 // rows read by the background migration
	Migrated int64 // rows moved to the current layout, by it or on the spot
	Done     bool  // the table records the current layout
}

// articleMigration is a Store's state of an online migration.
type articleMigration struct {
	// active is set once the layout row says the table is migrating.
	active atomic.Bool
	// cursor: every author whose prefix sorts below it is done.
	cursor atomic.Pointer[[]byte]
	// authors holds the prefixes (as strings) of the authors migrated on
	// the spot.
	authors sync.Map
	// locks serialise the migrators of one author in this process.
	locks             [64]sync.Mutex
	scanned, migrated atomic.Int64
}

func (m *articleMigration) lock(prefix []byte) *sync.Mutex {
	return &m.locks[prefix[0]%byte(len(m.locks))]
}

// done reports whether the author with prefix holds rows of the current
// layout only.
func (m *articleMigration) done(prefix []byte) bool {
	if c := m.cursor.Load(); c != nil && bytes.Compare(prefix, *c) < 0 {
		return true
	}
	_, ok := m.authors.Load(string(prefix))
	return ok
}

// ArticleMigration reports the progress of this Store's online migration.
func (s *Store) ArticleMigration() MigrationProgress {
	return MigrationProgress{Scanned: s.migration.scanned.Load(), Migrated: s.migration.migrated.Load(),
		Done: s.articleLayoutOK.Load()}
}

// migrateAuthorFirst makes sure author's rows are all of the current
// layout before an operation reads or writes them: free once the table
// records the current layout, or for an author already done; else one scan
// of the author's rows, moving those of layout 1.
func (s *Store) migrateAuthorFirst(ctx context.Context, author string) error {
	if s.articleLayoutOK.Load() || !s.migration.active.Load() {
		return nil
	}
	return s.migrateAuthorPrefix(ctx, keys.AuthorPrefix(author))
}

// migrateAuthorsOfGets is migrateAuthorFirst for the authors of the rows
// of table articles that gets[idx] read.
func (s *Store) migrateAuthorsOfGets(ctx context.Context, gets []Get, idx []int) error {
	if s.articleLayoutOK.Load() || !s.migration.active.Load() {
		return nil
	}
	for _, i := range idx {
		if p, ok := keys.AuthorRowPrefix([]byte(gets[i].row)); ok {
			if err := s.migrateAuthorPrefix(ctx, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// migrateAuthorsOfImports is migrateAuthorFirst for the authors of arts:
// an article imported again must find its row of the current layout, or it
// would be created (and counted) twice.
func (s *Store) migrateAuthorsOfImports(ctx context.Context, arts []ArticleImport) error {
	if s.articleLayoutOK.Load() || !s.migration.active.Load() {
		return nil
	}
	for _, a := range arts {
		if err := s.migrateAuthorFirst(ctx, a.Author); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) migrateAuthorPrefix(ctx context.Context, prefix []byte) error {
	m := &s.migration
	if m.done(prefix) {
		return nil
	}
	mu := m.lock(prefix)
	mu.Lock()
	defer mu.Unlock()
	if m.done(prefix) {
		return nil
	}
	all := scanRange{table: keys.TableArticles, family: keys.FamilyArticles, start: prefix, stop: keys.PrefixEnd(prefix),
		chunkRows: articleChunkRows}
	err := s.scanAll(ctx, all, func(rw row) (bool, error) {
		_, err := s.migrateArticleRow(ctx, rw)
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("migrating the author's articles to layout %d: %w", keys.ArticleLayoutVersion, err)
	}
	m.authors.Store(string(bytes.Clone(prefix)), struct{}{})
	return nil
}

// migrateArticleRow moves rw, if it is a timeline or category row of
// layout 1, to the current layout: its copy is written only if absent,
// then it is deleted at its own timestamp. It reports whether rw was of
// layout 1.
func (s *Store) migrateArticleRow(ctx context.Context, rw row) (bool, error) {
	to, ok := keys.MigrateArticleRow(rw.key)
	if !ok {
		return false, nil
	}
	if _, err := s.checkAndPut(ctx, keys.TableArticles, keys.FamilyArticles, to, keys.QualArticleU, nil, rw.cells, rw.ts); err != nil {
		return false, err
	}
	if err := s.faultPoint(pointArticleMigrate); err != nil {
		return false, err
	}
	if err := s.deleteRow(ctx, keys.TableArticles, rw.key, rw.ts); err != nil {
		return false, err
	}
	s.migration.migrated.Add(1)
	return true, nil
}

// MigrateArticles migrates a table articles of layout 1 to the current
// layout while the store serves it, and records the layout: the server
// runs it in the background at start. It first records that the table is
// migrating, so that this Store (and any started later) serves it; it
// resumes where the last run stopped (the cursor), and may be stopped at
// any point (ctx, a crash). A table of the current layout, or empty, costs
// a Get or two. A table of another version is ErrArticleLayout.
func (s *Store) MigrateArticles(ctx context.Context, opts MigrateOptions) error {
	if opts.BatchRows <= 0 {
		opts.BatchRows = DefaultMigrateBatchRows
	}
	pos, migrating, err := s.beginArticleMigration(ctx)
	if err != nil || !migrating {
		return err
	}
	m := &s.migration
	report := func(done bool) {
		if opts.Progress != nil {
			p := s.ArticleMigration()
			p.Done = done
			opts.Progress(p)
		}
	}
	for {
		rows, err := s.scan(ctx, scanRange{table: keys.TableArticles, family: keys.FamilyArticles, start: pos, limit: opts.BatchRows})
		if err != nil {
			return err
		}
		var last []byte // the prefix of the batch's last author
		for i := 0; i < len(rows); {
			p, ok := keys.AuthorRowPrefix(rows[i].key)
			j := i + 1
			for ok && j < len(rows) && bytes.HasPrefix(rows[j].key, p) {
				j++
			}
			if ok {
				if err := s.migrateBatchOfAuthor(ctx, p, rows[i:j]); err != nil {
					return err
				}
				last = bytes.Clone(p)
			}
			i = j
		}
		m.scanned.Add(int64(len(rows)))
		if len(rows) < opts.BatchRows {
			break
		}
		pos = keys.After(rows[len(rows)-1].key)
		if last != nil && (m.cursor.Load() == nil || bytes.Compare(last, *m.cursor.Load()) > 0) {
			// Recorded for a restart: the authors below last are done.
			if err := s.put(ctx, keys.TableArticles, keys.FamilyArticles, keys.ArticleLayoutRow(),
				cells{keys.QualLayoutCursor: last}, s.nowMs()); err != nil {
				return err
			}
			m.cursor.Store(&last)
		}
		report(false)
		if opts.Pause > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(opts.Pause):
			}
		}
	}
	// Every row of layout 1 read above has moved, and none is written any
	// more: record the layout, then drop the migration's cells.
	if err := s.put(ctx, keys.TableArticles, keys.FamilyArticles, keys.ArticleLayoutRow(),
		cells{keys.QualLayoutVersion: encodeMs(keys.ArticleLayoutVersion)}, s.nowMs()); err != nil {
		return err
	}
	if err := s.deleteColumns(ctx, keys.TableArticles, keys.FamilyArticles, keys.ArticleLayoutRow(),
		[]string{keys.QualLayoutMigratingFrom, keys.QualLayoutCursor}, s.nowMs()); err != nil {
		return err
	}
	s.articleLayoutOK.Store(true)
	report(true)
	return nil
}

// migrateBatchOfAuthor moves the rows of layout 1 among rows, all of the
// author with prefix, unless an on-the-spot pass has done the author since
// they were read: then a write may have changed or deleted their copies.
func (s *Store) migrateBatchOfAuthor(ctx context.Context, prefix []byte, rows []row) error {
	m := &s.migration
	mu := m.lock(prefix)
	mu.Lock()
	defer mu.Unlock()
	if m.done(prefix) {
		return nil
	}
	for _, rw := range rows {
		if _, err := s.migrateArticleRow(ctx, rw); err != nil {
			return err
		}
	}
	return nil
}

// BeginArticleMigration records that a table articles of layout 1 is
// migrating, so that this Store serves it at once (MigrateArticles moves
// its rows), and reports whether there is a migration to run (begun now
// or before); for a table of the current layout, or empty, it does nothing
// and reports false. A table of another version is ErrArticleLayout.
func (s *Store) BeginArticleMigration(ctx context.Context) (bool, error) {
	_, migrating, err := s.beginArticleMigration(ctx)
	return migrating, err
}

// beginArticleMigration is BeginArticleMigration; it returns where the
// migration resumes and whether there is one to run.
func (s *Store) beginArticleMigration(ctx context.Context) (cursor []byte, migrating bool, err error) {
	layout, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, keys.ArticleLayoutRow())
	if err != nil {
		return nil, false, err
	}
	if layout[keys.QualLayoutVersion] != nil {
		return nil, false, s.CheckArticleLayout(ctx)
	}
	m := &s.migration
	if raw := layout[keys.QualLayoutMigratingFrom]; raw == nil {
		rows, err := s.scan(ctx, scanRange{table: keys.TableArticles, family: keys.FamilyArticles, limit: 2, keyOnly: true})
		if err != nil {
			return nil, false, err
		}
		if !hasArticleRows(rows) {
			return nil, false, s.CheckArticleLayout(ctx) // empty: claimed for the current layout
		}
		if err := s.put(ctx, keys.TableArticles, keys.FamilyArticles, keys.ArticleLayoutRow(),
			cells{keys.QualLayoutMigratingFrom: encodeMs(1)}, s.nowMs()); err != nil {
			return nil, false, err
		}
	} else if from, ok := decodeMs(raw); !ok || from != 1 {
		return nil, false, fmt.Errorf("%w: it records a migration from layout %x; this hbgraph migrates from layout 1", ErrArticleLayout, raw)
	}
	if c := layout[keys.QualLayoutCursor]; c != nil {
		cursor = bytes.Clone(c)
		if old := m.cursor.Load(); old == nil || bytes.Compare(cursor, *old) > 0 {
			m.cursor.Store(&cursor)
		}
	}
	m.active.Store(true)
	return cursor, true, nil
}

// hasArticleRows reports whether rows holds a row other than the layout
// row.
func hasArticleRows(rows []row) bool {
	for _, rw := range rows {
		if !bytes.Equal(rw.key, keys.ArticleLayoutRow()) {
			return true
		}
	}
	return false
}
