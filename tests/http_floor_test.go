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

// TestBodiesDecodeAsBefore: the bodies graph/jsonpost decodes without
// encoding/json (one object; query, operationName, variables and
// extensions, each once; plain string variables) and those it hands to
// encoding/json (anything else) mean what they meant: the same node, the
// same errors.
func TestBodiesDecodeAsBefore(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	s.mustDo(t, `mutation { createNode(id: "a\"b\\c", properties: {n: 1}) { id } }`, nil, nil)
	s.mustDo(t, `mutation { createNode(id: "plain", properties: {n: 2}) { id } }`, nil, nil)
	const q = `"query Q($id: ID!) {\n  node(id: $id) {\n    id\n  }\n}"`
	for _, c := range []struct{ name, body, data, code string }{
		{"plain", `{"query":` + q + `,"variables":{"id":"plain"}}`, `{"node":{"id":"plain"}}`, ""},
		{"spaced", " {\n \"query\" : " + q + " ,\t\"variables\" : { \"id\" : \"plain\" } , \"operationName\" : \"Q\" } \n", `{"node":{"id":"plain"}}`, ""},
		{"escaped id", `{"query":` + q + `,"variables":{"id":"a\"b\\c"}}`, `{"node":{"id":"a\"b\\c"}}`, ""},
		{"unicode escape", `{"query":` + q + `,"variables":{"id":"pl\u0061in"}}`, `{"node":{"id":"plain"}}`, ""},
		{"escape in the query", `{"query":"query Q($id: ID!) { node(id: $id) { id } } # \u00e9","variables":{"id":"plain"}}`, `{"node":{"id":"plain"}}`, ""},
		{"a second variables adds to the first", `{"query":` + q + `,"variables":{"x":"1"},"variables":{"id":"plain"}}`, `{"node":{"id":"plain"}}`, ""},
		{"a repeated variable: the last", `{"query":` + q + `,"variables":{"id":"a","id":"plain"}}`, `{"node":{"id":"plain"}}`, ""},
		{"a key in capitals", `{"QUERY":` + q + `,"Variables":{"id":"plain"}}`, `{"node":{"id":"plain"}}`, ""},
		{"null variables", `{"query":"{ node(id: \"plain\") { id } }","variables":null,"extensions":null}`, `{"node":{"id":"plain"}}`, ""},
		{"an unknown key", `{"query":` + q + `,"variables":{"id":"plain"},"other":[1,{"a":null}]}`, `{"node":{"id":"plain"}}`, ""},
		{"a number variable", `{"query":` + q + `,"variables":{"id":12}}`, `{"node":null}`, ""},
		{"variables not an object", `{"query":` + q + `,"variables":"x"}`, "", "BAD_USER_INPUT"},
		{"more after the object", `{"query":` + q + `,"variables":{"id":"plain"}} {}`, "", "BAD_USER_INPUT"},
		{"a trailing comma", `{"query":` + q + `,"variables":{"id":"plain"},}`, "", "BAD_USER_INPUT"},
		{"a tab in a string", "{\"query\":\"{ node(id: \\\"plain\\\") {\tid } }\"}", "", "BAD_USER_INPUT"},
		{"query null", `{"query":null}`, "", "BAD_USER_INPUT"},
	} {
		r := s.postRaw(t, []byte(c.body), nil)
		switch {
		case c.code == "" && (len(r.Errors) > 0 || string(r.Data) != c.data):
			t.Errorf("%s: %d %s %v, want %s", c.name, r.Status, r.Data, r.Errors, c.data)
		case c.code != "" && (len(r.Errors) != 1 || r.Errors[0].Code() != c.code):
			t.Errorf("%s: %d %v, want one %s", c.name, r.Status, r.Errors, c.code)
		}
	}
}
