package tests

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// getText GETs path and returns the status and body.
func (s *server) getText(t testing.TB, path string) (int, string) {
	t.Helper()
	resp, err := httpClient.Get(s.url + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, string(b)
}

// metrics reads /metrics into sample name (with labels, as exposed) -> value.
func (s *server) metrics(t testing.TB) map[string]float64 {
	t.Helper()
	resp, err := httpClient.Get(s.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics on the admin listener: status %d, %v", resp.StatusCode, err)
	}
	text := string(b)
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			t.Fatalf("metrics line %q does not parse", line)
		}
		out[line[:i]] = v
	}
	return out
}

// TestServer checks the HTTP side: transports, persisted queries,
// introspection, limits, health, metrics, request ids and shutdown.
func TestServer(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	s.createNode(t, "a", map[string]any{"name": "A"})

	t.Run("GET", func(t *testing.T) {
		r := s.get(t, gqlRequest{Query: `{ node(id: "a") { id name: property(name: "name") } }`})
		var got struct{ Node struct{ ID, Name string } }
		r.ok(t, &got)
		if got.Node.ID != "a" || got.Node.Name != "A" {
			t.Errorf("GET node(a) = %+v", got.Node)
		}
		r = s.get(t, gqlRequest{Query: `query($id: ID!) { node(id: $id) { id } }`, Variables: map[string]any{"id": "a"}})
		r.ok(t, &got)
		if got.Node.ID != "a" {
			t.Errorf("GET with variables: node = %+v", got.Node)
		}
		// GET is for queries only: a mutation must not run.
		r = s.get(t, gqlRequest{Query: `mutation { createNode(id: "by-get") { id } }`})
		if len(r.Errors) == 0 || !isNull(r.Data) {
			t.Errorf("GET mutation: status %d %s; want it refused", r.Status, r.Body)
		}
		var check struct{ Node *idOut }
		s.mustDo(t, `{ node(id: "by-get") { id } }`, nil, &check)
		if check.Node != nil {
			t.Errorf("a mutation sent with GET created node by-get")
		}
	})

	t.Run("automatic persisted queries", func(t *testing.T) {
		query := `query Persisted($id: ID!) { node(id: $id) { id name: property(name: "name") } }`
		sum := sha256.Sum256([]byte(query))
		hash := hex.EncodeToString(sum[:])
		apq := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}
		v := map[string]any{"id": "a"}

		// The hash alone, before the server has seen the query.
		s.post(t, gqlRequest{Variables: v, Extensions: apq}).wantError(t, "PERSISTED_QUERY_NOT_FOUND", "")
		var got struct{ Node struct{ ID, Name string } }
		for _, step := range []struct {
			name string
			send func() *gqlResponse
		}{
			{"query and hash", func() *gqlResponse { return s.post(t, gqlRequest{Query: query, Variables: v, Extensions: apq}) }},
			{"hash alone", func() *gqlResponse { return s.post(t, gqlRequest{Variables: v, Extensions: apq}) }},
			{"hash alone with GET", func() *gqlResponse { return s.get(t, gqlRequest{Variables: v, Extensions: apq}) }},
		} {
			got.Node.ID, got.Node.Name = "", ""
			step.send().ok(t, &got)
			if got.Node.ID != "a" || got.Node.Name != "A" {
				t.Errorf("%s: node = %+v, want a", step.name, got.Node)
			}
		}
		// A hash that is not the query's is the client's mistake.
		other := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": strings.Repeat("0", 64)}}
		r := s.post(t, gqlRequest{Query: query, Variables: v, Extensions: other})
		if len(r.Errors) != 1 || !isNull(r.Data) || r.Errors[0].Code() == "INTERNAL" {
			t.Errorf("query with a hash that is not its own: status %d %s; want it refused with a client error code, not INTERNAL", r.Status, r.Body)
		}
	})

	t.Run("introspection on by default", func(t *testing.T) {
		var got struct {
			Schema struct {
				QueryType struct{ Name string }
				Types     []struct{ Name string }
			} `json:"__schema"`
			Type struct {
				Fields []struct{ Name string }
			} `json:"__type"`
		}
		s.mustDo(t, `{ __schema { queryType { name } types { name } } __type(name: "Node") { fields { name } } }`, nil, &got)
		types := map[string]bool{}
		for _, ty := range got.Schema.Types {
			types[ty.Name] = true
		}
		fields := map[string]bool{}
		for _, f := range got.Type.Fields {
			fields[f.Name] = true
		}
		if got.Schema.QueryType.Name != "Query" || !types["Node"] || !types["Relationship"] || !types["Article"] || !fields["relationships"] || !fields["wordCounts"] {
			t.Errorf("introspection: query type %q, types %v, Node fields %v", got.Schema.QueryType.Name, types, fields)
		}
	})

	t.Run("introspection off", func(t *testing.T) {
		closed := startServer(t, "--introspection=false")
		for _, c := range []struct{ query, field string }{
			{`{ __schema { queryType { name } } }`, "__schema"},
			{`{ __type(name: "Node") { name } }`, "__type"},
		} {
			r := closed.do(t, c.query, nil)
			// Refused either before execution (no data) or at the field
			// (the field null, the error on its path).
			if len(r.Errors) != 1 {
				t.Errorf("%s: status %d %s; want one error", c.query, r.Status, r.Body)
				continue
			}
			e := r.Errors[0]
			if path := e.PathString(); !isNull(r.Data) && (path != c.field || !strings.Contains(compactJSON(t, r.Data), `"`+c.field+`":null`)) {
				t.Errorf("%s: data %s with an error at %q; want no data, or %s null with the error at its path", c.query, r.Data, path, c.field)
			}
			// Refusing introspection is not a bug of ours: it must not be
			// reported as INTERNAL, and the message should say why.
			if e.Code() == "INTERNAL" || e.Code() == "" || !strings.Contains(strings.ToLower(e.Message), "introspection") {
				t.Errorf("%s: refused with %v; want a client error code and a message about introspection", c.query, e)
			}
		}
		var got struct {
			Typename string `json:"__typename"`
			Node     *idOut
		}
		closed.mustDo(t, `{ __typename node(id: "x") { id } }`, nil, &got)
		if got.Typename != "Query" {
			t.Errorf("__typename = %q with introspection off, want Query", got.Typename)
		}
	})

	t.Run("body limit", func(t *testing.T) {
		// Just under 1 MiB: accepted.
		body := strings.Repeat("word ", 200_000) // 1,000,000 bytes
		var got struct{ PostArticle articleOut }
		s.mustDo(t, `mutation($b: String!) { postArticle(authorId: "a", title: "Long", body: $b, category: "long") { `+articleFields+` } }`,
			map[string]any{"b": body}, &got)
		if len(got.PostArticle.Body) != len(body) {
			t.Errorf("a %d-byte body came back with %d bytes", len(body), len(got.PostArticle.Body))
		}
		// Over 1 MiB: refused before anything runs, with status 413 and a
		// GraphQL error of the client's (BAD_USER_INPUT).
		big := mustJSON(t, gqlRequest{
			Query:     `mutation($b: String!) { postArticle(authorId: "a", title: "Too long", body: $b, category: "long") { id } }`,
			Variables: map[string]any{"b": strings.Repeat("x", 1<<20)},
		})
		r := s.postRaw(t, big, nil)
		if r.Status != http.StatusRequestEntityTooLarge || len(r.Errors) != 1 || !isNull(r.Data) || r.Errors[0].Code() != "BAD_USER_INPUT" {
			t.Errorf("a %d-byte body: status %d %.300s; want 413 and one BAD_USER_INPUT error", len(big), r.Status, r.Body)
		}
		if r.Header.Get("X-Request-Id") == "" {
			t.Errorf("the refusal of a too large body has no X-Request-Id")
		}
		var check struct {
			Node struct{ Articles articleConn }
		}
		s.mustDo(t, `{ node(id: "a") { articles(category: "long") { totalCount } } }`, nil, &check)
		if check.Node.Articles.TotalCount != 1 {
			t.Errorf("a has %d long articles, want the 1 accepted", check.Node.Articles.TotalCount)
		}
	})

	t.Run("malformed JSON body", func(t *testing.T) {
		r := s.postRaw(t, []byte(`{ node(id: "a") { id } }`), nil)
		if r.Status != http.StatusBadRequest || len(r.Errors) != 1 || !isNull(r.Data) {
			t.Fatalf("malformed JSON: status %d %s; want 400 and one error", r.Status, r.Body)
		}
		if code := r.Errors[0].Code(); code == "INTERNAL" {
			t.Errorf("malformed JSON: refused with %v; want a client error code, not INTERNAL", r.Errors[0])
		}
	})

	t.Run("transport errors carry a code", func(t *testing.T) {
		// DESIGN "Errors": GraphQL errors carry extensions.code; these are
		// answered by gqlgen's transports before any operation runs.
		badVars, err := http.NewRequest(http.MethodGet, s.url+"/query?query="+url.QueryEscape(`{ __typename }`)+"&variables=%7Bbad", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			send func() *gqlResponse
		}{
			{"GET mutation", func() *gqlResponse { return s.get(t, gqlRequest{Query: `mutation { deleteNode(id: "a") }`}) }},
			{"GET with undecodable variables", func() *gqlResponse { return s.send(t, badVars) }},
		} {
			r := c.send()
			if len(r.Errors) != 1 || !isNull(r.Data) {
				t.Errorf("%s: status %d %s; want one error and no data", c.name, r.Status, r.Body)
				continue
			}
			if r.Errors[0].Code() == "" || r.Errors[0].Code() == "INTERNAL" {
				t.Errorf("%s: status %d, error %v; want a client error code in extensions.code", c.name, r.Status, r.Errors[0])
			}
			if r.Header.Get("X-Request-Id") == "" {
				t.Errorf("%s: no X-Request-Id", c.name)
			}
		}
		var check struct{ Node *idOut }
		s.mustDo(t, `{ node(id: "a") { id } }`, nil, &check)
		if check.Node == nil {
			t.Errorf("a mutation sent with GET deleted node a")
		}
	})

	t.Run("health", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/readyz"} {
			if status, body := s.getText(t, path); status != http.StatusOK || strings.TrimSpace(body) != "ok" {
				t.Errorf("GET %s: %d %q, want 200 ok", path, status, body)
			}
		}
	})

	t.Run("metrics", func(t *testing.T) {
		before := s.metrics(t)
		s.mustDo(t, `{ node(id: "a") { id } }`, nil, nil)
		s.do(t, `mutation { updateNodeProperties(id: "ghost", set: {x: 1}) { id } }`, nil).wantError(t, "NOT_FOUND", "updateNodeProperties")
		s.do(t, `{ node(id: "a") { id }`, nil).wantError(t, "GRAPHQL_PARSE_FAILED", "")
		want := map[string]float64{
			`hbgraph_requests_total{status="200"}`:                   3, // application/json: a parse error too
			`hbgraph_errors_total{code="NOT_FOUND"}`:                 1,
			`hbgraph_errors_total{code="GRAPHQL_PARSE_FAILED"}`:      1,
			`hbgraph_request_duration_seconds_count`:                 3,
			`hbgraph_request_duration_seconds_bucket{le="+Inf"}`:     3,
			`hbgraph_store_calls_count`:                              3,
			`hbgraph_store_calls_bucket{le="+Inf"}`:                  3,
			`hbgraph_errors_total{code="INTERNAL"}`:                  0,
			`hbgraph_errors_total{code="GRAPHQL_VALIDATION_FAILED"}`: 0,
		}
		// The counters are updated after the response is written: poll.
		var after map[string]float64
		deadline := time.Now().Add(5 * time.Second)
		for {
			after = s.metrics(t)
			done := true
			for name, d := range want {
				if after[name]-before[name] < d {
					done = false
				}
			}
			if done || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		for name, d := range want {
			if got := after[name] - before[name]; got != d {
				t.Errorf("%s went up by %v, want %v", name, got, d)
			}
		}
		if after["hbgraph_store_calls_sum"]-before["hbgraph_store_calls_sum"] < 2 {
			t.Errorf("hbgraph_store_calls_sum went up by %v; the query and the update read the store",
				after["hbgraph_store_calls_sum"]-before["hbgraph_store_calls_sum"])
		}
	})

	t.Run("request ids", func(t *testing.T) {
		seen := map[string]bool{}
		for _, c := range []struct {
			name string
			send func() *gqlResponse
		}{
			{"POST", func() *gqlResponse { return s.do(t, `{ node(id: "a") { id } }`, nil) }},
			{"POST with an error", func() *gqlResponse { return s.do(t, `mutation { deleteNode(id: "ghost") }`, nil) }},
			{"GET", func() *gqlResponse { return s.get(t, gqlRequest{Query: `{ node(id: "a") { id } }`}) }},
			{"parse error", func() *gqlResponse { return s.do(t, `{`, nil) }},
			{"malformed JSON", func() *gqlResponse { return s.postRaw(t, []byte(`{`), nil) }},
		} {
			r := c.send()
			id := r.Header.Get("X-Request-Id")
			if id == "" || seen[id] {
				t.Errorf("%s: X-Request-Id %q, want a fresh id", c.name, id)
			}
			seen[id] = true
		}
		mine := "client-chosen-id-1"
		if got := s.postRaw(t, []byte(`{"query": "{ __typename }"}`), http.Header{"X-Request-Id": {mine}}).Header.Get("X-Request-Id"); got != mine {
			t.Errorf("the client's X-Request-Id %q came back as %q", mine, got)
		}
		long := strings.Repeat("i", 65)
		if got := s.postRaw(t, []byte(`{"query": "{ __typename }"}`), http.Header{"X-Request-Id": {long}}).Header.Get("X-Request-Id"); got == "" || got == long {
			t.Errorf("a 65-byte client X-Request-Id came back as %q, want a fresh id", got)
		}
	})

	t.Run("graceful shutdown", func(t *testing.T) {
		dir := t.TempDir()
		s := startServerAt(t, dir)
		addr := strings.TrimPrefix(s.url, "http://")
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		body := `{"query": "mutation { createNode(id: \"in-flight\", properties: {n: 1}) { id properties } }"}`
		// The headers and half the body: the request is in flight.
		if _, err := fmt.Fprintf(conn, "POST /query HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			addr, len(body), body[:len(body)/2]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		s.signalStop(t)

		// While it drains, the server takes no new connections.
		deadline := time.Now().Add(5 * time.Second)
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				break
			}
			c.Close()
			if time.Now().After(deadline) {
				t.Fatalf("still accepting connections 5 s after SIGTERM")
			}
			time.Sleep(10 * time.Millisecond)
		}
		select {
		case <-s.exited:
			t.Fatalf("exited with a request in flight: %v\n%s", s.waitErr, s.out.String())
		default:
		}

		// The rest of the body: the request completes.
		if _, err := io.WriteString(conn, body[len(body)/2:]); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("reading the in-flight response: %v", err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		r, err := decodeResponse(resp, b)
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ CreateNode nodeOut }
		r.ok(t, &got)
		if got.CreateNode.ID != "in-flight" {
			t.Errorf("in-flight createNode = %+v", got.CreateNode)
		}
		if !s.wait(t) {
			return
		}

		// The acknowledged write is on disk.
		again := startServerAt(t, dir)
		var check struct{ Node *nodeOut }
		again.mustDo(t, `{ node(id: "in-flight") { `+nodeFields+` } }`, nil, &check)
		if check.Node == nil || !jsonEqual(t, check.Node.Properties, []byte(`{"n":1}`)) {
			t.Errorf("after a restart node(in-flight) = %+v, want it with {n: 1}", check.Node)
		}
	})
}
