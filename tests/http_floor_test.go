package tests

import (
	"net/http"
	"testing"
)

// The HTTP floor (issue 27): the request headers clients send are read
// without parsing, and the answers must be those of the parse. Each
// Content-Type and Accept a client sends, with what the response is:
// its status and its Content-Type, exactly.
func TestHeaderFastPathsAnswerAsTheParse(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	for _, c := range []struct {
		contentType, accept string
		status              int
		responseType        string
	}{
		{"application/json", "application/json", 200, "application/json; charset=utf-8"},
		{"application/json", "*/*", 200, "application/json; charset=utf-8"},
		{"application/json", "", 200, "application/json; charset=utf-8"},
		{"application/json", "application/graphql-response+json", 200, "application/graphql-response+json; charset=utf-8"},
		{"application/json; charset=utf-8", "application/json", 200, "application/json; charset=utf-8"},
		{"application/json;charset=utf-8", "application/json", 200, "application/json; charset=utf-8"},
		{"application/json; charset=UTF-8", "application/json", 200, "application/json; charset=utf-8"},
		{"Application/JSON; Charset=\"utf-8\"", "application/json", 200, "application/json; charset=utf-8"},
		{"application/json; charset=latin1", "application/json", 415, "application/json; charset=utf-8"},
		{"application/json; charset=latin1", "application/graphql-response+json", 415, "application/graphql-response+json; charset=utf-8"},
		{"text/plain", "application/json", 415, "application/json; charset=utf-8"},
		{"application/json", "text/html", 406, "application/json; charset=utf-8"},
		{"application/json", "application/graphql-response+json, application/json;q=0.9", 200, "application/graphql-response+json; charset=utf-8"},
	} {
		header := http.Header{"Content-Type": {c.contentType}}
		if c.accept != "" {
			header["Accept"] = []string{c.accept}
		}
		r := s.postRaw(t, []byte(`{"query":"query Q0 { __typename }"}`), header)
		if r.Status != c.status || r.Header.Get("Content-Type") != c.responseType || len(r.Header.Values("Content-Type")) != 1 {
			t.Errorf("Content-Type %q, Accept %q: %d %q, want %d %q: %s", c.contentType, c.accept, r.Status, r.Header.Values("Content-Type"), c.status, c.responseType, r.Body)
		}
		if c.status != 200 && (len(r.Errors) != 1 || r.Errors[0].Code() != "BAD_USER_INPUT") {
			t.Errorf("Content-Type %q, Accept %q: errors %v, want one BAD_USER_INPUT", c.contentType, c.accept, r.Errors)
		}
	}
}
