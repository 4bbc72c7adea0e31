package jsonpost

import (
	"bytes"
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

func TestDecodeBody(t *testing.T) {
	for _, c := range []struct {
		body string
		want *graphql.RawParams
	}{
		{`{"query": "{ a }"}`, &graphql.RawParams{Query: "{ a }"}},
		{` {"query": "query Q($n: Int) { a }", "operationName": "Q", "variables": {"n": 1.50}, "extensions": {"x": true}} `,
			&graphql.RawParams{Query: "query Q($n: Int) { a }", OperationName: "Q",
				Variables: map[string]any{"n": json.Number("1.50")}, Extensions: map[string]any{"x": true}}},
		{`{"query": "{ a }", "operationName": null, "variables": null, "extensions": null}`, &graphql.RawParams{Query: "{ a }"}},
		// A persisted query's hash alone.
		{`{"extensions": {"persistedQuery": {"version": 1}}}`, &graphql.RawParams{Extensions: map[string]any{"persistedQuery": map[string]any{"version": json.Number("1")}}}},
		// A surrogate pair is one character.
		{`{"query": "{ a(s: \"\ud83d\ude00\") }"}`, &graphql.RawParams{Query: "{ a(s: \"\U0001F600\") }"}},
		{`{"query": "{ a }", "variables": {"s": "\\ud800"}}`, &graphql.RawParams{Query: "{ a }", Variables: map[string]any{"s": `\ud800`}}},
	} {
		got, err := decodeBody([]byte(c.body))
		if err != nil {
			t.Errorf("%s: %v", c.body, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", c.body, got, c.want)
		}
	}
}

func TestDecodeBodyRefuses(t *testing.T) {
	secret := "SECRET-BODY-TEXT"
	for _, c := range []struct {
		body, want string
	}{
		{``, "empty"},
		{`  `, "empty"},
		{`[{"query": "{ a }"}]`, "batched operations"},
		{`"{ a }"`, "must be a JSON object"},
		{`42`, "must be a JSON object"},
		{`{"query": "{ a }"`, "not valid JSON"},
		{`{"query": "{ a }"} {"query": "` + secret + `"}`, "not valid JSON"},
		{`{"query": "{ a }", "` + secret + `"}`, "not valid JSON"},
		{`{"qeury": "{ a }"}`, "query is missing"},
		{`{"query": ""}`, "query is missing"},
		{`{"query": {"obj": "ect"}}`, "query must be a string"},
		{`{"query": 0}`, "query must be a string"},
		{`{"query": false}`, "query must be a string"},
		{`{"query": ["` + secret + `"]}`, "query must be a string"},
		{`{"query": "{ a }", "operationName": 7}`, "operationName must be a string"},
		{`{"query": "{ a }", "operationName": "` + strings.Repeat("Q", maxOperationName+1) + `"}`, "operationName is 1025 bytes long"},
		{`{"query": "{ a }", "variables": 5}`, "variables must be a JSON object"},
		{`{"query": "{ a }", "variables": [7]}`, "variables must be a JSON object"},
		{`{"query": "{ a }", "variables": "{}"}`, "variables must be a JSON object"},
		{`{"query": "{ a }", "extensions": ["` + secret + `"]}`, "extensions must be a JSON object"},
		{"{\"query\": \"{ a(s: \\\"\xff\\\") }\"}", "not valid UTF-8"},
		{"{\"query\": \"{ a }\", \"variables\": {\"s\": \"a\xed\xa0\x80b\"}}", "not valid UTF-8"}, // a surrogate in UTF-8 form
		{`{"query": "{ a }", "variables": {"s": "\ud800"}}`, "lone UTF-16 surrogate"},
		{`{"query": "{ a }", "variables": {"s": "\udc00\ud800"}}`, "lone UTF-16 surrogate"},
		{`{"query": "{ a }", "variables": {"s": "\uD800x"}}`, "lone UTF-16 surrogate"},
		{`{"query": "{ a }", "variables": {"\ud800": 1}}`, "lone UTF-16 surrogate"},
		{`{"query": "{ a }", "variables": {"s": "\ud800\u0041"}}`, "lone UTF-16 surrogate"},
		// The document's own escapes: gqlparser would write U+FFFD for
		// each half of a pair too.
		{`{"query": "{ a(s: \"\\ud800\") }"}`, "query has a \\u escape of a UTF-16 surrogate"},
		{`{"query": "{ a(s: \"\\ud83d\\ude00\") }"}`, "query has a \\u escape of a UTF-16 surrogate"},
		{`{"query": "{ a }", "variables": {"s": "\\\ud800"}}`, "lone UTF-16 surrogate"},
	} {
		_, err := decodeBody([]byte(c.body))
		if err == nil {
			t.Errorf("%.80s: accepted, want %q", c.body, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.80s: %v, want %q", c.body, err, c.want)
		}
		for _, leak := range []string{secret, "Go ", "map[", "interface", "RawParams", "rawRequest", "json.RawMessage"} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("%.80s: the error %q names %q", c.body, err, leak)
			}
		}
	}
}

func TestDecodeQueryString(t *testing.T) {
	for _, c := range []struct {
		query, want string // want "" for accepted
	}{
		{"query=%7B+a+%7D", ""},
		{"query=%7B+a+%7D&variables=%7B%22n%22%3A1%7D&operationName=", ""},
		{"query=%7B+a+%7D&variables=null", ""},
		{"extensions=%7B%22persistedQuery%22%3A%7B%7D%7D", ""},
		{"", "query is missing"},
		{"query=%7B+a+%7D&variables=%7Bbad", "variables must be a JSON object"},
		{"query=%7B+a+%7D&variables=%5B7%5D", "variables must be a JSON object"},
		{"query=%7B+a+%7D&variables=%7B%7Dx", "variables must be a JSON object"},
		{"query=%7B+a+%7D&extensions=5", "extensions must be a JSON object"},
		{"query=%7B+a%28s%3A+%22%FF%22%29+%7D", "query is not valid UTF-8"},
		{"query=%7B+a+%7D&operationName=Q%FF", "operationName is not valid UTF-8"},
		{"query=%7B+a+%7D&variables=%7B%22s%22%3A%22%ED%A0%80%22%7D", "variables is not valid UTF-8"},
		{"query=%7B+a+%7D&variables=%7B%22s%22%3A%22%5Cud800%22%7D", "variables has a \\u escape of a lone UTF-16 surrogate"},
	} {
		v, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		_, err = decodeQueryString(v.Get)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.query, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.query, err, c.want)
		}
	}
}

func TestLoneSurrogate(t *testing.T) {
	for s, want := range map[string]int{
		``:                    -1,
		`abc`:                 -1,
		`\n\t\\`:              -1,
		`\u0041`:              -1,
		`\ud83d\ude00`:        -1,
		`\uD83D\uDE00 \u00e9`: -1,
		`\\ud800`:             -1, // an escaped backslash, then text
		`\ud800`:              0,
		`ab\ud800`:            2,
		`\ude00`:              0,
		`\ud83d\ude00\ud800`:  12,
		`\ud800\ud800\udc00`:  0,
		`\ud800\u`:            0,
		`\\\ud800`:            2,
	} {
		if got := loneSurrogate([]byte(s)); got != want {
			t.Errorf("%s: %d, want %d", s, got, want)
		}
	}
}

// BenchmarkDecodeBody: the checks decodeBody adds (UTF-8, surrogates,
// parameter types) against gqlgen's one Decode into RawParams, on a
// typical request.
func BenchmarkDecodeBody(b *testing.B) {
	body := []byte(`{"query":"query Timeline($id: ID!, $after: String) { node(id: $id) { id properties articles(first: 20, after: $after) { edges { cursor node { id title body category postedAt } } pageInfo { hasNextPage endCursor } } } }","operationName":"Timeline","variables":{"id":"author-42","after":"YXJ0aWNsZS0xMjM0NQ"}}`)
	b.Run("decodeBody", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodeBody(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gqlgen", func(b *testing.B) {
		for b.Loop() {
			var p graphql.RawParams
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.UseNumber()
			if err := dec.Decode(&p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
