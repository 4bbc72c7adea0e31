package tests

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRateLimitHitAndRecovered: a client address over --rate-limit gets
// 429 with Retry-After and RATE_LIMITED, counted in /metrics, and is
// served again once its bucket refills; /healthz is never limited.
func TestRateLimitHitAndRecovered(t *testing.T) {
	s := startServer(t, "--rate-limit", "2", "--rate-burst", "2")
	q := gqlRequest{Query: "{ __typename }"}
	for i := range 2 {
		if r := s.post(t, q); r.Status != http.StatusOK {
			t.Fatalf("request %d of the burst: %d %s", i, r.Status, r.Body)
		}
	}
	r := s.post(t, q)
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" || len(r.Errors) != 1 || r.Errors[0].Code() != "RATE_LIMITED" {
		t.Fatalf("over the limit: %d, Retry-After %q, %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	if status, _ := s.getText(t, "/healthz"); status != http.StatusOK {
		t.Errorf("/healthz while limited: %d", status)
	}
	if n := s.metrics(t)["hbgraph_rate_limited_total"]; n < 1 {
		t.Errorf("hbgraph_rate_limited_total = %v", n)
	}
	time.Sleep(1500 * time.Millisecond) // two tokens a second: one is back, and more
	if r := s.post(t, q); r.Status != http.StatusOK {
		t.Errorf("after the bucket refilled: %d %s", r.Status, r.Body)
	}
}

// TestSecurityHeadersAndAdminListener: every gateway route carries the
// security headers; /metrics is on the admin listener only.
func TestSecurityHeadersAndAdminListener(t *testing.T) {
	s := startServer(t)
	for _, path := range []string{"/", "/query?query=%7B__typename%7D", "/healthz"} {
		resp, err := httpClient.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"} {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("GET %s: %s %q, want %q", path, k, got, v)
			}
		}
	}
	if status, text := s.getText(t, "/metrics"); status == http.StatusOK && strings.Contains(text, "hbgraph_requests_total") {
		t.Error("/metrics answered on the gateway's listener")
	}
	if len(s.metrics(t)) == 0 {
		t.Error("no metrics on the admin listener")
	}
}
