package store

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/store/keys"
)

// layout1Store returns a store over a copy of old's tables as layout 1
// wrote them (copyAsLayout1), with a clock that moves.
func layout1Store(t *testing.T, old *Store) (*Store, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	clk.Advance(time.Second)
	clk.step = 1
	s := newTestStoreWithClock(t, clk)
	if copyAsLayout1(t, old, s) == 0 {
		t.Fatal("no article rows copied")
	}
	return s, clk
}

// articlePages reads every page (size 3, forward by cursor) of author's
// timeline and of each category in cats: the articles' ids and titles and
// the cursors, one string per page.
func articlePages(t *testing.T, s *Store, author string, cats ...string) []string {
	t.Helper()
	var out []string
	for _, cat := range append([]string{""}, cats...) {
		cursor := ""
		for {
			p, err := s.Articles(t.Context(), author, ArticleQuery{Category: cat}, PageRequest{Size: 3, Cursor: cursor})
			if err != nil {
				t.Fatalf("Articles(%s, %q): %v", author, cat, err)
			}
			page := fmt.Sprintf("%s/%s:", author, cat)
			for i, a := range p.Articles {
				page += fmt.Sprintf(" %s %s %s %s %d %s", a.ID, a.Title, a.Category, a.Body, a.Updated.UnixMilli(), p.Cursors.At(i))
			}
			out = append(out, page)
			if !p.HasNext || len(p.Articles) == 0 {
				break
			}
			cursor = p.Cursors.At(len(p.Articles) - 1)
		}
	}
	return out
}

// TestOnlineMigrationReads: while a table of layout 1 migrates in batches
// of 3 rows, every page of every author (timeline and categories, newest
// first, ties by id descending) reads as after the migration, whether the
// author was moved by the background migration, on the spot, or not yet;
// through the migrating Store and through another one that finds the
// migration recorded. Afterwards the tables are those layout 2 wrote, and
// Repair finds nothing.
func TestOnlineMigrationReads(t *testing.T) {
	ctx := t.Context()
	oldClk := newFakeClock()
	old := newTestStoreWithClock(t, oldClk)
	authors := []string{"tie0", "tie1", "tie2", "tie3", "tie4", "tie5"}
	want := map[string][]string{}
	for _, a := range authors {
		postTies(t, old, oldClk, a)
	}
	for _, a := range authors {
		want[a] = articlePages(t, old, a, "c", "d")
	}
	before := storedRows(t, old)
	s, clk := layout1Store(t, old)

	if _, err := s.Articles(ctx, "tie0", ArticleQuery{}, PageRequest{Size: 1}); !errors.Is(err, ErrArticleLayout) {
		t.Fatalf("Articles before the migration began: %v; want ErrArticleLayout", err)
	}
	if migrating, err := s.BeginArticleMigration(ctx); err != nil || !migrating {
		t.Fatal(migrating, err)
	}
	batches := 0
	err := s.MigrateArticles(ctx, MigrateOptions{BatchRows: 3, Progress: func(p MigrationProgress) {
		if p.Done {
			return
		}
		batches++
		author := authors[batches%len(authors)]
		reader := s
		if batches%2 == 0 {
			fresh, err := New(s.hc, Options{Clock: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			reader = fresh
		}
		if batches%3 == 0 { // some authors only the background moves
			return
		}
		if got := articlePages(t, reader, author, "c", "d"); !slices.Equal(got, want[author]) {
			t.Errorf("batch %d, %s during the migration:\n%q\nwant\n%q", batches, author, got, want[author])
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if batches < 10 {
		t.Fatalf("%d batches; want the migration in many", batches)
	}
	for _, a := range authors {
		if got := articlePages(t, s, a, "c", "d"); !slices.Equal(got, want[a]) {
			t.Errorf("%s after the migration:\n%q\nwant\n%q", a, got, want[a])
		}
	}
	c, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, keys.ArticleLayoutRow())
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := decodeMs(c[keys.QualLayoutVersion]); !ok || v != keys.ArticleLayoutVersion || len(c) != 1 {
		t.Fatalf("layout row after the migration: %q; want only the version %d", c, keys.ArticleLayoutVersion)
	}
	after := storedRows(t, s)
	delete(after, keys.TableArticles+"/"+string(keys.ArticleLayoutRow()))
	delete(before, keys.TableArticles+"/"+string(keys.ArticleLayoutRow()))
	if !maps.Equal(before, after) {
		t.Fatalf("after the migration the tables differ from those layout 2 wrote")
	}
	if report, err := s.Repair(ctx); err != nil || len(report) != 0 {
		t.Fatalf("Repair after the migration: %v, %v; want nothing to fix", report, err)
	}
}

// TestOnlineMigrationResumes: a migration stopped part way (a crash
// between two rows) leaves the table recorded as migrating, with its
// cursor; a new Store serves it and a new MigrateArticles finishes it, as
// does Repair.
func TestOnlineMigrationResumes(t *testing.T) {
	for _, finish := range []string{"MigrateArticles", "Repair"} {
		t.Run(finish, func(t *testing.T) {
			ctx := t.Context()
			oldClk := newFakeClock()
			old := newTestStoreWithClock(t, oldClk)
			for _, a := range []string{"a1", "a2", "a3"} {
				postTies(t, old, oldClk, a)
			}
			want := articlePages(t, old, "a3", "c", "d")
			s, clk := layout1Store(t, old)
			moved := 0
			s.fault = func(p string) error {
				if p == pointArticleMigrate {
					if moved++; moved > 20 {
						return errCrash
					}
				}
				return nil
			}
			if err := s.MigrateArticles(ctx, MigrateOptions{BatchRows: 4}); !errors.Is(err, errCrash) {
				t.Fatalf("MigrateArticles with a crash: %v", err)
			}
			c, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, keys.ArticleLayoutRow())
			if err != nil {
				t.Fatal(err)
			}
			if c[keys.QualLayoutVersion] != nil || c[keys.QualLayoutMigratingFrom] == nil || c[keys.QualLayoutCursor] == nil {
				t.Fatalf("layout row after a crash: %q; want migrating, with a cursor", c)
			}
			next, err := New(s.hc, Options{Clock: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			if got := articlePages(t, next, "a3", "c", "d"); !slices.Equal(got, want) {
				t.Fatalf("after a crash:\n%q\nwant\n%q", got, want)
			}
			switch finish {
			case "MigrateArticles":
				if err := next.MigrateArticles(ctx, MigrateOptions{BatchRows: 4}); err != nil {
					t.Fatal(err)
				}
			case "Repair":
				report, err := next.Repair(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if report[fixArticleRowMigrated] == 0 || len(report) != 1 {
					t.Fatalf("Repair of a migration cut short: %v; want only rows migrated", report)
				}
			}
			if v, _, err := next.readArticleLayout(ctx); err != nil || v != keys.ArticleLayoutVersion {
				t.Fatalf("layout after the migration: %d, %v", v, err)
			}
			checkArticleInvariants(t, next)
			if report, err := next.Repair(ctx); err != nil || len(report) != 0 {
				t.Fatalf("Repair after the migration: %v, %v; want nothing to fix", report, err)
			}
		})
	}
}

// TestOnlineMigrationWrites: posts, updates and deletes of articles, and
// deletions of their authors, run while the table migrates in batches of
// 2 rows; afterwards every acknowledged write is there once, every delete
// gone, the indexes and counters agree (and Repair finds nothing).
func TestOnlineMigrationWrites(t *testing.T) {
	ctx := t.Context()
	oldClk := newFakeClock()
	old := newTestStoreWithClock(t, oldClk)
	authors := []string{"w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7"}
	var arts []Article
	for _, a := range authors {
		arts = append(arts, postTies(t, old, oldClk, a)...)
	}
	s, _ := layout1Store(t, old)
	if migrating, err := s.BeginArticleMigration(ctx); err != nil || !migrating {
		t.Fatal(migrating, err)
	}

	var mu sync.Mutex
	live := map[string]Article{} // id -> as acknowledged
	for _, a := range arts {
		live[a.ID] = a
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range 200 {
				select {
				case <-done:
					return
				default:
				}
				author := authors[rng.IntN(len(authors))]
				target := arts[rng.IntN(len(arts))]
				switch rng.IntN(3) {
				case 0:
					a, err := s.PostArticle(ctx, author, fmt.Sprintf("new %d %d", w, i), "fresh words", "d")
					if err != nil {
						t.Errorf("post: %v", err)
						return
					}
					mu.Lock()
					live[a.ID] = a
					mu.Unlock()
				case 1:
					title := fmt.Sprintf("updated %d %d", w, i)
					cat := "e"
					a, err := s.UpdateArticle(ctx, target.ID, &title, nil, &cat)
					// UNAVAILABLE: the article was deleted while the update
					// was made (by another worker, whose delete takes it out
					// of live), so whether the update applied cannot matter.
					if errors.Is(err, ErrNotFound) || errors.Is(err, ErrUnavailable) {
						continue
					}
					if err != nil {
						t.Errorf("update: %v", err)
						return
					}
					mu.Lock()
					// Of two updates acknowledged at once, the one stamped
					// later is the one kept, whichever returned last.
					if was, ok := live[a.ID]; ok && !a.Updated.Before(was.Updated) {
						live[a.ID] = a
					}
					mu.Unlock()
				case 2:
					err := s.DeleteArticle(ctx, target.ID)
					if errors.Is(err, ErrNotFound) {
						continue
					}
					if err != nil {
						t.Errorf("delete: %v", err)
						return
					}
					mu.Lock()
					delete(live, target.ID)
					mu.Unlock()
				}
			}
		}()
	}
	err := s.MigrateArticles(ctx, MigrateOptions{BatchRows: 2, Pause: time.Millisecond})
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !s.ArticleMigration().Done {
		t.Fatal("migration not done")
	}
	// An update that lost a race with a delete may have been acknowledged
	// before the delete: live holds what was acknowledged last per id.
	for _, author := range authors {
		checkTimeline(t, s, author, live, 5, "after the migration")
	}
	checkArticleInvariants(t, s)
	if report, err := s.Repair(ctx); err != nil || len(report) != 0 {
		t.Fatalf("Repair after the migration: %v, %v; want nothing to fix", report, err)
	}
}

// checkTimeline pages through author's timeline, pageSize at a time, and
// fails unless it lists exactly live's articles by author, newest first,
// each with its title and category.
func checkTimeline(t *testing.T, s *Store, author string, live map[string]Article, pageSize int, when string) {
	t.Helper()
	var got []string
	cursor := ""
	for {
		p, err := s.Articles(bg, author, ArticleQuery{}, PageRequest{Size: pageSize, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range p.Articles {
			got = append(got, a.ID)
			if w, ok := live[a.ID]; !ok {
				t.Errorf("%s %s: article %s %q is there, but was deleted", author, when, a.ID, a.Title)
			} else if w.Title != a.Title || w.Category != a.Category {
				t.Errorf("%s %s: article %s is %q in %s; want %q in %s", author, when, a.ID, a.Title, a.Category, w.Title, w.Category)
			}
		}
		if !p.HasNext {
			break
		}
		cursor = p.Cursors.At(len(p.Articles) - 1)
	}
	var want []Article
	for _, a := range live {
		if a.Author == author {
			want = append(want, a)
		}
	}
	if wantIDs := newestFirst(want); !slices.Equal(got, wantIDs) {
		t.Errorf("%s %s: %d articles %v; want %d %v", author, when, len(got), got, len(wantIDs), wantIDs)
	}
}
