package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// runHbgraph runs the binary with args in dir ("" for the test's) and
// returns its combined output and whether it exited 0.
func runHbgraph(t *testing.T, dir string, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(serverBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HBGRAPH_LOG_LEVEL=warn")
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// adminAddr is the server's admin listener as host:port.
func (s *server) adminAddr() string { return strings.TrimPrefix(s.admin, "http://") }

// writeOp is one acknowledged mutation of the load, with the read that
// shows it.
type writeOp struct {
	acked time.Time
	query string
	vars  map[string]any
}

// writeLoad runs workers that create nodes, a relationship from each
// worker's previous node to its new one, and an article by the new node,
// until stop is closed; it records each acknowledged write.
type writeLoad struct {
	mu    sync.Mutex
	ops   []writeOp
	stop  chan struct{}
	wg    sync.WaitGroup
	fails atomic.Int64
	errs  []string
}

func startWriteLoad(s *server, workers int) *writeLoad {
	l := &writeLoad{stop: make(chan struct{})}
	for w := range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				node := fmt.Sprintf("w%d-n%d", w, i)
				l.do(s, `mutation($id: ID!, $p: JSON) { createNode(id: $id, properties: $p) { id } }`,
					map[string]any{"id": node, "p": map[string]any{"worker": w, "i": i}},
					`query($id: ID!) { node(id: $id) { `+nodeFields+` } }`, map[string]any{"id": node})
				if i > 0 {
					rel := map[string]any{"s": fmt.Sprintf("w%d-n%d", w, i-1), "t": "follows", "e": node}
					l.do(s, `mutation($s: ID!, $t: String!, $e: ID!) { createRelationship(startNodeId: $s, type: $t, endNodeId: $e, properties: {since: 1}) { id } }`,
						rel, `query($s: ID!, $t: String!, $e: ID!) { relationship(startNodeId: $s, type: $t, endNodeId: $e) { `+relFields+` } }`, rel)
				}
				var out struct {
					PostArticle struct{ ID string }
				}
				if l.doInto(s, `mutation($a: ID!) { postArticle(authorId: $a, title: "t", body: "words and more words", category: "tech") { id } }`,
					map[string]any{"a": node}, &out) {
					l.record(`query($id: ID!, $a: ID!) { article(id: $id) { `+articleFields+` } node(id: $a) { articles(first: 5) { edges { node { id title } } } } }`,
						map[string]any{"id": out.PostArticle.ID, "a": node})
				}
			}
		}()
	}
	return l
}

func (l *writeLoad) do(s *server, mutation string, vars map[string]any, read string, readVars map[string]any) {
	if l.doInto(s, mutation, vars, nil) {
		l.record(read, readVars)
	}
}

// doInto sends a mutation; it reports whether it was acknowledged.
func (l *writeLoad) doInto(s *server, mutation string, vars map[string]any, out any) bool {
	r, err := s.tryPost(gqlRequest{Query: mutation, Variables: vars})
	if err == nil && (r.Status != http.StatusOK || len(r.Errors) > 0) {
		err = fmt.Errorf("status %d: %v", r.Status, r.Errors)
	}
	if err == nil && out != nil {
		err = json.Unmarshal(r.Data, out)
	}
	if err != nil {
		l.mu.Lock()
		l.errs = append(l.errs, err.Error())
		l.mu.Unlock()
		l.fails.Add(1)
		return false
	}
	return true
}

func (l *writeLoad) record(query string, vars map[string]any) {
	l.mu.Lock()
	l.ops = append(l.ops, writeOp{acked: time.Now(), query: query, vars: vars})
	l.mu.Unlock()
}

func (l *writeLoad) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ops)
}

func (l *writeLoad) finish(t *testing.T) []writeOp {
	close(l.stop)
	l.wg.Wait()
	if l.fails.Load() > 0 {
		t.Errorf("%d writes of the load failed, e.g. %s", l.fails.Load(), l.errs[0])
	}
	return l.ops
}

// TestBackupUnderWriteLoad backs a serving store up while writers run:
// every write acknowledged before backup began is in the restored copy,
// repair finds nothing half applied there, and a server on the copy
// answers the same reads as the original for those writes.
func TestBackupUnderWriteLoad(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	load := startWriteLoad(s, 4)
	for deadline := time.Now().Add(20 * time.Second); load.count() < 150 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	dir := filepath.Join(t.TempDir(), "backup")
	began := time.Now()
	out, ok := runHbgraph(t, "", "backup", "--data-dir", s.dataDir, "--admin-listen", s.adminAddr(), "--to", dir)
	time.Sleep(200 * time.Millisecond) // writes go on after it
	ops := load.finish(t)
	if !ok {
		t.Fatalf("backup failed:\n%s", out)
	}
	if !strings.Contains(out, "verified") || !strings.Contains(out, "by the server") {
		t.Errorf("backup's report: %s", out)
	}
	var before []writeOp
	for _, op := range ops {
		if op.acked.Before(began) {
			before = append(before, op)
		}
	}
	if len(before) < 100 || len(before) == len(ops) {
		t.Fatalf("%d of %d writes acknowledged before the backup: the load did not straddle it", len(before), len(ops))
	}
	t.Logf("%d writes acknowledged before the backup, %d in all", len(before), len(ops))

	data := filepath.Join(t.TempDir(), "restored")
	if out, ok := runHbgraph(t, "", "restore", "--from", dir, "--data-dir", data); !ok {
		t.Fatalf("restore failed:\n%s", out)
	}
	if out, ok := runHbgraph(t, "", "repair", "--data-dir", data); !ok || strings.TrimSpace(out) != "nothing to fix" {
		t.Fatalf("repair on the restored copy (ok %v): want nothing to fix, got:\n%s", ok, out)
	}
	r := startServerAt(t, data)
	for _, op := range before {
		want, got := s.do(t, op.query, op.vars), r.do(t, op.query, op.vars)
		if len(want.Errors) > 0 || isNull(want.Data) {
			t.Fatalf("the original server: %s %v: %s", op.query, op.vars, want.Body)
		}
		if !bytes.Equal(want.Body, got.Body) {
			t.Fatalf("%s %v\nthe original answers %s\nthe restored copy   %s", op.query, op.vars, want.Body, got.Body)
		}
	}
}

// TestBackupRefuses: a target that is not empty, an admin listener where
// no server answers, a directory that holds no store, a request to the
// route that names a relative path or another data directory, a restore
// into a directory that holds something, and a damaged backup.
func TestBackupRefuses(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	s.createNode(t, "a", nil)
	tmp := t.TempDir()

	full := nonEmptyDir(t, filepath.Join(tmp, "full"))
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"target not empty": {[]string{"--data-dir", s.dataDir, "--admin-listen", s.adminAddr(), "--to", full}, "not empty"},
		"no server there":  {[]string{"--data-dir", s.dataDir, "--admin-listen", "127.0.0.1:" + freePort(t), "--to", filepath.Join(tmp, "b1")}, "--admin-listen"},
		"no store":         {[]string{"--data-dir", filepath.Join(tmp, "typo"), "--to", filepath.Join(tmp, "b2")}, "holds no store"},
		"no target":        {[]string{"--data-dir", s.dataDir, "--admin-listen", s.adminAddr()}, "--to"},
		"inside the store": {[]string{"--data-dir", s.dataDir, "--admin-listen", s.adminAddr(), "--to", filepath.Join(s.dataDir, "b")}, "outside the data directory"},
	} {
		out, ok := runHbgraph(t, "", append([]string{"backup"}, tc.args...)...)
		if ok || !strings.Contains(out, tc.want) {
			t.Errorf("%s: backup exited ok=%v, want a failure saying %q:\n%s", name, ok, tc.want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "typo")); err == nil {
		t.Error("backup created the mistyped data directory")
	}
	if b, _ := os.ReadFile(filepath.Join(full, "keep")); string(b) != "x" {
		t.Error("the non-empty target was changed")
	}

	// The route itself refuses a relative path and another data directory.
	for name, body := range map[string]string{
		"relative":       fmt.Sprintf(`{"to": "rel", "data_dir": %q}`, s.dataDir),
		"other data dir": fmt.Sprintf(`{"to": %q, "data_dir": %q}`, filepath.Join(tmp, "b3"), tmp),
		"not JSON":       `to=/tmp/x`,
	} {
		resp, err := http.Post(s.admin+"/backup", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: POST /backup answered %d, want 400", name, resp.StatusCode)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "b3")); err == nil {
		t.Error("a refused request wrote its target")
	}

	// A relative --to is the command's: resolved against its directory.
	if out, ok := runHbgraph(t, tmp, "backup", "--data-dir", s.dataDir, "--admin-listen", s.adminAddr(), "--to", "rel/b"); !ok {
		t.Fatalf("backup --to rel/b: %s", out)
	}
	good := filepath.Join(tmp, "rel", "b")
	if _, err := os.Stat(filepath.Join(good, "BACKUP.json")); err != nil {
		t.Fatalf("the relative backup is not under the command's directory: %v", err)
	}

	if out, ok := runHbgraph(t, "", "restore", "--from", good, "--data-dir", full); ok || !strings.Contains(out, "not empty") {
		t.Errorf("restore into a non-empty directory: ok=%v\n%s", ok, out)
	}
	// A backup whose manifest does not match its store is refused, and
	// nothing is left in the target.
	m, err := os.ReadFile(filepath.Join(good, "BACKUP.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(good, "BACKUP.json"), bytes.Replace(m, []byte(`"rows": `), []byte(`"rows": 1`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(tmp, "target")
	if out, ok := runHbgraph(t, "", "restore", "--from", good, "--data-dir", target); ok || !strings.Contains(out, "does not match") {
		t.Errorf("restore of a damaged backup: ok=%v\n%s", ok, out)
	}
	if left, _ := os.ReadDir(target); len(left) != 0 {
		t.Errorf("the refused restore left %d files in the target", len(left))
	}
}

// TestBackupOfAStoppedStore: with no server on the data directory, backup
// opens it itself.
func TestBackupOfAStoppedStore(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	n := s.createNode(t, "solo", map[string]any{"k": "v"})
	s.stop(t)
	dir := filepath.Join(t.TempDir(), "b")
	out, ok := runHbgraph(t, "", "backup", "--data-dir", s.dataDir, "--to", dir)
	if !ok || !strings.Contains(out, "by this process") {
		t.Fatalf("backup of a stopped store: ok=%v\n%s", ok, out)
	}
	data := filepath.Join(t.TempDir(), "r")
	if out, ok := runHbgraph(t, "", "restore", "--from", dir, "--data-dir", data); !ok {
		t.Fatalf("restore: %s", out)
	}
	r := startServerAt(t, data)
	var got struct{ Node nodeOut }
	r.mustDo(t, `query { node(id: "solo") { `+nodeFields+` } }`, nil, &got)
	if got.Node.ID != n.ID || !jsonEqual(t, got.Node.Properties, n.Properties) || got.Node.CreatedAt != n.CreatedAt {
		t.Errorf("restored node %+v, want %+v", got.Node, n)
	}
}

// TestBackupRouteBeyondLoopback: an admin listener beyond loopback serves
// no backups unless --allow-remote-backup says so.
func TestBackupRouteBeyondLoopback(t *testing.T) {
	parallelTest(t)
	for _, allow := range []bool{false, true} {
		port := freePort(t)
		args := []string{"--admin-listen", "0.0.0.0:" + port, "--insecure-no-auth"}
		if allow {
			args = append(args, "--allow-remote-backup")
		}
		s := startServer(t, args...)
		to := filepath.Join(t.TempDir(), "b")
		body := fmt.Sprintf(`{"to": %q, "data_dir": %q}`, to, s.dataDir)
		resp, err := http.Post("http://127.0.0.1:"+port+"/backup", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := http.StatusForbidden
		if allow {
			want = http.StatusOK
		}
		if resp.StatusCode != want {
			t.Errorf("allow-remote-backup %v: POST /backup answered %d, want %d", allow, resp.StatusCode, want)
		}
		s.stop(t)
	}
}

// nonEmptyDir makes dir with a file in it: a target the commands refuse.
func nonEmptyDir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}
