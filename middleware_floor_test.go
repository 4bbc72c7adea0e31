package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/rs/zerolog"
)

// observeAllocations bounds what observe allocates around a request
// answered 200 (issue 27, the HTTP floor): the request's record and id,
// its context with the timeout, the body's bound, the status recorder.
// Counting the 200 formats and hashes no label.
const observeAllocations = 10

func TestObserveAllocations(t *testing.T) {
	m := newMetrics()
	h := observe(zerolog.Nop(), m, 1<<20, 10*time.Second, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	r := httptest.NewRequest(http.MethodPost, "/query", strings.NewReader(`{}`))
	w := &discardWriter{h: http.Header{"X-Request-Id": {"abc"}}}
	h.ServeHTTP(w, r)
	n := testing.AllocsPerRun(200, func() { h.ServeHTTP(w, r) })
	if n > observeAllocations {
		t.Errorf("observe allocates %.0f times a request, want at most %d", n, observeAllocations)
	}
	if got := counterValue(t, m, "200"); got != 202 {
		t.Errorf("hbgraph_requests_total{status=\"200\"} = %v, want 202", got)
	}
}

func TestCountRequestByStatus(t *testing.T) {
	m := newMetrics()
	for _, status := range []int{200, 413, 200, 503, 200} {
		m.countRequest(status)
	}
	for status, want := range map[string]float64{"200": 3, "413": 1, "503": 1} {
		if got := counterValue(t, m, status); got != want {
			t.Errorf("status %s: %v, want %v", status, got, want)
		}
	}
}

func counterValue(t *testing.T, m *metrics, status string) float64 {
	t.Helper()
	var pb dto.Metric
	if err := m.requests.WithLabelValues(status).Write(&pb); err != nil {
		t.Fatal(err)
	}
	return pb.GetCounter().GetValue()
}
