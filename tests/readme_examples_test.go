package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The README's examples, run as printed.
//
// Every ```graphql block of README.md, and every curl command of its ```sh
// blocks that calls localhost:8080 or localhost:9090, is an example a
// newcomer will paste. TestREADMEExamples runs them all, in README order,
// against one server started with --example-data, and fails on any error
// the README does not announce. The README's conventions, which the test
// reads:
//
//   - a ```json block right after a ```graphql block (blank lines between
//     at most) holds that operation's variables;
//   - an HTML comment on the line before a block,
//     <!-- readme-example: errors CODE[,CODE...]; shows TEXT -->, says what
//     the example shows: exactly these error codes, in this order, instead
//     of none; TEXT found in the response body (its JSON as the server
//     sends it). Clauses are separated by ";", each optional and "shows"
//     repeatable. On a ```sh block it applies to each of its commands.
//   - curl commands use -s, -H, -d (or --data) and one URL; anything else
//     fails the test, so that what it replays is what curl would send.

// readmeExample is one example found in README.md.
type readmeExample struct {
	line int // where its block starts, for messages

	// A ```graphql block, or a curl command (curl set).
	query string
	vars  map[string]any
	curl  *curlCommand

	wantCodes []string
	shows     []string
}

// curlCommand is a curl command line, as the test replays it.
type curlCommand struct {
	text    string // as printed, continuation lines joined
	url     string
	headers []string
	data    *string
}

var exampleMarker = regexp.MustCompile(`^<!--\s*readme-example:(.*)-->\s*$`)

// readmeExamples parses the README's examples, in order.
func readmeExamples(t *testing.T, readme string) []readmeExample {
	t.Helper()
	lines := strings.Split(readme, "\n")
	var out []readmeExample
	for i := 0; i < len(lines); i++ {
		lang, ok := strings.CutPrefix(lines[i], "```")
		if !ok || lang == "" {
			continue
		}
		start := i
		body, end := fenceBody(t, lines, i)
		i = end
		var marker string
		if start > 0 {
			if m := exampleMarker.FindStringSubmatch(strings.TrimSpace(lines[start-1])); m != nil {
				marker = m[1]
			}
		}
		switch strings.TrimSpace(lang) {
		case "graphql":
			ex := readmeExample{line: start + 1, query: body}
			parseMarker(t, &ex, marker)
			// Its variables: a ```json block next.
			j := i + 1
			for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
				j++
			}
			if j < len(lines) && strings.TrimSpace(lines[j]) == "```json" {
				vars, end := fenceBody(t, lines, j)
				if err := json.Unmarshal([]byte(vars), &ex.vars); err != nil {
					t.Fatalf("README.md:%d: the variables of the query at line %d are not a JSON object: %v", j+1, ex.line, err)
				}
				i = end
			}
			out = append(out, ex)
		case "sh", "bash", "shell", "console":
			for _, cmd := range shellCommands(body) {
				if !strings.HasPrefix(cmd, "curl ") ||
					!(strings.Contains(cmd, "localhost:8080") || strings.Contains(cmd, "localhost:9090")) {
					continue
				}
				ex := readmeExample{line: start + 1, curl: parseCurl(t, start+1, cmd)}
				parseMarker(t, &ex, marker)
				out = append(out, ex)
			}
		}
	}
	return out
}

// fenceBody returns the text of the fenced block opening at lines[open]
// and the index of its closing fence.
func fenceBody(t *testing.T, lines []string, open int) (string, int) {
	t.Helper()
	for j := open + 1; j < len(lines); j++ {
		if strings.TrimSpace(lines[j]) == "```" {
			return strings.Join(lines[open+1:j], "\n"), j
		}
	}
	t.Fatalf("README.md:%d: a code block that never closes", open+1)
	return "", 0
}

func parseMarker(t *testing.T, ex *readmeExample, marker string) {
	t.Helper()
	for clause := range strings.SplitSeq(marker, ";") {
		clause = strings.TrimSpace(clause)
		switch {
		case clause == "":
		case strings.HasPrefix(clause, "errors "):
			for c := range strings.SplitSeq(strings.TrimPrefix(clause, "errors "), ",") {
				ex.wantCodes = append(ex.wantCodes, strings.TrimSpace(c))
			}
		case strings.HasPrefix(clause, "shows "):
			ex.shows = append(ex.shows, strings.TrimPrefix(clause, "shows "))
		default:
			t.Fatalf("README.md:%d: readme-example clause %q: want errors or shows", ex.line-1, clause)
		}
	}
}

// shellCommands splits a shell block into commands: continuation lines
// (ending in \) joined, comments and blank lines dropped.
func shellCommands(block string) []string {
	var cmds []string
	var cur strings.Builder
	for line := range strings.SplitSeq(block, "\n") {
		if cur.Len() == 0 && (strings.HasPrefix(strings.TrimSpace(line), "#") || strings.TrimSpace(line) == "") {
			continue
		}
		if l, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(l)
			continue
		}
		cur.WriteString(line)
		cmds = append(cmds, strings.TrimSpace(cur.String()))
		cur.Reset()
	}
	return cmds
}

// shellWords splits a command line as sh would: single quotes literal,
// double quotes with \" \\ \$ \` escapes, a backslash quoting the next
// character outside quotes. Expansions ($, `) are refused: the README's
// curl commands must mean the same in every shell.
func shellWords(cmd string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(cmd[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("an unclosed single quote")
			}
			w.WriteString(cmd[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(cmd) && cmd[i] != '"'; i++ {
				switch cmd[i] {
				case '$', '`':
					return nil, fmt.Errorf("a shell expansion in double quotes")
				case '\\':
					if i+1 < len(cmd) && strings.IndexByte("\"\\$`", cmd[i+1]) >= 0 {
						i++
					}
				}
				w.WriteByte(cmd[i])
			}
			if i == len(cmd) {
				return nil, fmt.Errorf("an unclosed double quote")
			}
			inWord = true
		case c == '\\' && i+1 < len(cmd):
			i++
			w.WriteByte(cmd[i])
			inWord = true
		case strings.IndexByte("$`|&;<>()*?[", c) >= 0:
			return nil, fmt.Errorf("%q outside quotes", c)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

func parseCurl(t *testing.T, line int, cmd string) *curlCommand {
	t.Helper()
	words, err := shellWords(cmd)
	if err != nil {
		t.Fatalf("README.md:%d: %s: %v", line, cmd, err)
	}
	c := &curlCommand{text: cmd}
	for i := 1; i < len(words); i++ {
		switch w := words[i]; w {
		case "-s", "--silent":
		case "-H", "--header", "-d", "--data":
			if i+1 == len(words) {
				t.Fatalf("README.md:%d: %s: %s without a value", line, cmd, w)
			}
			i++
			if w == "-H" || w == "--header" {
				c.headers = append(c.headers, words[i])
			} else {
				if c.data != nil || strings.HasPrefix(words[i], "@") {
					t.Fatalf("README.md:%d: %s: one -d with inline data, please", line, cmd)
				}
				c.data = &words[i]
			}
		default:
			if strings.HasPrefix(w, "-") || c.url != "" {
				t.Fatalf("README.md:%d: %s: %q is not an option this test replays (-s, -H, -d, one URL)", line, cmd, w)
			}
			c.url = w
		}
	}
	if c.url == "" {
		t.Fatalf("README.md:%d: %s: no URL", line, cmd)
	}
	return c
}

// request is the HTTP request curl would send for c, to srv instead of
// localhost's ports 8080 (GraphQL) and 9090 (admin).
func (c *curlCommand) request(srv *server) (*http.Request, error) {
	u := c.url
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	u = strings.Replace(u, "http://localhost:8080", srv.url, 1)
	u = strings.Replace(u, "http://localhost:9090", srv.admin, 1)
	method, body := http.MethodGet, io.Reader(nil)
	if c.data != nil {
		// curl -d drops nothing of inline data and posts it as a form
		// unless told otherwise.
		method, body = http.MethodPost, strings.NewReader(*c.data)
	}
	hr, err := http.NewRequest(method, u, body)
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Accept", "*/*")
	if c.data != nil {
		hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, h := range c.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return nil, fmt.Errorf("header %q has no colon", h)
		}
		hr.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return hr, nil
}

func TestREADMEExamples(t *testing.T) {
	parallelTest(t)
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	examples := readmeExamples(t, string(readme))
	var queries, curls int
	for _, ex := range examples {
		if ex.curl != nil {
			curls++
		} else {
			queries++
		}
	}
	if queries < 3 {
		t.Fatalf("found %d graphql examples in README.md: is the test reading it right?", queries)
	}
	t.Logf("README.md: %d graphql examples, %d curl commands", queries, curls)

	srv := startServer(t, "--example-data")
	for _, ex := range examples {
		var r *gqlResponse
		what := fmt.Sprintf("README.md:%d", ex.line)
		if ex.curl != nil {
			what += ": " + ex.curl.text
			hr, err := ex.curl.request(srv)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if hr.URL.Path != "/query" {
				resp, err := httpClient.Do(hr)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("%s: status %d\n%s", what, resp.StatusCode, body)
				}
				for _, s := range ex.shows {
					if !bytes.Contains(body, []byte(s)) {
						t.Errorf("%s: the answer does not show %s", what, s)
					}
				}
				continue
			}
			if r, err = sendRequest(hr); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		} else if isSubscription(ex.query) {
			// Over WebSocket, as a client sends it: a document the server
			// accepts answers nothing until an event, so an error (or a
			// complete) within a moment is a refusal.
			what += "\n" + ex.query
			c := connectWS(t, srv, nil)
			c.subscribe(ex.query, ex.vars)
			if m, err := c.tryRead(300 * time.Millisecond); err == nil {
				t.Errorf("%s\nanswered %s %s before any event; want the subscription accepted", what, m.Type, m.Payload)
			}
			continue
		} else {
			what += "\n" + ex.query
			r = srv.do(t, ex.query, ex.vars)
		}
		var codes []string
		for _, e := range r.Errors {
			codes = append(codes, e.Code())
		}
		if r.Status != http.StatusOK || strings.Join(codes, ",") != strings.Join(ex.wantCodes, ",") {
			t.Errorf("%s\nstatus %d, error codes %v; want 200 and %v (README says so)\n%s",
				what, r.Status, codes, ex.wantCodes, r.Body)
			continue
		}
		if len(ex.wantCodes) == 0 && (len(r.Data) == 0 || string(r.Data) == "null") {
			t.Errorf("%s\nno data\n%s", what, r.Body)
		}
		for _, s := range ex.shows {
			if !bytes.Contains(r.Body, []byte(s)) {
				t.Errorf("%s\nthe answer does not show %s\n%s", what, s, r.Body)
			}
		}
	}
}

// TestREADMEExamplesParse checks the parser on the forms the README uses.
func TestREADMEExamplesParse(t *testing.T) {
	readme := strings.Join([]string{
		"```graphql", "query Q($id: ID!) { node(id: $id) { id } }", "```", "", "```json", `{"id": "alice"}`, "```",
		"<!-- readme-example: errors ALREADY_EXISTS,NOT_FOUND; shows \"x\" -->",
		"```graphql", "mutation { a }", "```",
		"```sh", "# a comment", "curl -s localhost:8080/query -H 'Content-Type: application/json' \\",
		`  -d '{"query": "query($id: ID!) { node(id: $id) { id } }", "variables": {"id": "it'\''s"}}'`,
		"go run . --example-data", "```",
	}, "\n")
	ex := readmeExamples(t, readme)
	if len(ex) != 3 {
		t.Fatalf("%d examples, want 3: %+v", len(ex), ex)
	}
	if ex[0].vars["id"] != "alice" || ex[0].wantCodes != nil {
		t.Errorf("first: %+v", ex[0])
	}
	if strings.Join(ex[1].wantCodes, ",") != "ALREADY_EXISTS,NOT_FOUND" || len(ex[1].shows) != 1 || ex[1].shows[0] != `"x"` {
		t.Errorf("second: %+v", ex[1])
	}
	c := ex[2].curl
	if c == nil || c.url != "localhost:8080/query" || len(c.headers) != 1 || c.data == nil ||
		*c.data != `{"query": "query($id: ID!) { node(id: $id) { id } }", "variables": {"id": "it's"}}` {
		t.Errorf("curl: %+v", c)
	}
}

// TestREADMETokenExample is the README's "A token in GraphiQL": on the
// example data, a token whose sub is "alice" sees alice's owner; another
// subject's token and no token see null.
func TestREADMETokenExample(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	srv := startServer(t, append(p.args(), "--example-data")...)
	const q = `{ node(id: "alice") { id owner } }`
	for _, c := range []struct {
		token, want string
	}{
		{p.user("alice"), `{"node":{"id":"alice","owner":"alice"}}`},
		{p.user("bob"), `{"node":{"id":"alice","owner":null}}`},
		{"", `{"node":{"id":"alice","owner":null}}`},
		{p.admin(), `{"node":{"id":"alice","owner":"alice"}}`},
	} {
		r := srv.as(t, c.token, q, nil)
		if len(r.Errors) != 0 || string(r.Data) != c.want {
			t.Errorf("token %.20q: %s, want data %s", c.token, r.Body, c.want)
		}
	}
	// alice may change her node; bob may not.
	r := srv.as(t, p.user("alice"), `mutation { updateNodeProperties(id: "alice", set: {mood: "curious"}) { id } }`, nil)
	if len(r.Errors) != 0 {
		t.Errorf("alice updating her node: %s", r.Body)
	}
	r = srv.as(t, p.user("bob"), `mutation { updateNodeProperties(id: "alice", set: {mood: "nosy"}) { id } }`, nil)
	if len(r.Errors) != 1 || r.Errors[0].Code() != "FORBIDDEN" {
		t.Errorf("bob updating alice's node: %s, want FORBIDDEN", r.Body)
	}
}

// isSubscription reports whether a README example's document is a
// subscription (its first word, after comments).
func isSubscription(query string) bool {
	for _, line := range strings.Split(query, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		return strings.HasPrefix(line, "subscription")
	}
	return false
}
