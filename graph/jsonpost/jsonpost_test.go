package jsonpost

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/graph/codes"
)

// TestWriteMatchesEncodingJSON checks that write produces what gqlgen's
// json.Marshal of the response does, as a JSON value, for every field a
// response can carry.
func TestWriteMatchesEncodingJSON(t *testing.T) {
	yes := true
	withCode := gqlerror.Errorf("no such node")
	withCode.Path = ast.Path{ast.PathName("node"), ast.PathIndex(2)}
	withCode.Extensions = map[string]any{"code": "NOT_FOUND"}
	for name, resp := range map[string]*graphql.Response{
		"data":              {Data: json.RawMessage(`{"node":{"id":"n1","properties":{"a":[1,2.5,"<x>"]}}}`)},
		"no data":           {},
		"errors only":       {Errors: gqlerror.List{withCode}},
		"errors and data":   {Errors: gqlerror.List{withCode, gqlerror.Errorf("second")}, Data: json.RawMessage(`{"node":null}`)},
		"extensions":        {Data: json.RawMessage(`{}`), Extensions: map[string]any{"explain": map[string]any{"calls": 3}}},
		"incremental parts": {Data: json.RawMessage(`{"a":1}`), Label: "later", Path: ast.Path{ast.PathName("x")}, HasNext: &yes},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(resp)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			write(&got, resp)
			var g, w any
			if err := json.Unmarshal(got.Bytes(), &g); err != nil {
				t.Fatalf("not JSON: %v: %s", err, got.Bytes())
			}
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("wrote  %s\nwanted %s", got.Bytes(), want)
			}
		})
	}
}

// TestWriteCopiesData checks that the data goes out byte for byte.
func TestWriteCopiesData(t *testing.T) {
	data := `{"node":{"title":"a <b> & c","n":1.50}}`
	var got bytes.Buffer
	write(&got, &graphql.Response{Data: json.RawMessage(data)})
	if want := `{"data":` + data + `}`; got.String() != want {
		t.Errorf("wrote %s, want %s", got.String(), want)
	}
}

func TestContentType(t *testing.T) {
	for _, c := range []struct {
		accept string
		want   string
		ok     bool
	}{
		{"", contentJSON, true},
		{"*/*", contentJSON, true},
		{"application/*", contentJSON, true},
		{"application/json", contentJSON, true},
		{"application/json; charset=utf-8", contentJSON, true},
		{"application/graphql-response+json", contentGraphQLResponse, true},
		{"Application/GraphQL-Response+JSON", contentGraphQLResponse, true},
		// Apollo Client's and the spec's recommended header.
		{"application/graphql-response+json,application/json;q=0.9", contentGraphQLResponse, true},
		{"application/graphql-response+json; charset=utf-8, application/json; charset=utf-8", contentGraphQLResponse, true},
		// Equal q: the first listed.
		{"application/json, application/graphql-response+json", contentJSON, true},
		// The q values decide, not the order.
		{"application/json;q=0.5, application/graphql-response+json", contentGraphQLResponse, true},
		{"application/graphql-response+json;q=0.1, */*", contentJSON, true},
		// A named type beats a wildcard of the same q.
		{"*/*, application/graphql-response+json", contentGraphQLResponse, true},
		{"application/*, application/graphql-response+json", contentGraphQLResponse, true},
		{"text/html, application/json", contentJSON, true},
		{"text/html, */*;q=0.8", contentJSON, true},
		// The most specific range gives a type its q: json is refused.
		{"application/json;q=0, */*", contentGraphQLResponse, true},
		// Neither: 406.
		{"text/html", contentJSON, false},
		{"application/json;q=0", contentJSON, false},
		{"application/xml, text/*", contentJSON, false},
	} {
		r := httptest.NewRequest(http.MethodPost, "/query", nil)
		if c.accept != "" {
			r.Header.Set("Accept", c.accept)
		}
		if got, ok := ContentType(r); got != c.want || ok != c.ok {
			t.Errorf("Accept %q: %s %v, want %s %v", c.accept, got, ok, c.want, c.ok)
		}
	}
}

func TestRequestErrorStatus(t *testing.T) {
	protocol := gqlerror.List{gqlerror.Errorf("cannot parse")}
	errcode.Set(protocol[0], errcode.ParseFailed)
	limit := gqlerror.List{{Message: "too deep", Extensions: map[string]any{"code": codes.BadUserInput}}}
	apq := gqlerror.List{{Message: "PersistedQueryNotFound", Extensions: map[string]any{"code": codes.PersistedQueryNotFound}}}
	for _, c := range []struct {
		contentType string
		errs        gqlerror.List
		want        int
	}{
		{contentJSON, protocol, http.StatusOK},
		{contentJSON, limit, http.StatusOK},
		{contentJSON, apq, http.StatusOK},
		{contentGraphQLResponse, protocol, http.StatusBadRequest},
		{contentGraphQLResponse, limit, http.StatusBadRequest},
		{contentGraphQLResponse, apq, http.StatusNotFound},
	} {
		if got := requestErrorStatus(c.contentType, c.errs); got != c.want {
			t.Errorf("%s, %v: %d, want %d", c.contentType, c.errs, got, c.want)
		}
	}
}

func TestSupports(t *testing.T) {
	for _, c := range []struct {
		method, upgrade string
		post, get       bool
	}{
		{http.MethodPost, "", true, false},
		{http.MethodGet, "", false, true},
		{http.MethodPost, "websocket", false, false},
		{http.MethodGet, "websocket", false, false},
		{http.MethodPut, "", false, false},
	} {
		r := httptest.NewRequest(c.method, "/query", nil)
		if c.upgrade != "" {
			r.Header.Set("Upgrade", c.upgrade)
		}
		if got := (Transport{}).Supports(r); got != c.post {
			t.Errorf("POST transport, %s upgrade %q: %v, want %v", c.method, c.upgrade, got, c.post)
		}
		if got := (GET{}).Supports(r); got != c.get {
			t.Errorf("GET transport, %s upgrade %q: %v, want %v", c.method, c.upgrade, got, c.get)
		}
	}
}
