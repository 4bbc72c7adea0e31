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

func TestResponseContentType(t *testing.T) {
	for accept, want := range map[string]string{
		"":                                  contentJSON,
		"*/*":                               contentJSON,
		"application/json":                  contentJSON,
		"application/graphql-response+json": contentGraphQLResponse,
		"application/graphql-response+json;q=1, application/json;q=0.9": contentGraphQLResponse,
		"text/html, application/json":                                   contentJSON,
		"text/html":                                                     contentGraphQLResponse,
	} {
		r := httptest.NewRequest(http.MethodPost, "/query", nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if got := responseContentType(r); got != want {
			t.Errorf("Accept %q: %s, want %s", accept, got, want)
		}
	}
}

func TestStatusFor(t *testing.T) {
	protocol := gqlerror.List{gqlerror.Errorf("cannot parse")}
	errcode.Set(protocol[0], errcode.ParseFailed)
	other := gqlerror.List{gqlerror.Errorf("something else")}
	for _, c := range []struct {
		contentType string
		errs        gqlerror.List
		want        int
	}{
		{contentJSON, protocol, http.StatusUnprocessableEntity},
		{contentGraphQLResponse, protocol, http.StatusBadRequest},
		{contentJSON, other, http.StatusOK},
		{contentGraphQLResponse, other, http.StatusOK},
	} {
		if got := statusFor(c.contentType, c.errs); got != c.want {
			t.Errorf("%s, %v: %d, want %d", c.contentType, c.errs, got, c.want)
		}
	}
}

func TestSupports(t *testing.T) {
	for _, c := range []struct {
		method, contentType, upgrade string
		want                         bool
	}{
		{http.MethodPost, "application/json", "", true},
		{http.MethodPost, "application/json; charset=utf-8", "", true},
		{http.MethodPost, "application/graphql", "", false},
		{http.MethodGet, "application/json", "", false},
		{http.MethodPost, "application/json", "websocket", false},
		{http.MethodPost, "", "", false},
	} {
		r := httptest.NewRequest(c.method, "/query", nil)
		r.Header.Set("Content-Type", c.contentType)
		if c.upgrade != "" {
			r.Header.Set("Upgrade", c.upgrade)
		}
		if got := (Transport{}).Supports(r); got != c.want {
			t.Errorf("%s %q upgrade %q: %v, want %v", c.method, c.contentType, c.upgrade, got, c.want)
		}
	}
}
