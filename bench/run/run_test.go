package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseImport(t *testing.T) {
	out := []byte(`{"level":"info","kind":"articles","rows":69502,"message":"importing"}
nodes             10000 lines     10000 imported         0 skipped       0 failed in 283ms (35325 rows/s)
relationships    249778 lines    249778 imported         0 skipped       0 failed in 26.729s (9345 rows/s)
articles          69502 lines     69400 imported         0 skipped     102 failed in 17.024s (4083 rows/s)
`)
	figs, err := parseImport(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []importFigure{
		{"nodes", 10000, 10000, 0, 0.283, 35325},
		{"relationships", 249778, 249778, 0, 26.729, 9345},
		{"articles", 69502, 69400, 102, 17.024, 4083},
	}
	for i, f := range figs {
		if f != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, f, want[i])
		}
	}
	if _, err := parseImport([]byte("nodes 1 lines 1 imported 0 skipped 0 failed in 1s (1 rows/s)\n")); err == nil {
		t.Error("a summary with one kind was accepted")
	}
}

func TestWriteResultsKeepsWhatIsAroundTheMarkers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "RESULTS.md")
	if err := writeResults(path, "first run\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	text := strings.Replace(string(b), "# Benchmark results\n", "# Benchmark results\n\nHand-written history.\n", 1) + "\nA footnote.\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeResults(path, "second run\n"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	got := string(b)
	for _, want := range []string{"Hand-written history.", "second run", "A footnote.", beginMarker, endMarker} {
		if !strings.Contains(got, want) {
			t.Errorf("results lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "first run") || strings.Count(got, beginMarker) != 1 {
		t.Errorf("the old run was not replaced:\n%s", got)
	}
}

func TestShellJoinQuotesWhatTheShellWouldSplit(t *testing.T) {
	got := shellJoin([]string{"bin/load", "-name", "batching on: Q1", "-vars", `{"id":"n1"}`, "it's", ""})
	want := `bin/load -name 'batching on: Q1' -vars '{"id":"n1"}' 'it'\''s' ''`
	if got != want {
		t.Errorf("shellJoin = %s\nwant       %s", got, want)
	}
}

func TestParseConfigRefusesNonsense(t *testing.T) {
	for _, args := range [][]string{{"-concurrency", "0"}, {"-duration", "0s"}, {"extra"}} {
		if _, err := parseConfig(args); err == nil {
			t.Errorf("%q was accepted", args)
		}
	}
}

// TestBenchEndToEnd runs `make bench` at a small size and short durations:
// build, generate, import, both server modes, every scenario, RESULTS.md.
func TestBenchEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs hbgraph")
	}
	dir := t.TempDir()
	t.Chdir("../..") // bench/run's paths are the repository's
	out := filepath.Join(dir, "RESULTS.md")
	// The peers are left out even when they run on this machine: the side
	// by side has its own test, and so do the round trips.
	args := []string{"-nodes", "150", "-dir", dir, "-out", out, "-concurrency", "4", "-duration", "300ms", "-warmup", "100ms", "-pg4-url=", "-pg5-url=", "-roundtrips=false"}
	if err := run(t.Context(), args); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{
		"| relationships |", "compacted the store into one level in", "| Q1 | on |", "| Q4 | off |", "| Q4 page 50 (deep author) | on |",
		"Q2 INCOMING, most followed", "| Q3 batching on / off | ", "none (retired)", "--articles", "--batch-size 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("RESULTS.md lacks %q:\n%s", want, got)
		}
	}
	// A second run reuses the dataset: the generator is not run again.
	b2 := &bench{cfg: config{nodes: 150, dir: dir}}
	if err := b2.build(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := b2.generate(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, c := range b2.commands {
		if strings.Contains(c, "bin/gen -out") {
			t.Errorf("the dataset was generated again: %s", c)
		}
	}
}

func TestParsePeerLoad(t *testing.T) {
	out := []byte("hbgraph Q3: c=16 d=10s requests=21030 errors=0 throughput=2102.8 req/s latency(ok) p50=6.29ms p90=16.08ms p99=27.69ms mean=7.54ms max=38.51ms varsets=10000 driver_cpu=7.5s\n" +
		"RESULT\thbgraph Q3\t21030\t0\t2102.8\t6.29\t16.08\t27.69\n")
	r, err := parsePeerLoad(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 21030 || r.RPS != 2102.8 || r.P50 != 6.29 || r.P90 != 16.08 || r.P99 != 27.69 || r.DriverCPU != 7.5 {
		t.Errorf("parsed %+v", r)
	}
	if _, err := parsePeerLoad([]byte("RESULT\tQ1\t100\t3\t10.0\t1.00\t2.00\t3.00\n")); err == nil {
		t.Error("a run with failed requests was accepted")
	}
	if _, err := parsePeerLoad([]byte("nothing")); err == nil {
		t.Error("output without a RESULT line was accepted")
	}
}

// TestVerdicts checks the side by side's verdicts: each against the
// faster peer (the higher median closed-loop req/s), on medians of the
// rounds, the tails from the open loop only.
func TestVerdicts(t *testing.T) {
	b := &bench{cfg: config{peerRounds: 3, concurrency: 16}, peerTargetNames: []string{"hbgraph", "PostGraphile 4", "PostGraphile 5"},
		peerRates: map[string]float64{"Q1": 600, "Q2": 450}}
	add := func(target, q string, rate, rps, cores, p50, p99 float64) {
		b.peerRuns = append(b.peerRuns, peerRun{Target: target, Query: q, Rate: rate, RPS: rps, Cores: cores, P50: p50, P99: p99, Quiet: true})
	}
	for _, rps := range []float64{3000, 9000, 3700} { // median 3700
		add("hbgraph", "Q1", 0, rps, 1, 1, 50) // closed-loop tails are not the verdict's
	}
	add("PostGraphile 4", "Q1", 0, 1000, 1.5, 9, 20)
	add("PostGraphile 5", "Q1", 0, 1200, 1.2, 3, 10) // the faster: 1 ms of CPU a request
	add("hbgraph", "Q1", 600, 600, 0.1, 0.4, 1.0)
	add("hbgraph", "Q1", 600, 600, 0.1, 0.6, 3.0) // median p50 0.5, p99 2
	add("PostGraphile 5", "Q1", 600, 600, 0.6, 1.0, 10)
	add("PostGraphile 5", "Q1", 600, 600, 0.6, 1.2, 12) // median p50 1.1, p99 11
	add("hbgraph", "Q2", 0, 1000, 1, 5, 12)
	add("PostGraphile 4", "Q2", 0, 900, 1, 13, 40)
	add("hbgraph", "Q0", 0, 12000, 1, 0.6, 5)
	add("PostGraphile 4", "Q0", 0, 4000, 1, 4, 9)
	vs := verdicts(b.peerRuns, b.peerTargetNames, peerQueries, b.peerRates)
	if len(vs) != 3 {
		t.Fatalf("%d verdicts, want Q0, Q1, Q2: %+v", len(vs), vs)
	}
	q1 := vs[1]
	want := verdict{Query: "Q1", Peer: "PostGraphile 5", RPS: 3700, PeerRPS: 1200, CPU: 1 / 3700.0 * 1e6, PeerCPU: 1e3,
		Rate: 600, P50: 0.5, PeerP50: 1.1, P99: 2, PeerP99: 11, HasOpen: true,
		ThroughputOK: true, CPUOK: false, P50OK: true, P99OK: true} // 270 µs is not under 250
	if q1 != want {
		t.Errorf("Q1's verdict\n%+v, want\n%+v", q1, want)
	}
	if q2 := vs[2]; q2.Peer != "PostGraphile 4" || q2.ThroughputOK || q2.HasOpen || q2.P99OK {
		t.Errorf("Q2 (only PG4 ran it, no open loop): %+v", q2)
	}
	got := b.peersReport()
	for _, want := range []string{
		"| Q1 | PostGraphile 5 | 3700 / 1200 | 3.08 | yes | 270 / 1000 | 0.27 | **no** | 600 | 0.50 / 1.10 | 0.45 | yes | 2.00 / 11.00 | 0.18 | yes |\n",
		"| Q0 | PostGraphile 4 | 12000 / 4000 | 3.00 | (floor) |",
		"| Q1 | 3700 (1.0/50.0) | 270 |", // closed loop, every server
		"| 1 | Q1 | hbgraph | open, 600/s | 600 | 0.40 |",
		"All four verdicts hold on 0 of the 4 queries.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}

// TestWindowCores checks that CPU per request is taken over the window
// the samples cover inside the driver's measured part.
func TestWindowCores(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var samples []cpuSample
	for i := range 40 { // 4 s at 100 ms; 0.5 cores up to 1 s, then 1.5
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		cpu := 0.05 * float64(min(i, 10))
		if i > 10 {
			cpu += 0.15 * float64(i-10)
		}
		samples = append(samples, cpuSample{at: at, cpu: cpu, machineTicks: machineTicks{steal: int64(i), total: int64(10 * i)}})
	}
	cores, secs, steal, ok := windowCores(samples, t0.Add(1050*time.Millisecond), t0.Add(3050*time.Millisecond))
	if !ok || math.Abs(cores-1.5) > 1e-9 || math.Abs(secs-1.9) > 1e-9 || math.Abs(steal-0.1) > 1e-9 {
		t.Errorf("windowCores = %v over %v s (%v), steal %v, want 1.5 over 1.9, steal 0.1", cores, secs, ok, steal)
	}
	if _, _, _, ok := windowCores(samples, t0.Add(3800*time.Millisecond), t0.Add(5*time.Second)); ok {
		t.Error("a window the samples barely cover was accepted")
	}
}

// TestStatTicksCountsReapedChildren: a PostgreSQL backend's CPU, once the
// postmaster reaped it, is in the postmaster's cutime and cstime.
func TestStatTicksCountsReapedChildren(t *testing.T) {
	// /proc/PID/stat after "(postgres)": fields 3 .. 17.
	f := strings.Fields("S 1 100 100 0 -1 4194560 2000 30000 0 0 700 300 9000 1000")
	if got := statTicks(f); got != 700+300+9000+1000 {
		t.Errorf("statTicks = %d, want 11000", got)
	}
}

func TestRoundTripsReport(t *testing.T) {
	out := []byte(`goos: linux
BenchmarkRoundTrips/rtt=0ms/get/store-2         	  400000	      2903 ns/op	         0.002 p50-ms
BenchmarkRoundTrips/rtt=0ms/twohop50/plan-2     	      30	   1704576 ns/op	        54.00 calls	         1.25 p50-ms	         1.25 predicted-ms	         5.000 trips	         2.000 waves
BenchmarkRoundTrips/rtt=0ms/twohop50/plan-scan64-2         	      30	   1246814 ns/op	        54.00 calls	         1.00 p50-ms	         1.00 predicted-ms	         2.000 trips	         2.000 waves
BenchmarkRoundTrips/rtt=2ms/get/store-2                    	      30	   2202647 ns/op	         2.202 p50-ms
BenchmarkRoundTrips/rtt=2ms/twohop50/plan-2                	      30	  12494899 ns/op	        54.00 calls	        12.49 p50-ms	         5.25 predicted-ms	         5.000 trips	         2.000 waves
BenchmarkRoundTrips/rtt=2ms/twohop50/plan-scan64-2         	      30	   6611535 ns/op	        54.00 calls	         5.758 p50-ms	         5.00 predicted-ms	         2.000 trips	         2.000 waves
PASS
`)
	figs, err := parseRoundTrips(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 6 || figs[1] != (roundTripFigure{RTTms: 0, Query: "twohop50", Gateway: "plan", P50ms: 1.25, Calls: 54, Waves: 2, Trips: 5}) ||
		figs[5].Gateway != "plan-scan64" || figs[5].RTTms != 2 {
		t.Fatalf("parsed %+v", figs)
	}
	got := roundTripsReport(figs, roundTripsRun{Command: "go test", Benchtime: "30x"})
	for _, want := range []string{
		"2 ms took 2.20 ms",
		"| p50 at 2 ms | waves x 2 + CPU | trips x 2.20 + CPU |",
		// 2 waves x 2 + 1.25; 5 trips x 2.2 + 1.25
		"| 2-hop, 50 followees | plan | 54 | 2 | 5 | 1.25 | 12.49 | 5.25 | 12.25 |\n",
		"| 2-hop, 50 followees | plan, `--scan-concurrency 64` | 54 | 2 | 2 | 1.00 | 5.76 | 5.00 | 5.40 |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if _, err := parseRoundTrips([]byte("FAIL\n")); err == nil {
		t.Error("output without results was accepted")
	}
}

// TestRoundTripsEndToEnd runs `make bench-roundtrips` with a few requests
// a row into a copy of RESULTS.md: the hand-written parts stay.
func TestRoundTripsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs BenchmarkRoundTrips")
	}
	out := filepath.Join(t.TempDir(), "RESULTS.md")
	if err := os.WriteFile(out, []byte("# Benchmark results\n\nBy hand.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir("../..")
	if err := run(t.Context(), []string{"-roundtrips-only", "-roundtrips-benchtime", "3x", "-out", out}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	got := string(b)
	for _, want := range []string{"By hand.", roundTripsBegin, "## With round trips", "| Q3 | `--executor gqlgen` |", "| 2-hop, 50 followees | plan, `--batch-size 1` |", roundTripsEnd} {
		if !strings.Contains(got, want) {
			t.Errorf("RESULTS.md lacks %q:\n%s", want, got)
		}
	}
}

// TestFanoutDataset checks the fan-out store's files: me10, me50 and
// me100 follow that many nodes, each with its articles.
func TestFanoutDataset(t *testing.T) {
	dir := t.TempDir()
	if err := writeFanoutDataset(dir); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]int{"nodes.jsonl": 103, "relationships.jsonl": 160, "articles.jsonl": 300} {
		if n, err := countLines(filepath.Join(dir, file)); err != nil || n != want {
			t.Errorf("%s: %d lines (%v), want %d", file, n, err, want)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "relationships.jsonl"))
	if got := strings.Count(string(raw), `"start_node_id":"me50"`); got != 50 {
		t.Errorf("me50 follows %d nodes", got)
	}
}

// TestScaleReport checks the growth tables: hbgraph's ratios of the
// largest size to the first against 1.2, and CPU growth against the
// response's with fan-out.
func TestScaleReport(t *testing.T) {
	b := &bench{cfg: config{concurrency: 16, scaleRounds: 1, scaleNodes: []int{10000, 100000}}}
	names := []string{"hbgraph", "PostGraphile 4"}
	for _, s := range []struct {
		nodes           int
		hbCores, hbP50s float64
	}{{10000, 0.1, 0.5}, {100000, 0.115, 0.7}} {
		runs := []peerRun{
			{Target: "hbgraph", Query: "Q1", RPS: 1000, Cores: s.hbCores, P50: 2, P99: 9},
			{Target: "PostGraphile 4", Query: "Q1", RPS: 300, Cores: 0.3, P50: 5, P99: 20},
			{Target: "hbgraph", Query: "Q1", Rate: 150, RPS: 150, Cores: 0.02, P50: s.hbP50s, P99: 2},
			{Target: "PostGraphile 4", Query: "Q1", Rate: 150, RPS: 150, Cores: 0.2, P50: 3, P99: 30},
		}
		b.scaleSizes = append(b.scaleSizes, scaleSize{Nodes: s.nodes, Summary: "some", TargetNames: names, Runs: runs,
			Import: peerImport{Seconds: 30, PeakRSS: 300 << 20, Figures: []importFigure{{RowsPerS: 1}, {RowsPerS: 2}, {RowsPerS: 3}}}})
	}
	for i, n := range fanoutSizes {
		name := fmt.Sprintf("2-hop, %d followees", n)
		b.fanoutFigures = append(b.fanoutFigures, fanoutFigure{Followees: n, ResponseBytes: 1000 * n,
			Runs: []peerRun{{Target: "hbgraph", Query: name, RPS: 100, Cores: 0.01 * float64(n) * float64(1+i)}}})
	}
	rates := func(rs ...float64) peerImport {
		imp := peerImport{Seconds: 10, PeakRSS: 100 << 20}
		for _, r := range rs {
			imp.Figures = append(imp.Figures, importFigure{RowsPerS: r})
		}
		return imp
	}
	b.importPairs = []importPair{
		{First: rates(100, 200, 300), Last: rates(90, 150, 270)},
		{LargestFirst: true, First: rates(100, 200, 300), Last: rates(95, 180, 240)},
	}
	b.importPairs[1].Last.Steal = 0.234 // shown in percent, whole
	got := b.scaleReport()
	for _, want := range []string{
		"| 10000 | some | 30.0 | 1 / 2 / 3 | 300 |",
		"| 1 | 10000 | 100 / 200 / 300 | 90 / 150 / 270 | 10.0 / 100 / 0 | 10.0 / 100 / 0 | 0.90 / 0.75 / 0.90 |",
		"| 2 | 100000 | 100 / 200 / 300 | 95 / 180 / 240 | 10.0 / 100 / 0 | 10.0 / 100 / 23 | 0.95 / 0.90 / 0.80 |",
		"Median ratios 0.93 / 0.82 / 0.85: the import holds its rate: **no**",                           // relationships' 0.825 < 1/1.2
		"| Q1 | hbgraph | 100 | 1000 | 0.50 / 2.00 | 115 | 1000 | 0.70 / 2.00 | 1.15 | 1.40 | **no** |", // p50 grew 1.4x
		"| Q1 | PostGraphile 4 | 1000 | 300 | 3.00 / 30.00 | 1000 | 300 | 3.00 / 30.00 | 1.00 | 1.00 |  |",
		"| 50 | 50000 | 10000 | 100 | 204.8 | 5.00 | 10.00 | **no** |",
		"| 100 | 100000 | 30000 | 100 | 307.2 | 10.00 | 30.00 | **no** |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}

	// Measured in turns, both sizes at once: the verdicts are read there.
	for round := range 2 {
		for _, s := range []struct {
			nodes        int
			cores, p50   float64
			openP99, rps float64
		}{{10000, 0.1, 0.5, 1.5, 1000}, {100000, 0.11, 0.55, 2.5, 1000}} {
			name := turnTarget(s.nodes)
			b.scaleTurnRuns = append(b.scaleTurnRuns,
				peerRun{Target: name, Query: "Q1", Round: round, RPS: s.rps, Cores: s.cores, P50: 2, P99: 9},
				peerRun{Target: name, Query: "Q1", Round: round, Rate: 150, RPS: 150, Cores: 0.02, P50: s.p50, P99: s.openP99})
		}
	}
	got = b.scaleReport()
	for _, want := range []string{
		"| Q1 | hbgraph | 100 | 1000 | 0.50 / 2.00 | 115 | 1000 | 0.70 / 2.00 | 1.15 | 1.40 | (in turns) |",
		"### hbgraph at both sizes, in turns",
		"medians of 2 round(s)",
		"| Q1 | 100 | 110 | 1000 | 1000 | 150 | 0.50 / 1.50 | 0.55 / 2.50 | 1.10 | 1.10 | yes |",
		"| Q2 | 0 | 0 | 0 | 0 | 0 | 0.00 / 0.00 | 0.00 / 0.00 | 0.00 | 0.00 | **no** |", // not measured: no verdict passes
		"within 1.2x with the data on 1 of the 4 queries",
		"| Q1 (in turns) |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}

// TestSizedCacheFlags: -scale-sized gives the result cache the store's
// bytes, in whole MiB, never below the default (a small store keeps it).
func TestSizedCacheFlags(t *testing.T) {
	for _, tc := range []struct {
		store  int64
		result string
	}{
		{103 << 20, "134217728"},
		{1039 << 20, "1089470464"},
		{1039<<20 + 1, "1090519040"},
	} {
		got := sizedCacheFlags(tc.store)
		want := []string{"--result-cache-bytes", tc.result}
		if !slices.Equal(got, want) {
			t.Errorf("store %d: %q, want %q", tc.store, got, want)
		}
	}
}
