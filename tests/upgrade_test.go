package tests

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/keys"
)

// copyAsLayout1 copies the stopped data directory src into the new one
// dst as hbgraph wrote it before article layout 2: each timeline and
// category row's last 8 bytes hold the article id as it is (not desc), and
// table articles records no layout. Each row's cells are copied at its
// newest timestamp. It returns the article rows rewritten.
func copyAsLayout1(t *testing.T, src, dst string) int {
	t.Helper()
	ctx := context.Background()
	from, err := embedded.Open(embedded.Options{Dir: src, Tables: keys.Tables(), ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer from.Close()
	to, err := embedded.Open(embedded.Options{Dir: dst, Tables: keys.Tables()})
	if err != nil {
		t.Fatal(err)
	}
	defer to.Close()
	n := 0
	for table, fams := range keys.Tables() {
		sc, err := hrpc.NewScanStr(ctx, table)
		if err != nil {
			t.Fatal(err)
		}
		scanner := from.Scan(sc)
		for {
			res, err := scanner.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			key := bytes.Clone(res.Cells[0].Row)
			values := map[string][]byte{}
			var ts uint64
			for _, cell := range res.Cells {
				values[string(cell.Qualifier)] = bytes.Clone(cell.Value)
				ts = max(ts, *cell.Timestamp)
			}
			if table == keys.TableArticles {
				if bytes.Equal(key, keys.ArticleLayoutRow()) {
					continue
				}
				var seq uint64
				if k, err := keys.DecodeTimeline(key); err == nil {
					seq = k.Seq
				} else if k, err := keys.DecodeCategory(key); err == nil {
					seq = k.Article.Seq
				}
				if seq != 0 {
					key = binary.BigEndian.AppendUint64(key[:len(key)-8], seq)
					n++
				}
			}
			put, err := hrpc.NewPutStr(ctx, table, string(key), map[string]map[string][]byte{fams[0]: values},
				hrpc.Timestamp(time.UnixMilli(int64(ts))))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := to.Put(put); err != nil {
				t.Fatal(err)
			}
		}
		scanner.Close()
	}
	return n
}

// upgradeAuthors are the authors TestUpgradeWithoutDowntime writes.
var upgradeAuthors = []string{"up0", "up1", "up2"}

// articlePagesHTTP reads every page (3 articles) of author's timeline and
// of categories c and d, forward by cursor: one string per page with each
// article's id, title, category, times and cursor.
func articlePagesHTTP(t *testing.T, s *server, author string) []string {
	t.Helper()
	var out []string
	for _, cat := range []any{nil, "c", "d"} {
		var after any
		for {
			var res struct {
				Node struct {
					Articles struct {
						Edges []struct {
							Cursor string
							Node   articleOut
						}
						PageInfo struct{ HasNextPage bool }
					}
				}
			}
			s.mustDo(t, `query($a: ID!, $c: String, $after: String) { node(id: $a) {
				articles(category: $c, first: 3, after: $after) { edges { cursor node { `+articleFields+` } } pageInfo { hasNextPage } } } }`,
				map[string]any{"a": author, "c": cat, "after": after}, &res)
			page := fmt.Sprintf("%s/%v:", author, cat)
			for _, e := range res.Node.Articles.Edges {
				a := e.Node
				page += fmt.Sprintf(" %s %s %s %s %s %s", a.ID, a.Title, a.Category, a.PostedAt, a.UpdatedAt, e.Cursor)
			}
			out = append(out, page)
			edges := res.Node.Articles.Edges
			if !res.Node.Articles.PageInfo.HasNextPage || len(edges) == 0 {
				break
			}
			after = edges[len(edges)-1].Cursor
		}
	}
	return out
}

func allPagesHTTP(t *testing.T, s *server) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, a := range upgradeAuthors {
		out[a] = articlePagesHTTP(t, s, a)
	}
	return out
}

// TestUpgradeWithoutDowntime: a data directory of article layout 1 is
// served at once (no `repair` first) while it migrates in the background,
// in tiny batches; every page of every author, on both executors, reads
// as before the downgrade; killed with SIGKILL part way, the next start
// resumes; writes during the migration are all there once after it; and
// the layout is recorded as the current one at the end (a `repair` finds
// nothing).
func TestUpgradeWithoutDowntime(t *testing.T) {
	dir := t.TempDir()
	s := startServerAt(t, dir)
	for _, a := range upgradeAuthors {
		s.createNode(t, a, nil)
		// Ten articles a request, so that some share a millisecond.
		for batch := range 6 {
			var m strings.Builder
			m.WriteString("mutation {")
			for i := range 10 {
				cat := "c"
				if i%3 == 0 {
					cat = "d"
				}
				fmt.Fprintf(&m, ` p%d: postArticle(authorId: %q, title: "%s %d.%d", body: "words here", category: %q) { id }`, i, a, a, batch, i, cat)
			}
			m.WriteString("}")
			s.mustDo(t, m.String(), nil, nil)
		}
	}
	want := allPagesHTTP(t, s)
	s.stop(t)
	dir = t.TempDir()
	if n := copyAsLayout1(t, s.dataDir, dir); n != 2*60*len(upgradeAuthors) {
		t.Fatalf("rewrote %d rows as layout 1, want %d", n, 2*60*len(upgradeAuthors))
	}

	// 360 rows in batches of 2, 30 ms apart: more than 5 s; killed part way.
	slow := []string{"--migrate-batch-rows", "2", "--migrate-pause", "30ms"}
	s = startServerAt(t, dir, append([]string{"--executor", "plan"}, slow...)...)
	for s.metric(t, "hbgraph_article_migration_rows_migrated") < 20 {
		time.Sleep(20 * time.Millisecond)
	}
	if got := allPagesHTTP(t, s); !equalPages(got, want) {
		t.Fatalf("plan executor, during the migration:\n%.2000q\nwant\n%.2000q", got, want)
	}
	if s.metric(t, "hbgraph_article_layout_current") != 0 {
		t.Fatal("the migration finished before the kill; make it slower")
	}
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.exited
	s.waitErr = nil // killed on purpose

	s = startServerAt(t, dir, append([]string{"--executor", "gqlgen"}, slow...)...)
	if got := allPagesHTTP(t, s); !equalPages(got, want) {
		t.Fatalf("gqlgen executor, during the resumed migration:\n%.2000q\nwant\n%.2000q", got, want)
	}
	// Writes during the migration: up2's oldest article updated, its
	// second oldest deleted, one posted.
	var oldest struct {
		Node struct {
			Articles struct{ Edges []struct{ Node articleOut } }
		}
	}
	s.mustDo(t, `{ node(id: "up2") { articles(last: 2) { edges { node { `+articleFields+` } } } } }`, nil, &oldest)
	edges := oldest.Node.Articles.Edges
	if len(edges) != 2 {
		t.Fatalf("up2's oldest articles: %+v", edges)
	}
	s.mustDo(t, `mutation($id: ID!) { updateArticle(id: $id, title: "updated during the migration") { id } }`,
		map[string]any{"id": edges[1].Node.ID}, nil)
	s.mustDo(t, `mutation($id: ID!) { deleteArticle(id: $id) }`, map[string]any{"id": edges[0].Node.ID}, nil)
	posted := s.postArticle(t, "up2", "posted during the migration", "new words", "c")

	deadline := time.Now().Add(time.Minute)
	for s.metric(t, "hbgraph_article_layout_current") != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("migration not done after a minute\n%s", s.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	got := allPagesHTTP(t, s)
	for _, a := range upgradeAuthors[:2] {
		if !slices.Equal(got[a], want[a]) {
			t.Fatalf("%s after the migration:\n%.2000q\nwant\n%.2000q", a, got[a], want[a])
		}
	}
	var all struct {
		Node struct {
			Articles struct{ Edges []struct{ Node articleOut } }
		}
	}
	s.mustDo(t, `{ node(id: "up2") { articles(first: 70) { edges { node { id title } } } } }`, nil, &all)
	var ids []string
	titles := map[string]string{}
	for _, e := range all.Node.Articles.Edges {
		ids = append(ids, e.Node.ID)
		titles[e.Node.ID] = e.Node.Title
	}
	if len(ids) != 60 || ids[0] != posted.ID || slices.Contains(ids, edges[0].Node.ID) ||
		titles[edges[1].Node.ID] != "updated during the migration" {
		t.Fatalf("up2 after the migration: %d articles, first %s (posted %s), deleted %s there: %v, updated %q",
			len(ids), ids[0], posted.ID, edges[0].Node.ID, slices.Contains(ids, edges[0].Node.ID), titles[edges[1].Node.ID])
	}
	s.stop(t)
	if out, ok := runHbgraph(t, "", "repair", "--data-dir", dir); !ok || strings.TrimSpace(out) != "nothing to fix" {
		t.Fatalf("repair after the migration: %s", out)
	}
}

func equalPages(a, b map[string][]string) bool {
	for k, v := range b {
		if !slices.Equal(a[k], v) {
			return false
		}
	}
	return len(a) == len(b)
}
