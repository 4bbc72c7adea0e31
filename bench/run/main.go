// Command run is `make bench`: it measures hbgraph end to end on the
// benchmark dataset and writes the figures to bench/RESULTS.md.
//
//	go run ./bench/run [-nodes 10000] [-dir bench/data] [-out bench/RESULTS.md]
//	    [-concurrency 16] [-duration 10s] [-warmup 2s] [-profile] [-hbgraph BIN]
//
// In order, it:
//  1. builds hbgraph, bench/gen and bench/load into DIR/bin;
//  2. generates the dataset into DIR/dataset-N, unless the same generator
//     already did (a stamp holds the generator binary's hash);
//  3. imports it into a fresh DIR/db-N with `hbgraph import`, timing each
//     kind;
//  4. starts hbgraph on a free 127.0.0.1 port, prepares each query's
//     variables (walking Q4's pages by cursor), asks explain for the store
//     calls and waves of each query, and runs bench/load on each;
//  5. does step 4 again with --batch-size 1 (batching off);
//  6. replaces the generated part of -out (between its markers) with the
//     tables, the machine, the commit and every command line it ran;
//  7. runs BenchmarkRoundTrips (`go test -bench`: the gateway in-process
//     over the embedded engine with 0, 0.5 and 2 ms a round trip) and
//     writes its table to its own part of -out, "With round trips"
//     (-roundtrips=false skips it, -roundtrips-only runs only it).
//
// With the PostGraphile peers up (make peers-up), it then runs the side
// by side on their dataset (peers.go): issue 27's closed-loop throughput,
// CPU per request and open-loop latency, against the faster peer of each
// query, -peer-rounds rounds (-peers-only runs only that).
//
// With -profile, a CPU profile of the server is saved for each batched run
// and each of hbgraph's closed-loop side-by-side runs
// (DIR/profiles/NAME.pprof; read it with `go tool pprof DIR/bin/hbgraph F`);
// the profiler's own cost is then in hbgraph's CPU figures.
//
// -floor runs only `make bench-floor` (floor.go): a bare net/http handler,
// hbgraph's Q0 and Q1, open and closed loop, p50/p99 and CPU per request.
//
// -scale runs only `make bench-scale` (scale.go): the side by side at each
// of -scale-nodes, and the 2-hop query at 10, 50 and 100 followees.
//
// The load tool and the server share the machine's cores; the figures
// are what one box serving and loading itself can do.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// config is what one `make bench` does.
type config struct {
	nodes       int
	dir         string // working directory: binaries, dataset, data dirs
	out         string // RESULTS.md
	concurrency int
	duration    time.Duration
	warmup      time.Duration
	profile     bool
	// hbgraph is a prebuilt binary to measure instead of building this
	// checkout's (for before/after comparisons with an older commit).
	hbgraph string

	// peers is where the PostGraphile peers run from (make peers-up);
	// pg4URL and pg5URL are their endpoints; peerRounds how many times
	// the side by side runs; peersOnly skips everything else.
	peers          string
	pg4URL, pg5URL string
	peerRounds     int
	peersOnly      bool
	// scale runs only `make bench-scale` (scale.go): the side by side at
	// each of scaleNodes, scaleRounds rounds each, and the fan-out table.
	scale       bool
	scaleNodes  []int
	scaleRounds int
	// scaleSized gives hbgraph at each size caches sized to its store
	// (sizedCacheFlags) and scaleWarm of Q3 before the side by side.
	scaleSized bool
	scaleWarm  time.Duration
	// scaleImportPairs is how many times -scale imports the first size and
	// the largest back to back, for the import's rate at both (importInPairs).
	scaleImportPairs int
	// scaleTurnRounds is the rounds of hbgraph at the first size and the
	// largest served at once and measured in turns (scaleTurns).
	scaleTurnRounds int

	// pgPort is the peers' PostgreSQL port (its socket is in their run/),
	// asked whether autovacuum runs.
	pgPort int

	// roundTrips runs BenchmarkRoundTrips after the own dataset's run;
	// roundTripsOnly runs nothing else; roundTripsBenchtime is its
	// -benchtime per row.
	roundTrips, roundTripsOnly bool
	roundTripsBenchtime        string
	// feedSubs runs the feed's and the subscriptions' benchmarks after the
	// round trips; feedSubsOnly runs nothing else.
	feedSubs, feedSubsOnly bool
	// floor runs only `make bench-floor` (floor.go): a bare net/http
	// handler, Q0 and Q1 at floorRate and in the closed loop, floorRounds
	// rounds; floorBefore is an older hbgraph measured in the same turns.
	floor       bool
	floorRate   float64
	floorRounds int
	floorBefore string
}

func parseConfig(args []string) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.IntVar(&cfg.nodes, "nodes", 10_000, "dataset size in nodes (bench/gen -nodes)")
	fs.StringVar(&cfg.dir, "dir", filepath.Join("bench", "data"), "working directory for binaries, the dataset and the database")
	fs.StringVar(&cfg.out, "out", filepath.Join("bench", "RESULTS.md"), "results file; only the part between its markers is rewritten")
	fs.IntVar(&cfg.concurrency, "concurrency", 16, "requests in flight")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "measured time per query")
	fs.DurationVar(&cfg.warmup, "warmup", 2*time.Second, "warm-up per query, not measured")
	fs.BoolVar(&cfg.profile, "profile", false, "save a CPU profile of the server for each batched run")
	fs.StringVar(&cfg.hbgraph, "hbgraph", "", "measure this hbgraph binary instead of building the checkout's (e.g. an older commit's, for a before/after)")
	fs.StringVar(&cfg.peers, "peers", filepath.Join("bench", "data", "peers"), "folder the PostGraphile peers run from (make peers-up): postgraphile/ and postgraphile5/")
	fs.StringVar(&cfg.pg4URL, "pg4-url", "http://127.0.0.1:5050/graphql", "PostGraphile 4's endpoint; empty leaves it out")
	fs.StringVar(&cfg.pg5URL, "pg5-url", "http://127.0.0.1:5051/graphql", "PostGraphile 5's endpoint; empty leaves it out")
	fs.IntVar(&cfg.peerRounds, "peer-rounds", 3, "rounds of the side by side with the peers; the report takes medians")
	fs.IntVar(&cfg.pgPort, "pg-port", 5439, "the peers' PostgreSQL port (asked whether autovacuum runs)")
	fs.BoolVar(&cfg.peersOnly, "peers-only", false, "run only the side by side with the peers")
	fs.BoolVar(&cfg.roundTrips, "roundtrips", true, "also run BenchmarkRoundTrips (latency with 0, 0.5 and 2 ms a round trip) into its part of -out")
	fs.BoolVar(&cfg.roundTripsOnly, "roundtrips-only", false, "run only BenchmarkRoundTrips (make bench-roundtrips)")
	fs.StringVar(&cfg.roundTripsBenchtime, "roundtrips-benchtime", "1s", "BenchmarkRoundTrips' -benchtime per row (a duration, or Nx requests)")
	fs.BoolVar(&cfg.feedSubs, "feed", true, "also run the home feed's and the subscriptions' benchmarks into their part of -out")
	fs.BoolVar(&cfg.feedSubsOnly, "feed-only", false, "run only the home feed's and the subscriptions' benchmarks (make bench-feed)")
	fs.BoolVar(&cfg.scale, "scale", false, "run only how the cost grows (make bench-scale): the side by side at each -scale-nodes, and the 2-hop query at 10, 50 and 100 followees")
	scaleNodes := fs.String("scale-nodes", "10000,100000", "dataset sizes of -scale, comma separated; the open loop runs at the first's rates")
	fs.IntVar(&cfg.scaleRounds, "scale-rounds", 1, "rounds of each size's side by side and of each fan-out with -scale")
	fs.BoolVar(&cfg.floor, "floor", false, "run only the HTTP floor (make bench-floor): a bare net/http handler, Q0 and Q1, open and closed loop")
	fs.Float64Var(&cfg.floorRate, "floor-rate", defaultFloorRate, "the floor's open-loop rate, req/s (the side by side's for Q1)")
	fs.IntVar(&cfg.floorRounds, "floor-rounds", 3, "rounds of the floor; the report takes medians")
	fs.StringVar(&cfg.floorBefore, "floor-before", "", "an older hbgraph binary the floor measures in the same turns (a before/after)")
	fs.BoolVar(&cfg.scaleSized, "scale-sized", false, "with -scale: hbgraph's result cache sized to each size's store (its bytes on disk, not below the default) instead of the default")
	fs.DurationVar(&cfg.scaleWarm, "scale-warm", 0, "with -scale: Q3 on hbgraph for this long before each size's side by side, unmeasured, to fill its caches (the working set of a graph read at random takes some 3 requests a node)")
	fs.IntVar(&cfg.scaleImportPairs, "scale-import-pairs", 4, "with -scale: imports of the first size and the largest, back to back in turn, for the import's rate at both; even, so that each size runs first as often (0: none)")
	fs.IntVar(&cfg.scaleTurnRounds, "scale-turn-rounds", 3, "with -scale: rounds of hbgraph at the first size and the largest, both served at once and measured in turns, for its verdicts on the data's growth (0: none; the sizes' own side by sides then judge)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if cfg.concurrency < 1 || cfg.duration <= 0 || cfg.warmup < 0 || cfg.peerRounds < 1 || cfg.scaleRounds < 1 || cfg.scaleWarm < 0 || cfg.scaleImportPairs < 0 || cfg.scaleTurnRounds < 0 || cfg.floorRounds < 1 || cfg.floorRate <= 0 || cfg.roundTripsBenchtime == "" {
		return cfg, errors.New("-concurrency, -duration, -peer-rounds and -scale-rounds must be positive, -scale-import-pairs and -scale-turn-rounds not negative, -roundtrips-benchtime given")
	}
	for _, f := range strings.Split(*scaleNodes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1000 {
			return cfg, fmt.Errorf("-scale-nodes: %q is not a size of at least 1000 nodes", f)
		}
		cfg.scaleNodes = append(cfg.scaleNodes, n)
	}
	return cfg, nil
}

func run(ctx context.Context, args []string) error {
	cfg, err := parseConfig(args)
	if err != nil {
		return err
	}
	b := &bench{cfg: cfg, started: time.Now()}
	if cfg.feedSubsOnly {
		if err := b.feedSubs(ctx); err != nil {
			return err
		}
		fmt.Printf("wrote %s in %s\n", cfg.out, time.Since(b.started).Round(time.Second))
		return nil
	}
	if cfg.roundTripsOnly {
		if err := b.roundTrips(ctx); err != nil {
			return err
		}
		fmt.Printf("wrote %s in %s\n", cfg.out, time.Since(b.started).Round(time.Second))
		return nil
	}
	if err := b.build(ctx); err != nil {
		return err
	}
	if cfg.floor {
		if err := b.floor(ctx); err != nil {
			return err
		}
		fmt.Printf("wrote %s in %s\n", cfg.out, time.Since(b.started).Round(time.Second))
		return nil
	}
	if cfg.scale {
		if err := b.scale(ctx); err != nil {
			return err
		}
		fmt.Printf("wrote %s in %s\n", cfg.out, time.Since(b.started).Round(time.Second))
		return nil
	}
	if !cfg.peersOnly {
		if err := b.ownDataset(ctx); err != nil {
			return err
		}
		if cfg.roundTrips {
			if err := b.roundTrips(ctx); err != nil {
				return fmt.Errorf("round trips: %w", err)
			}
		}
		if cfg.feedSubs {
			if err := b.feedSubs(ctx); err != nil {
				return fmt.Errorf("feed and subscriptions: %w", err)
			}
		}
	}
	if err := b.sideBySide(ctx); err != nil {
		return err
	}
	if len(b.peerRuns) > 0 {
		if err := writeSection(cfg.out, peersBegin, peersEnd, b.peersReport()); err != nil {
			return err
		}
	}
	fmt.Printf("wrote %s in %s\n", cfg.out, time.Since(b.started).Round(time.Second))
	return nil
}

// ownDataset is the run on bench/gen's dataset: generate, import, both
// server modes, and the generated part of RESULTS.md.
func (b *bench) ownDataset(ctx context.Context) error {
	if err := b.generate(ctx); err != nil {
		return err
	}
	if err := b.importDataset(ctx); err != nil {
		return err
	}
	for _, mode := range []mode{batched, unbatched} {
		if err := b.measure(ctx, mode); err != nil {
			return fmt.Errorf("%s: %w", mode.name, err)
		}
	}
	report, err := b.report()
	if err != nil {
		return err
	}
	return writeSection(b.cfg.out, beginMarker, endMarker, report)
}
