package tests

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// What an error may say: issue 22, items 9 and 11. A message names the
// field, argument or variable at fault and what was wrong, in our words:
// never what the client sent (ids, names, operationName, values), a Go
// type, a library's chain of errors or a row key.

// plant marks every value the tests send; no message may contain it.
const plant = "Zq9"

// hostileText is a client string with a newline, an ANSI escape and a
// right-to-left override, each of which a message must never carry.
const hostileText = plant + "\n\x1b[31m\u202e"

// internals are words only a Go type, a library's error or a row key
// would put in a message.
var internals = []string{
	"interface {}", "interface{}", "json.Number", "map[", "[]", "int64", "float64", "float32",
	"store:", "keys:", "Go value", "Go struct", "base64", "illegal", "strconv", "reflect",
	"unmarshal", "%!", "\\x", "0x", "json:", "gqlparser", "gqlgen",
}

// checkMessages fails t for each error of r whose message leaks: a
// planted value, a control or bidi character, or internals; and for each
// error without a code.
func checkMessages(t *testing.T, name string, r *gqlResponse) {
	t.Helper()
	if len(r.Errors) == 0 {
		t.Errorf("%s: no error: %s", name, r.Body)
	}
	for _, e := range r.Errors {
		msg := e.Message
		if e.Code() == "" || e.Code() == "INTERNAL" {
			t.Errorf("%s: code %q: %s", name, e.Code(), msg)
		}
		if strings.Contains(msg, plant) {
			t.Errorf("%s: the client's value is echoed: %q", name, msg)
		}
		if strings.ContainsAny(msg, "\n\r\x1b\u202e\u2066") {
			t.Errorf("%s: control or bidi characters in %q", name, msg)
		}
		for _, w := range internals {
			if strings.Contains(msg, w) {
				t.Errorf("%s: %q names internals (%q)", name, msg, w)
			}
		}
		if len(msg) > 600 {
			t.Errorf("%s: a %d-byte message", name, len(msg))
		}
		for _, p := range e.Path {
			if s, ok := p.(string); ok && strings.Contains(s, plant) {
				t.Errorf("%s: the client's value is echoed in the path %v", name, e.Path)
			}
		}
	}
}

// TestErrorsSpeakOurWords throws at each executor the inputs that used to
// come back as Go types, library chains or the client's own bytes.
func TestErrorsSpeakOurWords(t *testing.T) {
	parallelTest(t)
	for _, executor := range []string{"plan", "gqlgen"} {
		s := startServer(t, "--executor", executor)
		s.mustDo(t, `mutation {
			a: createNode(id: "Zq9-a") { id }
			b: createNode(id: "Zq9-b") { id }
			r: createRelationship(startNodeId: "Zq9-a", type: "follows", endNodeId: "Zq9-b") { id }
		}`, nil, nil)
		longName := hostileText + strings.Repeat("A", 1000)
		for _, c := range []struct {
			name string
			req  gqlRequest
			op   string
		}{
			{"unknown operationName", gqlRequest{Query: `query Q { __typename }`}, longName},
			{"node missing", gqlRequest{Query: `mutation { updateNodeProperties(id: "Zq9-missing", set: {x: 1}) { id } }`}, ""},
			{"node missing, aliased", gqlRequest{Query: `mutation { m: deleteNode(id: "Zq9-missing") }`}, ""},
			{"node exists", gqlRequest{Query: `mutation { createNode(id: "Zq9-a") { id } }`}, ""},
			{"node has relationships", gqlRequest{Query: `mutation { deleteNode(id: "Zq9-a") }`}, ""},
			{"relationship exists", gqlRequest{Query: `mutation { createRelationship(startNodeId: "Zq9-a", type: "follows", endNodeId: "Zq9-b") { id } }`}, ""},
			{"relationship missing", gqlRequest{Query: `mutation { deleteRelationship(startNodeId: "Zq9-a", type: "Zq9", endNodeId: "Zq9-b") }`}, ""},
			{"end node missing", gqlRequest{Query: `mutation { createRelationship(startNodeId: "Zq9-a", type: "t", endNodeId: "Zq9-nobody") { id } }`}, ""},
			{"author missing", gqlRequest{Query: `mutation { postArticle(authorId: "Zq9-nobody", title: "t", body: "b", category: "c") { id } }`}, ""},
			{"article id malformed", gqlRequest{Query: `{ article(id: "Zq9") { id } }`}, ""},
			{"article id malformed, update", gqlRequest{Query: `mutation { updateArticle(id: "Zq9", title: "t") { id } }`}, ""},
			{"article id of another version", gqlRequest{Query: `{ article(id: "AAAA") { id } }`}, ""},
			{"properties a number", gqlRequest{Query: `mutation($p: JSON) { createNode(id: "Zq9-p", properties: $p) { id } }`, Variables: map[string]any{"p": 5}}, ""},
			{"properties a list", gqlRequest{Query: `mutation($p: JSON) { createNode(id: "Zq9-p", properties: $p) { id } }`, Variables: map[string]any{"p": []any{1}}}, ""},
			{"properties a literal number", gqlRequest{Query: `mutation { createNode(id: "Zq9-p", properties: 5) { id } }`}, ""},
			{"set a string", gqlRequest{Query: `mutation($p: JSON) { updateNodeProperties(id: "Zq9-a", set: $p) { id } }`, Variables: map[string]any{"p": hostileText}}, ""},
			{"property an object", gqlRequest{Query: `mutation($p: JSON) { createNode(id: "Zq9-p", properties: $p) { id } }`, Variables: map[string]any{"p": map[string]any{hostileText: map[string]any{"x": 1}}}}, ""},
			{"property a list of lists", gqlRequest{Query: `mutation($p: JSON) { createNode(id: "Zq9-p", properties: $p) { id } }`, Variables: map[string]any{"p": map[string]any{hostileText: []any{[]any{1}}}}}, ""},
			{"property set and removed", gqlRequest{Query: `mutation { updateNodeProperties(id: "Zq9-a", set: {Zq9: 1}, remove: ["Zq9"]) { id } }`}, ""},
			{"Time a number", gqlRequest{Query: `query($t: Time) { node(id: "Zq9-a") { articles(postedAfter: $t) { totalCount } } }`, Variables: map[string]any{"t": 5}}, ""},
			{"Time a word", gqlRequest{Query: `query($t: Time) { node(id: "Zq9-a") { articles(postedAfter: $t) { totalCount } } }`, Variables: map[string]any{"t": hostileText}}, ""},
			{"Time a literal word", gqlRequest{Query: `{ node(id: "Zq9-a") { articles(postedBefore: "Zq9\n\u202e") { totalCount } } }`}, ""},
			{"Int variable a fraction", gqlRequest{Query: `query($n: Int) { node(id: "Zq9-a") { articles(first: $n) { totalCount } } }`, Variables: map[string]any{"n": 1.5}}, ""},
			{"Int variable a string", gqlRequest{Query: `query($n: Int) { node(id: "Zq9-a") { articles(first: $n) { totalCount } } }`, Variables: map[string]any{"n": hostileText}}, ""},
			{"ID variable an object", gqlRequest{Query: `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, Variables: map[string]any{"ids": []any{map[string]any{hostileText: 1}}}}, ""},
			{"enum variable unknown", gqlRequest{Query: `query($d: Direction!) { node(id: "Zq9-a") { relationships(type: "t", direction: $d) { totalCount } } }`, Variables: map[string]any{"d": hostileText}}, ""},
			{"enum literal a string", gqlRequest{Query: `{ node(id: "Zq9-a") { relationships(type: "t", direction: "Zq9\n\u202e") { totalCount } } }`}, ""},
			{"Int literal a string", gqlRequest{Query: `{ node(id: "Zq9-a") { articles(first: "Zq9\n\u202e") { totalCount } } }`}, ""},
			{"malformed cursor", gqlRequest{Query: `{ node(id: "Zq9-a") { articles(after: "Zq9") { totalCount } } }`}, ""},
			{"entity of an unknown type", gqlRequest{Query: `query($r: [_Any!]!) { _entities(representations: $r) { __typename } }`, Variables: map[string]any{"r": []any{map[string]any{"__typename": hostileText, "id": "x"}}}}, ""},
			{"entity without its id", gqlRequest{Query: `query($r: [_Any!]!) { _entities(representations: $r) { __typename } }`, Variables: map[string]any{"r": []any{map[string]any{"__typename": "Node", "Zq9": "x"}}}}, ""},
			{"entity of a malformed article id", gqlRequest{Query: `query($r: [_Any!]!) { _entities(representations: $r) { __typename } }`, Variables: map[string]any{"r": []any{map[string]any{"__typename": "Article", "id": hostileText}}}}, ""},
		} {
			body := map[string]any{"query": c.req.Query}
			if c.req.Variables != nil {
				body["variables"] = c.req.Variables
			}
			if c.op != "" {
				body["operationName"] = c.op
			}
			b, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			checkMessages(t, executor+": "+c.name, s.postRaw(t, b, nil))
		}
		// GET too: the operationName of a query string.
		r := s.sendRaw(t, rawRequest{method: http.MethodGet, query: map[string][]string{"query": {`query Q { __typename }`}, "operationName": {longName}}})
		checkMessages(t, executor+": GET unknown operationName", r)
		s.stop(t)
	}
}

// TestNoSuggestionsWithoutIntrospection: with --introspection=false no
// validation error suggests a field, argument, type or enum value, which
// would let a client walk the schema one guess at a time.
func TestNoSuggestionsWithoutIntrospection(t *testing.T) {
	parallelTest(t)
	guesses := map[string]string{
		"field":          `{ node(id: "a") { ownr } }`,
		"argument":       `{ node(idd: "a") { id } }`,
		"variable type":  `query($x: Nod) { node(id: "a") { id } }`,
		"enum value":     `{ node(id: "a") { relationships(type: "t", direction: OUTGOIN) { totalCount } } }`,
		"leaf selection": `{ node(id: "a") { properties { x } } }`,
	}
	open := startServer(t)
	if r := open.do(t, guesses["field"], nil); len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, "Did you mean") {
		t.Errorf("with introspection on, the field guess got no suggestion: %s", r.Body)
	}
	s := startServer(t, "--introspection=false")
	for name, q := range guesses {
		r := s.do(t, q, nil)
		if len(r.Errors) == 0 {
			t.Errorf("%s: no error: %s", name, r.Body)
		}
		for _, e := range r.Errors {
			if strings.Contains(e.Message, "Did you mean") || strings.Contains(e.Message, `"owner"`) {
				t.Errorf("%s: suggestion with introspection off: %q", name, e.Message)
			}
		}
	}
}

// TestExplainShowsRowKeysToAdminsOnly: anyone may ask for explain, but
// row keys (ids, hashes) and the store's errors are shown only to the
// admin scope; others get tables and counts.
func TestExplainShowsRowKeysToAdminsOnly(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, p.args()...)
	s.as(t, p.user("alice"), `mutation { createNode(id: "Zq9-alice") { id } }`, nil).ok(t, nil)
	query := `{ node(id: "Zq9-alice") { id relationships(type: "follows", direction: OUTGOING) { totalCount } } }`
	explain := func(token string) string {
		t.Helper()
		b := mustJSON(t, gqlRequest{Query: query, Extensions: map[string]any{"explain": true}})
		h := http.Header{}
		if token != "" {
			h.Set("Authorization", "Bearer "+token)
		}
		r := s.postRaw(t, b, h)
		r.ok(t, nil)
		return string(r.Extensions)
	}
	for who, token := range map[string]string{"anonymous": "", "alice": p.user("alice")} {
		ext := explain(token)
		if !strings.Contains(ext, `"table":"graph"`) || !strings.Contains(ext, `"keys":`) {
			t.Errorf("%s: explain lost its tables and counts: %s", who, ext)
		}
		for _, key := range []string{`"rows"`, `"startRow"`, `"stopRow"`, "alice"} {
			if strings.Contains(ext, key) {
				t.Errorf("%s: explain shows row keys (%s): %s", who, key, ext)
			}
		}
	}
	if ext := explain(p.admin()); !strings.Contains(ext, `"rows"`) || !strings.Contains(ext, "Zq9-alice") {
		t.Errorf("admin: explain lacks the row keys: %s", ext)
	}
}
