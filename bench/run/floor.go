package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// `make bench-floor` (-floor): the HTTP floor of issue 27. On the peers'
// dataset, with the peers' driver as the side by side uses it, it
// measures a bare net/http handler answering hbgraph's Q0 response
// (bench/bare), hbgraph's Q0 ({ __typename }) and hbgraph's Q1, each in
// the open loop at -floor-rate (the rate the side by side runs Q1 at:
// half the faster peer's closed-loop req/s) and in the closed loop at
// -concurrency: p50, p99 and CPU per request (cpu.go). The servers take
// turns, one at a time on the machine, their order turning each round,
// -floor-rounds rounds; the tables take the medians. -floor-before BIN
// measures an older hbgraph alongside, in the same turns, for a
// before/after on one sitting. The peers need not be up.

const (
	floorBegin = "<!-- floor:begin (written by `make bench-floor`; edits here are lost) -->"
	floorEnd   = "<!-- floor:end -->"
	// defaultFloorRate is the side by side's open-loop rate for Q1 in
	// the latest `make bench` (2026-11-26, PostGraphile 4 at 4,894 req/s).
	defaultFloorRate = 2447
)

// floorServer is one server of the floor's turns.
type floorServer struct {
	name    string
	bin     string // hbgraph's binary, or bench/bare's
	bare    bool
	queries []peerQuery
}

// floorQueries are what the floor measures on hbgraph: the floor query
// and Q1; the bare handler answers anything with Q0's response.
func floorQueries() []peerQuery {
	var qs []peerQuery
	for _, q := range peerQueries {
		if q.name == "Q0" || q.name == "Q1" {
			qs = append(qs, q)
		}
	}
	return qs
}

// floor is the step.
func (b *bench) floor(ctx context.Context) error {
	b.floorLoad = loadAverage()
	if _, err := b.command(ctx, "go", "build", "-o", b.bin("bare"), "./bench/bare"); err != nil {
		return err
	}
	if err := b.buildFloorDriver(ctx); err != nil {
		return err
	}
	nodes, err := b.peerNodes()
	if err != nil {
		return err
	}
	dbDir := b.peerDBDir(nodes)
	if _, err := b.importPeerData(ctx, dbDir); err != nil {
		return err
	}
	bareQ := peerQueries[0] // Q0's text and variables; the answer is fixed
	bareQ.name = "any"
	servers := []floorServer{
		{name: "bare net/http", bin: b.bin("bare"), bare: true, queries: []peerQuery{bareQ}},
		{name: "hbgraph", bin: b.bin("hbgraph"), queries: floorQueries()},
	}
	if b.cfg.floorBefore != "" {
		servers = append(servers, floorServer{name: "hbgraph before", bin: b.cfg.floorBefore, queries: floorQueries()})
	}
	b.floorServerNames = nil
	for _, s := range servers {
		b.floorServerNames = append(b.floorServerNames, s.name)
	}
	for round := range b.cfg.floorRounds {
		for i := range servers {
			s := servers[(i+round)%len(servers)]
			if err := b.floorTurn(ctx, s, dbDir, round); err != nil {
				return fmt.Errorf("floor: %s: %w", s.name, err)
			}
		}
	}
	return writeSection(b.cfg.out, floorBegin, floorEnd, b.floorReport())
}

// buildFloorDriver builds the peers' driver from the peers' folder, or
// from their source ($PEERS_SRC, ../shared/peers) when they were never
// brought up here.
func (b *bench) buildFloorDriver(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(b.cfg.peers, "postgraphile", "load")); err == nil {
		return b.buildPeerDriver(ctx)
	}
	src := os.Getenv("PEERS_SRC")
	if src == "" {
		src = filepath.Join("..", "shared", "peers")
	}
	driver, err := filepath.Abs(b.bin("peerload"))
	if err != nil {
		return err
	}
	_, err = b.commandIn(ctx, filepath.Join(src, "postgraphile"), "go", "build", "-o", driver, "./load")
	return err
}

// floorTurn starts s, runs each of its queries in the open loop and then
// in the closed loop, and stops it.
func (b *bench) floorTurn(ctx context.Context, s floorServer, dbDir string, round int) error {
	var t target
	if s.bare {
		srv, err := b.startBare(ctx, s.bin)
		if err != nil {
			return err
		}
		defer srv.stop()
		t = target{name: s.name, url: srv.url, queries: filepath.Join("bench", "queries"),
			pids: func() []int { return []int{srv.cmd.Process.Pid} }}
	} else {
		saved := b.cfg.hbgraph
		b.cfg.hbgraph = s.bin
		srv, err := b.startServerOn(ctx, dbDir, batched)
		b.cfg.hbgraph = saved
		if err != nil {
			return err
		}
		defer srv.stop()
		t = hbgraphTarget(srv, dbDir)
		t.name = s.name
	}
	for _, rate := range []float64{b.cfg.floorRate, 0} {
		for _, q := range s.queries {
			r, err := b.peerLoadQuiet(ctx, t, q, round, rate)
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				// A run the driver gave up on (a request timed out on
				// a machine too busy) is left out and named, so that
				// the other runs of the sitting are not lost.
				failed := fmt.Sprintf("round %d, %s %s", round+1, s.name, q.name)
				if rate > 0 {
					failed += fmt.Sprintf(" at %.0f/s", rate)
				}
				b.floorFailed = append(b.floorFailed, failed+": "+err.Error())
				fmt.Printf("floor: %s: %v; left out\n", failed, err)
				continue
			}
			b.floorRuns = append(b.floorRuns, r)
		}
	}
	return nil
}

// startBare starts bench/bare on a free loopback port.
func (b *bench) startBare(ctx context.Context, bin string) (*server, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	b.commands = append(b.commands, shellJoin([]string{bin, "-listen", addr}))
	cmd := exec.Command(bin, "-listen", addr)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, base: "http://" + addr, url: "http://" + addr + "/query", done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if resp, err := http.Get(s.base + "/healthz"); err == nil {
			resp.Body.Close()
			return s, nil
		}
		select {
		case err := <-s.done:
			return nil, fmt.Errorf("bare exited: %v: %s", err, stderr.String())
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, errors.New("bare did not answer within 10s")
		}
	}
}

// floorReport renders the floor's part of RESULTS.md.
func (b *bench) floorReport() string {
	var w bytes.Buffer
	fmt.Fprintf(&w, "## The HTTP floor (latest `make bench-floor`)\n\n")
	fmt.Fprintf(&w, "- When: %s (took %s); commit %s\n", b.started.UTC().Format(time.RFC3339), time.Since(b.started).Round(time.Second), commit())
	if b.cfg.floorBefore != "" {
		fmt.Fprintf(&w, "- \"hbgraph before\" is %s, measured in the same turns\n", b.cfg.floorBefore)
	}
	fmt.Fprintf(&w, "- Machine: %s; load average before %s\n", machine(), b.floorLoad)
	fmt.Fprintf(&w, "- Dataset: the peers' (%s); hbgraph as `make bench` starts it\n", peerDataSummary(b))
	fmt.Fprintf(&w, "- bare net/http: bench/bare, a net/http server that reads the body and answers hbgraph's Q0 response (%d bytes), nothing else\n", len(`{"data":{"__typename":"Query"}}`))
	fmt.Fprintf(&w, "- Load: the peers' driver. Open loop: `-rate %.0f -c %d` (the side by side's Q1 rate), latency from when the driver woke to send. Closed loop: concurrency %d. %s measured after %s of warm-up\n",
		b.cfg.floorRate, openLoopInFlight, b.cfg.concurrency, b.cfg.duration, b.cfg.warmup)
	fmt.Fprintf(&w, "- CPU per request: the server process's utime+stime over the measured window (`/proc/PID/stat`, every %s), over its req/s\n", cpuSampleEvery)
	fmt.Fprintf(&w, "- Rounds: %d; one server at a time (started, its open-loop runs, its closed-loop runs, stopped), their order turning each round; medians of the rounds\n\n", b.cfg.floorRounds)

	fmt.Fprintf(&w, "| server | query | open p50 ms | open p99 ms | open CPU µs/req | closed req/s | closed p50 ms | closed p99 ms | closed CPU µs/req |\n")
	fmt.Fprintf(&w, "|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	type row struct{ server, query string }
	var rows []row
	for _, r := range b.floorRuns {
		if k := (row{r.Target, r.Query}); !slices.Contains(rows, k) {
			rows = append(rows, k)
		}
	}
	slices.SortStableFunc(rows, func(a, c row) int {
		return slices.Index(b.floorServerNames, a.server) - slices.Index(b.floorServerNames, c.server)
	})
	for _, k := range rows {
		med := func(open bool, f func(peerRun) float64) float64 {
			v, _ := medianOf(b.floorRuns, k.server, k.query, open, f)
			return v
		}
		fmt.Fprintf(&w, "| %s | %s | %.3f | %.2f | %.0f | %.0f | %.2f | %.2f | %.0f |\n", k.server, k.query,
			med(true, peerRun.p50), med(true, peerRun.p99), med(true, peerRun.cpuPerRequest),
			med(false, peerRun.throughput), med(false, peerRun.p50), med(false, peerRun.p99), med(false, peerRun.cpuPerRequest))
	}
	if len(b.floorFailed) > 0 {
		fmt.Fprintf(&w, "\nLeft out, the driver having given up on them:\n\n")
		for _, f := range b.floorFailed {
			fmt.Fprintf(&w, "- %s\n", f)
		}
	}
	fmt.Fprintf(&w, "\n### Every run, in the order it ran\n\n")
	runsTable(&w, b.floorRuns)
	return w.String()
}
