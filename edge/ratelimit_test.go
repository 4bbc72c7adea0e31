package edge

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/graph/codes"
)

// TestRateLimit: a client gets its burst, then 429 with Retry-After and a
// code until its bucket refills; another client is not affected; a zero
// rate limits nothing.
func TestRateLimit(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	limited := 0
	l := RateLimit{Rate: 2, Burst: 3, OnLimit: func(*http.Request) { limited++ }, now: func() time.Time { return now }}
	h := l.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	do := func(addr string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/query", nil)
		r.RemoteAddr = addr
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for i := range 3 {
		if w := do("10.0.0.1:5000"); w.Code != http.StatusOK {
			t.Fatalf("request %d of the burst: %d", i, w.Code)
		}
	}
	w := do("10.0.0.1:5001") // another port, the same client
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("past the burst: %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	var body struct {
		Errors []struct {
			Extensions struct{ Code string } `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || len(body.Errors) != 1 || body.Errors[0].Extensions.Code != codes.RateLimited {
		t.Errorf("429 body %s: %v", w.Body, err)
	}
	if w := do("10.0.0.2:5000"); w.Code != http.StatusOK {
		t.Errorf("another client: %d", w.Code)
	}
	now = now.Add(time.Second) // two tokens back
	for i := range 2 {
		if w := do("10.0.0.1:5000"); w.Code != http.StatusOK {
			t.Errorf("after a second, request %d: %d", i, w.Code)
		}
	}
	if w := do("10.0.0.1:5000"); w.Code != http.StatusTooManyRequests {
		t.Errorf("after the refill was spent: %d", w.Code)
	}
	if limited != 2 {
		t.Errorf("OnLimit called %d times, want 2", limited)
	}
	off := RateLimit{}.Middleware(http.NotFoundHandler())
	for range 100 {
		w := httptest.NewRecorder()
		off.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		if w.Code == http.StatusTooManyRequests {
			t.Fatal("a zero rate limited a request")
		}
	}
}

// TestRateLimitBoundsItsClients: many client addresses keep at most
// maxClients buckets, dropping idle ones first.
func TestRateLimitBoundsItsClients(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	b := &buckets{limit: RateLimit{Rate: 1, Burst: 1}, m: map[string]*bucket{}}
	for i := range maxClients + 1000 {
		b.take(fmt.Sprint("client", i), now)
	}
	if len(b.m) > maxClients {
		t.Errorf("%d buckets kept, at most %d", len(b.m), maxClients)
	}
	now = now.Add(time.Hour) // every bucket full again: all idle
	for i := range maxClients {
		b.take(fmt.Sprint("later", i), now)
	}
	if len(b.m) > maxClients {
		t.Errorf("%d buckets kept, at most %d", len(b.m), maxClients)
	}
}
