package tests

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// logLines are the JSON lines of s's output with the message msg.
func logLines(s *server, msg string) []map[string]any {
	var lines []map[string]any
	for _, l := range strings.Split(s.out.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["message"] == msg {
			lines = append(lines, m)
		}
	}
	return lines
}

// snakeKeys reports the keys of v (nested objects too) that are not
// snake_case: a Go field name leaking into the log.
func snakeKeys(v any) (bad []string) {
	m, _ := v.(map[string]any)
	for k, sub := range m {
		if strings.ContainsFunc(k, func(r rune) bool { return unicode.IsUpper(r) || r == '-' || r == ' ' }) {
			bad = append(bad, k)
		}
		bad = append(bad, snakeKeys(sub)...)
	}
	return bad
}

// TestRequestLogLine: the request's line names the operation the document
// holds when the client sends no operationName, with the method, path and
// client address, and its duration in milliseconds (duration_ms); GraphiQL
// and the probes are logged at debug level; the start-up line uses our
// names and units, and a line names the address listened on.
func TestRequestLogLine(t *testing.T) {
	parallelTest(t)
	s := startServer(t, "--log-level", "debug")
	for _, path := range []string{"/", "/healthz"} {
		resp, err := httpClient.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for id, body := range map[string]string{
		"named-op":  `{"query": "query Who { node(id: \"x\") { id } }"}`,
		"chosen-op": `{"query": "query A { node(id: \"x\") { id } } query B { node(id: \"y\") { id } }", "operationName": "B"}`,
		"anon-op":   `{"query": "{ node(id: \"x\") { id } }"}`,
	} {
		if r := s.postRaw(t, []byte(body), http.Header{"X-Request-Id": {id}}); r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", id, r.Status, r.Body)
		}
	}
	for id, op := range map[string]string{"named-op": "Who", "chosen-op": "B", "anon-op": ""} {
		line := logLine(t, s, id)
		if line == nil {
			t.Fatalf("no log line for %s:\n%s", id, s.out.String())
		}
		if line["operation"] != op || line["method"] != "POST" || line["path"] != "/query" || line["client"] != "127.0.0.1" {
			t.Errorf("%s: operation, method, path, client: %v", id, line)
		}
		if _, ok := line["duration_ms"].(float64); !ok || line["duration"] != nil {
			t.Errorf("%s: the duration has no unit in its name: %v", id, line)
		}
	}
	seen := map[string]bool{}
	for _, l := range logLines(s, "http") {
		if l["level"] == "debug" && l["method"] == "GET" && l["status"] == float64(200) && l["client"] == "127.0.0.1" {
			if _, ok := l["duration_ms"].(float64); ok {
				seen[l["path"].(string)] = true
			}
		}
	}
	if !seen["/"] || !seen["/healthz"] {
		t.Errorf("GraphiQL's page and /healthz are not logged at debug (%v):\n%s", seen, s.out.String())
	}

	starting := logLines(s, "starting")
	if len(starting) != 1 {
		t.Fatalf("start-up lines: %v", starting)
	}
	start := starting[0]
	limits, _ := start["limits"].(map[string]any)
	if start["request_timeout_ms"] != float64(10000) || start["request_timeout"] != nil || limits["max_tokens"] != float64(15000) {
		t.Errorf("start-up line: %v", start)
	}
	if bad := snakeKeys(start); len(bad) > 0 {
		t.Errorf("start-up line keys not in our names: %v", bad)
	}
	listening := logLines(s, "listening")
	if len(listening) != 1 || "http://"+listening[0]["listen"].(string) != s.url || "http://"+listening[0]["admin_listen"].(string) != s.admin {
		t.Errorf("no line names the addresses listened on (%s, %s): %v", s.url, s.admin, listening)
	}
}

// TestConsoleLogFormat: --log-format console writes no colour codes when
// stderr is not a terminal, and full timestamps (RFC 3339, milliseconds).
func TestConsoleLogFormat(t *testing.T) {
	parallelTest(t)
	s := startServer(t, "--log-format", "console", "--log-level", "info")
	out := s.out.String()
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour codes in a log that is not a terminal:\n%q", out)
	}
	stamped := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d) (INF|WRN|DBG|ERR) `)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		if !stamped.MatchString(l) {
			t.Errorf("a console line without a full timestamp: %q", l)
		}
	}
	if len(lines) < 2 {
		t.Errorf("console log: %q", out)
	}
}
