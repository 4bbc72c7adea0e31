package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// readAny returns the next message, a pong included (a ping is answered
// and skipped).
func (c *wsClient) readAny(timeout time.Duration) wsMessage {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		_, b, err := c.conn.Read(ctx)
		if err != nil {
			c.t.Fatalf("read: %v", err)
		}
		var m wsMessage
		if err := json.Unmarshal(b, &m); err != nil {
			c.t.Fatalf("message %s: %v", b, err)
		}
		if m.Type == "ping" {
			c.send(map[string]any{"type": "pong"})
			continue
		}
		return m
	}
}

// nothingBefore sends a ping and requires its pong to be the next message:
// the server sent nothing else before it (its writes are in order).
func (c *wsClient) nothingBefore(what string) {
	c.t.Helper()
	c.send(map[string]any{"type": "ping", "payload": map[string]any{"n": what}})
	if m := c.readAny(5 * time.Second); m.Type != "pong" {
		c.t.Errorf("%s: the server sent %s %s %s, want nothing", what, m.Type, m.ID, m.Payload)
	}
}

// TestSubscriptionTransportWSProtocol: the graphql-transport-ws rules
// hbgraph broke (review finding 4): a ping before connection_init gets a
// pong; a subscribe before it closes the socket with 4401; no
// connection_init within 10 s closes it with 4408; nothing follows an
// error message; the client's complete is not echoed. An error a client
// causes carries a code (finding 11).
func TestSubscriptionTransportWSProtocol(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	dial := func(t *testing.T) *wsClient {
		conn, _, err := dialWS(t, s, nil)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		t.Cleanup(func() { _ = conn.CloseNow() })
		return &wsClient{t: t, conn: conn}
	}

	t.Run("ping before connection_init", func(t *testing.T) {
		c := dial(t)
		c.send(map[string]any{"type": "ping"})
		if m := c.readAny(5 * time.Second); m.Type != "pong" {
			t.Fatalf("a ping before connection_init answered %+v", m)
		}
		c.send(map[string]any{"type": "connection_init"})
		if m := c.readAny(5 * time.Second); m.Type != "connection_ack" {
			t.Fatalf("connection_init after a ping answered %+v", m)
		}
	})

	t.Run("subscribe before connection_ack", func(t *testing.T) {
		c := dial(t)
		c.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": `subscription { nodeChanged(id: "x") { kind } }`}})
		if code := c.closeStatus(5 * time.Second); code != 4401 {
			t.Errorf("closed with %d, want 4401", code)
		}
	})

	t.Run("no complete after an error", func(t *testing.T) {
		c := connectWS(t, s, nil)
		c.send(map[string]any{"id": "bad", "type": "subscribe", "payload": "not a request"})
		m := c.readAny(5 * time.Second)
		var errs []gqlError
		if m.Type != "error" || m.ID != "bad" || json.Unmarshal(m.Payload, &errs) != nil || len(errs) != 1 {
			t.Fatalf("a payload that is no request answered %s %s %s, want an error", m.Type, m.ID, m.Payload)
		}
		if errs[0].Code() != "BAD_USER_INPUT" {
			t.Errorf("a payload that is no request: %s, want BAD_USER_INPUT", m.Payload)
		}
		c.nothingBefore("after an error message")
	})

	t.Run("the client's complete is not echoed", func(t *testing.T) {
		c := connectWS(t, s, nil)
		id := c.subscribe(`subscription { nodeChanged(id: "echo") { kind } }`, nil)
		waitSubscribed(t, s, 1)
		c.send(map[string]any{"id": id, "type": "complete"})
		c.nothingBefore("after the client's complete")
		waitSubscribed(t, s, 0)
		// Its id is free again.
		again := c.subscribe(`subscription { nodeChanged(id: "echo") { kind } }`, nil)
		if again == id {
			t.Fatal("the helper reused the id")
		}
		c.send(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": `subscription { nodeChanged(id: "echo") { kind } }`}})
		waitSubscribed(t, s, 2)
	})

	t.Run("connection_init timeout", func(t *testing.T) {
		c := dial(t)
		if code := c.closeStatus(15 * time.Second); code != 4408 {
			t.Errorf("closed with %d, want 4408", code)
		}
	})
}

// TestSubscriptionSocketRefusesQueries: a query or a mutation sent over a
// socket is refused with BAD_USER_INPUT and does not run (review finding
// 6: an upgrade skips the request timeout, --max-in-flight and
// --rate-limit, which bound them over HTTP), over either subprotocol; a
// subscription beside it still runs.
func TestSubscriptionSocketRefusesQueries(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	c := connectWS(t, s, nil)
	for _, q := range []string{`{ node(id: "x") { id } }`, `mutation { createNode(id: "overws") { id } }`} {
		id := c.subscribe(q, nil)
		errs := c.errorsOf(id)
		if len(errs) != 1 || errs[0].Code() != "BAD_USER_INPUT" || !strings.Contains(errs[0].Message, "only subscriptions") {
			t.Errorf("%s over the socket: %+v", q, errs)
		}
	}

	// The older subprotocol (subscriptions-transport-ws).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, strings.Replace(s.url, "http://", "ws://", 1)+"/query", &websocket.DialOptions{
		Subprotocols: []string{"graphql-ws"}, HTTPHeader: http.Header{},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	old := &wsClient{t: t, conn: conn}
	old.send(map[string]any{"type": "connection_init"})
	if m := old.read(5 * time.Second); m.Type != "connection_ack" {
		t.Fatalf("graphql-ws init: %+v", m)
	}
	old.send(map[string]any{"type": "start", "id": "1", "payload": map[string]any{"query": `mutation { createNode(id: "overold") { id } }`}})
	for {
		m := old.read(10 * time.Second)
		if m.Type == "ka" {
			continue
		}
		if !strings.Contains(string(m.Payload), "BAD_USER_INPUT") {
			t.Errorf("a mutation over graphql-ws answered %s %s", m.Type, m.Payload)
		}
		break
	}

	var got struct{ A, B *struct{ ID string } }
	s.mustDo(t, `{ a: node(id: "overws") { id } b: node(id: "overold") { id } }`, nil, &got)
	if got.A != nil || got.B != nil {
		t.Errorf("a mutation sent over a socket ran: %+v", got)
	}

	watch := c.subscribe(`subscription { nodeChanged(id: "w") { kind } }`, nil)
	waitSubscribed(t, s, 1)
	s.mustDo(t, `mutation { createNode(id: "w") { id } }`, nil, nil)
	s.mustDo(t, `mutation { updateNodeProperties(id: "w", set: {a: 1}) { id } }`, nil, nil)
	c.event(watch, nil)
}

// TestSubscriptionSSEBodyNotRead: an event stream's body that cannot be
// read (a broken chunk) is 400, not 413 "over --max-body-bytes"
// (review finding 11); a body over the limit is still 413.
func TestSubscriptionSSEBodyNotRead(t *testing.T) {
	parallelTest(t)
	s := startServer(t, "--max-body-bytes", "1024")
	send := func(body string) int {
		t.Helper()
		conn, err := net.DialTimeout("tcp", strings.TrimPrefix(s.url, "http://"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(conn, "POST /query HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%s", body)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("no response: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := send("zz\r\n{}\r\n0\r\n\r\n"); code != http.StatusBadRequest {
		t.Errorf("a broken chunk answered %d, want 400", code)
	}
	big := strings.Repeat(" ", 2048)
	if code := send(fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(big), big)); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over --max-body-bytes answered %d, want 413", code)
	}
}
