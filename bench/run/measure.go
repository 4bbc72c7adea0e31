package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// mode is one server configuration the queries run against.
type mode struct {
	name  string
	flags []string
	// all runs every scenario; otherwise only the four queries.
	all bool
}

var (
	batched   = mode{name: "batching on", all: true}
	unbatched = mode{name: "batching off", flags: []string{"--batch-size", "1"}}
)

// scenario is one query with one set of variables.
type scenario struct {
	name  string // Q1 .. Q4, or a variant such as "Q4 page 50"
	query string // file under bench/queries
	vars  []map[string]any
	// core marks the four queries of the issue; only they run in every
	// mode.
	core bool
}

// runResult is what one load run measured, with explain's counts.
type runResult struct {
	Mode     string
	Scenario string
	Load     loadResult
	Calls    int // median store calls per request
	Waves    int // most waves seen in a request
}

// loadResult is the part of bench/load's -json output used here.
type loadResult struct {
	Requests int     `json:"requests"`
	OK       int     `json:"ok"`
	RPS      float64 `json:"rps"`
	Errors   struct {
		Total int `json:"total"`
	} `json:"errors"`
	LatencyMs struct {
		P50 float64 `json:"p50"`
		P90 float64 `json:"p90"`
		P99 float64 `json:"p99"`
	} `json:"latency_ms"`
}

// server is a running hbgraph.
type server struct {
	cmd   *exec.Cmd
	url   string // of /query
	base  string
	admin string // the admin listener's base: /debug/pprof/
	done  chan error

	stopped bool
	stopErr error
}

func (b *bench) startServer(ctx context.Context, m mode) (*server, error) {
	return b.startServerOn(ctx, b.dbDir(), m)
}

// startServerOn starts hbgraph in mode m on the data directory dataDir.
func (b *bench) startServerOn(ctx context.Context, dataDir string, m mode) (*server, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	adminAddr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	args := []string{"--data-dir", dataDir, "--listen", addr, "--admin-listen", adminAddr, "--log-level", "warn"}
	if b.cfg.profile {
		args = append(args, "--pprof")
	}
	args = append(args, m.flags...)
	logFile, err := os.Create(filepath.Join(b.cfg.dir, "server.log"))
	if err != nil {
		return nil, err
	}
	b.commands = append(b.commands, shellJoin(append([]string{b.bin("hbgraph")}, args...)))
	cmd := exec.Command(b.bin("hbgraph"), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	s := &server{cmd: cmd, base: "http://" + addr, admin: "http://" + adminAddr, url: "http://" + addr + "/query", done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait(); logFile.Close() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case err := <-s.done:
			return nil, fmt.Errorf("hbgraph exited before serving: %v (see %s)", err, logFile.Name())
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, errors.New("hbgraph did not answer /healthz within 30s")
		}
	}
}

// stop stops the server; again, it returns what the first stop did.
func (s *server) stop() error {
	if s.stopped {
		return s.stopErr
	}
	s.stopped = true
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case s.stopErr = <-s.done:
		return s.stopErr
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		return errors.New("hbgraph did not stop within 15s of SIGTERM")
	}
}

func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// measure runs mode's scenarios against a server started for it.
func (b *bench) measure(ctx context.Context, m mode) error {
	srv, err := b.startServer(ctx, m)
	if err != nil {
		return err
	}
	defer srv.stop()
	scenarios, err := b.scenarios(ctx, srv)
	if err != nil {
		return err
	}
	for _, sc := range scenarios {
		if !m.all && !sc.core {
			continue
		}
		q, err := os.ReadFile(b.query(sc.query))
		if err != nil {
			return err
		}
		calls, waves, err := explain(ctx, srv.url, string(q), sc.vars)
		if err != nil {
			return fmt.Errorf("%s: explain: %w", sc.name, err)
		}
		res, err := b.load(ctx, srv, m, sc)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		b.runs = append(b.runs, runResult{Mode: m.name, Scenario: sc.name, Load: res, Calls: calls, Waves: waves})
	}
	return nil
}

func (b *bench) query(file string) string { return filepath.Join("bench", "queries", file) }

// scenarios prepares every scenario's variables from the dataset, walking
// pages through srv where a cursor is needed.
func (b *bench) scenarios(ctx context.Context, srv *server) ([]scenario, error) {
	ids := make([]map[string]any, b.summary.Nodes)
	for i := range ids {
		ids[i] = map[string]any{"id": "n" + strconv.Itoa(i+1)}
	}
	raw, err := os.ReadFile(b.query("q4.graphql"))
	if err != nil {
		return nil, err
	}
	q4 := string(raw)
	var page5 []map[string]any
	for _, a := range b.summary.HeavyAuthors {
		v, err := pageVars(ctx, srv.url, q4, a, 5)
		if err != nil {
			return nil, err
		}
		page5 = append(page5, v)
	}
	deep := b.summary.DeepAuthor
	deepPage1, err := pageVars(ctx, srv.url, q4, deep, 1)
	if err != nil {
		return nil, err
	}
	deepPage50, err := pageVars(ctx, srv.url, q4, deep, 50)
	if err != nil {
		return nil, err
	}
	incoming := func(id string) []map[string]any {
		return []map[string]any{{"id": id, "direction": "INCOMING"}}
	}
	return []scenario{
		{name: "Q1", query: "q1.graphql", vars: ids, core: true},
		{name: "Q2", query: "q2.graphql", vars: ids, core: true},
		{name: "Q3", query: "q3.graphql", vars: ids, core: true},
		{name: "Q4", query: "q4.graphql", vars: page5, core: true},
		{name: "Q4 page 1 (deep author)", query: "q4.graphql", vars: []map[string]any{deepPage1}},
		{name: "Q4 page 50 (deep author)", query: "q4.graphql", vars: []map[string]any{deepPage50}},
		{name: fmt.Sprintf("Q2 INCOMING, most followed (%d)", b.summary.MostFollowed.Followers), query: "q2.graphql", vars: incoming(b.summary.MostFollowed.ID)},
		{name: fmt.Sprintf("Q2 INCOMING, %d followers", b.summary.TenFollowers.Followers), query: "q2.graphql", vars: incoming(b.summary.TenFollowers.ID)},
	}, nil
}

// pageVars returns Q4's variables for page n (of 20) of a's main category,
// walking the pages before it by cursor.
func pageVars(ctx context.Context, url, query string, a author, n int) (map[string]any, error) {
	vars := map[string]any{"id": a.ID, "category": a.MainCategory}
	for page := 1; page < n; page++ {
		var data struct {
			Node struct {
				Articles struct {
					Edges    []json.RawMessage `json:"edges"`
					PageInfo struct {
						EndCursor   string `json:"endCursor"`
						HasNextPage bool   `json:"hasNextPage"`
					} `json:"pageInfo"`
				} `json:"articles"`
			} `json:"node"`
		}
		if _, err := graphql(ctx, url, query, vars, false, &data); err != nil {
			return nil, err
		}
		a := data.Node.Articles
		if len(a.Edges) != 20 || !a.PageInfo.HasNextPage {
			return nil, fmt.Errorf("author %s: page %d has %d articles and no next page; the dataset is too small for page %d", vars["id"], page, len(a.Edges), n)
		}
		vars["after"] = a.PageInfo.EndCursor
	}
	return vars, nil
}

// graphql posts one query and decodes its data into data; it fails on any
// error in the response.
func graphql(ctx context.Context, url, query string, vars map[string]any, withExplain bool, data any) (json.RawMessage, error) {
	body := map[string]any{"query": query, "variables": vars}
	if withExplain {
		body["extensions"] = map[string]any{"explain": true}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Data       json.RawMessage `json:"data"`
		Errors     []any           `json:"errors"`
		Extensions struct {
			Explain json.RawMessage `json:"explain"`
		} `json:"extensions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("status %d: %w", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK || len(out.Errors) > 0 {
		return nil, fmt.Errorf("status %d, errors %v", resp.StatusCode, out.Errors)
	}
	if data != nil {
		if err := json.Unmarshal(out.Data, data); err != nil {
			return nil, err
		}
	}
	return out.Extensions.Explain, nil
}

// explainSamples is how many requests explain looks at per scenario.
const explainSamples = 20

// explain returns the median store calls and the most waves over up to
// explainSamples requests, one at a time, with the scenario's first
// variables.
func explain(ctx context.Context, url, query string, vars []map[string]any) (calls, waves int, err error) {
	var all []int
	for i := range explainSamples {
		raw, err := graphql(ctx, url, query, vars[i%len(vars)], true, nil)
		if err != nil {
			return 0, 0, err
		}
		var r struct {
			Calls int               `json:"calls"`
			Waves []json.RawMessage `json:"waves"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return 0, 0, fmt.Errorf("explain extension: %w", err)
		}
		all = append(all, r.Calls)
		waves = max(waves, len(r.Waves))
	}
	slices.Sort(all)
	return all[len(all)/2], waves, nil
}

// load runs bench/load for one scenario and reads back its JSON result.
func (b *bench) load(ctx context.Context, srv *server, m mode, sc scenario) (loadResult, error) {
	// Kept after the run, so that the command lines in RESULTS.md can be
	// run again by hand.
	dir := filepath.Join(b.cfg.dir, "runs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return loadResult{}, err
	}
	base := filepath.Join(dir, fileName(m.name+" "+sc.name))
	varsFile := base + ".vars.jsonl"
	if err := writeJSONLines(varsFile, sc.vars); err != nil {
		return loadResult{}, err
	}
	jsonFile := base + ".json"
	stopProfile := func() error { return nil }
	if b.cfg.profile && m.all {
		stopProfile = b.profile(ctx, srv.admin, sc.name)
	}
	_, err := b.command(ctx, b.bin("load"), "-url", srv.url, "-query-file", b.query(sc.query),
		"-vars-file", varsFile, "-concurrency", strconv.Itoa(b.cfg.concurrency),
		"-duration", b.cfg.duration.String(), "-warmup", b.cfg.warmup.String(),
		"-name", m.name+": "+sc.name, "-json", jsonFile)
	if perr := stopProfile(); err == nil {
		err = perr
	}
	if err != nil {
		return loadResult{}, err
	}
	raw, err := os.ReadFile(jsonFile)
	if err != nil {
		return loadResult{}, err
	}
	var res loadResult
	return res, json.Unmarshal(raw, &res)
}

// profile fetches a CPU profile of the server whose admin listener is
// admin over the measured part of a run; the returned func waits for it.
func (b *bench) profile(ctx context.Context, admin, name string) func() error {
	done := make(chan error, 1)
	go func() {
		select {
		case <-time.After(b.cfg.warmup):
		case <-ctx.Done():
			done <- ctx.Err()
			return
		}
		secs := max(1, int(b.cfg.duration.Seconds())-1)
		resp, err := http.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", admin, secs))
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		dir := filepath.Join(b.cfg.dir, "profiles")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			done <- err
			return
		}
		f, err := os.Create(filepath.Join(dir, fileName(name)+".pprof"))
		if err != nil {
			done <- err
			return
		}
		_, err = io.Copy(f, resp.Body)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		done <- err
	}()
	return func() error { return <-done }
}

// fileName turns a scenario name into a file name.
func fileName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

func writeJSONLines(path string, rows []map[string]any) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// shellJoin renders a command line as a shell would need it typed.
func shellJoin(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,") == "" {
			b.WriteString(a)
		} else {
			b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
		}
	}
	return b.String()
}
