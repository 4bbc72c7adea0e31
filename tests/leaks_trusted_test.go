package tests

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeTrustedManifest writes an Apollo persisted query manifest with one
// entry and returns its path and the entry's id.
func writeTrustedManifest(t *testing.T, name, typ, body string) (path, id string) {
	t.Helper()
	sum := sha256.Sum256([]byte(body))
	id = hex.EncodeToString(sum[:])
	path = filepath.Join(t.TempDir(), "manifest.json")
	b, _ := json.Marshal(map[string]any{"format": "apollo-persisted-query-manifest", "version": 1,
		"operations": []map[string]any{{"id": id, "name": name, "type": typ, "body": body}}})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, id
}

// TestTrustedDocumentRunsOnlyItsOperation: an entry listed as query A
// whose body also holds mutation B must not let a client run B by its id
// and operationName "B" (issue 22, item 10). Such a manifest is refused
// at start, naming the entry; an entry's own operation still runs by id,
// and only under its own name.
func TestTrustedDocumentRunsOnlyItsOperation(t *testing.T) {
	parallelTest(t)
	for _, c := range []struct{ name, entry, typ, body string }{
		{"a mutation beside the query", "A", "query", `query A { __typename } mutation B { createNode(id: "smuggled") { id } }`},
		{"a second query", "A", "query", `query A { __typename } query B { node(id: "x") { id } }`},
		{"listed as a query, is a mutation", "B", "query", `mutation B { createNode(id: "smuggled") { id } }`},
	} {
		manifest, _ := writeTrustedManifest(t, c.entry, c.typ, c.body)
		dataDir := t.TempDir()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		cmd := exec.CommandContext(ctx, serverBin, "--data-dir", dataDir, "--listen", "127.0.0.1:"+freePort(t),
			"--admin-listen", "127.0.0.1:"+freePort(t), "--trusted-documents", manifest, "--trusted-documents-only")
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = cmd.CombinedOutput(); close(done) }()
		select {
		case <-done:
			if err == nil || !strings.Contains(string(out), "trusted documents") {
				t.Errorf("%s: hbgraph exited (%v) without naming the manifest:\n%s", c.name, err, out)
			}
		case <-time.After(3 * time.Second):
			// It started: show what a client can do with it, then stop.
			t.Errorf("%s: hbgraph started on a manifest entry %s %q whose body is %q", c.name, c.typ, c.entry, c.body)
			_ = cmd.Process.Kill()
			<-done
		}
		cancel()
	}

	// One operation per body: it runs by id, and not under another name.
	manifest, id := writeTrustedManifest(t, "Hello", "query", `query Hello { __typename }`)
	s := startServer(t, "--trusted-documents", manifest, "--trusted-documents-only")
	pq := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": id}}
	s.postRaw(t, mustJSON(t, map[string]any{"operationName": "Hello", "extensions": pq}), nil).ok(t, nil)
	r := s.postRaw(t, mustJSON(t, map[string]any{"operationName": "B", "extensions": pq}), nil)
	if r.wantError(t, "GRAPHQL_VALIDATION_FAILED", "") && strings.Contains(r.Errors[0].Message, "B") {
		t.Errorf("the unknown operationName was echoed: %q", r.Errors[0].Message)
	}
}
