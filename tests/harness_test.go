// Package tests holds hbgraph's end-to-end tests: the real binary, built
// once by TestMain, runs as a child process on 127.0.0.1 with its own data
// directory per test, and the tests speak GraphQL to it over HTTP, the way
// a frontend does.
//
// Each test starts its own server (startServer), so tests share nothing and
// run in parallel, two at a time (parallelTest), so at most four servers
// run at once. A server is stopped with SIGTERM when its test ends, and the
// test fails unless the process exits cleanly (status 0).
package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// serverBin is the hbgraph binary TestMain built.
var serverBin string

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

// binaryEnv names a prebuilt hbgraph binary to test instead of building
// one (a release artifact, say).
const binaryEnv = "HBGRAPH_E2E_BINARY"

func runTests(m *testing.M) int {
	if bin := os.Getenv(binaryEnv); bin != "" {
		serverBin = bin
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "hbgraph-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	serverBin = filepath.Join(dir, "hbgraph")
	build := exec.Command(goTool(), "build", "-o", serverBin, "github.com/hbgraph/hbgraph")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "tests: building hbgraph:", err)
		return 1
	}
	return m.Run()
}

// goTool is the go command of the toolchain running the tests.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	//lint:ignore SA1019 the test binary runs where it was built: its GOROOT is the toolchain running the tests
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// testSlots bounds the tests that run at once, whatever -parallel says:
// each runs at most two servers at a time, and CI machines are small.
var testSlots = make(chan struct{}, 2)

// parallelTest marks t parallel and waits for a slot; the slot is given
// back after t's servers have stopped.
func parallelTest(t *testing.T) {
	t.Parallel()
	testSlots <- struct{}{}
	t.Cleanup(func() { <-testSlots })
}

const (
	startTimeout    = 10 * time.Second
	shutdownTimeout = 20 * time.Second // the server drains for up to request-timeout + 5 s
)

// httpClient is shared by every test; all its traffic goes to 127.0.0.1.
var httpClient = &http.Client{Timeout: 30 * time.Second}

// server is one running hbgraph process.
type server struct {
	url     string // http://127.0.0.1:port
	admin   string // the admin listener's: /metrics, /debug/pprof/
	dataDir string
	cmd     *exec.Cmd
	out     *syncBuffer // stdout and stderr

	exited  chan struct{} // closed when the process has exited
	waitErr error         // the process's exit, valid once exited is closed
}

// syncBuffer is a bytes.Buffer safe for the process's writers and a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startServer starts hbgraph on a free port of 127.0.0.1 with a fresh data
// directory and extraArgs, waits until /healthz answers, and stops it when
// the test ends, failing the test unless it exits with status 0.
func startServer(t testing.TB, extraArgs ...string) *server {
	t.Helper()
	return startServerAt(t, t.TempDir(), extraArgs...)
}

// startServerAt is startServer on an existing data directory.
func startServerAt(t testing.TB, dataDir string, extraArgs ...string) *server {
	t.Helper()
	for attempt := 1; ; attempt++ {
		s, inUse := tryStart(t, dataDir, extraArgs)
		if s != nil {
			t.Cleanup(func() { s.stop(t) })
			return s
		}
		if !inUse { // tryStart reported why
			t.FailNow()
		}
		// Another process took the port between our probe and the bind.
		if attempt == 3 {
			t.Fatalf("hbgraph found its port taken %d times", attempt)
		}
	}
}

func tryStart(t testing.TB, dataDir string, extraArgs []string) (s *server, portInUse bool) {
	t.Helper()
	port, adminPort := freePort(t), freePort(t)
	args := append([]string{"--listen", "127.0.0.1:" + port, "--admin-listen", "127.0.0.1:" + adminPort,
		"--data-dir", dataDir, "--log-level", "warn"}, extraArgs...)
	s = &server{url: "http://127.0.0.1:" + port, admin: "http://127.0.0.1:" + adminPort, dataDir: dataDir, out: &syncBuffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(serverBin, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting hbgraph: %v", err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-s.exited:
			out := s.out.String()
			if strings.Contains(out, "address already in use") {
				return nil, true
			}
			t.Errorf("hbgraph %v exited before it was healthy: %v\n%s", args, s.waitErr, out)
			return nil, false
		default:
		}
		if time.Now().After(deadline) {
			_ = s.cmd.Process.Kill()
			<-s.exited
			t.Errorf("hbgraph %v not healthy after %v\n%s", args, startTimeout, s.out.String())
			return nil, false
		}
		if resp, err := httpClient.Get(s.url + "/healthz"); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				select {
				case <-s.exited: // someone else answered on the port; report above
					continue
				default:
					return s, false
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// portsUsed are the ports freePort handed out: never twice, so that two
// of our servers never race for one port (and a health check never reaches
// the other one).
var portsUsed = struct {
	sync.Mutex
	m map[string]bool
}{m: map[string]bool{}}

// freePort returns a port of 127.0.0.1 that was free a moment ago.
func freePort(t testing.TB) string {
	t.Helper()
	portsUsed.Lock()
	defer portsUsed.Unlock()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		_, port, err := net.SplitHostPort(l.Addr().String())
		l.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !portsUsed.m[port] {
			portsUsed.m[port] = true
			return port
		}
	}
}

// signalStop sends SIGTERM (a no-op once the process has exited).
func (s *server) signalStop(t testing.TB) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("SIGTERM: %v", err)
	}
}

// wait waits (bounded) for the process to exit after signalStop and
// reports whether it exited with status 0; it kills a process that hangs.
func (s *server) wait(t testing.TB) bool {
	t.Helper()
	select {
	case <-s.exited:
	case <-time.After(shutdownTimeout):
		_ = s.cmd.Process.Kill()
		<-s.exited
		t.Errorf("hbgraph did not exit within %v of SIGTERM; killed\n%s", shutdownTimeout, s.out.String())
		return false
	}
	if s.waitErr != nil {
		t.Errorf("hbgraph exited uncleanly after SIGTERM: %v\n%s", s.waitErr, s.out.String())
		return false
	}
	return true
}

// stop sends SIGTERM and requires a clean exit. It may be called more than
// once.
func (s *server) stop(t testing.TB) {
	t.Helper()
	// A connection the client dialed but never used counts as active for
	// up to 5 s of the server's Shutdown; close those first.
	httpClient.CloseIdleConnections()
	s.signalStop(t)
	if s.wait(t) && t.Failed() {
		if out := s.out.String(); out != "" {
			t.Logf("hbgraph output:\n%s", out)
		}
	}
}

// gqlRequest is a GraphQL request body.
type gqlRequest struct {
	Query      string         `json:"query,omitempty"`
	Variables  map[string]any `json:"variables,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// gqlResponse is a GraphQL response and what HTTP said around it.
type gqlResponse struct {
	Data       json.RawMessage `json:"data"`
	Errors     []gqlError      `json:"errors"`
	Extensions json.RawMessage `json:"extensions"`

	Status int         `json:"-"`
	Header http.Header `json:"-"`
	Body   []byte      `json:"-"`
}

type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// Code is the error's extensions.code ("" if none).
func (e gqlError) Code() string {
	c, _ := e.Extensions["code"].(string)
	return c
}

// PathString is the error's path joined with dots ("nodes.1.id").
func (e gqlError) PathString() string {
	parts := make([]string, len(e.Path))
	for i, p := range e.Path {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ".")
}

func (e gqlError) String() string {
	return fmt.Sprintf("{code %q path %q: %s}", e.Code(), e.PathString(), e.Message)
}

// post sends a GraphQL request with POST.
func (s *server) post(t testing.TB, req gqlRequest) *gqlResponse {
	t.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return s.postRaw(t, body, nil)
}

// postRaw posts body as application/json with extra headers.
func (s *server) postRaw(t testing.TB, body []byte, header http.Header) *gqlResponse {
	t.Helper()
	hr, err := http.NewRequest(http.MethodPost, s.url+"/query", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Content-Type", "application/json")
	for k, vs := range header {
		hr.Header[k] = vs
	}
	return s.send(t, hr)
}

// get sends a GraphQL request with GET, its parts in the URL.
func (s *server) get(t testing.TB, req gqlRequest) *gqlResponse {
	t.Helper()
	v := url.Values{}
	if req.Query != "" {
		v.Set("query", req.Query)
	}
	for name, m := range map[string]map[string]any{"variables": req.Variables, "extensions": req.Extensions} {
		if m != nil {
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			v.Set(name, string(b))
		}
	}
	hr, err := http.NewRequest(http.MethodGet, s.url+"/query?"+v.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.send(t, hr)
}

func (s *server) send(t testing.TB, hr *http.Request) *gqlResponse {
	t.Helper()
	r, err := sendRequest(hr)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tryPost is post for goroutines other than the test's: it returns what
// went wrong instead of failing the test.
func (s *server) tryPost(req gqlRequest) (*gqlResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequest(http.MethodPost, s.url+"/query", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	return sendRequest(hr)
}

func sendRequest(hr *http.Request) (*gqlResponse, error) {
	resp, err := httpClient.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", hr.Method, hr.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading response: %w", err)
	}
	return decodeResponse(resp, body)
}

func decodeResponse(resp *http.Response, body []byte) (*gqlResponse, error) {
	var r gqlResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("status %d: response is not GraphQL JSON: %w\n%s", resp.StatusCode, err, body)
	}
	r.Status, r.Header, r.Body = resp.StatusCode, resp.Header, body
	return &r, nil
}

// do posts query with variables (nil for none).
func (s *server) do(t testing.TB, query string, vars map[string]any) *gqlResponse {
	t.Helper()
	return s.post(t, gqlRequest{Query: query, Variables: vars})
}

// mustDo posts query, fails the test on any error, and decodes data into
// out (unless out is nil).
func (s *server) mustDo(t testing.TB, query string, vars map[string]any, out any) {
	t.Helper()
	s.do(t, query, vars).ok(t, out)
}

// ok fails the test unless the response has status 200, data and no
// errors; it decodes data into out unless out is nil.
func (r *gqlResponse) ok(t testing.TB, out any) {
	t.Helper()
	if r.Status != http.StatusOK || len(r.Errors) > 0 || isNull(r.Data) {
		t.Fatalf("want data and no errors, got status %d: %s", r.Status, r.Body)
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			t.Fatalf("decoding data: %v\n%s", err, r.Data)
		}
	}
}

// wantError requires exactly one error, with code and path (dot-joined;
// "" for none). It reports whether the error matched.
func (r *gqlResponse) wantError(t testing.TB, code, path string) bool {
	t.Helper()
	if len(r.Errors) != 1 {
		t.Errorf("want one error %s at %q, got status %d: %s", code, path, r.Status, r.Body)
		return false
	}
	e := r.Errors[0]
	if e.Code() != code || e.PathString() != path {
		t.Errorf("want error %s at %q, got %v (status %d)", code, path, e, r.Status)
		return false
	}
	return true
}

func isNull(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// compactJSON is raw without insignificant space, for comparing snapshots.
func compactJSON(t testing.TB, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("compacting %s: %v", raw, err)
	}
	return b.String()
}

// pageInfo is a connection's PageInfo.
type pageInfo struct {
	HasNextPage     bool    `json:"hasNextPage"`
	HasPreviousPage bool    `json:"hasPreviousPage"`
	StartCursor     *string `json:"startCursor"`
	EndCursor       *string `json:"endCursor"`
}

const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// parseTime parses a Time scalar, which must be UTC with milliseconds.
func parseTime(t testing.TB, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("Time %q: %v", s, err)
	}
	if got := tm.UTC().Format(timeLayout); got != s {
		t.Errorf("Time %q is not RFC 3339 UTC with milliseconds (want the form %q)", s, got)
	}
	return tm
}
