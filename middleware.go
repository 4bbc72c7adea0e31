package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/hbgraph/hbgraph/explain"
)

// metrics are the Prometheus collectors served at /metrics.
type metrics struct {
	registry   *prometheus.Registry
	requests   *prometheus.CounterVec
	errors     *prometheus.CounterVec
	latency    prometheus.Histogram
	storeCalls prometheus.Histogram
	storeWaves prometheus.Histogram
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
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
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

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// requestID is the client's X-Request-Id when it sends a sane one, else a
// fresh random id.
func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 64 {
		return id
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// observe wraps the GraphQL endpoint: it gives the request an id and a
// store-call record, bounds its body and duration, and afterwards writes
// one log line and the metrics. Property values never reach the log.
func observe(log zerolog.Logger, m *metrics, maxBody int64, timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := explain.NewRequest(requestID(r))
		w.Header().Set("X-Request-Id", rec.ID)
		ctx, cancel := context.WithTimeout(explain.With(r.Context(), rec), timeout)
		defer cancel()
		if r.ContentLength > maxBody {
			writeTooLarge(w, rec.ID, maxBody)
			m.requests.WithLabelValues(strconv.Itoa(http.StatusRequestEntityTooLarge)).Inc()
			m.errors.WithLabelValues("BAD_USER_INPUT").Inc()
			log.Info().Str("request_id", rec.ID).Int("status", http.StatusRequestEntityTooLarge).
				Int64("content_length", r.ContentLength).Msg("graphql")
			return
		}
		// A body without a length is cut at maxBody; the transport then
		// reports it as undecodable.
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		sw := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r.WithContext(ctx))

		elapsed := time.Since(start)
		calls, waves := rec.Counts()
		operation, codes := rec.Outcome()
		m.requests.WithLabelValues(strconv.Itoa(sw.status)).Inc()
		for _, c := range codes {
			m.errors.WithLabelValues(c).Inc()
		}
		m.latency.Observe(elapsed.Seconds())
		m.storeCalls.Observe(float64(calls))
		m.storeWaves.Observe(float64(waves))
		log.Info().Str("request_id", rec.ID).Str("operation", operation).Int("status", sw.status).
			Dur("duration", elapsed).Int("store_calls", calls).Int("store_waves", waves).
			Strs("error_codes", codes).Msg("graphql")
	})
}

// writeTooLarge answers a request whose declared body exceeds the limit.
func writeTooLarge(w http.ResponseWriter, id string, limit int64) {
	writeClientError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes (request id %s)", limit, id))
}

// guardGET refuses, with a code, the GET requests gqlgen's GET transport
// would refuse without one: undecodable variables or extensions, and
// operations other than queries (GET must not change state).
func guardGET(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		q := r.URL.Query()
		for _, param := range []string{"variables", "extensions"} {
			if v := q.Get(param); v != "" {
				var obj map[string]any
				if err := json.Unmarshal([]byte(v), &obj); err != nil {
					writeClientError(w, http.StatusBadRequest, param+" must be a JSON object")
					return
				}
			}
		}
		if doc, err := parser.ParseQuery(&ast.Source{Input: q.Get("query")}); err == nil {
			name := q.Get("operationName")
			for _, op := range doc.Operations {
				if (name == "" || op.Name == name) && op.Operation != ast.Query {
					w.Header().Set("Allow", "POST")
					writeClientError(w, http.StatusMethodNotAllowed, "only queries may be sent with GET; use POST for "+string(op.Operation)+"s")
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

func writeClientError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{
		"errors": []map[string]any{{"message": msg, "extensions": map[string]any{"code": "BAD_USER_INPUT"}}},
		"data":   nil,
	})
	_, _ = w.Write(b)
}
