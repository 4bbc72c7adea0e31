package limits_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hbgraph/hbgraph/graph/codes"
	"github.com/hbgraph/hbgraph/graph/limits"
)

// go test -run '^$' -fuzz FuzzDocument -fuzztime 5m ./graph/limits/
// go test -run '^$' -fuzz FuzzVariables -fuzztime 5m ./graph/limits/
//
// Without -fuzz, go test runs the seeds below and those under
// testdata/fuzz (crashers found before, kept as seeds).

// checkAnswer fails on a panic anywhere (a resolver's, or one that reached
// gqlgen's ServeHTTP and answered 500) and on any error server.go would
// answer INTERNAL.
func checkAnswer(t *testing.T, g *gateway, resp response, what string) {
	t.Helper()
	if n := g.panics.Swap(0); n > 0 {
		t.Fatalf("%d panics for %s: %+v", n, what, resp.Errors)
	}
	if n := g.internals.Swap(0); n > 0 {
		t.Fatalf("%d internal errors for %s: %+v", n, what, resp.Errors)
	}
	if resp.Status >= http.StatusInternalServerError {
		t.Fatalf("HTTP %d for %s: %+v", resp.Status, what, resp.Errors)
	}
	for _, e := range resp.Errors {
		if e.Extensions.Code == codes.Internal || e.Extensions.Code == "" {
			t.Fatalf("error %q with code %q for %s", e.Message, e.Extensions.Code, what)
		}
	}
	if len(resp.Errors) > limits.DefaultConfig.Errors {
		t.Fatalf("%d errors for %s", len(resp.Errors), what)
	}
}

// FuzzDocument sends arbitrary documents through the POST transport,
// the limits, parsing, validation and execution on an in-memory store.
func FuzzDocument(f *testing.F) {
	for _, doc := range legitimate(f) {
		f.Add(doc)
	}
	for _, doc := range []string{
		`mutation { createNode(id: "x", properties: {a: 1e400, b: [1, 2.5e-400, -0], c: "\u00e9"}) { id properties } }`,
		`mutation { createNode(id: "y", properties: {n: 99999999999999999999}) { id } }`,
		`mutation { updateNodeProperties(id: "x", set: {a: """block"""}, remove: ["b"]) { id } }`,
		`{ node(id: "x") { articles(postedAfter: "2020-01-01T00:00:00Z", postedBefore: "nope", first: 2) { edges { cursor } } } }`,
		`{ node(id: "x") { relationships(type: "t", direction: OUTGOING, first: 1, last: 1) { totalCount } } }`,
		`{ node(id: "x") { relationships(type: "t", direction: OUTGOING, after: "", first: 0) { pageInfo { hasNextPage } } } }`,
		`{ nodes(ids: ["x", "", "y"]) { id wordCounts(first: 0) { word } } }`,
		`query Q($d: Direction = SIDEWAYS) { node(id: "x") { relationships(type: "t", direction: $d) { totalCount } } }`,
		`{ article(id: "not an id") { id author { id } } }`,
		`{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }`,
		`{ node(id: [[["x"]]]) { id } }`,
		`{ __typename @skip(if: true) @skip(if: false) }`,
		`query($a: Int, $a: Int) { __typename }`,
		`subscription { __typename }`,
		`{ _entities(representations: [{__typename: "Node", id: "x"}, {__typename: "Nope"}, {id: 1e308}]) { ... on Node { id } } }`,
		`{ __type(name: "Node") { fields { name args { name type { name ofType { name } } } } } }`,
		`{ node(id: "x") { ... on Node @include(if: false) { id } ...on Article { id } } }`,
		"{ node(id: \"\xff\") { id } }",
		`# only a comment`,
		`{ a: node(id: "1") { id } a: article(id: "1") { id } }`,
	} {
		f.Add(doc)
	}
	g := newGateway(f, limits.DefaultConfig)
	f.Fuzz(func(t *testing.T, doc string) {
		resp := g.post(t, doc, "")
		checkAnswer(t, g, resp, "the document")
	})
}

// variableDocuments take every kind of variable the schema has.
var variableDocuments = []string{
	`mutation($id: ID!, $p: JSON) { createNode(id: $id, properties: $p) { id properties } }`,
	`mutation($id: ID!, $set: JSON, $remove: [String!]) { updateNodeProperties(id: $id, set: $set, remove: $remove) { id properties } }`,
	`query($id: ID!, $t: String!, $d: Direction!, $n: Int, $after: String, $last: Int, $before: String) {
		node(id: $id) { relationships(type: $t, direction: $d, first: $n, after: $after, last: $last, before: $before) { totalCount edges { cursor } } } }`,
	`query($id: ID!, $c: String, $from: Time, $to: Time, $n: Int) {
		node(id: $id) { articles(category: $c, postedAfter: $from, postedBefore: $to, first: $n) { edges { node { id } } } wordCounts(first: $n) { word } } }`,
	`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`,
	`query($r: [_Any!]!) { _entities(representations: $r) { ... on Node { id } ... on Article { id } ... on Relationship { id } } }`,
	`mutation($a: ID!, $t: String!, $b: ID!, $p: JSON, $detach: Boolean) {
		createRelationship(startNodeId: $a, type: $t, endNodeId: $b, properties: $p) { id } deleteNode(id: $b, detach: $detach) }`,
}

// FuzzVariables sends arbitrary variables (the input's first byte picks one
// of variableDocuments, the rest is the variables' JSON) through the same
// path as FuzzDocument.
func FuzzVariables(f *testing.F) {
	for i, vars := range []string{
		`{"id": "x", "p": {"a": 1e400}}`,
		`{"id": "x", "p": {"a": [1, -0.0, 1e-400, 123456789012345678901234567890], "b": null, "c": {"d": 1}}}`,
		`{"id": "x", "set": {"a": "\ud800"}, "remove": ["a", 1]}`,
		`{"id": "x", "t": "t", "d": "OUTGOING", "n": 1e400, "after": ""}`,
		`{"id": "x", "c": "c", "from": "2020-01-01T00:00:00Z", "to": 5, "n": 99999999999}`,
		`{"ids": ["a", "b", "", null]}`,
		`{"r": [{"__typename": "Node", "id": "x"}, {"__typename": "Article", "id": "bad"}, {"__typename": "Relationship", "id": 1}, "x"]}`,
		`{"a": "x", "t": "", "b": "x", "p": [], "detach": "yes"}`,
	} {
		f.Add(append([]byte{byte(i)}, vars...))
	}
	for i := range variableDocuments {
		f.Add(append([]byte{byte(i)}, `{"id": "x", "n": -1, "d": "INCOMING", "t": "t", "ids": ["x"], "r": []}`...))
	}
	g := newGateway(f, limits.DefaultConfig)
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 || !json.Valid(in[1:]) || !strings.HasPrefix(strings.TrimSpace(string(in[1:])), "{") {
			return // not variables: the transport refuses those before any of this
		}
		doc := variableDocuments[int(in[0])%len(variableDocuments)]
		resp := g.post(t, doc, string(in[1:]))
		checkAnswer(t, g, resp, "the variables "+string(in[1:]))
	})
}
