package tests

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// exportFiles are the files export writes and import reads, by import's
// flag.
var exportFiles = map[string]string{
	"--nodes":         "nodes.jsonl",
	"--relationships": "relationships.jsonl",
	"--articles":      "articles.jsonl",
}

// importDir imports the three files of dir into the data directory data.
func importDir(t *testing.T, data, dir string) {
	t.Helper()
	args := []string{"import", "--data-dir", data}
	for flag, name := range exportFiles {
		args = append(args, flag, filepath.Join(dir, name))
	}
	if out, ok := runHbgraph(t, "", args...); !ok { // a failed line fails the import
		t.Fatalf("import of %s failed:\n%s", dir, out)
	}
}

// exportTo exports the store of data (a data directory or a backup) into
// out, which it must create.
func exportTo(t *testing.T, data, out string) string {
	t.Helper()
	msg, ok := runHbgraph(t, "", "export", "--data-dir", data, "--out", out)
	if !ok {
		t.Fatalf("export of %s failed:\n%s", data, msg)
	}
	return msg
}

// sameFiles fails t unless the export files of a and b are byte for byte
// the same.
func sameFiles(t *testing.T, a, b string) {
	t.Helper()
	for _, name := range exportFiles {
		x, err := os.ReadFile(filepath.Join(a, name))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between %s (%d bytes) and %s (%d bytes)", name, a, len(x), b, len(y))
		}
	}
}

// roundTripExtras are lines the benchmark generator does not write: owned
// nodes, ids and properties that need escaping, an article updated after
// it was posted, articles posted in the same millisecond.
var roundTripExtras = map[string]string{
	"nodes.jsonl": `{"id":"owned-\u00e9\u65e5","owner":"sub|alice","properties":{"html":"<b>&amp;</b>","n":12345678901234567890,"list":[1,"two",null,true]},"created_at":1700000000000,"updated_at":1700000000500}
{"id":"a\"quote\\slash","properties":{},"created_at":5,"updated_at":5}
`,
	"relationships.jsonl": `{"start_node_id":"owned-\u00e9\u65e5","type":"knows","end_node_id":"a\"quote\\slash","properties":{"since":"<2020>"},"created_at":1700000001000,"updated_at":1700000002000}
`,
	"articles.jsonl": `{"id":900001,"author_id":"owned-\u00e9\u65e5","title":"edited","body":"posted then \u003cedited\u003e","category":"misc","posted_at":1700000003000,"updated_at":1700000009000}
{"id":900002,"author_id":"owned-\u00e9\u65e5","title":"tie one","body":"same millisecond","category":"misc","posted_at":1700000004000}
{"id":900003,"author_id":"owned-\u00e9\u65e5","title":"tie two","body":"same millisecond","category":"misc","posted_at":1700000004000}
`,
}

// TestExportImportRoundTrip: import a dataset (the benchmark generator's,
// and lines it does not write), export it, import the export into a fresh
// directory and export again: the two exports are byte for byte the same,
// and exporting the same store twice gives the same files.
func TestExportImportRoundTrip(t *testing.T) {
	parallelTest(t)
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	gen := exec.Command(goTool(), "run", "github.com/hbgraph/hbgraph/bench/gen", "-out", src, "-nodes", "300")
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("bench/gen: %v\n%s", err, out)
	}
	for name, extra := range roundTripExtras {
		f, err := os.OpenFile(filepath.Join(src, name), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteString(extra)
		if err := errors.Join(err, f.Close()); err != nil {
			t.Fatal(err)
		}
	}
	d1, d2 := filepath.Join(tmp, "d1"), filepath.Join(tmp, "d2")
	e1, e1again, e2 := filepath.Join(tmp, "e1"), filepath.Join(tmp, "e1again"), filepath.Join(tmp, "e2")
	importDir(t, d1, src)
	summary := exportTo(t, d1, e1)
	if !strings.Contains(summary, "exported "+d1+" into "+e1) {
		t.Errorf("export's summary does not say what went where:\n%s", summary)
	}
	importDir(t, d2, e1)
	exportTo(t, d2, e2)
	sameFiles(t, e1, e2)
	exportTo(t, d1, e1again)
	sameFiles(t, e1, e1again)

	// Every line of the source is in the export, and what the generator
	// leaves out (an owner, an update time) is kept.
	for name := range roundTripExtras {
		in, _ := os.ReadFile(filepath.Join(src, name))
		out, _ := os.ReadFile(filepath.Join(e1, name))
		if a, b := bytes.Count(in, []byte("\n")), bytes.Count(out, []byte("\n")); a != b {
			t.Errorf("%s: %d lines imported, %d exported", name, a, b)
		}
	}
	nodes, _ := os.ReadFile(filepath.Join(e1, "nodes.jsonl"))
	arts, _ := os.ReadFile(filepath.Join(e1, "articles.jsonl"))
	for what, want := range map[string]string{
		"owner":        `"owner":"sub|alice"`,
		"big number":   `"n":12345678901234567890`,
		"updated_at":   `"posted_at":1700000003000,"updated_at":1700000009000`,
		"escaped id":   `{"id":"a\"quote\\slash"`,
		"unicode id":   `"owned-é日"`,
		"html escaped": `"html":"\u003cb\u003e\u0026amp;\u003c/b\u003e"`,
	} {
		if !bytes.Contains(append(nodes, arts...), []byte(want)) {
			t.Errorf("the export lost the %s: no %s", what, want)
		}
	}
}

// TestExportRefuses: a data directory a running server holds (Pebble's
// lock) is refused, saying to stop it or export a backup; so are a
// directory without a store and a non-empty --out; nothing is created.
func TestExportRefuses(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	s.createNode(t, "a", nil)
	tmp := t.TempDir()
	full := nonEmptyDir(t, filepath.Join(tmp, "full"))
	for name, tc := range map[string]struct {
		args []string
		want []string
	}{
		"server running": {[]string{"--data-dir", s.dataDir, "--out", filepath.Join(tmp, "o1")},
			[]string{"is in use", "running hbgraph", "Stop the server", "hbgraph backup", "export the backup"}},
		"no store":      {[]string{"--data-dir", filepath.Join(tmp, "typo"), "--out", filepath.Join(tmp, "o2")}, []string{"holds no hbgraph store"}},
		"out not empty": {[]string{"--data-dir", s.dataDir, "--out", full}, []string{"not empty"}},
		"no out":        {[]string{"--data-dir", s.dataDir}, []string{"--out"}},
		"inside":        {[]string{"--data-dir", s.dataDir, "--out", filepath.Join(s.dataDir, "export")}, []string{"outside the data directory"}},
	} {
		out, ok := runHbgraph(t, "", append([]string{"export"}, tc.args...)...)
		for _, want := range tc.want {
			if ok || !strings.Contains(out, want) {
				t.Errorf("%s: export exited ok=%v, want a failure saying %q:\n%s", name, ok, want, out)
			}
		}
		if strings.Contains(out, "resource temporarily unavailable") {
			t.Errorf("%s: the message quotes the system's error:\n%s", name, out)
		}
	}
	for _, dir := range []string{"typo", "o1", "o2"} {
		if _, err := os.Stat(filepath.Join(tmp, dir)); err == nil {
			t.Errorf("a refused export created %s", dir)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(full, "keep")); string(b) != "x" {
		t.Error("the non-empty --out was changed")
	}
}

// TestExportOfABackup: a backup of a running server exports like a
// stopped data directory, and stays a backup that restores (the export
// opened it read-only).
func TestExportOfABackup(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	s.createNode(t, "a", map[string]any{"k": "v"})
	s.createNode(t, "b", nil)
	s.createRel(t, "a", "follow", "b", nil)
	s.postArticle(t, "a", "hello", "backup words", "tech")
	tmp := t.TempDir()
	b := filepath.Join(tmp, "backup")
	if out, ok := runHbgraph(t, "", "backup", "--data-dir", s.dataDir, "--admin-listen", s.adminAddr(), "--to", b); !ok {
		t.Fatalf("backup: %s", out)
	}
	e := filepath.Join(tmp, "export")
	exportTo(t, b, e)
	for name, want := range map[string]string{
		"nodes.jsonl":         `"properties":{"k":"v"}`,
		"relationships.jsonl": `"start_node_id":"a","type":"follow","end_node_id":"b"`,
		"articles.jsonl":      `"author_id":"a","title":"hello"`,
	} {
		got, err := os.ReadFile(filepath.Join(e, name))
		if err != nil || !bytes.Contains(got, []byte(want)) {
			t.Errorf("%s of the backup's export: %s (%v); want %s", name, got, err, want)
		}
	}
	if out, ok := runHbgraph(t, "", "restore", "--from", b, "--data-dir", filepath.Join(tmp, "restored")); !ok {
		t.Fatalf("the backup does not restore after its export: %s", out)
	}
}
