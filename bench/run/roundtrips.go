package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The part of RESULTS.md with round trips: BenchmarkRoundTrips (in the
// repository's package main, roundtrips_bench_test.go) run by `go test`,
// tabulated.
const (
	roundTripsBegin = "<!-- roundtrips:begin (written by `make bench` and `make bench-roundtrips`; edits here are lost) -->"
	roundTripsEnd   = "<!-- roundtrips:end -->"
)

// roundTripFigure is one sub-benchmark of BenchmarkRoundTrips: a query on
// one gateway at one latency a round trip.
type roundTripFigure struct {
	RTTms          float64
	Query, Gateway string
	P50ms          float64
	Calls, Waves   int
	Trips          int // round trips on the critical path: each wave's calls, --scan-concurrency at a time
}

var roundTripLine = regexp.MustCompile(`^BenchmarkRoundTrips/rtt=([0-9.]+)ms/([^/\s]+)/(\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// parseRoundTrips reads `go test -bench RoundTrips` output.
func parseRoundTrips(out []byte) ([]roundTripFigure, error) {
	var figs []roundTripFigure
	for _, line := range strings.Split(string(out), "\n") {
		m := roundTripLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		f := roundTripFigure{Query: m[2], Gateway: m[3]}
		var err error
		if f.RTTms, err = strconv.ParseFloat(m[1], 64); err != nil {
			return nil, fmt.Errorf("%q: %w", line, err)
		}
		fields := strings.Fields(m[4])
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", line, err)
			}
			switch fields[i+1] {
			case "p50-ms":
				f.P50ms = v
			case "calls":
				f.Calls = int(v)
			case "waves":
				f.Waves = int(v)
			case "trips":
				f.Trips = int(v)
			}
		}
		figs = append(figs, f)
	}
	if len(figs) == 0 {
		return nil, fmt.Errorf("no BenchmarkRoundTrips results in the output")
	}
	return figs, nil
}

// roundTrips runs BenchmarkRoundTrips and writes its part of RESULTS.md.
func (b *bench) roundTrips(ctx context.Context) error {
	load := loadAverage()
	out, err := b.command(ctx, "go", "test", "-run", "^$", "-bench", "^BenchmarkRoundTrips$", "-benchtime", b.cfg.roundTripsBenchtime, "-count", "1", ".")
	if err != nil {
		return err
	}
	figs, err := parseRoundTrips(out)
	if err != nil {
		return err
	}
	report := roundTripsReport(figs, roundTripsRun{
		When: b.started, Commit: commit(), Machine: machine(), LoadBefore: load, LoadAfter: loadAverage(),
		Benchtime: b.cfg.roundTripsBenchtime, Command: b.commands[len(b.commands)-1],
	})
	return writeSection(b.cfg.out, roundTripsBegin, roundTripsEnd, report)
}

// roundTripsRun says where and how the figures were taken.
type roundTripsRun struct {
	When                  time.Time
	Commit, Machine       string
	LoadBefore, LoadAfter string
	Benchtime, Command    string
}

// roundTripsReport renders the figures: per query and gateway, the p50 at
// each latency next to the two predictions, waves x RTT + CPU and round
// trips x the measured round trip + CPU, where CPU is the p50 at 0 ms.
func roundTripsReport(figs []roundTripFigure, run roundTripsRun) string {
	var w bytes.Buffer
	fmt.Fprintf(&w, "## With round trips\n\n")
	fmt.Fprintf(&w, "- When: %s; commit %s\n", run.When.UTC().Format(time.RFC3339), run.Commit)
	fmt.Fprintf(&w, "- Machine: %s; load average (1, 5, 15 min) %s before, %s after\n", run.Machine, run.LoadBefore, run.LoadAfter)
	fmt.Fprintf(&w, "- `BenchmarkRoundTrips`: the gateway in-process over the embedded engine behind `store/hbasefault`'s latency mode; "+
		"n0 follows 10 nodes with 5 articles each (Q1 and Q4 ask for n1, Q2 and Q3 for n0), \"me\" follows 50 with 5 each (the 2-hop query); "+
		"one request at a time, %s per row; every gateway with `--scan-concurrency 16` (a cluster's default) unless named otherwise\n", run.Benchtime)
	fmt.Fprintf(&w, "- `%s`\n\n", run.Command)

	type key struct {
		rtt            float64
		query, gateway string
	}
	byKey := map[key]roundTripFigure{}
	var rtts []float64         // the latencies above 0
	var rows []roundTripFigure // the 0 ms figures, in the benchmark's order
	for _, f := range figs {
		byKey[key{f.RTTms, f.Query, f.Gateway}] = f
		if f.RTTms > 0 && !containsFloat(rtts, f.RTTms) {
			rtts = append(rtts, f.RTTms)
		}
		if f.RTTms == 0 && f.Query != "get" {
			rows = append(rows, f)
		}
	}
	// A round trip as measured: one Get through the store alone.
	measured := map[float64]float64{}
	var rt []string
	for _, r := range rtts {
		if g, ok := byKey[key{r, "get", "store"}]; ok {
			measured[r] = g.P50ms - byKey[key{0, "get", "store"}].P50ms
			rt = append(rt, fmt.Sprintf("%g ms took %.2f ms", r, measured[r]))
		}
	}
	if len(rt) > 0 {
		fmt.Fprintf(&w, "A round trip, one Get through the store alone (p50): %s.\n\n", strings.Join(rt, ", "))
	}
	fmt.Fprintf(&w, "Calls and waves are explain's (at 2 ms a round trip); trips are the round trips on the critical path, a wave's calls "+
		"being sent `--scan-concurrency` at a time. CPU is the p50 at 0 ms. Predicted: waves x RTT + CPU, "+
		"and trips x the measured round trip + CPU. Milliseconds.\n\n")
	fmt.Fprintf(&w, "| query | gateway | calls | waves | trips | CPU (0 ms) |")
	for _, r := range rtts {
		fmt.Fprintf(&w, " p50 at %g ms | waves x %g + CPU | trips x %.2f + CPU |", r, r, measured[r])
	}
	fmt.Fprintf(&w, "\n|---|---|---:|---:|---:|---:|%s\n", strings.Repeat("---:|---:|---:|", len(rtts)))
	for _, z := range rows {
		fmt.Fprintf(&w, "| %s | %s | %d | %d | %d | %.2f |", queryLabel(z.Query), gatewayLabel(z.Gateway), z.Calls, z.Waves, z.Trips, z.P50ms)
		for _, r := range rtts {
			f, ok := byKey[key{r, z.Query, z.Gateway}]
			if !ok {
				fmt.Fprintf(&w, " | | |")
				continue
			}
			fmt.Fprintf(&w, " %.2f | %.2f | %.2f |", f.P50ms, float64(f.Waves)*r+z.P50ms, float64(f.Trips)*measured[r]+z.P50ms)
		}
		fmt.Fprintln(&w)
	}
	return w.String()
}

func containsFloat(s []float64, v float64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func queryLabel(q string) string {
	if q == "twohop50" {
		return "2-hop, 50 followees"
	}
	return strings.ToUpper(q)
}

func gatewayLabel(g string) string {
	switch g {
	case "plan":
		return "plan"
	case "plan-batch1":
		return "plan, `--batch-size 1`"
	case "gqlgen":
		return "`--executor gqlgen`"
	case "plan-scan64":
		return "plan, `--scan-concurrency 64`"
	}
	return g
}

// loadAverage is /proc/loadavg's three averages ("unknown" elsewhere).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], ", ")
	}
	return "unknown"
}
