package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The part of RESULTS.md with the home feed's and the subscriptions'
// figures (issue 26): Go benchmarks of the repository, run by `go test`.
const (
	feedSubsBegin = "<!-- feedsubs:begin (written by `make bench` and `make bench-feed`; edits here are lost) -->"
	feedSubsEnd   = "<!-- feedsubs:end -->"
)

// benchLine is one result line of `go test -bench`: its name (without
// the Benchmark prefix and the -GOMAXPROCS suffix) and its metrics by unit.
type benchLine struct {
	Name    string
	Metrics map[string]float64
}

// parseBenchLines reads the result lines of `go test -bench` output.
func parseBenchLines(out []byte) []benchLine {
	var lines []benchLine
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue // a benchmark's log line, not its result
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		l := benchLine{Name: name, Metrics: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				l.Metrics[f[i+1]] = v
			}
		}
		lines = append(lines, l)
	}
	return lines
}

// feedSubs runs the feed's and the subscriptions' benchmarks and writes
// their part of RESULTS.md.
func (b *bench) feedSubs(ctx context.Context) error {
	load := loadAverage()
	var cmds []string
	run := func(pkg, pattern, benchtime string) ([]benchLine, error) {
		out, err := b.command(ctx, "go", "test", "-run", "^$", "-bench", pattern, "-benchtime", benchtime, "-count", "1", pkg)
		cmds = append(cmds, b.commands[len(b.commands)-1])
		if err != nil {
			return nil, err
		}
		lines := parseBenchLines(out)
		if len(lines) == 0 {
			return nil, fmt.Errorf("no %s results in the output", pattern)
		}
		return lines, nil
	}
	pages, err := run(".", "^BenchmarkGatewayFeed$", "300x")
	if err != nil {
		return err
	}
	posts, err := run("./store/", "^BenchmarkFeedPost$", "20x")
	if err != nil {
		return err
	}
	fanOut, err := run(".", "^BenchmarkSubscriptionFanOut$", "30x")
	if err != nil {
		return err
	}
	report := feedSubsReport(pages, posts, fanOut, b.started, load, loadAverage(), cmds)
	return writeSection(b.cfg.out, feedSubsBegin, feedSubsEnd, report)
}

// feedSubsReport renders the three tables, each feed page beside the
// 10-followee figure of the same page (issue 26: within 1.5x).
func feedSubsReport(pages, posts, fanOut []benchLine, when time.Time, loadBefore, loadAfter string, cmds []string) string {
	var w bytes.Buffer
	fmt.Fprintf(&w, "## The home feed and subscriptions\n\n")
	fmt.Fprintf(&w, "- When: %s; commit %s\n", when.UTC().Format(time.RFC3339), commit())
	fmt.Fprintf(&w, "- Machine: %s; load average (1, 5, 15 min) %s before, %s after\n", machine(), loadBefore, loadAfter)
	for _, c := range cmds {
		fmt.Fprintf(&w, "- `%s`\n", c)
	}
	fmt.Fprintf(&w, "\nA feed page of 20 through the gateway in-process (HTTP, the plan, the embedded engine), one request at a time; "+
		"CPU is the whole process's (server and client) per request. Ratios are to the 10-followee figure of the same page; "+
		"the aim is at most 1.5.\n\n")
	fmt.Fprintf(&w, "| followees | page | store calls | waves | CPU us | p50 ms | allocs | calls ratio | CPU ratio | p50 ratio | within 1.5x |\n")
	fmt.Fprintf(&w, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	base := map[string]benchLine{}
	for _, l := range pages {
		followees, page := feedPageOf(l.Name)
		if followees == "10" {
			base[page] = l
		}
	}
	for _, l := range pages {
		followees, page := feedPageOf(l.Name)
		m := l.Metrics
		b0, ok := base[page]
		ratio := func(unit string) float64 {
			if !ok || b0.Metrics[unit] == 0 {
				return 0
			}
			return m[unit] / b0.Metrics[unit]
		}
		rc, rcpu, rp50 := ratio("calls/op"), ratio("cpu-us/op"), ratio("p50_ms")
		verdict := "yes"
		if max(rc, rcpu, rp50) > 1.5 {
			verdict = "**no**"
		}
		fmt.Fprintf(&w, "| %s | %s | %.0f | %.0f | %.0f | %.3f | %.0f | %.2f | %.2f | %.2f | %s |\n", followees, page,
			m["calls/op"], m["waves/op"], m["cpu-us/op"], m["p50_ms"], m["allocs/op"], rc, rcpu, rp50, verdict)
	}
	fmt.Fprintf(&w, "\n`postArticle` by an author with this many followers (the store alone, embedded engine): its latency and "+
		"the store calls and rows it writes; past `--feed-fanout-max` (10,000) the author is wide and nothing fans out.\n\n")
	fmt.Fprintf(&w, "| followers | latency ms | store calls | rows written |\n| ---: | ---: | ---: | ---: |\n")
	for _, l := range posts {
		_, followers, _ := strings.Cut(l.Name, "followers=")
		fmt.Fprintf(&w, "| %s | %.2f | %.0f | %.0f |\n", followers, l.Metrics["ns/op"]/1e6, l.Metrics["calls/op"], l.Metrics["rows-written/op"])
	}
	fmt.Fprintf(&w, "\nAn article posted over HTTP reaching 1,000 `articlePosted` subscribers, each on a WebSocket of its own "+
		"to the gateway in-process; latency from the post's request to each subscriber's read (aim: p99 under 100 ms).\n\n")
	fmt.Fprintf(&w, "| subscribers | deliveries per post | p50 ms | p99 ms | p99 under 100 ms |\n| ---: | ---: | ---: | ---: | --- |\n")
	for _, l := range fanOut {
		verdict := "yes"
		if l.Metrics["p99_ms"] >= 100 {
			verdict = "**no**"
		}
		fmt.Fprintf(&w, "| 1,000 | %.0f | %.1f | %.1f | %s |\n", l.Metrics["deliveries/op"], l.Metrics["p50_ms"], l.Metrics["p99_ms"], verdict)
	}
	return w.String()
}

// feedPageOf splits "GatewayFeed/followees=N/page=P" into N and P.
func feedPageOf(name string) (followees, page string) {
	for _, part := range slices.Collect(strings.SplitSeq(name, "/")) {
		if v, ok := strings.CutPrefix(part, "followees="); ok {
			followees = v
		}
		if v, ok := strings.CutPrefix(part, "page="); ok {
			page = v
		}
	}
	return followees, page
}
