package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/edge"
	"github.com/hbgraph/hbgraph/explain"
	"github.com/hbgraph/hbgraph/graph/codes"
	"github.com/hbgraph/hbgraph/graph/jsonpost"
	"github.com/hbgraph/hbgraph/graph/resolvers"
	"github.com/hbgraph/hbgraph/tracing"
)

// metrics are the Prometheus collectors served at /metrics.
type metrics struct {
	registry   *prometheus.Registry
	requests   *prometheus.CounterVec
	errors     *prometheus.CounterVec
	latency    prometheus.Histogram
	storeCalls prometheus.Histogram
	storeWaves prometheus.Histogram
	// requestsOK is requests' 200 series, made on the first 200: most
	// requests count into it without formatting and hashing the label.
	requestsOK atomic.Pointer[prometheus.Counter]
}

// countRequest counts one request answered with status.
func (m *metrics) countRequest(status int) {
	if status != http.StatusOK {
		m.requests.WithLabelValues(strconv.Itoa(status)).Inc()
		return
	}
	c := m.requestsOK.Load()
	if c == nil {
		ok := m.requests.WithLabelValues("200")
		c = &ok
		m.requestsOK.Store(c)
	}
	(*c).Inc()
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hbgraph_requests_total", Help: "GraphQL requests by HTTP status.",
		}, []string{"status"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hbgraph_errors_total", Help: "GraphQL errors by extensions.code.",
		}, []string{"code"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "hbgraph_request_duration_seconds", Help: "GraphQL request latency.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18), // 100 us .. 13 s
		}),
		storeCalls: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "hbgraph_store_calls", Help: "Store round trips per GraphQL request.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 10),
		}),
		storeWaves: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "hbgraph_store_waves", Help: "Sequential store round-trip waves per GraphQL request.",
			Buckets: prometheus.LinearBuckets(0, 1, 12),
		}),
	}
	m.registry.MustRegister(m.requests, m.errors, m.latency, m.storeCalls, m.storeWaves,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (an event
// stream clears its deadlines).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// requestID is the id edge.Headers gave the response, or a fresh one
// when nothing did (a handler used on its own, in tests).
func requestID(w http.ResponseWriter, r *http.Request) string {
	if id := w.Header().Get("X-Request-Id"); id != "" {
		return id
	}
	id := edge.RequestID(r)
	w.Header().Set("X-Request-Id", id)
	return id
}

// observe wraps the GraphQL endpoint: it gives the request an id and a
// store-call record, bounds its body and duration, and afterwards writes
// one log line and the metrics. Property values never reach the log.
func observe(log zerolog.Logger, m *metrics, maxBody int64, timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := explain.NewRequest(requestID(w, r))
		traceID := tracing.RequestStarted(r.Context(), rec.ID) // "": no span records it
		ctx, cancel := context.WithTimeout(explain.With(r.Context(), rec), timeout)
		defer cancel()
		// Mutations derive their ops from it (graph/resolvers/idempotency.go).
		ctx = resolvers.WithIdempotencyKey(ctx, r.Header.Values(resolvers.IdempotencyKeyHeader))
		if r.ContentLength > maxBody {
			writeTooLarge(w, r, rec.ID, maxBody)
			m.requests.WithLabelValues(strconv.Itoa(http.StatusRequestEntityTooLarge)).Inc()
			m.errors.WithLabelValues(codes.BadUserInput).Inc()
			log.Info().Str("request_id", rec.ID).Str("method", r.Method).Str("path", r.URL.Path).Str("client", edge.ClientAddress(r)).
				Int("status", http.StatusRequestEntityTooLarge).Int64("content_length", r.ContentLength).Msg("graphql")
			return
		}
		// A body without a length is cut at maxBody; the transport then
		// answers 413 too.
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		sw := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r.WithContext(ctx))

		elapsed := time.Since(start)
		calls, waves := rec.Counts()
		operation, codes := rec.Outcome()
		refusedCode, refusedReason := rec.Refused()
		if refusedCode != "" && len(codes) == 0 {
			codes = []string{refusedCode}
		}
		m.countRequest(sw.status)
		for _, c := range codes {
			m.errors.WithLabelValues(c).Inc()
		}
		if sseStreamFrom(r.Context()) == nil { // an event stream lasts: no latency
			m.latency.Observe(elapsed.Seconds())
		}
		m.storeCalls.Observe(float64(calls))
		m.storeWaves.Observe(float64(waves))
		line := log.Info().Str("request_id", rec.ID).Str("method", r.Method).Str("path", r.URL.Path).Str("client", edge.ClientAddress(r))
		if sub := rec.Subject(); sub != "" { // who, for an audit; never the token
			line = line.Str("subject", truncate(sub, maxLoggedOperation))
		}
		if refusedReason != "" { // which check refused it, never the token
			line = line.Str("refused", refusedReason)
		}
		if traceID != "" {
			line = line.Str("trace_id", traceID)
		}
		line.Str("operation", truncate(operation, maxLoggedOperation)).Int("status", sw.status).
			Float64("duration_ms", milliseconds(elapsed)).Int("store_calls", calls).Int("store_waves", waves).
			Strs("error_codes", codes).Msg("graphql")
	})
}

// noteRefusal records, for observe's log line, that the request of ctx
// was refused at the edge with code for reason.
func noteRefusal(ctx context.Context, code, reason string) {
	if rec := explain.From(ctx); rec != nil {
		rec.SetRefused(code, reason)
	}
}

// writeTooLarge answers a request whose declared body exceeds the limit.
func writeTooLarge(w http.ResponseWriter, r *http.Request, id string, limit int64) {
	jsonpost.Refuse(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes (request id %s)", limit, id))
}

// maxLoggedOperation bounds the operation name in the log line: it is the
// client's operationName, up to 1 KiB.
const maxLoggedOperation = 128

// truncate cuts s to at most n bytes, at a UTF-8 boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
