package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sseClient is one graphql-sse stream (distinct connections mode).
type sseClient struct {
	t      testing.TB
	resp   *http.Response
	lines  *bufio.Reader
	cancel context.CancelFunc
}

// sseEvent is one event of a stream: its name and data.
type sseEvent struct {
	Event string
	Data  string
}

// openSSE POSTs a subscription with Accept: text/event-stream and
// returns the response; its body is read by event.
func openSSE(t testing.TB, s *server, query string, vars map[string]any, header http.Header) *sseClient {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/query", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := (&http.Client{}).Do(req) // no client timeout: a stream lasts
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	c := &sseClient{t: t, resp: resp, lines: bufio.NewReader(resp.Body), cancel: cancel}
	t.Cleanup(c.close)
	return c
}

func (c *sseClient) close() {
	c.cancel()
	_ = c.resp.Body.Close()
}

// body reads a response that is not a stream.
func (c *sseClient) body() string {
	b, _ := io.ReadAll(c.resp.Body)
	return string(b)
}

// event reads the stream's next event (comments skipped), failing the
// test after timeout.
func (c *sseClient) event(timeout time.Duration) sseEvent {
	c.t.Helper()
	type result struct {
		ev  sseEvent
		err error
	}
	done := make(chan result, 1)
	go func() {
		var ev sseEvent
		for {
			line, err := c.lines.ReadString('\n')
			if err != nil {
				done <- result{ev, err}
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "":
				if ev.Event != "" || ev.Data != "" {
					done <- result{ev, nil}
					return
				}
			case strings.HasPrefix(line, ":"):
			case strings.HasPrefix(line, "event:"):
				ev.Event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				ev.Data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
			}
		}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			c.t.Fatalf("stream: %v (so far %+v)", r.err, r.ev)
		}
		return r.ev
	case <-time.After(timeout):
		c.t.Fatalf("no event within %v", timeout)
		return sseEvent{}
	}
}

// errorsOf reads a next event that carries errors, then complete: what
// graphql-sse asks of a request refused before it runs.
func (c *sseClient) errorsOf() []gqlError {
	c.t.Helper()
	ev := c.event(10 * time.Second)
	var p struct{ Errors []gqlError }
	if ev.Event != "next" || json.Unmarshal([]byte(ev.Data), &p) != nil || len(p.Errors) == 0 {
		c.t.Fatalf("want an error event, got %+v", ev)
	}
	if ev := c.event(5 * time.Second); ev.Event != "complete" {
		c.t.Fatalf("after the errors: %+v", ev)
	}
	return p.Errors
}

const sseWatch = `subscription($id: ID!) { nodeChanged(id: $id) { kind id node { properties } } }`

// TestSubscriptionSSE: a subscription as a graphql-sse event stream gets
// its events as `next` events, outlives --request-timeout, ends with the
// client (no longer active), and completes on shutdown.
func TestSubscriptionSSE(t *testing.T) {
	parallelTest(t)
	s := startServer(t, "--request-timeout", "1s")
	s.mustDo(t, `mutation { createNode(id: "x") { id } }`, nil, nil)
	c := openSSE(t, s, sseWatch, map[string]any{"id": "x"}, nil)
	if c.resp.StatusCode != http.StatusOK || !strings.HasPrefix(c.resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream answered %d %s: %s", c.resp.StatusCode, c.resp.Header.Get("Content-Type"), c.body())
	}
	waitSubscribed(t, s, 1)
	time.Sleep(2500 * time.Millisecond) // past the request timeout, and the server's read timeout
	for v := 1; v <= 2; v++ {
		s.mustDo(t, `mutation($v: Int!) { updateNodeProperties(id: "x", set: {v: $v}) { id } }`, map[string]any{"v": v}, nil)
	}
	for v := 1; v <= 2; v++ {
		ev := c.event(10 * time.Second)
		var p struct {
			Data struct {
				NodeChanged struct {
					Kind string
					Node struct{ Properties map[string]any }
				}
			}
		}
		if ev.Event != "next" || json.Unmarshal([]byte(ev.Data), &p) != nil || p.Data.NodeChanged.Node.Properties["v"] != float64(v) {
			t.Fatalf("event %d: %+v", v, ev)
		}
	}
	c.close()
	waitSubscribed(t, s, 0)

	// Shutdown completes a stream.
	c2 := openSSE(t, s, sseWatch, map[string]any{"id": "x"}, nil)
	waitSubscribed(t, s, 1)
	s.signalStop(t)
	if ev := c2.event(10 * time.Second); ev.Event != "complete" {
		t.Fatalf("on shutdown: %+v", ev)
	}
}

// TestSubscriptionSSELimits: an event stream is bound as a socket is:
// its token by Authorization and --auth-read, its Origin by
// --cors-origins, its document by the bounds and trusted documents, its
// caller by --subscriptions-per-caller; queries and mutations are not
// served as streams (they would escape the request timeout and load
// shedding).
func TestSubscriptionSSELimits(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, append(p.args(), "--auth-read", "required", "--subscriptions-per-caller", "1", "--max-depth", "3")...)
	alice := http.Header{"Authorization": {"Bearer " + p.user("alice")}}

	for name, h := range map[string]http.Header{
		"missing": nil,
		"forged":  {"Authorization": {"Bearer " + p.user("alice") + "x"}},
	} {
		c := openSSE(t, s, sseWatch, map[string]any{"id": "x"}, h)
		if body := c.body(); c.resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "UNAUTHENTICATED") {
			t.Errorf("%s token: %d %s", name, c.resp.StatusCode, body)
		}
	}
	evil := http.Header{"Authorization": alice["Authorization"], "Origin": {"https://evil.example"}}
	if c := openSSE(t, s, sseWatch, map[string]any{"id": "x"}, evil); c.resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign origin: %d %s", c.resp.StatusCode, c.body())
	}
	for name, q := range map[string]string{
		"query":    `{ node(id: "x") { id } }`,
		"mutation": `mutation { createNode(id: "y") { id } }`,
		"too deep": `subscription { nodeChanged(id: "x") { node { relationships(type: "t", direction: OUTGOING) { edges { node { id } } } } } }`,
	} {
		c := openSSE(t, s, q, nil, alice)
		if errs := c.errorsOf(); errs[0].Code() != "BAD_USER_INPUT" {
			t.Errorf("%s as a stream: %+v", name, errs)
		}
	}
	if r := s.do(t, `{ node(id: "y") { id } }`, nil); r.Status == 0 {
		t.Fatal("no answer")
	}

	c := openSSE(t, s, sseWatch, map[string]any{"id": "x"}, alice)
	if c.resp.StatusCode != http.StatusOK {
		t.Fatalf("alice's stream: %d %s", c.resp.StatusCode, c.body())
	}
	waitSubscribed(t, s, 1)
	second := openSSE(t, s, sseWatch, map[string]any{"id": "x"}, alice)
	if errs := second.errorsOf(); errs[0].Code() != "RATE_LIMITED" {
		t.Errorf("past --subscriptions-per-caller: %+v", errs)
	}
}

// TestSubscriptionSSETrustedDocuments: with --trusted-documents-only an
// event stream runs a manifest's document by its id, and no other.
func TestSubscriptionSSETrustedDocuments(t *testing.T) {
	parallelTest(t)
	manifest, hash := writeTrustedManifest(t, "Watch", "subscription", `subscription Watch { nodeChanged(id: "x") { kind } }`)
	s := startServer(t, "--trusted-documents", manifest, "--trusted-documents-only")
	c := openSSE(t, s, `subscription { nodeChanged(id: "y") { kind } }`, nil, nil)
	if errs := c.errorsOf(); errs[0].Code() != "PERSISTED_QUERY_NOT_IN_LIST" {
		t.Errorf("untrusted document: %+v", errs)
	}
	body, _ := json.Marshal(map[string]any{"operationName": "Watch",
		"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}})
	req, _ := http.NewRequest(http.MethodPost, s.url+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("trusted id: %d %s", resp.StatusCode, b)
	}
	waitSubscribed(t, s, 1)
}

// TestSubscriptionSSENotARequest: a body that is no GraphQL request is
// refused (400) before any stream opens, without echoing it.
func TestSubscriptionSSENotARequest(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	for _, body := range []string{`{"query": 1}`, `not json <secret>`, `{}`} {
		req, _ := http.NewRequest(http.MethodPost, s.url+"/query", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "BAD_USER_INPUT") || strings.Contains(string(b), "secret") {
			t.Errorf("%s: %d %s", body, resp.StatusCode, b)
		}
	}
}

// TestSubscriptionSSEServerEnds: the server ends a stream whose token
// expired (an UNAUTHENTICATED error, then complete), and one whose client
// does not read its events (counted as a slow consumer; the server holds
// no more for it), and the subscriptions are no longer active.
func TestSubscriptionSSEServerEnds(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, append(p.args(), "--auth-leeway", "0s", "--subscription-buffer", "4")...)
	short := p.token(p.rsaKey, claims{sub: "bob", exp: time.Now().Add(2 * time.Second)})
	c := openSSE(t, s, sseWatch, map[string]any{"id": "x"}, http.Header{"Authorization": {"Bearer " + short}})
	waitSubscribed(t, s, 1)
	if errs := c.errorsOf(); errs[0].Code() != "UNAUTHENTICATED" {
		t.Errorf("token expired: %+v", errs)
	}
	waitSubscribed(t, s, 0)

	aliceToken := p.user("alice")
	alice := http.Header{"Authorization": {"Bearer " + aliceToken}}
	s.as(t, aliceToken, `mutation { createNode(id: "x") { id } }`, nil).ok(t, nil)
	slow := openSSE(t, s, sseWatch, map[string]any{"id": "x"}, alice)
	waitSubscribed(t, s, 1)
	big := strings.Repeat("x", 60<<10)
	counted := false
	for i := 0; i < 2000 && !counted; i++ {
		s.as(t, aliceToken, `mutation($v: String!) { updateNodeProperties(id: "x", set: {v: $v}) { id } }`, map[string]any{"v": big}).ok(t, nil)
		if i%20 == 19 {
			counted = s.metrics(t)["hbgraph_subscriptions_slow_consumers_total"] == 1
		}
	}
	if !counted {
		t.Fatal("the slow consumer was never counted")
	}
	waitSubscribed(t, s, 0)
	// The server ended the stream: what the client reads now ends.
	read := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, slow.resp.Body)
		read <- err
	}()
	select {
	case <-read:
	case <-time.After(20 * time.Second):
		t.Fatal("the slow consumer's stream is still open")
	}
}

// TestSubscriptionSSENotALatency: an event stream, which lasts, is not
// counted in the request latency histogram (its hours would swamp it).
func TestSubscriptionSSENotALatency(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	s.mustDo(t, `{ __typename }`, nil, nil)
	m := s.metrics(t)
	requests, latencies := m[`hbgraph_requests_total{status="200"}`], m["hbgraph_request_duration_seconds_count"]
	c := openSSE(t, s, sseWatch, map[string]any{"id": "x"}, nil)
	waitSubscribed(t, s, 1)
	time.Sleep(300 * time.Millisecond)
	c.close()
	// The stream's request is over once it is counted.
	s.waitMetric(t, `hbgraph_requests_total{status="200"}`, requests+1)
	if got := s.metrics(t)["hbgraph_request_duration_seconds_count"]; got != latencies {
		t.Errorf("request latencies counted %v, want %v (not the stream's)", got, latencies)
	}
}
