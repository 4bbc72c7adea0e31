package tests

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportPastTheNonceCap: an import makes far more counter Increments
// than the embedded engine remembers nonces of (--max-nonces, here 64
// against some 10,000 Increments), and neither overflows the table (no
// "nonce table full" warning: import remembers no nonces, its calls being
// never re-sent) nor miscounts: every node's relationship and article
// totals, served over HTTP, are the files' counts, and repair finds
// nothing to fix. Its output announces the work after the files.
func TestImportPastTheNonceCap(t *testing.T) {
	parallelTest(t)
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	gen := exec.Command(goTool(), "run", "github.com/hbgraph/hbgraph/bench/gen", "-out", src, "-nodes", "300")
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("bench/gen: %v\n%s", err, out)
	}
	data := filepath.Join(tmp, "data")
	args := []string{"import", "--data-dir", data, "--max-nonces", "64"}
	for flag, name := range exportFiles {
		args = append(args, flag, filepath.Join(src, name))
	}
	cmd := exec.Command(serverBin, args...)
	cmd.Env = append(os.Environ(), "HBGRAPH_LOG_LEVEL=info")
	raw, err := cmd.CombinedOutput()
	out := string(raw)
	if err != nil {
		t.Fatalf("import failed: %v\n%s", err, out)
	}
	if strings.Contains(out, "nonce table full") {
		t.Fatalf("the import overflowed the nonce table:\n%s", out)
	}
	// What follows the files' progress (their lines end at 0s left) is
	// announced when it starts.
	feeds, compacting := strings.Index(out, "writing the home feeds"), strings.Index(out, "compacting the store")
	if feeds < 0 || compacting < feeds || compacting > strings.Index(out, "compacted in") {
		t.Errorf("the home feeds and the compaction are not announced in order:\n%s", out)
	}
	if out, ok := runHbgraph(t, "", "repair", "--data-dir", data); !ok || !strings.Contains(out, "nothing to fix") {
		t.Fatalf("repair after the import found something to fix:\n%s", out)
	}

	follows := countLines(t, filepath.Join(src, "relationships.jsonl"), "start_node_id", map[string]string{"type": "follow"})
	articles := countLines(t, filepath.Join(src, "articles.jsonl"), "author_id", nil)
	ids := make([]string, 0, 40)
	for id := range follows {
		if ids = append(ids, id); len(ids) == cap(ids) {
			break
		}
	}
	s := startServerAt(t, data)
	resp := s.post(t, gqlRequest{Query: `query($ids: [ID!]!) { nodes(ids: $ids) { id
		relationships(type: "follow", direction: OUTGOING) { totalCount } articles { totalCount } } }`,
		Variables: map[string]any{"ids": ids}})
	if len(resp.Errors) > 0 {
		t.Fatalf("errors: %v", resp.Errors)
	}
	var got struct {
		Nodes []struct {
			ID            string
			Relationships struct{ TotalCount int }
			Articles      struct{ TotalCount int }
		}
	}
	if err := json.Unmarshal(resp.Data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Nodes) != len(ids) {
		t.Fatalf("%d nodes answered, want %d", len(got.Nodes), len(ids))
	}
	for _, n := range got.Nodes {
		if n.Relationships.TotalCount != follows[n.ID] || n.Articles.TotalCount != articles[n.ID] {
			t.Errorf("%s: %d follows and %d articles counted, the files have %d and %d",
				n.ID, n.Relationships.TotalCount, n.Articles.TotalCount, follows[n.ID], articles[n.ID])
		}
	}
}

// TestServerRemembersNoncesUpToMaxNonces: unlike import, the server keeps
// its nonces (a write through a cluster's client may be re-sent), as many
// as --max-nonces says: with 1, the second counter Increment already
// forgets one before its grace period, and the log says so once.
func TestServerRemembersNoncesUpToMaxNonces(t *testing.T) {
	parallelTest(t)
	s := startServer(t, "--max-nonces", "1")
	for _, id := range []string{"a", "b", "c"} {
		s.createNode(t, id, nil)
	}
	s.createRel(t, "a", "follows", "b", nil)
	s.createRel(t, "a", "follows", "c", nil)
	s.createRel(t, "b", "follows", "c", nil)
	if n := strings.Count(s.out.String(), "nonce table full"); n != 1 {
		t.Fatalf("the log says the nonce table is full %d times, want once:\n%s", n, s.out.String())
	}
}

// TestMaxNoncesMustBePositive: --max-nonces 0 is refused with the flag's
// name, before anything is opened.
func TestMaxNoncesMustBePositive(t *testing.T) {
	parallelTest(t)
	out, ok := runHbgraph(t, "", "repair", "--data-dir", t.TempDir(), "--max-nonces", "0")
	if ok || !strings.Contains(out, "--max-nonces must be positive") {
		t.Fatalf("--max-nonces 0: ok %v, output:\n%s", ok, out)
	}
}

// countLines counts the lines of a JSON Lines file that have the values
// of where, by the value of field.
func countLines(t *testing.T, path, field string, where map[string]string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		match := true
		for k, want := range where {
			match = match && line[k] == want
		}
		if v, ok := line[field].(string); ok && match {
			counts[v]++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return counts
}
