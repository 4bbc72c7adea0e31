package edge

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHeadersGiveEveryResponseAnID(t *testing.T) {
	h := Headers(http.NotFoundHandler())
	for client, kept := range map[string]bool{"": false, "abc-1.2_X": true, "two words": false, "\u202eevil": false} {
		r := httptest.NewRequest(http.MethodGet, "/nope", nil)
		if client != "" {
			r.Header.Set("X-Request-Id", client)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got := w.Header().Get("X-Request-Id")
		if got == "" || (got == client) != kept {
			t.Errorf("client id %q: response id %q (kept: want %v)", client, got, kept)
		}
	}
}

func TestNoStoreKeepsCORSVary(t *testing.T) {
	h := NoStore(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTooManyRequests) }))
	w := httptest.NewRecorder()
	w.Header().Add("Vary", "Origin")
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/query", nil))
	if w.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q", w.Header().Get("Cache-Control"))
	}
	if v := w.Header().Values("Vary"); len(v) != 2 || v[0] != "Origin" || v[1] != "Authorization" {
		t.Errorf("Vary %q, want Origin then Authorization", v)
	}
}
