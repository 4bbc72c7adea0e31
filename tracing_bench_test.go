package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/tracing"
)

// go test -run '^$' -bench TracingCost -benchtime 2000x .
//
// BenchmarkTracingCost measures CPU per request of Q1 and Q3 through
// newGateway in-process (ServeHTTP), tracing off and on at 100% sampling,
// alternating in one sitting. On, spans go through the SDK's batch
// processor and the OTLP/HTTP exporter to a receiver in this process that
// discards them: span building, protobuf encoding and the HTTP export
// all count (the receiver's reading too, a small part).
func BenchmarkTracingCost(b *testing.B) {
	st, _ := memstore.New(b)
	writeBenchGraph(b, st)
	ctx := context.Background()
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer receiver.Close()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(receiver.URL+"/v1/traces"))
	if err != nil {
		b.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	defer func() { tracing.Use(nil); _ = tp.Shutdown(ctx) }()

	cfg, err := parseConfig(nil)
	if err != nil {
		b.Fatal(err)
	}
	off, _ := newGateway(cfg, st, zerolog.Nop(), security{})
	tracing.Use(tp)
	on, _ := newGateway(cfg, st, zerolog.Nop(), security{})
	tracing.Use(nil)

	var bodies [][]byte
	for _, q := range []string{"q1", "q3"} {
		text, err := os.ReadFile("bench/queries/" + q + ".graphql")
		if err != nil {
			b.Fatal(err)
		}
		id := map[string]string{"q1": "n1", "q3": "n0"}[q]
		body, _ := json.Marshal(map[string]any{"query": string(text), "variables": map[string]any{"id": id}})
		bodies = append(bodies, body)
	}
	for round := range 3 {
		for i, q := range []string{"q1", "q3"} {
			for _, mode := range []string{"off", "on"} {
				h := off
				if mode == "on" {
					h = on
					tracing.Use(tp)
				}
				if out := serve(h, bodies[i]); bytes.Contains(out, []byte(`"errors"`)) || !bytes.Contains(out, []byte(`Zurich`)) {
					b.Fatalf("%s: %s", q, out)
				}
				b.Run(fmt.Sprintf("%s/%s/round%d", q, mode, round), func(b *testing.B) {
					b.ReportAllocs()
					before := cpuTime(b)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							serve(h, bodies[i])
						}
					})
					_ = tp.ForceFlush(ctx) // the export's CPU counts
					b.ReportMetric(float64((cpuTime(b)-before).Microseconds())/float64(b.N), "cpu-us/op")
				})
				tracing.Use(nil)
			}
		}
	}
}
