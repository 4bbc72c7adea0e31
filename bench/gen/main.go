// Command gen writes a deterministic dataset for hbgraph's benchmarks:
//
//	go run ./bench/gen -out DIR [-nodes 10000] [-seed 1]
//
// It writes four files to DIR (created if missing):
//
//	nodes.jsonl          {"id","properties","created_at","updated_at"}
//	relationships.jsonl  {"start_node_id","type","end_node_id","properties","created_at","updated_at"}
//	articles.jsonl       {"id","author_id","title","body","category","posted_at"}
//	summary.json         counts and the ids the benchmark driver picks variables from
//
// and prints the summary, with file sizes and the elapsed time, to stdout.
//
// The model, per node n1..nN:
//   - properties name, age (int), city, score (float, two decimals) and
//     tags (1-4 strings); created_at and updated_at (>= created_at) are
//     milliseconds in 2025 (UTC), like every other timestamp here.
//   - 10-30 "follow" relationships (at most N-1) to targets drawn from a
//     Zipf distribution over a seeded permutation of the nodes, so a few
//     nodes are followed by almost everyone and most by a handful; and
//     0-10 "like" relationships to uniform targets. No self-loops and no
//     duplicate (start, type, end); properties {"since", "weight"}.
//   - 1-9 articles in 8 categories; 100 seeded "heavy" authors have 200
//     each instead, 160 of them in their main category. An article's id is
//     its sequence number on its author's timeline (1, 2, ... in posted_at
//     order), so (author_id, id) is unique, not id alone. Titles (3-8
//     words) and bodies (20-80 words) come from a fixed vocabulary, Zipf
//     weighted, with some words of the article's category mixed in, so an
//     author's word counts have a shape.
//
// The same -seed and -nodes give byte-identical files: every choice comes
// from math/rand/v2 PCG streams seeded from -seed, one stream per concern,
// and nothing depends on map order. Output is streamed through bufio;
// memory is two int32 arrays of N beside per-node scratch.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// File names in the output directory.
const (
	nodesFile         = "nodes.jsonl"
	relationshipsFile = "relationships.jsonl"
	articlesFile      = "articles.jsonl"
	summaryFile       = "summary.json"
)

// run parses args, writes the dataset and prints the summary to stdout.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	out := fs.String("out", "", "directory to write the dataset to (required)")
	nodes := fs.Int("nodes", 10_000, "number of nodes")
	seed := fs.Uint64("seed", 1, "random seed; the same seed and -nodes give identical files")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *out == "" {
		return errors.New("-out is required")
	}
	cfg := config{nodes: *nodes, seed: *seed}
	if err := cfg.validate(); err != nil {
		return err
	}
	start := time.Now()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	sum, sizes, err := writeDataset(cfg, *out)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, summaryFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	printSummary(stdout, *out, sum, sizes, time.Since(start))
	return nil
}

// fileSizes are the bytes written to each data file.
type fileSizes struct{ nodes, relationships, articles int64 }

// writeDataset generates into the three data files under dir.
func writeDataset(cfg config, dir string) (summary, fileSizes, error) {
	var files [3]*os.File
	var bufs [3]*bufio.Writer
	var counts [3]countingWriter
	for i, name := range []string{nodesFile, relationshipsFile, articlesFile} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			for _, g := range files[:i] {
				g.Close()
			}
			return summary{}, fileSizes{}, err
		}
		files[i] = f
		counts[i].w = f
		bufs[i] = bufio.NewWriterSize(&counts[i], 1<<20)
	}
	sum, err := generate(cfg, outputs{nodes: bufs[0], relationships: bufs[1], articles: bufs[2]})
	for i := range files {
		if err == nil {
			err = bufs[i].Flush()
		}
		if cerr := files[i].Close(); err == nil {
			err = cerr
		}
	}
	return sum, fileSizes{counts[0].n, counts[1].n, counts[2].n}, err
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func printSummary(w io.Writer, dir string, s summary, sizes fileSizes, elapsed time.Duration) {
	mib := func(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
	rels := 0
	for _, t := range relationshipTypes {
		rels += s.Relationships[t]
	}
	fmt.Fprintf(w, "seed %d, %d nodes -> %s\n", s.Seed, s.Nodes, dir)
	fmt.Fprintf(w, "  %-20s %10d lines  %s\n", nodesFile, s.Nodes, mib(sizes.nodes))
	fmt.Fprintf(w, "  %-20s %10d lines  %s  (follow %d, like %d)\n", relationshipsFile, rels,
		mib(sizes.relationships), s.Relationships[typeFollow], s.Relationships[typeLike])
	fmt.Fprintf(w, "  %-20s %10d lines  %s\n", articlesFile, s.Articles, mib(sizes.articles))
	fmt.Fprintf(w, "most followed: %s (%d followers)\n", s.MostFollowed.ID, s.MostFollowed.Followers)
	fmt.Fprintf(w, "ten followers: %s (%d followers)\n", s.TenFollowers.ID, s.TenFollowers.Followers)
	fmt.Fprintf(w, "max out-degree: follow %d, like %d\n", s.MaxOutDegree[typeFollow], s.MaxOutDegree[typeLike])
	fmt.Fprintf(w, "heavy authors (%d, %d articles each, id:main category):", len(s.HeavyAuthors), heavyArticles)
	for i, h := range s.HeavyAuthors {
		if i%8 == 0 {
			fmt.Fprint(w, "\n ")
		}
		fmt.Fprintf(w, " %s:%s", h.ID, h.MainCategory)
	}
	fmt.Fprintf(w, "\nelapsed %s\n", elapsed.Round(time.Millisecond))
}
