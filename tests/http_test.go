package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The GraphQL-over-HTTP rules of graph/jsonpost, over real HTTP: the
// status code follows the response's media type, request errors carry no
// data, and what is not a GraphQL request is refused with BAD_USER_INPUT,
// without echoing the body, naming Go types, or rewriting text. The
// graphql-http audit (tests/http-audit) checks the specification's own
// list; these check hbgraph's choices and its stored data.

const (
	mediaJSON     = "application/json"
	mediaResponse = "application/graphql-response+json"
)

// rawRequest is one HTTP request to /query, built by hand.
type rawRequest struct {
	method string
	query  url.Values // GET's parameters
	body   string     // POST's body
	header http.Header
}

// send sends req; a POST is application/json unless req.header says
// otherwise.
func (s *server) sendRaw(t testing.TB, req rawRequest) *gqlResponse {
	t.Helper()
	target := s.url + "/query"
	if req.query != nil {
		target += "?" + req.query.Encode()
	}
	var body io.Reader
	if req.method == http.MethodPost {
		body = strings.NewReader(req.body)
	}
	hr, err := http.NewRequest(req.method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if req.method == http.MethodPost {
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range req.header {
		hr.Header[k] = vs
	}
	return s.send(t, hr)
}

func accept(media string) http.Header { return http.Header{"Accept": {media}} }

// hasData reports whether the response's JSON object has a data entry,
// null or not.
func (r *gqlResponse) hasData(t testing.TB) bool {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &top); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, r.Body)
	}
	_, ok := top["data"]
	return ok
}

// mediaType is the response's Content-Type without parameters.
func (r *gqlResponse) mediaType() string {
	return strings.TrimSpace(strings.Split(r.Header.Get("Content-Type"), ";")[0])
}

// TestStatusFollowsMediaType: an executed operation is 200 under both
// media types; a request error (parse, validation, variables, a limit) is
// 200 under application/json and 400 under application/graphql-response+json,
// with no data entry under either; a request that is not a GraphQL request
// is 400 under both.
func TestStatusFollowsMediaType(t *testing.T) {
	parallelTest(t)
	s := startServer(t, "--max-depth", "3")
	s.mustDo(t, `mutation { createNode(id: "a", properties: {n: 1}) { id } }`, nil, nil)

	type want struct {
		status int
		code   string // the one error's code; "" for no error
		data   bool   // a data entry
	}
	for _, c := range []struct {
		name     string
		req      rawRequest
		json     want // answered as application/json
		response want // answered as application/graphql-response+json
	}{
		{"a query", rawRequest{method: "POST", body: `{"query": "{ node(id: \"a\") { id } }"}`},
			want{200, "", true}, want{200, "", true}},
		{"a query with GET", rawRequest{method: "GET", query: url.Values{"query": {`{ node(id: "a") { id } }`}}},
			want{200, "", true}, want{200, "", true}},
		{"a field error", rawRequest{method: "POST", body: `{"query": "mutation { deleteNode(id: \"ghost\") }"}`},
			want{200, "NOT_FOUND", true}, want{200, "NOT_FOUND", true}},
		{"a parse error", rawRequest{method: "POST", body: `{"query": "{"}`},
			want{200, "GRAPHQL_PARSE_FAILED", false}, want{400, "GRAPHQL_PARSE_FAILED", false}},
		{"a parse error with GET", rawRequest{method: "GET", query: url.Values{"query": {`{`}}},
			want{200, "GRAPHQL_PARSE_FAILED", false}, want{400, "GRAPHQL_PARSE_FAILED", false}},
		{"a validation error", rawRequest{method: "POST", body: `{"query": "{ nope }"}`},
			want{200, "GRAPHQL_VALIDATION_FAILED", false}, want{400, "GRAPHQL_VALIDATION_FAILED", false}},
		{"an unknown operation", rawRequest{method: "POST", body: `{"query": "query A { __typename }", "operationName": "B"}`},
			want{200, "GRAPHQL_VALIDATION_FAILED", false}, want{400, "GRAPHQL_VALIDATION_FAILED", false}},
		{"a variable that does not coerce", rawRequest{method: "POST", body: `{"query": "query($id: ID!) { node(id: $id) { id } }", "variables": {"id": null}}`},
			want{200, "GRAPHQL_VALIDATION_FAILED", false}, want{400, "GRAPHQL_VALIDATION_FAILED", false}},
		{"too deep", rawRequest{method: "POST", body: `{"query": "{ node(id: \"a\") { relationships(type: \"f\", direction: OUTGOING) { edges { node { id } } } } }"}`},
			want{200, "BAD_USER_INPUT", false}, want{400, "BAD_USER_INPUT", false}},
		{"an unknown persisted query", rawRequest{method: "POST", body: `{"extensions": {"persistedQuery": {"version": 1, "sha256Hash": "` + strings.Repeat("ab", 32) + `"}}}`},
			want{200, "PERSISTED_QUERY_NOT_FOUND", false}, want{404, "PERSISTED_QUERY_NOT_FOUND", false}},
		{"JSON that does not parse", rawRequest{method: "POST", body: `{"query": `},
			want{400, "BAD_USER_INPUT", false}, want{400, "BAD_USER_INPUT", false}},
		{"no query", rawRequest{method: "POST", body: `{"qeury": "{ __typename }"}`},
			want{400, "BAD_USER_INPUT", false}, want{400, "BAD_USER_INPUT", false}},
		{"no query with GET", rawRequest{method: "GET", query: url.Values{}},
			want{400, "BAD_USER_INPUT", false}, want{400, "BAD_USER_INPUT", false}},
		{"a batch", rawRequest{method: "POST", body: `[{"query": "{ __typename }"}, {"query": "{ __typename }"}]`},
			want{400, "BAD_USER_INPUT", false}, want{400, "BAD_USER_INPUT", false}},
		{"a mutation with GET", rawRequest{method: "GET", query: url.Values{"query": {`mutation { deleteNode(id: "a") }`}}},
			want{405, "BAD_USER_INPUT", false}, want{405, "BAD_USER_INPUT", false}},
		{"a PUT", rawRequest{method: "PUT", body: `{"query": "{ __typename }"}`},
			want{405, "BAD_USER_INPUT", false}, want{405, "BAD_USER_INPUT", false}},
		{"a body that is not JSON", rawRequest{method: "POST", body: `query=%7B%7D`, header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}},
			want{415, "BAD_USER_INPUT", false}, want{415, "BAD_USER_INPUT", false}},
	} {
		for media, w := range map[string]want{mediaJSON: c.json, mediaResponse: c.response} {
			req := c.req
			req.header = http.Header{"Accept": {media}}
			for k, v := range c.req.header {
				req.header[k] = v
			}
			r := s.sendRaw(t, req)
			what := fmt.Sprintf("%s, Accept %s", c.name, media)
			if r.Status != w.status || r.mediaType() != media {
				t.Errorf("%s: %d %s, want %d %s: %s", what, r.Status, r.mediaType(), w.status, media, r.Body)
			}
			if got := r.hasData(t); got != w.data {
				t.Errorf("%s: data entry %v, want %v: %s", what, got, w.data, r.Body)
			}
			switch {
			case w.code == "" && len(r.Errors) > 0:
				t.Errorf("%s: errors %v, want none", what, r.Errors)
			case w.code != "" && (len(r.Errors) != 1 || r.Errors[0].Code() != w.code):
				t.Errorf("%s: errors %v, want one %s", what, r.Errors, w.code)
			}
			if allow := map[string]string{"GET": "POST", "PUT": "GET, POST, OPTIONS"}[req.method]; w.status == http.StatusMethodNotAllowed && r.Header.Get("Allow") != allow {
				t.Errorf("%s: Allow %q, want %q", what, r.Header.Get("Allow"), allow)
			}
		}
	}
	var check struct{ Node *idOut }
	s.mustDo(t, `{ node(id: "a") { id } }`, nil, &check)
	if check.Node == nil {
		t.Errorf("a mutation sent with GET deleted node a")
	}
}

// TestAcceptNegotiation: the media type is the one Accept prefers; an
// Accept that allows neither is 406.
func TestAcceptNegotiation(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	for _, c := range []struct {
		accept string // "" for no header
		status int
		media  string
	}{
		{"", 200, mediaJSON},
		{"*/*", 200, mediaJSON},
		{"application/json", 200, mediaJSON},
		{"application/graphql-response+json", 200, mediaResponse},
		{"application/graphql-response+json, application/json;q=0.9", 200, mediaResponse},
		{"application/json, application/graphql-response+json", 200, mediaJSON},
		{"application/json;q=0.5, application/graphql-response+json", 200, mediaResponse},
		{"text/html, */*;q=0.1", 200, mediaJSON},
		{"text/html", 406, mediaJSON},
	} {
		req := rawRequest{method: "POST", body: `{"query": "{ __typename }"}`}
		if c.accept != "" {
			req.header = accept(c.accept)
		}
		r := s.sendRaw(t, req)
		if r.Status != c.status || r.mediaType() != c.media {
			t.Errorf("Accept %q: %d %s, want %d %s: %s", c.accept, r.Status, r.mediaType(), c.status, c.media, r.Body)
		}
		if ct := r.Header.Get("Content-Type"); !strings.Contains(ct, "charset=utf-8") {
			t.Errorf("Accept %q: Content-Type %q names no charset", c.accept, ct)
		}
		if c.status == 406 && (len(r.Errors) != 1 || r.Errors[0].Code() != "BAD_USER_INPUT") {
			t.Errorf("Accept %q: errors %v, want one BAD_USER_INPUT", c.accept, r.Errors)
		}
	}
}

// TestRefusalsDoNotEcho: an undecodable body is not quoted back, and a
// parameter of the wrong type is named, not its Go type.
func TestRefusalsDoNotEcho(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	const secret = "s3cr3t-t0ken-from-the-body"
	goType := regexp.MustCompile(`Go |map\[|interface|RawParams|json: |\bint64\b|\bfloat64\b`)
	for _, c := range []struct {
		body, want string // want: in the message
	}{
		{`{"query": "{ __typename }", "variables": {"password": "` + secret + `"`, "not valid JSON"},
		{`{"query": "{ __typename }"} ` + secret, "not valid JSON"},
		{`{"query": "{ __typename }", "variables": 5, "x": "` + secret + `"}`, "variables must be a JSON object"},
		{`{"query": "{ __typename }", "variables": ["` + secret + `"]}`, "variables must be a JSON object"},
		{`{"query": "{ __typename }", "extensions": "` + secret + `"}`, "extensions must be a JSON object"},
		{`{"query": ["` + secret + `"]}`, "query must be a string"},
		{`{"query": "{ __typename }", "operationName": {"x": "` + secret + `"}}`, "operationName must be a string"},
		{`"` + secret + `"`, "must be a JSON object"},
	} {
		r := s.sendRaw(t, rawRequest{method: "POST", body: c.body})
		if r.Status != http.StatusBadRequest || len(r.Errors) != 1 || r.Errors[0].Code() != "BAD_USER_INPUT" {
			t.Errorf("%.60s: %d %s, want 400 and one BAD_USER_INPUT", c.body, r.Status, r.Body)
			continue
		}
		msg := r.Errors[0].Message
		if !strings.Contains(msg, c.want) {
			t.Errorf("%.60s: %q, want it to say %q", c.body, msg, c.want)
		}
		if strings.Contains(string(r.Body), secret) {
			t.Errorf("%.60s: the response quotes the body: %s", c.body, r.Body)
		}
		if m := goType.FindString(msg); m != "" {
			t.Errorf("%.60s: %q names a Go type (%q)", c.body, msg, m)
		}
	}
	// A 1000-byte operationName is allowed (and logged cut); over 1 KiB is
	// refused before the "operation X not found" error can quote it.
	long := strings.Repeat("Q", 2000)
	r := s.sendRaw(t, rawRequest{method: "POST", body: `{"query": "{ __typename }", "operationName": "` + long + `"}`})
	if r.Status != http.StatusBadRequest || strings.Contains(string(r.Body), long[:1025]) {
		t.Errorf("a 2000-byte operationName: %d %.300s; want 400 without the name", r.Status, r.Body)
	}
}

// TestTextIsNeverRewritten: bytes that are not UTF-8, and \u escapes of
// lone surrogates, anywhere in a POST body or in GET's parameters, are
// refused with BAD_USER_INPUT; encoding/json and gqlparser would store
// them as U+FFFD, making different ids the same. Nothing is stored.
func TestTextIsNeverRewritten(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	s.mustDo(t, `mutation { createNode(id: "a", properties: {name: "a"}) { id } }`, nil, nil)
	const snapshot = `{ a: node(id: "a") { properties } r: node(id: "\ufffd") { id } r2: node(id: "x\ufffdy") { id } r3: node(id: "\ufffd\ufffd") { id } }`
	before := *s.do(t, snapshot, nil)
	before.ok(t, nil)
	const create = `mutation($id: ID!, $p: JSON) { createNode(id: $id, properties: $p) { id } }`
	const update = `mutation($p: JSON) { updateNodeProperties(id: "a", set: $p) { id } }`
	for _, c := range []struct {
		name string
		req  rawRequest
		want string
	}{
		{"an id that is not UTF-8", rawRequest{method: "POST", body: `{"query": "` + escape(create) + `", "variables": {"id": "x` + "\xff" + `y"}}`}, "not valid UTF-8"},
		{"a UTF-8 encoded surrogate", rawRequest{method: "POST", body: `{"query": "` + escape(create) + `", "variables": {"id": "x` + "\xed\xa0\x80" + `y"}}`}, "not valid UTF-8"},
		{"a lone high surrogate", rawRequest{method: "POST", body: `{"query": "` + escape(create) + `", "variables": {"id": "\ud800"}}`}, "lone UTF-16 surrogate"},
		{"a lone low surrogate", rawRequest{method: "POST", body: `{"query": "` + escape(create) + `", "variables": {"id": "x\udc00y"}}`}, "lone UTF-16 surrogate"},
		{"a reversed pair", rawRequest{method: "POST", body: `{"query": "` + escape(create) + `", "variables": {"id": "\udc00\ud800"}}`}, "lone UTF-16 surrogate"},
		{"a property key", rawRequest{method: "POST", body: `{"query": "` + escape(update) + `", "variables": {"p": {"\ud800": 1}}}`}, "lone UTF-16 surrogate"},
		{"a property value", rawRequest{method: "POST", body: `{"query": "` + escape(update) + `", "variables": {"p": {"name": "` + "\xc3" + `"}}}`}, "not valid UTF-8"},
		{"the document's bytes", rawRequest{method: "POST", body: `{"query": "mutation { createNode(id: \"` + "\xff" + `\") { id } }"}`}, "not valid UTF-8"},
		{"the document's escape", rawRequest{method: "POST", body: `{"query": "mutation { createNode(id: \"\\ud800\") { id } }"}`}, "surrogate"},
		{"the document's escaped pair", rawRequest{method: "POST", body: `{"query": "mutation { updateNodeProperties(id: \"a\", set: {name: \"\\ud83d\\ude00\"}) { id } }"}`}, "surrogate"},
		{"the operation name", rawRequest{method: "POST", body: `{"query": "query Q { __typename }", "operationName": "Q\udfff"}`}, "lone UTF-16 surrogate"},
		{"GET's query", rawRequest{method: "GET", query: url.Values{"query": {`{ node(id: "` + "\xff" + `") { id } }`}}}, "query is not valid UTF-8"},
		{"GET's query escape", rawRequest{method: "GET", query: url.Values{"query": {`{ node(id: "\ud800") { id } }`}}}, "surrogate"},
		{"GET's variables", rawRequest{method: "GET", query: url.Values{"query": {`query($id: ID!) { node(id: $id) { id } }`}, "variables": {`{"id": "\ud800"}`}}}, "variables has a \\u escape of a lone UTF-16 surrogate"},
		{"GET's variables bytes", rawRequest{method: "GET", query: url.Values{"query": {`query($id: ID!) { node(id: $id) { id } }`}, "variables": {"{\"id\": \"\xfe\"}"}}}, "variables is not valid UTF-8"},
		{"GET's operationName", rawRequest{method: "GET", query: url.Values{"query": {`query Q { __typename }`}, "operationName": {"Q\xff"}}}, "operationName is not valid UTF-8"},
	} {
		for _, media := range []string{mediaJSON, mediaResponse} {
			req := c.req
			req.header = accept(media)
			r := s.sendRaw(t, req)
			if r.Status != http.StatusBadRequest || len(r.Errors) != 1 || r.Errors[0].Code() != "BAD_USER_INPUT" || r.hasData(t) {
				t.Errorf("%s (%s): %d %s; want 400, one BAD_USER_INPUT, no data", c.name, media, r.Status, r.Body)
				continue
			}
			if !strings.Contains(r.Errors[0].Message, c.want) {
				t.Errorf("%s: %q, want it to say %q", c.name, r.Errors[0].Message, c.want)
			}
		}
	}
	after := s.do(t, snapshot, nil)
	if compactJSON(t, after.Data) != compactJSON(t, before.Data) {
		t.Errorf("stored data changed:\nbefore %s\nafter  %s", before.Data, after.Data)
	}
	// A surrogate pair in JSON is one character, stored as it was sent.
	r := s.sendRaw(t, rawRequest{method: "POST", body: `{"query": "` + escape(create) + `", "variables": {"id": "smile-\ud83d\ude00", "p": {"e": "\u00e9\ud83d\ude00"}}}`})
	r.ok(t, nil)
	var got struct {
		Node *struct{ Properties map[string]string }
	}
	s.mustDo(t, `query($id: ID!) { node(id: $id) { properties } }`, map[string]any{"id": "smile-\U0001F600"}, &got)
	if got.Node == nil || got.Node.Properties["e"] != "é\U0001F600" {
		t.Errorf("a node created with surrogate pairs reads back as %+v", got.Node)
	}
}

// escape makes s a JSON string's contents.
func escape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// TestRequestIDsAndLogs: a client's X-Request-Id is kept only if it is
// short and of [A-Za-z0-9._-]; the log never carries more than 128 bytes
// of an operation name, nor a refused request id.
func TestRequestIDsAndLogs(t *testing.T) {
	parallelTest(t)
	s := startServer(t, "--log-level", "info")
	for _, c := range []struct {
		id   string
		kept bool
	}{
		{"client-chosen.id_1", true},
		{strings.Repeat("i", 64), true},
		{strings.Repeat("i", 65), false},
		{"has space", false},
		{"quote\"d", false},
		{"<script>", false},
		{"ünïcode", false},
		{"a/b", false},
		{"id;drop", false},
	} {
		r := s.sendRaw(t, rawRequest{method: "POST", body: `{"query": "{ __typename }"}`, header: http.Header{"X-Request-Id": {c.id}}})
		got := r.Header.Get("X-Request-Id")
		if c.kept && got != c.id {
			t.Errorf("X-Request-Id %q came back as %q, want it kept", c.id, got)
		}
		if !c.kept && (got == c.id || !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(got)) {
			t.Errorf("X-Request-Id %q came back as %q, want a fresh id", c.id, got)
		}
	}
	name := "Op" + strings.Repeat("x", 998) // 1000 bytes: allowed
	s.sendRaw(t, rawRequest{method: "POST", body: `{"query": "query ` + name + ` { __typename }", "operationName": "` + name + `"}`,
		header: http.Header{"X-Request-Id": {"op-log-check"}}}).ok(t, nil)
	var line map[string]any
	deadline := time.Now().Add(5 * time.Second)
	for line == nil && time.Now().Before(deadline) {
		for _, l := range bytes.Split([]byte(s.out.String()), []byte("\n")) {
			var m map[string]any
			if json.Unmarshal(l, &m) == nil && m["request_id"] == "op-log-check" && m["message"] == "graphql" {
				line = m
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if line == nil {
		t.Fatalf("no log line for request op-log-check:\n%s", s.out.String())
	}
	if op, _ := line["operation"].(string); len(op) > 128 || !strings.HasPrefix(name, op) || op == "" {
		t.Errorf("logged operation is %d bytes (%.40q...), want the name's first 128 at most", len(op), op)
	}
	for _, bad := range []string{"has space", "<script>", strings.Repeat("i", 65)} {
		if strings.Contains(s.out.String(), bad) {
			t.Errorf("the log carries a refused request id %q", bad)
		}
	}
}

// TestBodyTooLargeWithoutLength: a chunked body over --max-body-bytes
// is 413 as a declared one is, not a decoding error.
func TestBodyTooLargeWithoutLength(t *testing.T) {
	parallelTest(t)
	s := startServer(t, "--max-body-bytes", "1000")
	body := `{"query": "mutation($p: JSON) { createNode(id: \"big\", properties: $p) { id } }", "variables": {"p": {"s": "` + strings.Repeat("x", 2000) + `"}}}`
	hr, err := http.NewRequest(http.MethodPost, s.url+"/query", io.MultiReader(strings.NewReader(body))) // no length: chunked
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Content-Type", "application/json")
	r := s.send(t, hr)
	if r.Status != http.StatusRequestEntityTooLarge || len(r.Errors) != 1 || r.Errors[0].Code() != "BAD_USER_INPUT" {
		t.Errorf("a chunked 2 KB body over a 1000-byte limit: %d %s; want 413 and one BAD_USER_INPUT", r.Status, r.Body)
	}
	if strings.Contains(string(r.Body), "xxxxxxxx") {
		t.Errorf("the refusal quotes the body: %.300s", r.Body)
	}
	var got struct{ Node *idOut }
	s.mustDo(t, `{ node(id: "big") { id } }`, nil, &got)
	if got.Node != nil {
		t.Errorf("the refused request created its node")
	}
}
