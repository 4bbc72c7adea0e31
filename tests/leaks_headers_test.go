package tests

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The headers that keep one caller's answer from reaching another, and
// that let every answer be found in the log: issue 22, items 12 and 14.

// rawResponse sends hr and returns the status and headers, whatever the
// body (GraphiQL's page, a 404's text, GraphQL JSON).
func rawResponse(t testing.TB, hr *http.Request) (int, http.Header) {
	t.Helper()
	resp, err := httpClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// TestEveryResponseHasARequestID: every route of the gateway's listener,
// known or not, answers with an X-Request-Id, the client's when it is safe.
func TestEveryResponseHasARequestID(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	for _, c := range []struct{ method, path string }{
		{"GET", "/"}, {"GET", "/nope"}, {"GET", "/healthz"}, {"GET", "/readyz"},
		{"GET", "/query?query=%7B__typename%7D"}, {"POST", "/nope"}, {"GET", "/graphiql/nope.js"},
	} {
		hr, err := http.NewRequest(c.method, s.url+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		status, h := rawResponse(t, hr)
		if h.Get("X-Request-Id") == "" {
			t.Errorf("%s %s (%d): no X-Request-Id", c.method, c.path, status)
		}
		hr.Header.Set("X-Request-Id", "mine-1")
		if status, h = rawResponse(t, hr); h.Get("X-Request-Id") != "mine-1" {
			t.Errorf("%s %s (%d): X-Request-Id %q, want the client's mine-1", c.method, c.path, status, h.Get("X-Request-Id"))
		}
		hr.Header.Set("X-Request-Id", "bad id\u202e")
		if status, h = rawResponse(t, hr); strings.ContainsAny(h.Get("X-Request-Id"), " \u202e") || h.Get("X-Request-Id") == "" {
			t.Errorf("%s %s (%d): unsafe X-Request-Id came back as %q", c.method, c.path, status, h.Get("X-Request-Id"))
		}
	}
}

// TestQueryAnswersAreNotCached: every answer of /query, whoever asked and
// however it ended (200, 400, 401, 429, 503), says no-store and varies by
// Authorization, so that no shared cache serves alice's owner field to
// bob. GraphiQL's assets keep their own caching.
func TestQueryAnswersAreNotCached(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, append(p.args(), "--rate-limit", "0.001", "--rate-burst", "4")...)
	alice := p.user("alice")
	check := func(name string, hr *http.Request, wantStatus int) {
		t.Helper()
		status, h := rawResponse(t, hr)
		if status != wantStatus {
			t.Errorf("%s: status %d, want %d", name, status, wantStatus)
		}
		if h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s (%d): Cache-Control %q, want no-store", name, status, h.Get("Cache-Control"))
		}
		if !varies(h, "Authorization") {
			t.Errorf("%s (%d): Vary %q, want Authorization", name, status, h.Values("Vary"))
		}
	}
	post := func(token, body string) *http.Request {
		hr, err := http.NewRequest(http.MethodPost, s.url+"/query", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		hr.Header.Set("Content-Type", "application/json")
		if token != "" {
			hr.Header.Set("Authorization", "Bearer "+token)
		}
		return hr
	}
	get, err := http.NewRequest(http.MethodGet, s.url+"/query?query=%7B__typename%7D", nil)
	if err != nil {
		t.Fatal(err)
	}
	get.Header.Set("Authorization", "Bearer "+alice)
	check("authenticated GET", get, http.StatusOK)
	check("authenticated POST", post(alice, `{"query": "{ node(id: \"alice\") { id owner } }"}`), http.StatusOK)
	check("anonymous POST", post("", `{"query": "{ __typename }"}`), http.StatusOK)
	check("bad token", post("not.a.token", `{"query": "{ __typename }"}`), http.StatusUnauthorized)
	check("not JSON", post(alice, `{`), http.StatusBadRequest)
	// alice has spent 3 of her 4; the fifth is over her rate.
	rawResponse(t, post(alice, `{"query": "{ __typename }"}`))
	check("over the rate", post(alice, `{"query": "{ __typename }"}`), http.StatusTooManyRequests)

	// GraphiQL's page is the same for everyone: it keeps its own caching.
	hr, _ := http.NewRequest(http.MethodGet, s.url+"/", nil)
	if _, h := rawResponse(t, hr); h.Get("Cache-Control") == "no-store" {
		t.Error("GraphiQL's page says no-store; only /query should")
	}
}

// varies reports whether h's Vary lists name.
func varies(h http.Header, name string) bool {
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), name) {
				return true
			}
		}
	}
	return false
}
