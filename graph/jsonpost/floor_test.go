package jsonpost

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The values clients send take no allocation to read (issue 27, the HTTP
// floor); what they mean is TestContentType's and TestIsJSONBody's.
func TestHeadersClientsSendCostNoAllocation(t *testing.T) {
	for _, accept := range []string{contentJSON, contentGraphQLResponse, "*/*"} {
		r := httptest.NewRequest(http.MethodPost, "/query", nil)
		r.Header.Set("Accept", accept)
		if n := testing.AllocsPerRun(100, func() { ContentType(r) }); n != 0 {
			t.Errorf("ContentType with Accept %q: %.0f allocations, want 0", accept, n)
		}
	}
	for _, ct := range []string{contentJSON, "application/json; charset=utf-8"} {
		if n := testing.AllocsPerRun(100, func() { isJSONBody(ct) }); n != 0 {
			t.Errorf("isJSONBody(%q): %.0f allocations, want 0", ct, n)
		}
	}
	h := http.Header{}
	if n := testing.AllocsPerRun(100, func() { setContentType(h, contentJSON) }); n != 0 {
		t.Errorf("setContentType: %.0f allocations, want 0", n)
	}
}

func TestIsJSONBody(t *testing.T) {
	for value, want := range map[string]bool{
		"application/json":                      true,
		"application/json; charset=utf-8":       true,
		"application/json;charset=utf-8":        true,
		"application/json; charset=UTF-8":       true,
		"Application/JSON; Charset=\"utf-8\"":   true,
		"application/json ; charset=utf-8":      true,
		"application/json; charset=latin1":      false,
		"application/json; charset=utf-8; x=\"": false,
		"application/graphql-response+json":     false,
		"text/plain":                            false,
		"":                                      false,
		"application/jsonx":                     false,
	} {
		if got := isJSONBody(value); got != want {
			t.Errorf("isJSONBody(%q) = %v, want %v", value, got, want)
		}
	}
}

func TestSetContentTypeIsNotShared(t *testing.T) {
	h := http.Header{}
	setContentType(h, contentJSON)
	h.Add("Content-Type", "x") // must not write into the shared slice
	other := http.Header{}
	setContentType(other, contentJSON)
	if got := other.Values("Content-Type"); len(got) != 1 || got[0] != "application/json; charset=utf-8" {
		t.Errorf("a second response's Content-Type is %q", got)
	}
	setContentType(h, contentGraphQLResponse)
	if got := h.Get("Content-Type"); got != "application/graphql-response+json; charset=utf-8" {
		t.Errorf("Content-Type %q", got)
	}
}
