package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wsClient speaks graphql-transport-ws (the npm graphql-ws library's
// protocol) to a server's /query.
type wsClient struct {
	t    testing.TB
	conn *websocket.Conn
	next int
}

type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// dialWS opens a socket to s without sending connection_init.
func dialWS(t testing.TB, s *server, header http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return websocket.Dial(ctx, strings.Replace(s.url, "http://", "ws://", 1)+"/query", &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: header,
	})
}

// connectWS opens a socket and initialises it with payload (nil: none),
// failing the test unless the server acknowledges.
func connectWS(t testing.TB, s *server, payload map[string]any) *wsClient {
	t.Helper()
	c := openWS(t, s, payload)
	if m := c.read(5 * time.Second); m.Type != "connection_ack" {
		t.Fatalf("connection_init answered %+v", m)
	}
	return c
}

// openWS opens a socket and sends connection_init, reading nothing.
func openWS(t testing.TB, s *server, payload map[string]any) *wsClient {
	t.Helper()
	conn, _, err := dialWS(t, s, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	conn.SetReadLimit(8 << 20)
	c := &wsClient{t: t, conn: conn}
	t.Cleanup(func() { _ = conn.CloseNow() })
	init := map[string]any{"type": "connection_init"}
	if payload != nil {
		init["payload"] = payload
	}
	c.send(init)
	return c
}

func (c *wsClient) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// read returns the next message other than ping/pong (answering pings),
// failing the test on a timeout or a closed socket.
func (c *wsClient) read(timeout time.Duration) wsMessage {
	c.t.Helper()
	m, err := c.tryRead(timeout)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return m
}

func (c *wsClient) tryRead(timeout time.Duration) (wsMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		_, b, err := c.conn.Read(ctx)
		if err != nil {
			return wsMessage{}, err
		}
		var m wsMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return wsMessage{}, fmt.Errorf("message %s: %w", b, err)
		}
		switch m.Type {
		case "ping":
			c.send(map[string]any{"type": "pong"})
			continue
		case "pong":
			continue
		}
		return m, nil
	}
}

// closeStatus waits for the server to close the socket and returns its
// code (-1: no close frame).
func (c *wsClient) closeStatus(timeout time.Duration) websocket.StatusCode {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		_, err := c.tryRead(time.Until(deadline))
		if err == nil {
			continue
		}
		if code := websocket.CloseStatus(err); code != -1 {
			return code
		}
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		return -1
	}
	c.t.Fatalf("the server did not close the socket within %v", timeout)
	return -1
}

// subscribe starts an operation and returns its id.
func (c *wsClient) subscribe(query string, vars map[string]any) string {
	c.t.Helper()
	c.next++
	id := fmt.Sprint(c.next)
	c.send(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": query, "variables": vars}})
	return id
}

// event reads the next message of operation id: its payload's data
// decoded into out; it fails the test on an error or a complete.
func (c *wsClient) event(id string, out any) {
	c.t.Helper()
	m := c.read(10 * time.Second)
	if m.ID != id || m.Type != "next" {
		c.t.Fatalf("want next for %s, got %s %s %s", id, m.Type, m.ID, m.Payload)
	}
	var p struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
	}
	if err := json.Unmarshal(m.Payload, &p); err != nil {
		c.t.Fatal(err)
	}
	if len(p.Errors) > 0 {
		c.t.Fatalf("event of %s has errors: %s", id, m.Payload)
	}
	if out != nil {
		if err := json.Unmarshal(p.Data, out); err != nil {
			c.t.Fatal(err)
		}
	}
}

// errorsOf reads the next message, which must be an error (or a next
// with errors) of operation id, and returns its errors.
func (c *wsClient) errorsOf(id string) []gqlError {
	c.t.Helper()
	m := c.read(10 * time.Second)
	if m.ID != id {
		c.t.Fatalf("want a message for %s, got %s %s %s", id, m.Type, m.ID, m.Payload)
	}
	var errs []gqlError
	switch m.Type {
	case "error":
		if err := json.Unmarshal(m.Payload, &errs); err != nil {
			c.t.Fatal(err)
		}
	case "next":
		var p struct {
			Errors []gqlError `json:"errors"`
		}
		if err := json.Unmarshal(m.Payload, &p); err != nil {
			c.t.Fatal(err)
		}
		errs = p.Errors
	default:
		c.t.Fatalf("want an error for %s, got %s %s", id, m.Type, m.Payload)
	}
	if len(errs) == 0 {
		c.t.Fatalf("no errors in %s", m.Payload)
	}
	// The operation is over: a next with errors is followed by complete;
	// an error message ends it by itself (graphql-transport-ws).
	if m.Type == "next" {
		if m := c.read(5 * time.Second); m.Type != "complete" || m.ID != id {
			c.t.Fatalf("after the errors of %s: %+v", id, m)
		}
	}
	return errs
}

// waitSubscribed polls the server's metrics until n subscriptions are
// active: the subscribe message is answered only by events, so a
// mutation sent before the server registered the subscription would be
// missed.
func waitSubscribed(t testing.TB, s *server, n int) {
	t.Helper()
	s.waitMetric(t, "hbgraph_subscriptions_active", float64(n))
}

const articlePostedSub = `subscription($a: ID!) { articlePosted(authorId: $a) { cursor node { id title author { id } } } }`

type articlePostedData struct {
	ArticlePosted struct {
		Cursor string
		Node   struct {
			ID, Title string
			Author    struct{ ID string }
		}
	}
}

// TestSubscriptionArticlePosted: a subscriber receives an article posted
// after it subscribed, with its cursor in Node.articles; one that
// reconnects pages with after: the last cursor it saw and misses nothing.
func TestSubscriptionArticlePosted(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	s.mustDo(t, `mutation { createNode(id: "ann") { id } }`, nil, nil)
	c := connectWS(t, s, nil)
	id := c.subscribe(articlePostedSub, map[string]any{"a": "ann"})
	waitSubscribed(t, s, 1)
	var posted struct{ PostArticle struct{ ID string } }
	s.mustDo(t, `mutation { postArticle(authorId: "ann", title: "one", body: "b", category: "c") { id } }`, nil, &posted)
	var ev articlePostedData
	c.event(id, &ev)
	if ev.ArticlePosted.Node.ID != posted.PostArticle.ID || ev.ArticlePosted.Node.Title != "one" || ev.ArticlePosted.Node.Author.ID != "ann" {
		t.Fatalf("event %+v, posted %s", ev, posted.PostArticle.ID)
	}
	// The cursor is the one the connection gives the article.
	var page struct {
		Node struct {
			Articles struct {
				Edges []struct {
					Cursor string
					Node   struct{ ID, Title string }
				}
			}
		}
	}
	s.mustDo(t, `{ node(id: "ann") { articles(first: 5) { edges { cursor node { id title } } } } }`, nil, &page)
	if got := page.Node.Articles.Edges; len(got) != 1 || got[0].Cursor != ev.ArticlePosted.Cursor {
		t.Fatalf("page %+v, event cursor %s", got, ev.ArticlePosted.Cursor)
	}

	// Catching up: the client goes away, two articles are posted, and a
	// page before: the last cursor it saw returns exactly those (newest
	// first).
	_ = c.conn.Close(websocket.StatusNormalClosure, "")
	s.mustDo(t, `mutation { a: postArticle(authorId: "ann", title: "two", body: "b", category: "c") { id } }`, nil, nil)
	s.mustDo(t, `mutation { b: postArticle(authorId: "ann", title: "three", body: "b", category: "c") { id } }`, nil, nil)
	s.mustDo(t, `query($c: String!) { node(id: "ann") { articles(last: 20, before: $c) { edges { cursor node { id title } } } } }`,
		map[string]any{"c": ev.ArticlePosted.Cursor}, &page)
	var titles []string
	for _, e := range page.Node.Articles.Edges {
		titles = append(titles, e.Node.Title)
	}
	if strings.Join(titles, ",") != "three,two" {
		t.Fatalf("caught up %v, want three,two", titles)
	}
}

// TestSubscriptionRelationshipAndNodeChanged: both ends of a relationship
// see it created and deleted, each with the cursor it has in their
// Node.relationships; a node's watchers see it updated and deleted; a
// failed write publishes nothing.
func TestSubscriptionRelationshipAndNodeChanged(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	s.mustDo(t, `mutation { a: createNode(id: "a") { id } b: createNode(id: "b") { id } }`, nil, nil)
	c := connectWS(t, s, nil)
	relSub := `subscription($n: ID!, $d: Direction!) { relationshipChanged(nodeId: $n, type: "follows", direction: $d) { kind cursor relationship { id startNode { id } endNode { id } properties } } }`
	out := c.subscribe(relSub, map[string]any{"n": "a", "d": "OUTGOING"})
	in := c.subscribe(relSub, map[string]any{"n": "b", "d": "INCOMING"})
	nodeSub := c.subscribe(`subscription { nodeChanged(id: "a") { kind id node { id properties } } }`, nil)
	waitSubscribed(t, s, 3)

	// A write that fails (no such end node) publishes nothing.
	if r := s.do(t, `mutation { createRelationship(startNodeId: "a", type: "follows", endNodeId: "nobody") { id } }`, nil); len(r.Errors) == 0 {
		t.Fatalf("relationship to a missing node: %s", r.Body)
	}
	s.mustDo(t, `mutation { createRelationship(startNodeId: "a", type: "follows", endNodeId: "b", properties: {since: 2020}) { id } }`, nil, nil)
	type relEvent struct {
		RelationshipChanged struct {
			Kind, Cursor string
			Relationship struct {
				ID         string
				StartNode  struct{ ID string }
				EndNode    struct{ ID string }
				Properties map[string]any
			}
		}
	}
	// Events arrive in order per subscription; the two subscriptions'
	// messages interleave.
	got := map[string]relEvent{}
	for range 2 {
		m := c.read(10 * time.Second)
		var p struct{ Data relEvent }
		if m.Type != "next" || json.Unmarshal(m.Payload, &p) != nil {
			t.Fatalf("message %+v", m)
		}
		got[m.ID] = p.Data
	}
	var pages struct {
		A struct {
			Relationships struct{ Edges []struct{ Cursor string } }
		}
		B struct {
			Relationships struct{ Edges []struct{ Cursor string } }
		}
	}
	s.mustDo(t, `{ a: node(id: "a") { relationships(type: "follows", direction: OUTGOING) { edges { cursor } } }
		b: node(id: "b") { relationships(type: "follows", direction: INCOMING) { edges { cursor } } } }`, nil, &pages)
	for id, want := range map[string]string{out: pages.A.Relationships.Edges[0].Cursor, in: pages.B.Relationships.Edges[0].Cursor} {
		e := got[id].RelationshipChanged
		if e.Kind != "CREATED" || e.Cursor != want || e.Relationship.StartNode.ID != "a" || e.Relationship.EndNode.ID != "b" || e.Relationship.Properties["since"] != float64(2020) {
			t.Errorf("subscription %s: %+v, want cursor %s", id, e, want)
		}
	}

	s.mustDo(t, `mutation { updateNodeProperties(id: "a", set: {name: "Ann"}) { id } }`, nil, nil)
	var ne struct {
		NodeChanged struct {
			Kind, ID string
			Node     *struct {
				ID         string
				Properties map[string]any
			}
		}
	}
	c.event(nodeSub, &ne)
	if ne.NodeChanged.Kind != "UPDATED" || ne.NodeChanged.Node == nil || ne.NodeChanged.Node.Properties["name"] != "Ann" {
		t.Fatalf("node event %+v", ne)
	}

	s.mustDo(t, `mutation { deleteRelationship(startNodeId: "a", type: "follows", endNodeId: "b") }`, nil, nil)
	for range 2 {
		m := c.read(10 * time.Second)
		var p struct{ Data relEvent }
		if m.Type != "next" || json.Unmarshal(m.Payload, &p) != nil || p.Data.RelationshipChanged.Kind != "DELETED" ||
			p.Data.RelationshipChanged.Cursor != got[m.ID].RelationshipChanged.Cursor {
			t.Fatalf("deletion message %+v", m)
		}
	}
	s.mustDo(t, `mutation { deleteNode(id: "a", detach: true) }`, nil, nil)
	c.event(nodeSub, &ne)
	if ne.NodeChanged.Kind != "DELETED" || ne.NodeChanged.ID != "a" || ne.NodeChanged.Node != nil {
		t.Fatalf("node deletion event %+v", ne)
	}
}
