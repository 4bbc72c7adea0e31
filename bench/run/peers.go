package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The side-by-side step measures hbgraph beside the PostGraphile peers
// (../shared/peers, started with `make peers-up`) on the peers' own
// dataset, with the peers' own load driver for all three, query by query
// in turn, so that all servers see the same machine at nearly the same
// time. Absolute figures drift between machines and minutes; these
// ratios do not. Issue 27's three measures, each against the faster peer
// of the query (the higher median closed-loop throughput):
//  1. closed loop at -concurrency: throughput, at least 3x the peer's;
//  2. CPU per request over the same window (cpu.go): at most a quarter
//     of the peer's, the peer's PostgreSQL included;
//  3. open loop at half the peer's closed-loop throughput, both servers
//     at that rate: p99 at most a fifth of the peer's, p50 at most half.

// The verdicts' bounds.
const (
	targetThroughput = 3.0  // hbgraph's req/s over the peer's, at least
	targetCPU        = 0.25 // hbgraph's CPU per request over the peer's, at most
	targetOpenP99    = 0.2  // hbgraph's open-loop p99 over the peer's, at most
	targetOpenP50    = 0.5  // hbgraph's open-loop p50 over the peer's, at most
	// openLoopShare is the open loop's rate as a share of the faster
	// peer's closed-loop throughput.
	openLoopShare = 0.5
	// openLoopInFlight caps the open loop's requests in flight (-c): high
	// enough that a server falling behind shows its queue in the tail.
	openLoopInFlight = 256
)

// peerQueries are the four queries every server answers, after the
// floor (Q0); the variables come from the peers' dataset (args are the
// peer driver's flags, hbArgs hbgraph's where its variables are named
// otherwise).
var peerQueries = []peerQuery{
	// Q0 reads nothing: what this machine, the HTTP servers and the driver
	// cost and add to the tail with no work at all, beside which the
	// targets' figures are to be read. Every server answers the same text
	// (a query's unused variables are ignored).
	{name: "Q0", file: "q0.graphql", varsFile: "nodes.jsonl", args: []string{"-fields", "id"}, floor: true},
	{name: "Q1", file: "q1.graphql", varsFile: "nodes.jsonl", args: []string{"-fields", "id"}},
	{name: "Q2", file: "q2.graphql", varsFile: "nodes.jsonl", args: []string{"-fields", "id"}},
	{name: "Q3", file: "q3.graphql", varsFile: "nodes.jsonl", args: []string{"-fields", "id"}},
	{name: "Q4", file: "q4.graphql", varsFile: "q4_targets.jsonl", pageChainPages: 4,
		args: []string{"-fields", "authorId,category"}, hbArgs: []string{"-fields", "authorId:id,category"}},
}

// peerQuery is one of the queries of the side by side.
type peerQuery struct {
	name, file     string
	args, hbArgs   []string
	varsFile       string
	pageChainPages int
	// floor marks Q0: its text is bench/queries' for every server, and no
	// target applies to it.
	floor bool
	// hbgraphOnly queries run on hbgraph alone, from its own queries
	// folder, with varsPath's variables (the fan-out table).
	hbgraphOnly bool
	varsPath    string
}

// target is one server of the side-by-side: hbgraph or a peer.
type target struct {
	name    string
	url     string
	queries string // folder of q1..q4.graphql written for its schema
	// pids lists the processes whose CPU the server spends (a peer's
	// PostgreSQL, every process of it); sampled over each run.
	pids func() []int
	// background tells whether background work (vacuum, compaction) runs
	// now, and a fingerprint of what ran: the same before and after a run
	// means none ran meanwhile. Nil: nothing to check.
	background func(ctx context.Context) (busy bool, state string, err error)
	// hbgraph is true for our server (its queries take hbArgs); admin is
	// its admin listener (profiles).
	hbgraph bool
	admin   string
	// data is the folder of the dataset it serves, whose files give the
	// driver its variables; empty: the peers' (peerData).
	data string
}

// varsOf is the file of q's variables for t.
func (b *bench) varsOf(t target, q peerQuery) string {
	if q.varsPath != "" {
		return q.varsPath
	}
	if t.data != "" {
		return filepath.Join(t.data, q.varsFile)
	}
	return b.peerData(q.varsFile)
}

// peerRun is what one target measured on one query in one round.
type peerRun struct {
	Target, Query string
	Round         int
	// Rate is the open loop's requests a second; 0 for the closed loop.
	Rate          float64
	RPS           float64
	P50, P90, P99 float64
	Requests      int
	Errors        int
	// Cores is how many cores the target's processes kept busy over the
	// measured window (CPUWindow seconds); DriverCPU the load driver's
	// CPU seconds.
	Cores, CPUWindow, DriverCPU float64
	// Steal is the share of the machine's CPU time its hypervisor stole
	// over the measured window.
	Steal float64
	// Quiet is false when background work (vacuum, compaction) was seen
	// around the run, or the hypervisor stole more than maxSteal, even
	// after one retry.
	Quiet bool
}

func (r peerRun) open() bool { return r.Rate > 0 }

// cpuPerRequest is the target's CPU per request in microseconds: the
// cores it kept busy over the measured window divided by its throughput.
func (r peerRun) cpuPerRequest() float64 {
	if r.RPS == 0 {
		return 0
	}
	return r.Cores / r.RPS * 1e6
}

// peerTargets are the peers that answer; a peer that does not is left
// out, and with none the step is skipped.
func (b *bench) peerTargets(ctx context.Context) []target {
	pg4 := filepath.Join(b.cfg.peers, "postgraphile")
	pg5 := filepath.Join(b.cfg.peers, "postgraphile5")
	postgres := func() []int { return processTree(pidFile(filepath.Join(pg4, "run", "postgres.pid"))) }
	socket, err := filepath.Abs(filepath.Join(pg4, "run"))
	if err != nil {
		socket = filepath.Join(pg4, "run")
	}
	vacuum := func(ctx context.Context) (bool, string, error) {
		workers, counts, err := postgresActivity(ctx, socket, b.cfg.pgPort)
		return workers > 0, counts, err
	}
	all := []target{
		{name: "PostGraphile 4", url: b.cfg.pg4URL, queries: filepath.Join(pg4, "queries"), background: vacuum,
			pids: func() []int { return append(postgres(), pidFile(filepath.Join(pg4, "run", "postgraphile.pid"))) }},
		{name: "PostGraphile 5", url: b.cfg.pg5URL, queries: filepath.Join(pg5, "queries"), background: vacuum,
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

// peerNodes is the size of the peers' dataset, from its meta.json.
func (b *bench) peerNodes() (int, error) {
	raw, err := os.ReadFile(b.peerData("meta.json"))
	if err != nil {
		return 0, fmt.Errorf("the peers' dataset: %w (make peers-up writes it)", err)
	}
	var meta struct {
		Params struct {
			Nodes int `json:"nodes"`
		} `json:"params"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil || meta.Params.Nodes == 0 {
		return 0, fmt.Errorf("the peers' meta.json: no node count (%v)", err)
	}
	return meta.Params.Nodes, nil
}

// peerDBDir is hbgraph's store of the peers' dataset at its size.
func (b *bench) peerDBDir(nodes int) string {
	return filepath.Join(b.cfg.dir, fmt.Sprintf("db-peers-%d", nodes))
}

// hbgraphTarget is the target of a server started by the bench on
// dataDir.
func hbgraphTarget(srv *server, dataDir string) target {
	return target{name: "hbgraph", url: srv.url, queries: filepath.Join("bench", "queries"), hbgraph: true, admin: srv.admin,
		pids: func() []int { return []int{srv.cmd.Process.Pid} },
		background: func(context.Context) (bool, string, error) {
			files, err := storeFiles(dataDir)
			return false, files, err
		}}
}

// buildPeerDriver builds the peers' load driver from its own module; it
// drives every server.
func (b *bench) buildPeerDriver(ctx context.Context) error {
	driver, err := filepath.Abs(b.bin("peerload"))
	if err != nil {
		return err
	}
	_, err = b.commandIn(ctx, filepath.Join(b.cfg.peers, "postgraphile"), "go", "build", "-o", driver, "./load")
	return err
}

// sideBySide is the step: it imports the peers' dataset into hbgraph
// (unless the same files already are), starts hbgraph on it and measures
// the queries on every target (sideBySideRounds).
func (b *bench) sideBySide(ctx context.Context) error {
	peers := b.peerTargets(ctx)
	if len(peers) == 0 {
		fmt.Println("side by side: no peer answers; skipped")
		return nil
	}
	nodes, err := b.peerNodes()
	if err != nil {
		return err
	}
	if _, err := b.importPeerData(ctx, b.peerDBDir(nodes)); err != nil {
		return err
	}
	if err := b.buildPeerDriver(ctx); err != nil {
		return err
	}
	srv, err := b.startServerOn(ctx, b.peerDBDir(nodes), batched)
	if err != nil {
		return err
	}
	defer srv.stop()
	targets := append([]target{hbgraphTarget(srv, b.peerDBDir(nodes))}, peers...)
	b.peerTargetNames = nil
	for _, t := range targets {
		b.peerTargetNames = append(b.peerTargetNames, t.name)
	}
	var plan openLoopPlan
	b.peerRuns, plan, err = b.sideBySideRounds(ctx, targets, peerQueries, b.cfg.peerRounds, nil)
	b.peerRates = plan.Rates
	return err
}

// sideBySideRounds measures queries on targets (hbgraph first), rounds
// times: first the closed loop, each query on every target before the
// next query, the targets' order turning each round; then, at half the
// faster peer's median closed-loop throughput of each query, the open
// loop on hbgraph and that peer, their order alternating each round. It
// returns every run and the open loop's plan. With fixed, the open loop
// runs at its rates against its peers instead.
func (b *bench) sideBySideRounds(ctx context.Context, targets []target, queries []peerQuery, rounds int, fixed *openLoopPlan) ([]peerRun, openLoopPlan, error) {
	var runs []peerRun
	for round := range rounds {
		for _, q := range queries {
			for i := range targets {
				t := targets[(i+round)%len(targets)]
				r, err := b.peerLoadQuiet(ctx, t, q, round, 0)
				if err != nil {
					return runs, openLoopPlan{}, fmt.Errorf("side by side: %s on %s: %w", q.name, t.name, err)
				}
				runs = append(runs, r)
			}
		}
	}
	plan := openLoopPlan{Rates: map[string]float64{}, Peers: map[string]string{}}
	for _, q := range queries {
		var best float64
		for _, t := range targets[1:] {
			if rps, ok := medianOf(runs, t.name, q.name, false, peerRun.throughput); ok && rps > best {
				best, plan.Peers[q.name] = rps, t.name
			}
		}
		if best > 0 {
			plan.Rates[q.name] = math.Round(best * openLoopShare)
		}
	}
	if fixed != nil {
		plan = *fixed
	}
	faster := map[string]target{}
	for _, t := range targets[1:] {
		for q, name := range plan.Peers {
			if t.name == name {
				faster[q] = t
			}
		}
	}
	for round := range rounds {
		for _, q := range queries {
			peer, ok := faster[q.name]
			if !ok {
				continue
			}
			pair := []target{targets[0], peer}
			if round%2 == 1 {
				pair[0], pair[1] = pair[1], pair[0]
			}
			for _, t := range pair {
				r, err := b.peerLoadQuiet(ctx, t, q, round, plan.Rates[q.name])
				if err != nil {
					return runs, plan, fmt.Errorf("side by side: %s on %s at %.0f req/s: %w", q.name, t.name, plan.Rates[q.name], err)
				}
				runs = append(runs, r)
			}
		}
	}
	return runs, plan, nil
}

// openLoopPlan is the open loop's rate and peer for each query.
type openLoopPlan struct {
	Rates map[string]float64
	Peers map[string]string
}

func (r peerRun) throughput() float64 { return r.RPS }

// settleTimeout bounds the wait for background work to end before a run.
const settleTimeout = 2 * time.Minute

// peerLoadQuiet is peerLoad with background work kept out: it waits
// until t has none running, and runs again once if some ran meanwhile.
func (b *bench) peerLoadQuiet(ctx context.Context, t target, q peerQuery, round int, rate float64) (peerRun, error) {
	for attempt := 0; ; attempt++ {
		before, err := settle(ctx, t)
		if err != nil {
			return peerRun{}, err
		}
		r, err := b.peerLoad(ctx, t, q, round, rate)
		if err != nil {
			return r, err
		}
		r.Quiet = r.Steal <= maxSteal
		if t.background != nil {
			busy, after, err := t.background(ctx)
			if err != nil {
				return r, err
			}
			r.Quiet = r.Quiet && !busy && after == before
		}
		why := fmt.Sprintf("background work (vacuum or compaction) ran, or the hypervisor stole %.0f%% of the CPU, during %s on %s", 100*r.Steal, q.name, t.name)
		if r.Quiet || attempt == 1 {
			if !r.Quiet {
				fmt.Printf("side by side: %s again; the run is marked\n", why)
			}
			return r, nil
		}
		fmt.Printf("side by side: %s; running it again\n", why)
	}
}

// settle waits until t runs no background work and returns its
// fingerprint.
func settle(ctx context.Context, t target) (string, error) {
	if t.background == nil {
		return "", nil
	}
	deadline := time.Now().Add(settleTimeout)
	for {
		busy, state, err := t.background(ctx)
		if err != nil || !busy || time.Now().After(deadline) {
			return state, err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// peerLoad runs the peer driver once against t for q: closed loop at
// -concurrency, or open loop at rate when rate > 0.
func (b *bench) peerLoad(ctx context.Context, t target, q peerQuery, round int, rate float64) (peerRun, error) {
	fields := q.args
	if t.hbgraph && q.hbArgs != nil {
		fields = q.hbArgs
	}
	queries := t.queries
	if q.floor {
		queries = filepath.Join("bench", "queries")
	}
	vars := b.varsOf(t, q)
	name := t.name + " " + q.name
	conc := b.cfg.concurrency
	if rate > 0 {
		name += fmt.Sprintf(" at %.0f/s", rate)
		conc = openLoopInFlight
	}
	args := append([]string{"-url", t.url, "-query", filepath.Join(queries, q.file),
		"-vars", vars, "-name", name,
		"-c", strconv.Itoa(conc), "-d", b.cfg.duration.String(), "-warmup", b.cfg.warmup.String()}, fields...)
	if rate > 0 {
		args = append(args, "-rate", strconv.FormatFloat(rate, 'f', 0, 64))
	}
	if q.pageChainPages > 0 {
		args = append(args, "-page-chain", strconv.Itoa(q.pageChainPages))
	}
	stopProfile := func() error { return nil }
	if b.cfg.profile && t.hbgraph && rate == 0 && t.admin != "" {
		stopProfile = b.profile(ctx, t.admin, "side by side "+q.name)
	}
	stopSampling := sampleCPU(t.pids)
	out, err := b.command(ctx, b.bin("peerload"), args...)
	exited := time.Now()
	samples := stopSampling()
	if perr := stopProfile(); err == nil && perr != nil {
		fmt.Printf("side by side: profile of %s: %v\n", q.name, perr)
	}
	if err != nil {
		return peerRun{}, err
	}
	r, err := parsePeerLoad(out)
	if err != nil {
		return peerRun{}, err
	}
	r.Target, r.Query, r.Round, r.Rate = t.name, q.name, round, rate
	to := exited.Add(-driverTail)
	cores, window, steal, ok := windowCores(samples, to.Add(-b.cfg.duration), to)
	if !ok {
		return r, fmt.Errorf("too few CPU samples over the measured window (%d in all)", len(samples))
	}
	r.Cores, r.CPUWindow, r.Steal = cores, window, steal
	return r, nil
}

// peerResultLine and peerDriverCPU match what the peer driver prints:
// "RESULT\tname\trequests\terrors\treq/s\tp50\tp90\tp99" and, on its human
// line, "driver_cpu=1.2s".
var (
	peerResultLine = regexp.MustCompile(`(?m)^RESULT\t[^\t]*\t(\d+)\t(\d+)\t([0-9.]+)\t([0-9.]+)\t([0-9.]+)\t([0-9.]+)`)
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
	r.P90, _ = strconv.ParseFloat(string(m[5]), 64)
	r.P99, _ = strconv.ParseFloat(string(m[6]), 64)
	if d := peerDriverCPU.FindSubmatch(out); d != nil {
		r.DriverCPU, _ = strconv.ParseFloat(string(d[1]), 64)
	}
	if r.Errors > 0 {
		return r, fmt.Errorf("%d of %d requests failed", r.Errors, r.Requests)
	}
	return r, nil
}

// peerImport is what importing the peers' dataset into hbgraph took;
// kept beside the store, so that a later run reuses it with its figures.
type peerImport struct {
	Figures []importFigure `json:"figures"`
	Seconds float64        `json:"seconds"`
	// PeakRSS is the import's largest resident set, in bytes.
	PeakRSS int64 `json:"peak_rss"`
	// Steal is the share of the machine's CPU time its hypervisor stole
	// while the import ran (/proc/stat): a rate measured under steal is
	// the neighbours' as much as the import's.
	Steal float64 `json:"steal"`
}

// rates is the import's rows a second by kind, "nodes / relationships /
// articles".
func (imp peerImport) rates() string {
	rs := make([]string, len(imp.Figures))
	for i, f := range imp.Figures {
		rs[i] = fmt.Sprintf("%.0f", f.RowsPerS)
	}
	return strings.Join(rs, " / ")
}

// importPeerData imports the peers' dataset into hbgraph's dbDir, unless
// a stamp says these very files were imported there already.
func (b *bench) importPeerData(ctx context.Context, dbDir string) (peerImport, error) {
	h := sha256.New()
	files := []string{b.peerData("nodes.jsonl"), b.peerData("relationships.jsonl"), b.peerData("articles.jsonl")}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return peerImport{}, fmt.Errorf("the peers' dataset: %w (make peers-up writes it)", err)
		}
		_, err = io.Copy(h, fh)
		fh.Close()
		if err != nil {
			return peerImport{}, err
		}
	}
	stamp := hex.EncodeToString(h.Sum(nil)) + "\n"
	stampFile, figuresFile := dbDir+".stamp", dbDir+".import.json"
	var imp peerImport
	if old, err := os.ReadFile(stampFile); err == nil && string(old) == stamp {
		fmt.Printf("side by side: %s holds the peers' dataset already\n", dbDir)
		if raw, err := os.ReadFile(figuresFile); err == nil {
			json.Unmarshal(raw, &imp)
		}
		return imp, nil
	}
	os.Remove(stampFile)
	imp, err := b.importInto(ctx, dbDir, filepath.Dir(files[0]))
	if err != nil {
		return imp, fmt.Errorf("import of the peers' dataset: %w", err)
	}
	raw, _ := json.Marshal(imp)
	if err := os.WriteFile(figuresFile, raw, 0o644); err != nil {
		return imp, err
	}
	return imp, os.WriteFile(stampFile, []byte(stamp), 0o644)
}

// importInto imports the peers' dataset files in dataDir into a fresh
// dbDir, timing it and taking its peak RSS.
func (b *bench) importInto(ctx context.Context, dbDir, dataDir string) (peerImport, error) {
	var imp peerImport
	if err := os.RemoveAll(dbDir); err != nil {
		return imp, err
	}
	args := []string{"--data-dir", dbDir, "--log-level", "warn", "import",
		"--nodes", filepath.Join(dataDir, "nodes.jsonl"),
		"--relationships", filepath.Join(dataDir, "relationships.jsonl"),
		"--articles", filepath.Join(dataDir, "articles.jsonl")}
	b.commands = append(b.commands, shellJoin(append([]string{b.bin("hbgraph")}, args...)))
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, b.bin("hbgraph"), args...)
	cmd.Stdout = io.MultiWriter(&out, os.Stdout)
	cmd.Stderr = os.Stderr
	// The writes of what ran before (another import's compaction, the
	// store just removed) reach the disk now, not during this import.
	syscall.Sync()
	start := time.Now()
	ticks := readMachineTicks()
	if err := cmd.Run(); err != nil {
		return imp, err
	}
	imp.Seconds = time.Since(start).Seconds()
	imp.Steal = readMachineTicks().stealSince(ticks)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		imp.PeakRSS = ru.Maxrss << 10 // kilobytes on Linux
	}
	var err error
	imp.Figures, err = parseImport(out.Bytes())
	return imp, err
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

// medianOf is the median of f over the runs of target on query, closed
// or open loop.
func medianOf(runs []peerRun, target, query string, open bool, f func(peerRun) float64) (float64, bool) {
	var xs []float64
	for _, r := range runs {
		if r.Target == target && r.Query == query && r.open() == open {
			xs = append(xs, f(r))
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	return median(xs), true
}

// median is the median of xs (not empty), which it sorts.
func median(xs []float64) float64 {
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

func (r peerRun) p50() float64 { return r.P50 }
func (r peerRun) p99() float64 { return r.P99 }

// verdict is one query's three measures, hbgraph against the faster peer
// (medians of the rounds).
type verdict struct {
	Query, Peer         string
	Floor               bool
	RPS, PeerRPS        float64
	CPU, PeerCPU        float64 // µs per request
	Rate                float64 // the open loop's
	P50, PeerP50        float64 // open loop
	P99, PeerP99        float64
	HasOpen             bool
	ThroughputOK, CPUOK bool
	P50OK, P99OK        bool
}

// verdicts works out each query's verdict from runs; the faster peer is
// the one of the higher median closed-loop throughput.
func verdicts(runs []peerRun, targetNames []string, queries []peerQuery, rates map[string]float64) []verdict {
	var vs []verdict
	for _, q := range queries {
		if q.hbgraphOnly {
			continue
		}
		v := verdict{Query: q.name, Floor: q.floor}
		var ok bool
		if v.RPS, ok = medianOf(runs, "hbgraph", q.name, false, peerRun.throughput); !ok {
			continue
		}
		for _, t := range targetNames {
			if t == "hbgraph" {
				continue
			}
			if rps, ok := medianOf(runs, t, q.name, false, peerRun.throughput); ok && rps > v.PeerRPS {
				v.Peer, v.PeerRPS = t, rps
			}
		}
		if v.Peer == "" {
			continue
		}
		v.CPU, _ = medianOf(runs, "hbgraph", q.name, false, peerRun.cpuPerRequest)
		v.PeerCPU, _ = medianOf(runs, v.Peer, q.name, false, peerRun.cpuPerRequest)
		v.Rate = rates[q.name]
		var ok1, ok2 bool
		v.P50, ok1 = medianOf(runs, "hbgraph", q.name, true, peerRun.p50)
		v.PeerP50, ok2 = medianOf(runs, v.Peer, q.name, true, peerRun.p50)
		v.P99, _ = medianOf(runs, "hbgraph", q.name, true, peerRun.p99)
		v.PeerP99, _ = medianOf(runs, v.Peer, q.name, true, peerRun.p99)
		v.HasOpen = ok1 && ok2
		v.ThroughputOK = v.RPS >= targetThroughput*v.PeerRPS
		v.CPUOK = v.CPU <= targetCPU*v.PeerCPU
		v.P50OK = v.HasOpen && v.P50 <= targetOpenP50*v.PeerP50
		v.P99OK = v.HasOpen && v.P99 <= targetOpenP99*v.PeerP99
		vs = append(vs, v)
	}
	return vs
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// verdictTable renders the verdicts, one row a query.
func verdictTable(w io.Writer, vs []verdict) {
	fmt.Fprintf(w, "| query | faster peer | req/s hbgraph / peer | ratio | >= %.0fx | CPU µs/req hbgraph / peer | ratio | <= 1/%.0f | open loop req/s | p50 ms hbgraph / peer | ratio | <= 1/%.0f | p99 ms hbgraph / peer | ratio | <= 1/%.0f |\n",
		targetThroughput, 1/targetCPU, 1/targetOpenP50, 1/targetOpenP99)
	fmt.Fprintf(w, "|---|---|---:|---:|---|---:|---:|---|---:|---:|---:|---|---:|---:|---|\n")
	for _, v := range vs {
		m := func(ok bool) string {
			if v.Floor {
				return "(floor)"
			}
			return mark(ok)
		}
		fmt.Fprintf(w, "| %s | %s | %.0f / %.0f | %.2f | %s | %.0f / %.0f | %.2f | %s |", v.Query, v.Peer,
			v.RPS, v.PeerRPS, ratio(v.RPS, v.PeerRPS), m(v.ThroughputOK),
			v.CPU, v.PeerCPU, ratio(v.CPU, v.PeerCPU), m(v.CPUOK))
		if !v.HasOpen {
			fmt.Fprintf(w, " | | | | | | |\n")
			continue
		}
		fmt.Fprintf(w, " %.0f | %.2f / %.2f | %.2f | %s | %.2f / %.2f | %.2f | %s |\n", v.Rate,
			v.P50, v.PeerP50, ratio(v.P50, v.PeerP50), m(v.P50OK),
			v.P99, v.PeerP99, ratio(v.P99, v.PeerP99), m(v.P99OK))
	}
}

// runsTable renders every run, in the order it ran.
func runsTable(w io.Writer, runs []peerRun) {
	fmt.Fprintf(w, "| round | query | server | loop | req/s | p50 ms | p90 ms | p99 ms | requests | cores busy | CPU µs/req | driver CPU s | steal %% | quiet |\n")
	fmt.Fprintf(w, "|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range runs {
		loop := "closed"
		if r.open() {
			loop = fmt.Sprintf("open, %.0f/s", r.Rate)
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %.0f | %.2f | %.2f | %.2f | %d | %.2f | %.0f | %.1f | %.0f | %s |\n",
			r.Round+1, r.Query, r.Target, loop, r.RPS, r.P50, r.P90, r.P99, r.Requests, r.Cores, r.cpuPerRequest(), r.DriverCPU, 100*r.Steal, mark(r.Quiet))
	}
}

// sideBySideMethod is how the side by side measures, for RESULTS.md.
func (b *bench) sideBySideMethod(w io.Writer) {
	fmt.Fprintf(w, "- Load: the peers' driver (`load`) for every server. Closed loop: concurrency %d, %s measured after %s of warm-up. Open loop: `-rate R -c %d`, R half the faster peer's median closed-loop req/s, the same R for hbgraph and that peer, latency counted from when the driver woke to send\n",
		b.cfg.concurrency, b.cfg.duration, b.cfg.warmup, openLoopInFlight)
	fmt.Fprintf(w, "- Rounds: %d; first every closed-loop run (each query on every server before the next query, the servers' order turning each round), then every open-loop run (hbgraph and the faster peer, their order alternating each round); the tables take the medians of the rounds\n", b.cfg.peerRounds)
	fmt.Fprintf(w, "- CPU per request: the cores the server's processes kept busy over the closed loop's measured window (sampled from `/proc/PID/stat` every %s, fields 14-17: utime, stime, cutime, cstime), over its req/s. hbgraph: its process. A peer: its Node process, the postmaster and every child of it (backends, checkpointer, walwriter ...), reaped children included through the postmaster's cutime and cstime. The driver's own CPU is in no figure\n", cpuSampleEvery)
	fmt.Fprintf(w, "- No vacuum or compaction in a run: PostgreSQL's data was loaded with VACUUM ANALYZE and the runs only read; before each peer run the bench waits until no autovacuum worker runs, and after it checks that none runs and that no table's vacuum or analyze count moved (`pg_stat_all_tables`). hbgraph's store was compacted into one level by the import and the runs only read; after each run the bench checks that the store's .sst files are the ones before it. A run where either moved, or where the machine's hypervisor stole more than %.0f%% of its CPU time over the measured window (`steal %%`, from `/proc/stat`: on a shared virtual machine the neighbours' load then sets the latencies), is run again once; `quiet` says whether the kept run was clean\n", 100*maxSteal)
}

// peersReport renders the side-by-side section of RESULTS.md.
func (b *bench) peersReport() string {
	var w bytes.Buffer
	fmt.Fprintf(&w, "## Side by side with PostGraphile (latest `make bench` with the peers up)\n\n")
	fmt.Fprintf(&w, "- When: %s; commit %s\n", time.Now().UTC().Format(time.RFC3339), commit())
	fmt.Fprintf(&w, "- Machine: %s\n", machine())
	fmt.Fprintf(&w, "- Dataset: the peers' (%s), imported into hbgraph with `hbgraph import`\n", peerDataSummary(b))
	b.sideBySideMethod(&w)
	fmt.Fprintf(&w, "- Q0 is the floor, `{ __typename }` on every server: no data read; no verdict applies to it\n\n")
	fmt.Fprintf(&w, "### Verdicts (issue 27), against the faster peer of each query\n\n")
	vs := verdicts(b.peerRuns, b.peerTargetNames, peerQueries, b.peerRates)
	verdictTable(&w, vs)
	held := 0
	for _, v := range vs {
		if !v.Floor && v.ThroughputOK && v.CPUOK && v.P50OK && v.P99OK {
			held++
		}
	}
	fmt.Fprintf(&w, "\nAll four verdicts hold on %d of the %d queries.\n", held, len(peerQueries)-1)

	fmt.Fprintf(&w, "\n### Every server, closed loop (medians)\n\n| query |")
	for _, t := range b.peerTargetNames {
		fmt.Fprintf(&w, " %s req/s (p50/p99 ms) | CPU µs/req |", t)
	}
	fmt.Fprintf(&w, "\n|---|")
	for range b.peerTargetNames {
		fmt.Fprintf(&w, "---:|---:|")
	}
	fmt.Fprintf(&w, "\n")
	for _, q := range peerQueries {
		fmt.Fprintf(&w, "| %s |", q.name)
		for _, t := range b.peerTargetNames {
			rps, ok := medianOf(b.peerRuns, t, q.name, false, peerRun.throughput)
			if !ok {
				fmt.Fprintf(&w, " | |")
				continue
			}
			p50, _ := medianOf(b.peerRuns, t, q.name, false, peerRun.p50)
			p99, _ := medianOf(b.peerRuns, t, q.name, false, peerRun.p99)
			cpu, _ := medianOf(b.peerRuns, t, q.name, false, peerRun.cpuPerRequest)
			fmt.Fprintf(&w, " %.0f (%.1f/%.1f) | %.0f |", rps, p50, p99, cpu)
		}
		fmt.Fprintf(&w, "\n")
	}
	fmt.Fprintf(&w, "\nUnder the closed loop the driver takes a large share of the two cores, so those p99s are mostly the driver's; the tails to compare are the open loop's.\n")
	fmt.Fprintf(&w, "\n### Every run, in the order it ran\n\n")
	runsTable(&w, b.peerRuns)
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
