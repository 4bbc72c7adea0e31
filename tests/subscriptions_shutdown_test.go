package tests

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestSubscriptionShutdownCompletesAll: on SIGTERM every subscription
// gets all its events and its complete before the socket is closed with
// 1001, even when the client reads them late (review finding 1: the
// server waited for the bus's count, which drops before the completes are
// written, then raced them with a fixed 50 ms sleep).
func TestSubscriptionShutdownCompletesAll(t *testing.T) {
	parallelTest(t)
	const subs, updates = 16, 32
	s := startServer(t)
	s.mustDo(t, `mutation { createNode(id: "x") { id } }`, nil, nil)
	c := connectWS(t, s, nil)
	for range subs {
		c.subscribe(`subscription { nodeChanged(id: "x") { node { properties } } }`, nil)
	}
	waitSubscribed(t, s, subs)
	// Events the client does not read yet: the server's writes back up in
	// the socket's buffers, its writer blocked.
	big := strings.Repeat("x", 60<<10)
	for range updates {
		s.mustDo(t, `mutation($v: String!) { updateNodeProperties(id: "x", set: {v: $v}) { id } }`, map[string]any{"v": big}, nil)
	}
	s.signalStop(t)
	time.Sleep(500 * time.Millisecond)

	nexts, completes := 0, map[string]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for len(completes) < subs {
		_, b, err := c.conn.Read(ctx)
		if err != nil {
			t.Fatalf("%d events and %d of %d completes before %v", nexts, len(completes), subs, err)
		}
		var m wsMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		switch m.Type {
		case "next":
			nexts++
		case "complete":
			completes[m.ID] = true
		}
	}
	if nexts != subs*updates {
		t.Errorf("%d events before the completes, want %d", nexts, subs*updates)
	}
	if code := c.closeStatus(10 * time.Second); code != websocket.StatusGoingAway {
		t.Errorf("closed with %d, want 1001", code)
	}
	if !s.wait(t) {
		t.Error("the server did not stop")
	}
}
