package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The side-by-side step measures hbgraph beside the PostGraphile peers
// (../shared/peers, started with `make peers-up`) on the peers' own
// dataset, with the peers' own load driver for all three, query by query
// in turn, so that all three see the same machine at nearly the same time.
// Absolute figures drift between machines and minutes; these ratios do not.

// peerTargetRatio is the issue's: every query at three times the faster
// peer's throughput, with hbgraph's p99 below that peer's p50.
const peerTargetRatio = 3.0

// peerQueries are the four queries every server answers, after the
// floor (Q0); the variables come from the peers' dataset (args are the
// peer driver's flags, hbArgs hbgraph's where its variables are named
// otherwise).
var peerQueries = []peerQuery{
	// Q0 reads nothing: its p99 is how far the tail of this machine, its
	// HTTP servers and the driver reach with no work at all, beside which
	// the target's p99 is to be read. Every server answers the same text
	// (a query's unused variables are ignored).
	{name: "Q0", file: "q0.graphql", varsFile: "nodes.jsonl", args: []string{"-fields", "id"}, floor: true},
	{name: "Q1", file: "q1.graphql", varsFile: "nodes.jsonl", args: []string{"-fields", "id"}},
	{name: "Q2", file: "q2.graphql", varsFile: "nodes.jsonl", args: []string{"-fields", "id"}},
	{name: "Q3", file: "q3.graphql", varsFile: "nodes.jsonl", args: []string{"-fields", "id"}},
	{name: "Q4", file: "q4.graphql", varsFile: "q4_targets.jsonl", pageChainPages: 4,
		args: []string{"-fields", "authorId,category"}, hbArgs: []string{"-fields", "authorId:id,category"}},
}

// peerQuery is one of the four queries of the side by side.
type peerQuery struct {
	name, file     string
	args, hbArgs   []string
	varsFile       string
	pageChainPages int
	// floor marks Q0: its text is bench/queries' for every server, and no
	// target applies to it.
	floor bool
}

// target is one server of the side-by-side: hbgraph or a peer.
type target struct {
	name    string
	url     string
	queries string // folder of q1..q4.graphql written for its schema
	// pids lists the processes whose CPU the server spends (a peer's
	// PostgreSQL backends too); read before and after each run.
	pids func() []int
	// hbgraph is true for our server (its queries take hbArgs).
	hbgraph bool
}

// peerRun is what one target measured on one query in one round.
type peerRun struct {
	Target, Query string
	Round         int
	RPS           float64
	P50, P99      float64
	Requests      int
	Errors        int
	// ServerCPU is the CPU seconds the target's processes spent over the
	// warm-up and the run; Wall the seconds that took; DriverCPU the load
	// driver's CPU seconds.
	ServerCPU, Wall, DriverCPU float64
}

// cpuPerRequest is the target's CPU per request in microseconds: the
// cores it kept busy over the run divided by its throughput.
func (r peerRun) cpuPerRequest() float64 {
	if r.RPS == 0 || r.Wall == 0 {
		return 0
	}
	return r.ServerCPU / r.Wall / r.RPS * 1e6
}

// peerTargets are the peers that answer; a peer that does not is left
// out, and with none the step is skipped.
func (b *bench) peerTargets(ctx context.Context) []target {
	pg4 := filepath.Join(b.cfg.peers, "postgraphile")
	pg5 := filepath.Join(b.cfg.peers, "postgraphile5")
	postgres := func() []int { return processTree(pidFile(filepath.Join(pg4, "run", "postgres.pid"))) }
	all := []target{
		{name: "PostGraphile 4", url: b.cfg.pg4URL, queries: filepath.Join(pg4, "queries"),
			pids: func() []int { return append(postgres(), pidFile(filepath.Join(pg4, "run", "postgraphile.pid"))) }},
		{name: "PostGraphile 5", url: b.cfg.pg5URL, queries: filepath.Join(pg5, "queries"),
			pids: func() []int { return append(postgres(), pidFile(filepath.Join(pg5, "pg5.pid"))) }},
	}
	var up []target
	for _, t := range all {
		if t.url == "" { // left out on purpose
			continue
		}
		if answers(ctx, t.url) {
			up = append(up, t)
		} else {
			fmt.Printf("side by side: %s does not answer at %s; left out (make peers-up starts it)\n", t.name, t.url)
		}
	}
	return up
}

// answers tells whether a GraphQL server answers {__typename} at url.
func answers(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"query":"{ __typename }"}`))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (b *bench) peerData(name string) string {
	return filepath.Join(b.cfg.peers, "postgraphile", "data", name)
}
func (b *bench) peerDBDir() string { return filepath.Join(b.cfg.dir, "db-peers") }

// sideBySide is the step: it imports the peers' dataset into hbgraph
// (unless the same files already are), starts hbgraph on it and measures
// the four queries on every target, round by round, each query on all
// targets before the next, the targets' order turning each round.
func (b *bench) sideBySide(ctx context.Context) error {
	peers := b.peerTargets(ctx)
	if len(peers) == 0 {
		fmt.Println("side by side: no peer answers; skipped")
		return nil
	}
	if err := b.importPeerData(ctx); err != nil {
		return err
	}
	// The peers' load driver, built from its own module, drives all three.
	driver, err := filepath.Abs(b.bin("peerload"))
	if err != nil {
		return err
	}
	if _, err := b.commandIn(ctx, filepath.Join(b.cfg.peers, "postgraphile"), "go", "build", "-o", driver, "./load"); err != nil {
		return err
	}
	srv, err := b.startServerOn(ctx, b.peerDBDir(), batched)
	if err != nil {
		return err
	}
	defer srv.stop()
	hb := target{name: "hbgraph", url: srv.url, queries: filepath.Join("bench", "queries"), hbgraph: true,
		pids: func() []int { return []int{srv.cmd.Process.Pid} }}
	targets := append([]target{hb}, peers...)
	b.peerTargetNames = nil
	for _, t := range targets {
		b.peerTargetNames = append(b.peerTargetNames, t.name)
	}
	for round := range b.cfg.peerRounds {
		for _, q := range peerQueries {
			for i := range targets {
				t := targets[(i+round)%len(targets)]
				r, err := b.peerLoad(ctx, t, q, round)
				if err != nil {
					return fmt.Errorf("side by side: %s on %s: %w", q.name, t.name, err)
				}
				b.peerRuns = append(b.peerRuns, r)
			}
		}
	}
	return nil
}

// peerLoad runs the peer driver once against t for q.
func (b *bench) peerLoad(ctx context.Context, t target, q peerQuery, round int) (peerRun, error) {
	fields := q.args
	if t.hbgraph && q.hbArgs != nil {
		fields = q.hbArgs
	}
	queries := t.queries
	if q.floor {
		queries = filepath.Join("bench", "queries")
	}
	args := append([]string{"-url", t.url, "-query", filepath.Join(queries, q.file),
		"-vars", b.peerData(q.varsFile), "-name", t.name + " " + q.name,
		"-c", strconv.Itoa(b.cfg.concurrency), "-d", b.cfg.duration.String(), "-warmup", b.cfg.warmup.String()}, fields...)
	if q.pageChainPages > 0 {
		args = append(args, "-page-chain", strconv.Itoa(q.pageChainPages))
	}
	cpu0, t0 := cpuSeconds(t.pids()), time.Now()
	out, err := b.command(ctx, b.bin("peerload"), args...)
	wall := time.Since(t0).Seconds()
	cpu1 := cpuSeconds(t.pids())
	if err != nil {
		return peerRun{}, err
	}
	r, err := parsePeerLoad(out)
	if err != nil {
		return peerRun{}, err
	}
	r.Target, r.Query, r.Round = t.name, q.name, round
	r.ServerCPU, r.Wall = cpu1-cpu0, wall
	return r, nil
}

// peerResultLine and peerDriverCPU match what the peer driver prints:
// "RESULT\tname\trequests\terrors\treq/s\tp50\tp90\tp99" and, on its human
// line, "driver_cpu=1.2s".
var (
	peerResultLine = regexp.MustCompile(`(?m)^RESULT\t[^\t]*\t(\d+)\t(\d+)\t([0-9.]+)\t([0-9.]+)\t[0-9.]+\t([0-9.]+)`)
	peerDriverCPU  = regexp.MustCompile(`driver_cpu=([0-9.]+)s`)
)

func parsePeerLoad(out []byte) (peerRun, error) {
	m := peerResultLine.FindSubmatch(out)
	if m == nil {
		return peerRun{}, fmt.Errorf("the peer driver printed no RESULT line:\n%s", out)
	}
	var r peerRun
	r.Requests, _ = strconv.Atoi(string(m[1]))
	r.Errors, _ = strconv.Atoi(string(m[2]))
	r.RPS, _ = strconv.ParseFloat(string(m[3]), 64)
	r.P50, _ = strconv.ParseFloat(string(m[4]), 64)
	r.P99, _ = strconv.ParseFloat(string(m[5]), 64)
	if d := peerDriverCPU.FindSubmatch(out); d != nil {
		r.DriverCPU, _ = strconv.ParseFloat(string(d[1]), 64)
	}
	if r.Errors > 0 {
		return r, fmt.Errorf("%d of %d requests failed", r.Errors, r.Requests)
	}
	return r, nil
}

// importPeerData imports the peers' dataset into hbgraph, unless a stamp
// says these very files were imported already.
func (b *bench) importPeerData(ctx context.Context) error {
	h := sha256.New()
	files := []string{b.peerData("nodes.jsonl"), b.peerData("relationships.jsonl"), b.peerData("articles.jsonl")}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return fmt.Errorf("the peers' dataset: %w (make peers-up writes it)", err)
		}
		_, err = io.Copy(h, fh)
		fh.Close()
		if err != nil {
			return err
		}
	}
	stamp := hex.EncodeToString(h.Sum(nil)) + "\n"
	stampFile := b.peerDBDir() + ".stamp"
	if old, err := os.ReadFile(stampFile); err == nil && string(old) == stamp {
		fmt.Printf("side by side: %s holds the peers' dataset already\n", b.peerDBDir())
		return nil
	}
	if err := os.RemoveAll(b.peerDBDir()); err != nil {
		return err
	}
	os.Remove(stampFile)
	if _, err := b.command(ctx, b.bin("hbgraph"), "--data-dir", b.peerDBDir(), "--log-level", "warn", "import",
		"--nodes", files[0], "--relationships", files[1], "--articles", files[2]); err != nil {
		return err
	}
	return os.WriteFile(stampFile, []byte(stamp), 0o644)
}

// commandIn is command run in dir.
func (b *bench) commandIn(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
	b.commands = append(b.commands, "(cd "+shellJoin([]string{dir})+" && "+shellJoin(append([]string{name}, args...))+")")
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(&out, os.Stdout)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("%s: %w", name, err)
	}
	return out.Bytes(), nil
}

// pidFile reads the PID on a PID file's first line; 0 when there is none.
func pidFile(path string) int {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	return pid
}

// processTree is pid and its children (PostgreSQL's backends are the
// postmaster's children).
func processTree(pid int) []int {
	if pid == 0 {
		return nil
	}
	pids := []int{pid}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, ok := procStat(child); ok && len(f) > 1 && f[1] == strconv.Itoa(pid) {
			pids = append(pids, child)
		}
	}
	return pids
}

// procStat is /proc/PID/stat's fields after the command name (state,
// ppid, ...).
func procStat(pid int) ([]string, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, false
	}
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(string(raw[i+1:])), true
}

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times.
var clockTicks = func() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if n, perr := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && perr == nil && n > 0 {
		return float64(n)
	}
	return 100
}()

// cpuSeconds is the user and system CPU time the processes have spent.
func cpuSeconds(pids []int) float64 {
	var ticks int64
	for _, pid := range pids {
		f, ok := procStat(pid)
		if !ok || len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + s
	}
	return float64(ticks) / clockTicks
}

// medianRun is the run of the median throughput of t on q over the
// rounds.
func (b *bench) medianRun(t, q string) (peerRun, bool) {
	var rs []peerRun
	for _, r := range b.peerRuns {
		if r.Target == t && r.Query == q {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return peerRun{}, false
	}
	slices.SortFunc(rs, func(a, b peerRun) int { return cmp.Compare(a.RPS, b.RPS) })
	return rs[len(rs)/2], true
}

// peersReport renders the side-by-side section of RESULTS.md.
func (b *bench) peersReport() string {
	var w bytes.Buffer
	fmt.Fprintf(&w, "## Side by side with PostGraphile (latest `make bench` with the peers up)\n\n")
	fmt.Fprintf(&w, "- When: %s; commit %s\n", time.Now().UTC().Format(time.RFC3339), commit())
	fmt.Fprintf(&w, "- Machine: %s\n", machine())
	fmt.Fprintf(&w, "- Dataset: the peers' (%s), imported into hbgraph with `hbgraph import`\n", peerDataSummary(b))
	fmt.Fprintf(&w, "- Load: the peers' driver for all three, concurrency %d, %s after %s of warm-up; %d round(s), each query on every server before the next query, the order turning each round; medians of the rounds\n",
		b.cfg.concurrency, b.cfg.duration, b.cfg.warmup, b.cfg.peerRounds)
	fmt.Fprintf(&w, "- CPU per request: the server's processes (a peer's PostgreSQL backends included) over warm-up and run, divided by requests; the driver's own is not in it\n")
	fmt.Fprintf(&w, "- Q0 is the floor, `{ __typename }` on every server: no data read, so its p99 is the tail this machine, the HTTP server and the driver add by themselves; the targets are Q1-Q4's. Where hbgraph's Q0 p99 is not below the faster peer's p50, no work on that query can meet the p99 target in this run\n\n")
	fmt.Fprintf(&w, "| query |")
	for _, t := range b.peerTargetNames {
		fmt.Fprintf(&w, " %s req/s (p50/p99 ms) | CPU µs/req |", t)
	}
	fmt.Fprintf(&w, " ratio to the faster peer | target %.0fx | p99 below its p50 | Q0's p99 below its p50 |\n|---|", peerTargetRatio)
	for range b.peerTargetNames {
		fmt.Fprintf(&w, "---:|---:|")
	}
	fmt.Fprintf(&w, "---:|---|---|---|\n")
	// Whether hbgraph answering nothing (Q0) is already above the peer's
	// p50: then no work on the query can meet the p99 target in this run.
	floor, hasFloor := b.medianRun("hbgraph", "Q0")
	for _, q := range peerQueries {
		fmt.Fprintf(&w, "| %s |", q.name)
		var hb, fastest peerRun
		for _, t := range b.peerTargetNames {
			r, ok := b.medianRun(t, q.name)
			if !ok {
				fmt.Fprintf(&w, " | |")
				continue
			}
			fmt.Fprintf(&w, " %.0f (%.1f/%.1f) | %.0f |", r.RPS, r.P50, r.P99, r.cpuPerRequest())
			switch {
			case t == "hbgraph":
				hb = r
			case r.RPS > fastest.RPS:
				fastest = r
			}
		}
		if fastest.RPS == 0 || hb.RPS == 0 {
			fmt.Fprintf(&w, " | | | |\n")
			continue
		}
		ratio := hb.RPS / fastest.RPS
		if q.floor {
			fmt.Fprintf(&w, " %.2f (%s) | (the floor) | (the floor) | |\n", ratio, fastest.Target)
			continue
		}
		reachable := ""
		if hasFloor {
			reachable = mark(floor.P99 < fastest.P50)
		}
		fmt.Fprintf(&w, " %.2f (%s) | %s | %s | %s |\n", ratio, fastest.Target, mark(ratio >= peerTargetRatio), mark(hb.P99 < fastest.P50), reachable)
	}
	fmt.Fprintf(&w, "\nEvery run, in the order it ran:\n\n| round | query | server | req/s | p50 ms | p99 ms | requests | server CPU s | driver CPU s |\n|---:|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range b.peerRuns {
		fmt.Fprintf(&w, "| %d | %s | %s | %.0f | %.2f | %.2f | %d | %.1f | %.1f |\n",
			r.Round+1, r.Query, r.Target, r.RPS, r.P50, r.P99, r.Requests, r.ServerCPU, r.DriverCPU)
	}
	return w.String()
}

// peerDataSummary counts the lines of the peers' dataset files.
func peerDataSummary(b *bench) string {
	var parts []string
	for _, f := range []string{"nodes.jsonl", "relationships.jsonl", "articles.jsonl"} {
		n, err := countLines(b.peerData(f))
		if err != nil {
			return "unknown size"
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, strings.TrimSuffix(f, ".jsonl")))
	}
	return strings.Join(parts, ", ")
}

func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		n++
	}
	return n, s.Err()
}
