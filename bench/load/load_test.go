package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestCheckLoopbackURL(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:8080/query", true},
		{"http://127.1.2.3/query", true},
		{"https://127.0.0.1/query", true},
		{"http://localhost:8080/query", true},
		{"http://LocalHost/query", true},
		{"http://[::1]:8080/query", true},
		{"http://[::ffff:127.0.0.1]:8080/query", true},
		{"http://10.0.0.1:8080/query", false},
		{"http://192.0.2.1/query", false},
		{"http://0.0.0.0:8080/query", false},
		{"http://[::]:8080/query", false},
		{"http://example.com/query", false},
		{"http://localhost.example.com/query", false},
		{"http://127.0.0.1.example.com/query", false},
		{"http://user@10.0.0.1/query", false},
		{"http://[fe80::1%25lo]/query", false},
		{"ftp://127.0.0.1/query", false},
		{"127.0.0.1:8080/query", false},
		{"/query", false},
		{"http:///query", false},
		{"http://%zz/", false},
	} {
		t.Run(tc.url, func(t *testing.T) {
			err := checkLoopbackURL(tc.url)
			if (err == nil) != tc.ok {
				t.Fatalf("checkLoopbackURL(%q) = %v, want ok %v", tc.url, err, tc.ok)
			}
		})
	}
}

func TestCheckLoopbackDial(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:80", true},
		{"127.9.9.9:80", true},
		{"[::1]:80", true},
		{"[::ffff:127.0.0.1]:80", true},
		{"10.0.0.1:80", false},
		{"[::ffff:10.0.0.1]:80", false},
		{"[2001:db8::1]:80", false},
		{"localhost:80", false}, // dialed addresses are resolved
	} {
		t.Run(tc.addr, func(t *testing.T) {
			err := checkLoopbackDial("tcp", tc.addr, nil)
			if (err == nil) != tc.ok {
				t.Fatalf("checkLoopbackDial(%q) = %v, want ok %v", tc.addr, err, tc.ok)
			}
		})
	}
}

// TestRunRefusesNonLoopback checks that the command refuses a remote URL
// before sending anything.
func TestRunRefusesNonLoopback(t *testing.T) {
	q := writeTemp(t, "q.graphql", "{ __typename }")
	for _, u := range []string{"http://192.0.2.1/query", "http://example.com:8080/query"} {
		err := run(t.Context(), []string{"-url", u, "-query-file", q, "-duration", "1s"}, io.Discard)
		if !errors.Is(err, errNotLoopback) {
			t.Errorf("run -url %s = %v, want %v", u, err, errNotLoopback)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	good := config{url: "http://127.0.0.1:1/query", query: "{ __typename }", concurrency: 1,
		duration: time.Second, timeout: time.Second}
	if err := good.validate(); err != nil {
		t.Fatalf("validate(%+v) = %v", good, err)
	}
	for _, tc := range []struct {
		name string
		edit func(*config)
	}{
		{"remote url", func(c *config) { c.url = "http://10.0.0.1/query" }},
		{"empty query", func(c *config) { c.query = " \n" }},
		{"no concurrency", func(c *config) { c.concurrency = 0 }},
		{"huge concurrency", func(c *config) { c.concurrency = maxConcurrency + 1 }},
		{"no duration", func(c *config) { c.duration = 0 }},
		{"negative warmup", func(c *config) { c.warmup = -time.Second }},
		{"no timeout", func(c *config) { c.timeout = 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.edit(&c)
			if err := c.validate(); err == nil {
				t.Fatalf("validate(%+v) = nil, want an error", c)
			}
			if _, err := load(t.Context(), c); err == nil {
				t.Fatalf("load(%+v) = nil error", c)
			}
		})
	}
}

func TestReadVars(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []string // nil: an error
	}{
		{"lines", "{\"id\":\"n1\"}\n\n  {\"id\":\"n2\",\"first\":5}  \n{}", []string{`{"id":"n1"}`, `{"id":"n2","first":5}`, `{}`}},
		{"no final newline", `{"a":1}`, []string{`{"a":1}`}},
		{"empty", "\n \n", nil},
		{"array", `[1]`, nil},
		{"null", `null`, nil},
		{"number", `1`, nil},
		{"two objects on a line", `{} {}`, nil},
		{"truncated", `{"id":"n1"`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readVars(strings.NewReader(tc.in))
			if tc.want == nil {
				if err == nil {
					t.Fatalf("readVars(%q) = %s, want an error", tc.in, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, v := range got {
				s = append(s, string(v))
			}
			if fmt.Sprint(s) != fmt.Sprint(tc.want) {
				t.Fatalf("readVars(%q) = %q, want %q", tc.in, s, tc.want)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	seq := func(n int) []time.Duration { // 1ms..n ms, shuffled
		d := make([]time.Duration, n)
		for i := range d {
			d[i] = time.Duration(i+1) * time.Millisecond
		}
		rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { d[i], d[j] = d[j], d[i] })
		return d
	}
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want latencyStats
	}{
		{"none", nil, latencyStats{}},
		{"one", []time.Duration{3 * time.Millisecond}, latencyStats{3, 3, 3, 3, 3}},
		{"ten", seq(10), latencyStats{P50: 5, P90: 9, P99: 10, Max: 10, Mean: 5.5}},
		{"hundred", seq(100), latencyStats{P50: 50, P90: 90, P99: 99, Max: 100, Mean: 50.5}},
		{"thousand", seq(1000), latencyStats{P50: 500, P90: 900, P99: 990, Max: 1000, Mean: 500.5}},
		{"1001", seq(1001), latencyStats{P50: 501, P90: 901, P99: 991, Max: 1001, Mean: 501}},
		{"outlier", append(make([]time.Duration, 99), time.Second), latencyStats{Max: 1000, Mean: 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := latencies(tc.in); got != tc.want {
				t.Fatalf("latencies = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestClassify sends one request to each kind of answer.
func TestClassify(t *testing.T) {
	gone := closedPort(t)
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    outcome
	}{
		{"ok", reply(200, `{"data":{"__typename":"Query"}}`), outcomeOK},
		{"empty errors", reply(200, `{"data":{},"errors":[]}`), outcomeOK},
		{"null errors", reply(200, `{"data":{},"errors":null}`), outcomeOK},
		{"no data", reply(200, `{}`), outcomeOK},
		{"graphql error", reply(200, `{"data":null,"errors":[{"message":"boom","path":["node"]}]}`), outcomeGraphQL},
		{"partial data", reply(200, `{"data":{"node":null},"errors":[{"message":"x"}]}`), outcomeGraphQL},
		{"status 500", reply(500, `internal`), outcomeStatus},
		{"status 422 with errors", reply(422, `{"errors":[{"message":"invalid"}]}`), outcomeStatus},
		{"redirect is not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://192.0.2.1/query", http.StatusTemporaryRedirect)
		}, outcomeStatus},
		{"not json", reply(200, `<html>`), outcomeDecode},
		{"empty body", reply(200, ``), outcomeDecode},
		{"array", reply(200, `[1,2]`), outcomeDecode},
		{"errors not a list", reply(200, `{"errors":"oops"}`), outcomeDecode},
		{"truncated json", reply(200, `{"data":{`), outcomeDecode},
		{"slow", hang, outcomeTimeout},
		{"slow body", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"data":`))
			w.(http.Flusher).Flush()
			hang(w, r)
		}, outcomeTimeout},
		{"connection closed", func(w http.ResponseWriter, r *http.Request) {
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
		}, outcomeTransport},
		{"short body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.Write([]byte(`{"data":{}}`))
		}, outcomeTransport},
		{"connection refused", nil, outcomeTransport},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := gone
			if tc.handler != nil {
				u = newServer(t, tc.handler).URL
			}
			target, err := parseTarget(u)
			if err != nil {
				t.Fatal(err)
			}
			w := newWorker(target, 200*time.Millisecond)
			defer w.close()
			if got := w.do(t.Context(), []byte(`{"query":"{ __typename }"}`)); got != tc.want {
				t.Fatalf("do = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestFailed classifies errors that TestClassify cannot provoke reliably,
// such as a dial that times out before the request's ctx does.
func TestFailed(t *testing.T) {
	expired, cancel := context.WithDeadline(t.Context(), time.Now())
	defer cancel()
	live := t.Context()
	dialTimeout := &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want outcome
	}{
		{"deadline", expired, context.DeadlineExceeded, outcomeTimeout},
		{"net timeout", live, fmt.Errorf("post: %w", dialTimeout), outcomeTimeout},
		{"reset", live, &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}, outcomeTransport},
		{"eof", live, io.ErrUnexpectedEOF, outcomeTransport},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := failed(tc.ctx, tc.err); got != tc.want {
				t.Fatalf("failed(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}

// TestLoadCounts runs against a server that answers each variables object
// in its own way, and checks the counts.
func TestLoadCounts(t *testing.T) {
	checkNoLeaks(t)
	var served atomic.Int64
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Variables struct{ Kind string } `json:"variables"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		served.Add(1)
		switch req.Variables.Kind {
		case "ok":
			io.WriteString(w, `{"data":{"__typename":"Query"}}`)
		case "slow":
			time.Sleep(20 * time.Millisecond)
			io.WriteString(w, `{"data":{"__typename":"Query"}}`)
		case "graphql":
			io.WriteString(w, `{"data":null,"errors":[{"message":"no"}]}`)
		case "status":
			http.Error(w, "down", http.StatusServiceUnavailable)
		case "decode":
			io.WriteString(w, `not json`)
		}
	})
	kinds := []string{"ok", "slow", "graphql", "status", "decode"}
	var vars []json.RawMessage
	for _, k := range kinds {
		vars = append(vars, json.RawMessage(`{"kind":"`+k+`"}`))
	}
	const concurrency = 3
	cfg := config{url: srv.URL, query: "{ __typename }", vars: vars, concurrency: concurrency,
		warmup: 100 * time.Millisecond, duration: 500 * time.Millisecond, timeout: 2 * time.Second, name: "counts"}
	res, err := load(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.line())

	e := res.Errors
	if res.Requests != res.OK+e.Total || e.Total != e.Transport+e.Timeout+e.Status+e.GraphQL+e.Decode {
		t.Errorf("counts do not add up: %+v", res)
	}
	if e.Transport != 0 || e.Timeout != 0 {
		t.Errorf("transport errors %d, timeouts %d; want none", e.Transport, e.Timeout)
	}
	if res.Requests < 50 || int64(res.Requests) >= served.Load() {
		t.Errorf("%d requests counted of %d served; want >= 50 and fewer than served (warm-up)", res.Requests, served.Load())
	}
	// Variables go round-robin, so each kind is a fifth of the requests,
	// give or take those cut off at the start and end of the window.
	fifth := res.Requests / len(kinds)
	for _, c := range []struct {
		kind string
		got  int
		want int
	}{
		{"ok", res.OK, 2 * fifth}, {"graphql", e.GraphQL, fifth}, {"status", e.Status, fifth}, {"decode", e.Decode, fifth},
	} {
		if d := c.got - c.want; d < -2*concurrency || d > 2*concurrency {
			t.Errorf("%s: %d of %d requests, want %d ± %d", c.kind, c.got, res.Requests, c.want, 2*concurrency)
		}
	}
	// Half the ok requests took >= 20ms: p50 is about there, max above.
	if l := res.LatencyMs; l.Max < 20 || l.P90 < 20 || l.P50 > l.P90 || l.P90 > l.P99 || l.P99 > l.Max {
		t.Errorf("latencies %+v; want max and p90 >= 20ms, in order", l)
	}
	if want := float64(res.Requests) / res.Seconds; res.RPS != want || res.Seconds != 0.5 {
		t.Errorf("rps %v over %vs, want %v over 0.5s", res.RPS, res.Seconds, want)
	}
}

// TestWarmupNotCounted: the server fails until 150ms after it starts,
// the warm-up lasts 300ms, so no failure is counted.
func TestWarmupNotCounted(t *testing.T) {
	okFrom := time.Now().Add(150 * time.Millisecond)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if time.Now().Before(okFrom) {
			io.WriteString(w, `{"errors":[{"message":"cold"}]}`)
			return
		}
		io.WriteString(w, `{"data":{}}`)
	})
	res, err := load(t.Context(), config{url: srv.URL, query: "{ __typename }", concurrency: 2,
		warmup: 300 * time.Millisecond, duration: 200 * time.Millisecond, timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors.Total != 0 || res.OK == 0 {
		t.Errorf("%s; want only ok requests", res.line())
	}
}

// TestStopsOnTime runs against a server that never answers.
func TestStopsOnTime(t *testing.T) {
	checkNoLeaks(t)
	srv := newServer(t, hang)
	cfg := config{url: srv.URL, query: "{ __typename }", concurrency: 4,
		warmup: 100 * time.Millisecond, duration: 200 * time.Millisecond, timeout: time.Minute}

	t.Run("deadline", func(t *testing.T) {
		start := time.Now()
		res, err := load(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < 300*time.Millisecond || took > 2*time.Second {
			t.Errorf("load took %s, want about 300ms", took)
		}
		if res.Requests != 0 {
			t.Errorf("%s; want no requests counted (all cut off)", res.line())
		}
	})
	t.Run("per-request timeout", func(t *testing.T) {
		c := cfg
		c.timeout = 50 * time.Millisecond
		start := time.Now()
		res, err := load(t.Context(), c)
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("load took %s, want about 300ms", took)
		}
		if res.Errors.Timeout == 0 || res.Errors.Timeout != res.Requests {
			t.Errorf("%s; want only timeouts", res.line())
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		c := cfg
		c.duration = time.Hour
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		res, err := load(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("load took %s after cancelling at 300ms", took)
		}
		if res.Seconds <= 0 || res.Seconds > 2 {
			t.Errorf("measured %vs, want about 0.2s", res.Seconds)
		}
	})
}

// recorder is a server that records the variables of each request and
// counts the connections it accepts.
type recorder struct {
	srv   *httptest.Server
	conns atomic.Int64

	mu   sync.Mutex // guards vars
	vars []string   // "" for a request without variables
}

const recordedQuery = "query Q($id: ID!) { node(id: $id) { id } }"

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ct := r.Header.Get("Content-Type"); r.Method != http.MethodPost || ct != "application/json" {
			http.Error(w, "want a JSON POST, got "+r.Method+" "+ct, http.StatusBadRequest)
			return
		}
		var req map[string]json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || string(req["query"]) != `"`+recordedQuery+`"` {
			http.Error(w, fmt.Sprintf("bad request %s %v", req, err), http.StatusBadRequest)
			return
		}
		rec.mu.Lock()
		rec.vars = append(rec.vars, string(req["variables"]))
		rec.mu.Unlock()
		io.WriteString(w, `{"data":{}}`)
	}))
	rec.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			rec.conns.Add(1)
		}
	}
	rec.srv.Start()
	t.Cleanup(rec.srv.Close)
	return rec
}

// received returns the variables received so far.
func (rec *recorder) received() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.vars)
}

// TestRequests checks the request bodies and the round-robin order, and
// that connections are kept alive.
func TestRequests(t *testing.T) {
	vars := []json.RawMessage{[]byte(`{"id":"n1"}`), []byte(`{"id":"n2"}`), []byte(`{"id":"n3"}`)}
	for _, tc := range []struct {
		name        string
		vars        []json.RawMessage
		concurrency int
	}{
		{"one worker", vars, 1},
		{"four workers", vars, 4},
		{"no variables", nil, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder(t)
			res, err := load(t.Context(), config{url: rec.srv.URL, query: recordedQuery, vars: tc.vars,
				concurrency: tc.concurrency, duration: 200 * time.Millisecond, timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if res.Errors.Total != 0 || res.OK < 10 {
				t.Fatalf("%s; want >= 10 ok requests, no errors", res.line())
			}
			got := rec.received()
			switch {
			case tc.vars == nil:
				for _, v := range got {
					if v != "" {
						t.Fatalf("variables %s sent, want none", v)
					}
				}
			case tc.concurrency == 1:
				// One worker: the server sees the vars in file order.
				for i, v := range got {
					if want := string(tc.vars[i%len(tc.vars)]); v != want {
						t.Fatalf("request %d had variables %s, want %s", i, v, want)
					}
				}
			default:
				// Each object is used equally often, give or take the
				// requests in flight.
				n := map[string]int{}
				for _, v := range got {
					n[v]++
				}
				for _, v := range tc.vars {
					if d := n[string(v)] - len(got)/len(tc.vars); d < -tc.concurrency || d > tc.concurrency {
						t.Errorf("%s sent %d times of %d", v, n[string(v)], len(got))
					}
				}
			}
			// Keep-alive: one connection per worker.
			if n := rec.conns.Load(); n != int64(tc.concurrency) {
				t.Errorf("%d connections for %d workers and %d requests", n, tc.concurrency, res.Requests)
			}
		})
	}
}

// TestRun goes through the command: flags, files, output line and -json.
func TestRun(t *testing.T) {
	srv := newServer(t, reply(200, `{"data":{"__typename":"Query"}}`))
	dir := t.TempDir()
	q := writeTemp(t, "Q7.graphql", "{ __typename }")
	v := writeTemp(t, "v.jsonl", "{\"id\":\"n1\"}\n{\"id\":\"n2\"}\n")
	out := filepath.Join(dir, "out.json")

	var stdout bytes.Buffer
	err := run(t.Context(), []string{"-url", srv.URL, "-query-file", q, "-vars-file", v, "-concurrency", "2",
		"-warmup", "50ms", "-duration", "200ms", "-json", out}, &stdout)
	if err != nil {
		t.Fatal(err)
	}
	line := stdout.String()
	if !strings.HasPrefix(line, "Q7: ") || strings.Count(line, "\n") != 1 || !strings.Contains(line, "req/s") {
		t.Errorf("output %q, want one line starting with the name Q7", line)
	}
	var res result
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Name != "Q7" || res.OK == 0 || res.Requests != res.OK || res.Concurrency != 2 || res.LatencyMs.P50 <= 0 {
		t.Errorf("-json wrote %s", b)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no query file", []string{"-url", srv.URL}, "-query-file is required"},
		{"both vars", []string{"-url", srv.URL, "-query-file", q, "-vars", "{}", "-vars-file", v}, "not both"},
		{"bad vars", []string{"-url", srv.URL, "-query-file", q, "-vars", "[1]"}, "want one JSON object"},
		{"two vars", []string{"-url", srv.URL, "-query-file", q, "-vars", "{}\n{}"}, "want one JSON object"},
		{"missing vars file", []string{"-url", srv.URL, "-query-file", q, "-vars-file", filepath.Join(dir, "none")}, "no such file"},
		{"bad duration", []string{"-url", srv.URL, "-query-file", q, "-duration", "0s"}, "-duration must be positive"},
		{"extra argument", []string{"-url", srv.URL, "-query-file", q, "x"}, "unexpected arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(t.Context(), tc.args, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run(%q) = %v, want an error containing %q", tc.args, err, tc.want)
			}
		})
	}
}

// TestRunNoSuccess: a run where every request fails still prints its line
// and returns errNoSuccess.
func TestRunNoSuccess(t *testing.T) {
	srv := newServer(t, reply(500, "down"))
	q := writeTemp(t, "q.graphql", "{ __typename }")
	var stdout bytes.Buffer
	err := run(t.Context(), []string{"-url", srv.URL, "-query-file", q, "-name", "down",
		"-warmup", "0s", "-duration", "100ms", "-vars", `{"id":"n1"}`}, &stdout)
	if !errors.Is(err, errNoSuccess) {
		t.Fatalf("run = %v, want %v", err, errNoSuccess)
	}
	if !strings.HasPrefix(stdout.String(), "down: ") || !strings.Contains(stdout.String(), "status ") {
		t.Errorf("output %q", stdout.String())
	}
}

// hang answers after 30s, or when the client goes away. It reads the
// request body first, as a GraphQL server does: net/http notices a closed
// connection only once the body has been read.
func hang(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(30 * time.Second):
	}
}

func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// newServer starts a server on 127.0.0.1 that is closed when the test ends.
func newServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// closedPort returns the URL of a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String() + "/query"
	l.Close()
	return u
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkNoLeaks fails the test if, once it and its cleanups (servers
// closed) are done, more goroutines run than before it. Call it first, so
// its cleanup runs last.
func checkNoLeaks(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(3 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				t.Errorf("%d goroutines running, %d before the test:\n%s",
					runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}
