package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// bench is one `make bench` run: what it ran and what it measured.
type bench struct {
	cfg     config
	started time.Time

	// commands are the command lines run, in order, for RESULTS.md.
	commands []string
	summary  datasetSummary
	imports  []importFigure
	// compacted is how long the import's closing compaction took (0: it
	// printed none, as versions before it did not).
	compacted time.Duration
	runs      []runResult

	// peerRuns are the side by side's runs; peerTargetNames the servers
	// in it, hbgraph first.
	peerRuns        []peerRun
	peerRates       map[string]float64
	peerTargetNames []string

	// scaleSizes, importPairs, scaleTurnRuns and fanoutFigures are make
	// bench-scale's.
	scaleSizes    []scaleSize
	importPairs   []importPair
	scaleTurnRuns []peerRun
	fanoutFigures []fanoutFigure

	// floorRuns are make bench-floor's, floorServerNames its servers in
	// the order of its tables, floorLoad the load average before it.
	floorRuns        []peerRun
	floorFailed      []string
	floorServerNames []string
	floorLoad        string
}

// datasetSummary is the part of bench/gen's summary.json used here.
type datasetSummary struct {
	Nodes         int            `json:"nodes"`
	Relationships map[string]int `json:"relationships"`
	Articles      int            `json:"articles"`
	MostFollowed  struct {
		ID        string `json:"id"`
		Followers int    `json:"followers"`
	} `json:"most_followed"`
	TenFollowers struct {
		ID        string `json:"id"`
		Followers int    `json:"followers"`
	} `json:"ten_followers"`
	HeavyAuthors []author `json:"heavy_authors"`
	DeepAuthor   author   `json:"deep_author"`
}

type author struct {
	ID           string `json:"id"`
	MainCategory string `json:"main_category"`
	Articles     int    `json:"articles"`
}

func (b *bench) bin(name string) string {
	if name == "hbgraph" && b.cfg.hbgraph != "" {
		return b.cfg.hbgraph
	}
	return filepath.Join(b.cfg.dir, "bin", name)
}
func (b *bench) datasetDir() string {
	return filepath.Join(b.cfg.dir, fmt.Sprintf("dataset-%d", b.cfg.nodes))
}
func (b *bench) dbDir() string              { return filepath.Join(b.cfg.dir, fmt.Sprintf("db-%d", b.cfg.nodes)) }
func (b *bench) dataset(name string) string { return filepath.Join(b.datasetDir(), name) }

// command runs name with args, recording the command line, and returns its
// standard output; standard error passes through.
func (b *bench) command(ctx context.Context, name string, args ...string) ([]byte, error) {
	b.commands = append(b.commands, shellJoin(append([]string{name}, args...)))
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout = io.MultiWriter(&out, os.Stdout)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("%s: %w", name, err)
	}
	return out.Bytes(), nil
}

func (b *bench) build(ctx context.Context) error {
	for _, p := range []struct{ bin, pkg string }{
		{"hbgraph", "."}, {"gen", "./bench/gen"}, {"load", "./bench/load"},
	} {
		if p.bin == "hbgraph" && b.cfg.hbgraph != "" {
			continue
		}
		if _, err := b.command(ctx, "go", "build", "-o", b.bin(p.bin), p.pkg); err != nil {
			return err
		}
	}
	return nil
}

// generate writes the dataset unless this generator already wrote it.
func (b *bench) generate(ctx context.Context) error {
	sum, err := fileHash(b.bin("gen"))
	if err != nil {
		return err
	}
	stampFile := b.dataset("gen.stamp")
	stamp := fmt.Sprintf("%s nodes=%d\n", sum, b.cfg.nodes)
	if old, err := os.ReadFile(stampFile); err != nil || string(old) != stamp {
		if _, err := b.command(ctx, b.bin("gen"), "-out", b.datasetDir(), "-nodes", strconv.Itoa(b.cfg.nodes)); err != nil {
			return err
		}
		if err := os.WriteFile(stampFile, []byte(stamp), 0o644); err != nil {
			return err
		}
	} else {
		fmt.Printf("dataset %s is current\n", b.datasetDir())
	}
	raw, err := os.ReadFile(b.dataset("summary.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &b.summary); err != nil {
		return fmt.Errorf("summary.json: %w", err)
	}
	if len(b.summary.HeavyAuthors) == 0 || b.summary.DeepAuthor.ID == "" {
		return fmt.Errorf("summary.json has no heavy or deep author")
	}
	return nil
}

func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// importFigure is one line of the import's final summary.
type importFigure struct {
	Kind     string
	Lines    int
	Imported int
	Failed   int
	Seconds  float64
	RowsPerS float64
}

// importLine matches the summary lines `hbgraph import` prints, e.g.
// "relationships  249778 lines  249778 imported  0 skipped  0 failed in 26.729s (9345 rows/s)".
var importLine = regexp.MustCompile(`^(\w+)\s+(\d+) lines\s+(\d+) imported\s+\d+ skipped\s+(\d+) failed in (\S+) \((\d+) rows/s\)`)

// compactedLine matches what `hbgraph import` prints after compacting.
var compactedLine = regexp.MustCompile(`(?m)^compacted in (\S+)$`)

func parseImport(out []byte) ([]importFigure, error) {
	var figs []importFigure
	for _, line := range strings.Split(string(out), "\n") {
		m := importLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		d, err := time.ParseDuration(m[5])
		if err != nil {
			return nil, fmt.Errorf("import summary %q: %w", line, err)
		}
		lines, _ := strconv.Atoi(m[2])
		imported, _ := strconv.Atoi(m[3])
		failed, _ := strconv.Atoi(m[4])
		rate, _ := strconv.ParseFloat(m[6], 64)
		figs = append(figs, importFigure{Kind: m[1], Lines: lines, Imported: imported, Failed: failed, Seconds: d.Seconds(), RowsPerS: rate})
	}
	if len(figs) != 3 {
		return nil, fmt.Errorf("import printed %d summary lines, want 3", len(figs))
	}
	return figs, nil
}

// importDataset imports the dataset into a fresh database directory.
func (b *bench) importDataset(ctx context.Context) error {
	if err := os.RemoveAll(b.dbDir()); err != nil {
		return err
	}
	// The shared flags before the command and import's after it, as every
	// version of hbgraph takes them.
	out, err := b.command(ctx, b.bin("hbgraph"), "--data-dir", b.dbDir(), "--log-level", "warn", "import",
		"--nodes", b.dataset("nodes.jsonl"),
		"--relationships", b.dataset("relationships.jsonl"),
		"--articles", b.dataset("articles.jsonl"))
	if err != nil {
		return err
	}
	if b.imports, err = parseImport(out); err != nil {
		return err
	}
	if m := compactedLine.FindSubmatch(out); m != nil {
		b.compacted, _ = time.ParseDuration(string(m[1]))
	}
	for _, f := range b.imports {
		if f.Failed > 0 || f.Imported != f.Lines {
			return fmt.Errorf("import of %s: %d of %d lines imported, %d failed", f.Kind, f.Imported, f.Lines, f.Failed)
		}
	}
	return nil
}
