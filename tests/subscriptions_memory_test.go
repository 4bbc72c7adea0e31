package tests

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// idleMemoryBoundMB bounds the resident memory of hbgraph holding 10,000
// idle subscriptions on 1,000 connections: issue 26's target. It measured
// 277-279 MB with gqlgen's WebSocket transport (a goroutine per
// subscription, blocked in its response chain: 99 MB of stacks, and the
// chain's state on the heap); with ours (subscriptions_transport.go: two
// goroutines per connection, none per subscription, and the HTTP server's
// goroutine of the connection let go) 170 MB: 43 MB at start, 71 MB with
// the connections open, 11 MB of stacks, some 5 KB of heap per
// subscription (its operation's contexts, arguments and field caches, its
// channel and its bus entry).
const idleMemoryBoundMB = 200

// TestSubscriptionIdleMemory measures hbgraph's resident memory with
// 10,000 idle subscriptions on 1,000 connections.
func TestSubscriptionIdleMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,000 sockets")
	}
	parallelTest(t)
	args := []string{"--subscriptions-per-caller", "0"}
	profiles := os.Getenv("HBGRAPH_TEST_PROFILES") // a directory: the heap and goroutine profiles go there
	if profiles != "" {
		args = append(args, "--pprof")
	}
	s := startServer(t, args...)
	const conns, each = 1000, 10
	start := residentMB(t, s.cmd.Process.Pid)
	clients := make([]*wsClient, conns)
	for i := range conns {
		clients[i] = connectWS(t, s, nil)
	}
	opened := residentMB(t, s.cmd.Process.Pid)
	for i, c := range clients {
		for j := range each {
			c.subscribe(`subscription($id: ID!) { nodeChanged(id: $id) { kind node { id properties } } }`,
				map[string]any{"id": fmt.Sprintf("n%d-%d", i, j)})
		}
	}
	waitSubscribed(t, s, conns*each)
	time.Sleep(200 * time.Millisecond)
	rss := residentMB(t, s.cmd.Process.Pid)
	m := s.metrics(t)
	t.Logf("resident: %.0f MB at start, %.0f MB with %d connections, %.0f MB with %d subscriptions on them (goroutines %.0f, stacks %.0f MB, heap in use %.0f MB)",
		start, opened, conns, rss, conns*each, m["go_goroutines"], m["go_memstats_stack_inuse_bytes"]/(1<<20), m["go_memstats_heap_inuse_bytes"]/(1<<20))
	if profiles != "" {
		for _, p := range []string{"heap", "goroutine", "allocs"} {
			saveProfile(t, s, p, filepath.Join(profiles, p+".pb.gz"))
		}
	}
	if rss > idleMemoryBoundMB {
		t.Errorf("%.0f MB resident for %d idle subscriptions, over %d MB", rss, conns*each, idleMemoryBoundMB)
	}
}

// saveProfile writes the server's pprof profile name to path.
func saveProfile(t testing.TB, s *server, name, path string) {
	t.Helper()
	resp, err := http.Get(s.admin + "/debug/pprof/" + name + "?gc=1") // the heap's live objects only
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("profile %s: %d %v", name, resp.StatusCode, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// residentMB is the process's VmRSS.
func residentMB(t testing.TB, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb / 1024
		}
	}
	t.Fatal("no VmRSS")
	return 0
}
