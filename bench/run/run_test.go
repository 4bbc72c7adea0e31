package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if r.Requests != 21030 || r.RPS != 2102.8 || r.P50 != 6.29 || r.P99 != 27.69 || r.DriverCPU != 7.5 {
		t.Errorf("parsed %+v", r)
	}
	if _, err := parsePeerLoad([]byte("RESULT\tQ1\t100\t3\t10.0\t1.00\t2.00\t3.00\n")); err == nil {
		t.Error("a run with failed requests was accepted")
	}
	if _, err := parsePeerLoad([]byte("nothing")); err == nil {
		t.Error("output without a RESULT line was accepted")
	}
}

// TestPeersReportRatios checks the side by side's verdicts: the ratio is to
// the faster peer, and p99 is compared with that peer's p50.
func TestPeersReportRatios(t *testing.T) {
	b := &bench{cfg: config{peerRounds: 3, concurrency: 16}, peerTargetNames: []string{"hbgraph", "PostGraphile 4", "PostGraphile 5"}}
	add := func(target, q string, rps, p50, p99 float64) {
		b.peerRuns = append(b.peerRuns, peerRun{Target: target, Query: q, RPS: rps, P50: p50, P99: p99, ServerCPU: 1, Wall: 1})
	}
	for _, rps := range []float64{3000, 9000, 3100} { // median 3100
		add("hbgraph", "Q1", rps, 1, 2.5)
	}
	add("PostGraphile 4", "Q1", 1000, 9, 20)
	add("PostGraphile 5", "Q1", 1200, 3, 10)
	add("hbgraph", "Q2", 1000, 5, 12)
	add("PostGraphile 4", "Q2", 900, 13, 40)
	add("hbgraph", "Q0", 12000, 0.6, 5)
	add("PostGraphile 4", "Q0", 4000, 4, 9)
	got := b.peersReport()
	for _, want := range []string{
		"| Q1 | 3100 (1.0/2.5) | 323 |",                           // the median round, 1 s of CPU over 3100 requests
		"2.58 (PostGraphile 5) | **no** | yes | **no** |\n",       // 3100/1200; p99 2.5 < 3; Q0's p99 5 is not < 3
		"1.11 (PostGraphile 4) | **no** | yes | yes |\n",          // Q2: only PG4 ran it; 12 < 13; 5 < 13
		"3.00 (PostGraphile 4) | (the floor) | (the floor) | |\n", // Q0 has no target
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
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
