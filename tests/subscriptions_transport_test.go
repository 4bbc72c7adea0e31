package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestSubscriptionIdleCostsNoGoroutine: an idle subscription holds no
// goroutine of the server's (gqlgen's transport ran one per subscription,
// blocked on its channel, 8 KB of stack and its response chain each);
// events still reach every subscription, in order, and a subscription
// stopped by the client, or ended by the server, completes.
func TestSubscriptionIdleCostsNoGoroutine(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	s.mustDo(t, `mutation { a: createNode(id: "a") { id } b: createNode(id: "b") { id } }`, nil, nil)
	c := connectWS(t, s, nil)
	before := s.metrics(t)["go_goroutines"]
	const n = 60
	ids := make([]string, n)
	for i := range ids {
		node := "a"
		if i%2 == 1 {
			node = "b"
		}
		ids[i] = c.subscribe(`subscription($id: ID!) { nodeChanged(id: $id) { kind id node { properties } } }`, map[string]any{"id": node})
	}
	waitSubscribed(t, s, n)
	after := s.metrics(t)["go_goroutines"]
	if after-before > 5 {
		t.Errorf("%d idle subscriptions took %.0f goroutines (from %.0f to %.0f)", n, after-before, before, after)
	}

	// Three updates of a: each of its 30 subscriptions gets all three, in
	// order; b's get nothing.
	for v := 1; v <= 3; v++ {
		s.mustDo(t, fmt.Sprintf(`mutation { updateNodeProperties(id: "a", set: {v: %d}) { id } }`, v), nil, nil)
	}
	seen := map[string]int{}
	for range 3 * n / 2 {
		m := c.read(10 * time.Second)
		var p struct {
			Data struct {
				NodeChanged struct {
					Kind, ID string
					Node     struct{ Properties map[string]any }
				}
			}
		}
		if m.Type != "next" || json.Unmarshal(m.Payload, &p) != nil || p.Data.NodeChanged.ID != "a" {
			t.Fatalf("message %s %s %s", m.Type, m.ID, m.Payload)
		}
		seen[m.ID]++
		if got := p.Data.NodeChanged.Node.Properties["v"]; got != float64(seen[m.ID]) {
			t.Fatalf("subscription %s: event %d has v=%v", m.ID, seen[m.ID], got)
		}
	}
	if len(seen) != n/2 {
		t.Fatalf("%d subscriptions of a received, want %d: %v", len(seen), n/2, seen)
	}

	// The client stops one: it is no longer active (and its complete is
	// not echoed: see TestSubscriptionTransportWSProtocol).
	c.send(map[string]any{"id": ids[0], "type": "complete"})
	waitSubscribed(t, s, n-1)
	// The server ends one: a's deletion, then every subscription of a
	// stays (a node's id may come back); the connection closing ends all.
	s.mustDo(t, `mutation { deleteNode(id: "a") }`, nil, nil)
	for range n/2 - 1 {
		if m := c.read(10 * time.Second); m.Type != "next" {
			t.Fatalf("deletion: %+v", m)
		}
	}
	_ = c.conn.Close(websocket.StatusNormalClosure, "")
	waitSubscribed(t, s, 0)
	s.waitMetric(t, "hbgraph_subscription_connections", 0)
}

// TestSubscriptionProtocolViolations: graphql-transport-ws's close codes
// for a client that breaks the protocol (4400 a message that is not one,
// 4409 an id already subscribed, 4429 a second connection_init), and the
// older graphql-ws subprotocol still served beside it.
func TestSubscriptionProtocolViolations(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	watch := `subscription { nodeChanged(id: "x") { kind } }`
	for _, tc := range []struct {
		name string
		send func(c *wsClient)
		code websocket.StatusCode
	}{
		{"not a message", func(c *wsClient) { c.send(map[string]any{"id": "1"}) }, 4400},
		{"unknown type", func(c *wsClient) { c.send(map[string]any{"type": "start", "id": "1"}) }, 4400},
		{"subscribe without id", func(c *wsClient) {
			c.send(map[string]any{"type": "subscribe", "payload": map[string]any{"query": watch}})
		}, 4400},
		{"duplicate id", func(c *wsClient) {
			c.subscribe(watch, nil)
			waitSubscribed(t, s, 1)
			c.next--
			c.subscribe(watch, nil)
		}, 4409},
		{"second connection_init", func(c *wsClient) { c.send(map[string]any{"type": "connection_init"}) }, 4429},
	} {
		c := connectWS(t, s, nil)
		tc.send(c)
		if code := c.closeStatus(10 * time.Second); code != tc.code {
			t.Errorf("%s: closed with %d, want %d", tc.name, code, tc.code)
		}
		waitSubscribed(t, s, 0)
	}

	// The older subprotocol (subscriptions-transport-ws): start, data.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, strings.Replace(s.url, "http://", "ws://", 1)+"/query", &websocket.DialOptions{
		Subprotocols: []string{"graphql-ws"}, HTTPHeader: http.Header{},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	if conn.Subprotocol() != "graphql-ws" {
		t.Fatalf("subprotocol %q", conn.Subprotocol())
	}
	old := &wsClient{t: t, conn: conn}
	old.send(map[string]any{"type": "connection_init"})
	if m := old.read(5 * time.Second); m.Type != "connection_ack" {
		t.Fatalf("graphql-ws init: %+v", m)
	}
	old.send(map[string]any{"type": "start", "id": "1", "payload": map[string]any{"query": watch}})
	waitSubscribed(t, s, 1)
	s.mustDo(t, `mutation { createNode(id: "x") { id } }`, nil, nil)
	s.mustDo(t, `mutation { updateNodeProperties(id: "x", set: {a: 1}) { id } }`, nil, nil)
	for {
		m := old.read(10 * time.Second)
		if m.Type == "ka" {
			continue
		}
		if m.Type != "data" || m.ID != "1" || !strings.Contains(string(m.Payload), "UPDATED") {
			t.Fatalf("graphql-ws event: %+v", m)
		}
		break
	}
}
