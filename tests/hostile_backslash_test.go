package tests

import (
	"net/url"
	"strings"
	"testing"
)

// TestTrailingBackslashIsTheCallersError: text that ends in a backslash
// (a body, a GET's query, a query with a \u escape before it) is the
// caller's mistake, answered with its code: graph/jsonpost's scans for
// surrogate escapes read past the end on it, panicked, and the caller got
// a 500 INTERNAL and the log a stack, on one byte.
func TestTrailingBackslashIsTheCallersError(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	for _, c := range []struct {
		name string
		req  rawRequest
		code string
	}{
		{"a body", rawRequest{method: "POST", body: `{"query":"\`}, "BAD_USER_INPUT"},
		{"a body of one backslash after the object", rawRequest{method: "POST", body: `{"query":"{ __typename }"} \`}, "BAD_USER_INPUT"},
		{"a GET's query", rawRequest{method: "GET", query: url.Values{"query": {`\`}}}, "GRAPHQL_PARSE_FAILED"},
		{"a GET's variables", rawRequest{method: "GET", query: url.Values{"query": {`{ __typename }`}, "variables": {`{"a":"\`}}}, "BAD_USER_INPUT"},
		{"a query with a \\u escape", rawRequest{method: "GET", query: url.Values{"query": {`{ node(id: "\u0041") { id } } \`}}}, "GRAPHQL_PARSE_FAILED"},
	} {
		r := s.sendRaw(t, c.req)
		if r.Status >= 500 || len(r.Errors) != 1 || r.Errors[0].Code() != c.code {
			t.Errorf("%s: %d %v, want one %s", c.name, r.Status, r.Errors, c.code)
		}
	}
	if strings.Contains(s.out.String(), "panic") {
		t.Errorf("the server logged a panic:\n%s", s.out.String())
	}
}
