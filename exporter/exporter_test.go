package exporter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/store"
)

func fill(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := t.Context()
	for _, id := range []string{"a", "b", "c"} {
		if _, err := st.ImportNode(ctx, id, "owner-"+id, store.Properties{"id": id}, time.UnixMilli(10), time.UnixMilli(20)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.ImportRelationships(ctx, []store.RelationshipImport{
		{Key: store.RelationshipKey{Start: "a", Type: "follow", End: "b"}, Created: time.UnixMilli(30), Updated: time.UnixMilli(30)},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ImportArticles(ctx, []store.ArticleImport{
		{Author: "a", Seq: 7, Title: "t", Body: "b", Category: "c", Posted: time.UnixMilli(40), Updated: time.UnixMilli(50)},
	}); err != nil {
		t.Fatal(err)
	}
}

// TestRunWritesImportsLinesTheSameEachTime: Run writes a line per node,
// relationship and article, with import's field names, and the same bytes
// twice over.
func TestRunWritesImportsLinesTheSameEachTime(t *testing.T) {
	st, _ := memstore.New(t)
	fill(t, st)
	dir := t.TempDir()
	first, second := filepath.Join(dir, "1"), filepath.Join(dir, "2")
	for _, out := range []string{first, second} {
		res, err := Run(t.Context(), st, out, Options{Log: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 3 || res[0].Rows != 3 || res[1].Rows != 1 || res[2].Rows != 1 {
			t.Fatalf("results %+v", res)
		}
	}
	want := map[string]string{
		NodesFile:         `{"id":"a","owner":"owner-a","properties":{"id":"a"},"created_at":10,"updated_at":20}`,
		RelationshipsFile: `{"start_node_id":"a","type":"follow","end_node_id":"b","properties":{},"created_at":30,"updated_at":30}`,
		ArticlesFile:      `{"id":7,"author_id":"a","title":"t","body":"b","category":"c","posted_at":40,"updated_at":50}`,
	}
	for name, line := range want {
		a, err := os.ReadFile(filepath.Join(first, name))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(second, name))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two exports of one store", name)
		}
		if !bytes.Contains(a, []byte(line+"\n")) {
			t.Errorf("%s:\n%s\nwant the line %s", name, a, line)
		}
		for _, l := range bytes.Split(bytes.TrimSuffix(a, []byte("\n")), []byte("\n")) {
			if !json.Valid(l) {
				t.Errorf("%s: not JSON: %s", name, l)
			}
		}
	}
	if fi, err := os.Stat(first); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the output directory: %v, %v; want mode 0700", fi.Mode(), err)
	}
}

// TestRunRefusesAFullDirectoryAndCleansUpAfterAFailure: a non-empty
// directory is refused untouched; an export that fails leaves no file.
func TestRunRefusesAFullDirectoryAndCleansUpAfterAFailure(t *testing.T) {
	st, _ := memstore.New(t)
	fill(t, st)
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "keep"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckDir(full); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("CheckDir of a full directory: %v", err)
	}
	if _, err := Run(t.Context(), st, full, Options{Log: zerolog.Nop()}); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("Run into a full directory: %v", err)
	}
	if entries, _ := os.ReadDir(full); len(entries) != 1 {
		t.Fatalf("the full directory holds %d entries after the refusal", len(entries))
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Run(ctx, st, out, Options{Log: zerolog.Nop()}); err == nil {
		t.Fatal("an export with its context cancelled succeeded")
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("a failed export left %d files", len(entries))
	}
}
