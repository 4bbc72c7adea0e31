package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Response amplification (issue 22, item 2): a request of a few KB that
// asks for a large value many times (aliases of one 1 MB article body)
// must not make the server build, hold or send a response of 100 MB.
// Fields that carry large values are priced by their size (so the
// complexity limit refuses such a request before it runs), a response is
// refused once it grows past --max-response-bytes, and the responses held
// at once are bounded by --max-response-bytes-in-flight.

// defaultMemoryLimit is server.go's --memory-limit default: the Go heap
// the server lets grow before it collects regardless of --gc-percent.
const defaultMemoryLimit = 768 << 20

// amplifyQuery selects the body of article $i under n aliases.
func amplifyQuery(n int) string {
	var b strings.Builder
	b.WriteString("query Amplify($i: ID!) {")
	for k := range n {
		fmt.Fprintf(&b, " a%d: article(id: $i) { body }", k)
	}
	b.WriteString(" }")
	return b.String()
}

// postArticleOf creates node author (with token, "" when authentication is
// off) and posts an article of body under it; it returns the article's id.
func postArticleOf(t testing.TB, s *server, token, author, body string) string {
	t.Helper()
	var created struct{ PostArticle struct{ ID string } }
	s.as(t, token, `mutation($a: ID!) { createNode(id: $a) { id } }`, map[string]any{"a": author}).ok(t, nil)
	s.as(t, token, `mutation($a: ID!, $b: String!) { postArticle(authorId: $a, title: "big", body: $b, category: "c") { id } }`,
		map[string]any{"a": author, "b": body}).ok(t, &created)
	return created.PostArticle.ID
}

// cappedAnswer is a response of which at most capBytes were read: a
// refusal is small, an amplified answer is not.
type cappedAnswer struct {
	status     int
	retryAfter string
	size       int64 // the whole body's, read and discarded past capBytes
	errors     []gqlError
	hasData    bool
}

const capBytes = 64 << 10

// postCapped posts body with the Accept header accept, reading at most
// capBytes of the answer and discarding the rest, so that 32 amplified
// answers do not fill the test's own memory.
func postCapped(url string, body []byte, accept string) (cappedAnswer, error) {
	req, err := http.NewRequest(http.MethodPost, url+"/query", bytes.NewReader(body))
	if err != nil {
		return cappedAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := burstClient.Do(req)
	if err != nil {
		return cappedAnswer{}, err
	}
	defer resp.Body.Close()
	head, err := io.ReadAll(io.LimitReader(resp.Body, capBytes))
	if err != nil {
		return cappedAnswer{}, err
	}
	rest, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return cappedAnswer{}, err
	}
	a := cappedAnswer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), size: int64(len(head)) + rest}
	if rest > 0 {
		a.hasData = true // too large to be a refusal
		return a, nil
	}
	var r struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
	}
	if err := json.Unmarshal(head, &r); err != nil {
		return a, fmt.Errorf("status %d, body %.200q: %w", a.status, head, err)
	}
	a.errors, a.hasData = r.Errors, r.Data != nil
	return a, nil
}

// TestHostileAmplifiedBodiesAreBounded posts a 1 MB article as its owner,
// then sends 32 anonymous requests at once, each asking for its body under
// 100 aliases (100 MB an answer before the fix): every answer is a
// refusal, none carries data, and the server's peak resident memory stays
// under the Go memory limit. With the defaults the complexity limit
// refuses them; with it lifted the response limit does (RESPONSE_TOO_LARGE),
// or the load shedder (503 UNAVAILABLE with Retry-After), on both
// executors.
func TestHostileAmplifiedBodiesAreBounded(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	body := strings.Repeat("amplify ", 125_000) // 1 MB, and the request under --max-body-bytes
	query := amplifyQuery(100)
	lifted := []string{"--max-complexity", "10000000"}
	for _, c := range []struct {
		name  string
		args  []string
		codes []string // what the answers may be refused with
	}{
		{"defaults", nil, []string{"BAD_USER_INPUT"}},
		{"complexity lifted", lifted, []string{"RESPONSE_TOO_LARGE", "UNAVAILABLE"}},
		{"complexity lifted, gqlgen", append([]string{"--executor", "gqlgen"}, lifted...), []string{"RESPONSE_TOO_LARGE", "UNAVAILABLE"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startServer(t, append(p.args(), c.args...)...)
			id := postArticleOf(t, s, p.user("alice"), "alice", body)
			req := requestBody(t, query, map[string]any{"i": id})
			if len(req) > 3<<10 {
				t.Fatalf("the request is %d bytes, want a small one", len(req))
			}

			const clients = 32
			answers := make([]cappedAnswer, clients)
			errs := make([]error, clients)
			var wg sync.WaitGroup
			for k := range clients {
				wg.Go(func() { answers[k], errs[k] = postCapped(s.url, req, "") })
			}
			wg.Wait()

			seen := map[string]int{}
			for k, a := range answers {
				if errs[k] != nil {
					t.Fatalf("request %d: %v", k, errs[k])
				}
				if a.hasData || len(a.errors) != 1 {
					t.Fatalf("request %d: status %d, %d bytes, %d errors: want one refusal and no data", k, a.status, a.size, len(a.errors))
				}
				code := a.errors[0].Code()
				seen[code]++
				switch {
				case !strings.Contains(strings.Join(c.codes, " "), code):
					t.Fatalf("request %d: refused with %s, want one of %v", k, a.errors[0], c.codes)
				case code == "UNAVAILABLE" && (a.status != http.StatusServiceUnavailable || a.retryAfter == ""):
					t.Fatalf("request %d: shed with status %d, Retry-After %q", k, a.status, a.retryAfter)
				case code != "UNAVAILABLE" && a.status != http.StatusOK:
					t.Fatalf("request %d: %s with status %d, want 200 under application/json", k, code, a.status)
				}
			}
			peak := s.procStatus(t, "VmHWM")
			t.Logf("answers by code %v; peak RSS %d MB", seen, peak>>20)
			if c.codes[0] == "RESPONSE_TOO_LARGE" && seen["RESPONSE_TOO_LARGE"] == 0 {
				t.Errorf("no request was refused for its response's size: %v", seen)
			}
			if peak >= defaultMemoryLimit {
				t.Fatalf("peak resident memory %d MB, want under the %d MB memory limit", peak>>20, defaultMemoryLimit>>20)
			}
		})
	}
}

// TestHostileResponseOverLimitIsRefused: a response one byte over
// --max-response-bytes is refused with RESPONSE_TOO_LARGE and no data (200
// under application/json, 400 under application/graphql-response+json);
// one of exactly the limit is answered. On both executors.
func TestHostileResponseOverLimitIsRefused(t *testing.T) {
	parallelTest(t)
	const limit = 200_000
	for _, executor := range []string{"plan", "gqlgen"} {
		t.Run(executor, func(t *testing.T) {
			s := startServer(t, "--executor", executor, "--max-response-bytes", fmt.Sprint(limit))
			const query = `query Body($i: ID!) { article(id: $i) { body } }`
			// The data around a body: measured on a small one.
			small := postArticleOf(t, s, "", "small", "x")
			r := s.do(t, query, map[string]any{"i": small})
			if len(r.Errors) > 0 {
				t.Fatalf("%s", r.Body)
			}
			overhead := len(r.Data) - 1

			at := postArticleOf(t, s, "", "at", strings.Repeat("y", limit-overhead))
			over := postArticleOf(t, s, "", "over", strings.Repeat("z", limit-overhead+1))
			r = s.do(t, query, map[string]any{"i": at})
			if r.Status != http.StatusOK || len(r.Errors) > 0 || len(r.Data) != limit {
				t.Fatalf("a response of exactly the limit: status %d, %d bytes of data, errors %v", r.Status, len(r.Data), r.Errors)
			}
			for accept, status := range map[string]int{
				"application/json":                  http.StatusOK,
				"application/graphql-response+json": http.StatusBadRequest,
			} {
				a, err := postCapped(s.url, requestBody(t, query, map[string]any{"i": over}), accept)
				if err != nil {
					t.Fatal(err)
				}
				if a.status != status || a.hasData || len(a.errors) != 1 || a.errors[0].Code() != "RESPONSE_TOO_LARGE" {
					t.Fatalf("%s: one byte over the limit: status %d, data %v, errors %v; want %d and RESPONSE_TOO_LARGE alone",
						accept, a.status, a.hasData, a.errors, status)
				}
				if !strings.Contains(a.errors[0].Message, fmt.Sprint(limit)) {
					t.Errorf("the refusal does not name the limit: %q", a.errors[0].Message)
				}
			}
			// The refusal ends the request: the server answers as before.
			r = s.do(t, query, map[string]any{"i": small})
			if len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"x"`) {
				t.Fatalf("after the refusal: %s", r.Body)
			}
		})
	}
}
