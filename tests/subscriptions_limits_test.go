package tests

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestSubscriptionTokens: a socket is authenticated like a request, by
// connection_init's Authorization or the upgrade's header: an invalid or
// missing (with --auth-read=required) token closes it with 4401 before
// any operation runs, and an accepted token's expiry closes it then.
func TestSubscriptionTokens(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, append(p.args(), "--auth-read", "required", "--auth-leeway", "0s")...)

	for name, payload := range map[string]map[string]any{
		"missing":   nil,
		"malformed": {"Authorization": "Token abc"},
		"forged":    {"Authorization": "Bearer " + p.user("alice") + "x"},
		"expired":   {"Authorization": "Bearer " + p.token(p.rsaKey, claims{sub: "alice", exp: time.Now().Add(-time.Hour)})},
	} {
		c := openWS(t, s, payload)
		if code := c.closeStatus(10 * time.Second); code != 4401 {
			t.Errorf("%s token: closed with %d, want 4401", name, code)
		}
	}

	// Valid in the payload, or in the upgrade's header.
	alice := p.user("alice")
	c := connectWS(t, s, map[string]any{"Authorization": "Bearer " + alice})
	id := c.subscribe(`subscription { nodeChanged(id: "x") { kind } }`, nil)
	waitSubscribed(t, s, 1)
	conn, _, err := dialWS(t, s, http.Header{"Authorization": {"Bearer " + alice}})
	if err != nil {
		t.Fatal(err)
	}
	hc := &wsClient{t: t, conn: conn}
	t.Cleanup(func() { _ = conn.CloseNow() })
	hc.send(map[string]any{"type": "connection_init"})
	if m := hc.read(5 * time.Second); m.Type != "connection_ack" {
		t.Fatalf("token in the upgrade's header: %+v", m)
	}
	_ = id

	// A token that expires closes its socket with 4401.
	short := p.token(p.rsaKey, claims{sub: "bob", exp: time.Now().Add(2 * time.Second)})
	sc := connectWS(t, s, map[string]any{"Authorization": "Bearer " + short})
	sc.subscribe(`subscription { nodeChanged(id: "x") { kind } }`, nil)
	if code := sc.closeStatus(15 * time.Second); code != 4401 {
		t.Errorf("expired during the connection: closed with %d, want 4401", code)
	}
}

// TestSubscriptionOrigin: a browser's socket is accepted from the
// server's own pages and --cors-origins, refused (403) from elsewhere.
func TestSubscriptionOrigin(t *testing.T) {
	parallelTest(t)
	s := startServer(t, "--cors-origins", "https://app.example.com")
	for origin, ok := range map[string]bool{
		"":                                true, // not a browser
		"https://app.example.com":         true,
		strings.TrimSuffix(s.url, "/"):    true, // GraphiQL, served here
		"https://evil.example.com":        false,
		"https://app.example.com.evil.io": false,
	} {
		h := http.Header{}
		if origin != "" {
			h.Set("Origin", origin)
		}
		conn, resp, err := dialWS(t, s, h)
		if ok != (err == nil) {
			t.Errorf("origin %q: err %v, want accepted %v", origin, err, ok)
		}
		if !ok && (resp == nil || resp.StatusCode != http.StatusForbidden) {
			t.Errorf("origin %q: refused with %v, want 403", origin, resp)
		}
		if conn != nil {
			_ = conn.CloseNow()
		}
	}
}

// TestSubscriptionLimits: the document bounds and trusted documents apply
// to subscriptions; a connection and a caller hold at most their caps of
// active subscriptions (RATE_LIMITED beyond, the others unharmed).
func TestSubscriptionLimits(t *testing.T) {
	parallelTest(t)
	s := startServer(t, "--max-depth", "3", "--subscriptions-per-connection", "2", "--subscriptions-per-caller", "3")
	c := connectWS(t, s, nil)

	deep := c.subscribe(`subscription { nodeChanged(id: "x") { node { relationships(type: "t", direction: OUTGOING) { edges { node { id } } } } } }`, nil)
	if errs := c.errorsOf(deep); !strings.Contains(errs[0].Message, "deep") || errs[0].Code() != "BAD_USER_INPUT" {
		t.Errorf("too deep: %+v", errs)
	}

	watch := `subscription { nodeChanged(id: "x") { kind } }`
	c.subscribe(watch, nil)
	c.subscribe(watch, nil)
	waitSubscribed(t, s, 2)
	third := c.subscribe(watch, nil)
	if errs := c.errorsOf(third); errs[0].Code() != "RATE_LIMITED" {
		t.Errorf("third on one connection: %+v", errs)
	}
	c2 := connectWS(t, s, nil)
	c2.subscribe(watch, nil)
	waitSubscribed(t, s, 3)
	fourth := c2.subscribe(watch, nil)
	if errs := c2.errorsOf(fourth); errs[0].Code() != "RATE_LIMITED" {
		t.Errorf("fourth of one caller: %+v", errs)
	}
	// The ones admitted still receive.
	s.mustDo(t, `mutation { createNode(id: "x") { id } }`, nil, nil)
	s.mustDo(t, `mutation { updateNodeProperties(id: "x", set: {a: 1}) { id } }`, nil, nil)
	for range 2 {
		if m := c.read(10 * time.Second); m.Type != "next" {
			t.Fatalf("admitted subscription got %+v", m)
		}
	}
}

// TestSubscriptionTrustedDocuments: with --trusted-documents-only a
// subscription runs by its id, and one not in the manifest is refused.
func TestSubscriptionTrustedDocuments(t *testing.T) {
	parallelTest(t)
	manifest, hash := writeTrustedManifest(t, "Watch", "subscription", `subscription Watch { nodeChanged(id: "x") { kind } }`)
	s := startServer(t, "--trusted-documents", manifest, "--trusted-documents-only")
	c := connectWS(t, s, nil)
	other := c.subscribe(`subscription { nodeChanged(id: "y") { kind } }`, nil)
	if errs := c.errorsOf(other); errs[0].Code() != "PERSISTED_QUERY_NOT_IN_LIST" {
		t.Errorf("untrusted document: %+v", errs)
	}
	c.send(map[string]any{"id": "byid", "type": "subscribe", "payload": map[string]any{"operationName": "Watch",
		"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}}})
	waitSubscribed(t, s, 1)
}

// TestSubscriptionSlowConsumer: a client that does not read its events
// is disconnected (4008) once its subscription's buffer is full, and
// counted; the server's memory does not grow with its backlog.
func TestSubscriptionSlowConsumer(t *testing.T) {
	parallelTest(t)
	s := startServer(t, "--subscription-buffer", "4")
	s.mustDo(t, `mutation { createNode(id: "x") { id } }`, nil, nil)
	c := connectWS(t, s, nil)
	c.subscribe(`subscription { nodeChanged(id: "x") { node { properties } } }`, nil)
	waitSubscribed(t, s, 1)
	big := strings.Repeat("x", 60<<10)
	slow := false
	for i := 0; i < 2000 && !slow; i++ {
		s.mustDo(t, `mutation($v: String!) { updateNodeProperties(id: "x", set: {v: $v}) { id } }`, map[string]any{"v": big}, nil)
		if i%20 == 19 {
			slow = s.metrics(t)["hbgraph_subscriptions_slow_consumers_total"] == 1
		}
	}
	if !slow {
		t.Fatal("the slow consumer was never counted")
	}
	if code := c.closeStatus(20 * time.Second); code != 4008 {
		t.Errorf("slow consumer closed with %d, want 4008", code)
	}
	waitSubscribed(t, s, 0)
}

// TestSubscriptionShutdown: stopping the server completes every
// subscription, then closes the socket with 1001 (going away).
func TestSubscriptionShutdown(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	c := connectWS(t, s, nil)
	id := c.subscribe(`subscription { nodeChanged(id: "x") { kind } }`, nil)
	waitSubscribed(t, s, 1)
	s.signalStop(t)
	if m := c.read(10 * time.Second); m.Type != "complete" || m.ID != id {
		t.Errorf("at shutdown: %+v, want complete %s", m, id)
	}
	if code := c.closeStatus(10 * time.Second); code != websocket.StatusGoingAway {
		t.Errorf("closed with %d, want 1001", code)
	}
	if !s.wait(t) {
		t.Error("the server did not stop")
	}
}

// TestSubscriptionOverHTTPRefused: a subscription POSTed over HTTP is
// refused at once with BAD_USER_INPUT (it used to wait for an event until
// the request timed out, then answer INTERNAL).
func TestSubscriptionOverHTTPRefused(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	start := time.Now()
	r := s.do(t, `subscription { nodeChanged(id: "x") { kind } }`, nil)
	if !r.wantError(t, "BAD_USER_INPUT", "") || !strings.Contains(r.Errors[0].Message, "WebSocket") {
		t.Errorf("answered %d %s", r.Status, r.Body)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("answered after %v", d)
	}
}

// TestSubscriptionUpgradeRateLimit: with --rate-limit, a client address
// opens sockets at that rate (each one's token is checked when it opens),
// answered 429 beyond it.
func TestSubscriptionUpgradeRateLimit(t *testing.T) {
	parallelTest(t)
	s := startServer(t, "--rate-limit", "0.2", "--rate-burst", "2")
	for i := range 3 {
		conn, resp, err := dialWS(t, s, nil)
		if i < 2 && err != nil {
			t.Fatalf("socket %d: %v", i, err)
		}
		if i == 2 && (err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests) {
			t.Fatalf("socket %d past the burst: %v %v", i, err, resp)
		}
		if conn != nil {
			_ = conn.CloseNow()
		}
	}
}
