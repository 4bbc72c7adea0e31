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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/store"
	"github.com/hbgraph/hbgraph/tracing"
)

// traceQ3Data writes "troot", following three nodes with two articles
// each, whose names and titles the spans must never carry.
func traceQ3Data(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.CreateNode(ctx, "troot", "", store.Properties{"name": "secret-root-name"}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		id := fmt.Sprintf("tfollowed%d", i)
		if _, err := st.CreateNode(ctx, id, "", store.Properties{"name": "secret-name"}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateRelationship(ctx, store.RelationshipKey{Start: "troot", Type: "follow", End: id}, nil); err != nil {
			t.Fatal(err)
		}
		for a := range 2 {
			if _, err := st.PostArticle(ctx, id, fmt.Sprintf("secret-title %d", a), "secret words", "tech"); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestTracingSpanTreeQ3 runs Q3 through the gateway on both executors with
// the SDK's in-memory exporter: the server span continues the client's
// traceparent; under it the operation's span; under that one span per wave
// (the plan's waves, or gqlgen's dataloader batches), and under the waves
// one span per store call, as many as explain reports. No span carries an
// id, a property or a title.
func TestTracingSpanTreeQ3(t *testing.T) {
	q3, err := os.ReadFile("bench/queries/q3.graphql")
	if err != nil {
		t.Fatal(err)
	}
	for _, executor := range []string{"plan", "gqlgen"} {
		t.Run(executor, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			tracing.Use(tp)
			t.Cleanup(func() { tracing.Use(nil); _ = tp.Shutdown(context.Background()) })

			st, _ := memstore.New(t)
			traceQ3Data(t, st)
			// gqlgen's dataloaders gather keys for --batch-wait: under the
			// race detector on a busy machine, the default let a
			// neighbour's articles miss its batch and go in one more. The
			// test counts batches, so it gives them time to gather.
			cfg, err := parseConfig([]string{"--executor", executor, "--batch-wait", "50ms"})
			if err != nil {
				t.Fatal(err)
			}
			gateway, _ := newGateway(cfg, st, zerolog.Nop(), security{})
			srv := httptest.NewServer(gateway)
			t.Cleanup(srv.Close)

			const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
			body, _ := json.Marshal(map[string]any{"query": string(q3), "variables": map[string]any{"id": "troot"},
				"extensions": map[string]any{"explain": true}})
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/query", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("traceparent", "00-"+traceID+"-"+parentID+"-01")
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var out struct {
				Errors     []json.RawMessage `json:"errors"`
				Extensions struct {
					Explain struct {
						Calls int               `json:"calls"`
						Waves []json.RawMessage `json:"waves"`
					} `json:"explain"`
				} `json:"extensions"`
			}
			if err := json.Unmarshal(raw, &out); err != nil || len(out.Errors) > 0 {
				t.Fatalf("%s: %v", raw, err)
			}
			if !strings.Contains(string(raw), "secret-title 1") {
				t.Fatalf("Q3 did not read the articles: %s", raw)
			}

			spans := waitForSpan(t, exp, "POST /query")
			byID := map[trace.SpanID]tracetest.SpanStub{}
			children := map[trace.SpanID][]tracetest.SpanStub{}
			var server tracetest.SpanStub
			for _, s := range spans {
				byID[s.SpanContext.SpanID()] = s
				children[s.Parent.SpanID()] = append(children[s.Parent.SpanID()], s)
				if s.Name == "POST /query" {
					server = s
				}
				if got := s.SpanContext.TraceID().String(); got != traceID {
					t.Errorf("span %q in trace %s, want the client's %s", s.Name, got, traceID)
				}
				for _, kv := range s.Attributes {
					if v := kv.Value.String(); strings.Contains(v, "secret") || strings.Contains(v, "troot") || strings.Contains(v, "tfollowed") {
						t.Errorf("span %q attribute %s = %q carries data", s.Name, kv.Key, v)
					}
				}
			}
			if server.Parent.SpanID().String() != parentID || !server.Parent.IsRemote() {
				t.Fatalf("server span's parent %v, want the traceparent's %s", server.Parent.SpanID(), parentID)
			}
			ops := children[server.SpanContext.SpanID()]
			if len(ops) != 1 || ops[0].Name != "query Q3" {
				t.Fatalf("under the server span: %v, want one \"query Q3\"", names(ops))
			}
			op := ops[0]
			attrs := map[string]string{}
			for _, kv := range op.Attributes {
				attrs[string(kv.Key)] = kv.Value.String()
			}
			if attrs["hbgraph.executor"] != executor || attrs["graphql.operation.name"] != "Q3" || attrs["graphql.operation.type"] != "query" ||
				attrs["hbgraph.complexity"] == "" || attrs["hbgraph.complexity"] == "0" {
				t.Errorf("operation span's attributes %v", attrs)
			}
			waveName := map[string]string{"plan": "wave", "gqlgen": "batch"}[executor]
			waves := children[op.SpanContext.SpanID()]
			storeSpans := 0
			for _, w := range waves {
				if w.Name != waveName {
					t.Errorf("under the operation: %q, want only %q spans", w.Name, waveName)
				}
				calls := children[w.SpanContext.SpanID()]
				if len(calls) == 0 {
					t.Errorf("%s span with no store call under it", w.Name)
				}
				for _, c := range calls {
					if c.SpanKind != trace.SpanKindClient || c.EndTime.Before(c.StartTime) || c.StartTime.Before(w.StartTime) {
						t.Errorf("store span %q: kind %v, %v..%v in a wave %v..", c.Name, c.SpanKind, c.StartTime, c.EndTime, w.StartTime)
					}
				}
				storeSpans += len(calls)
			}
			if executor == "plan" && len(waves) != len(out.Extensions.Explain.Waves) {
				t.Errorf("%d wave spans, explain reports %d waves", len(waves), len(out.Extensions.Explain.Waves))
			}
			if executor == "gqlgen" {
				// Explain counts a batch's concurrent scans as waves of
				// their own when one ends before the next starts; the
				// batches are what the dataloaders sent: the root's row,
				// its relationships, the neighbors' rows, their articles.
				var kinds []string
				for _, w := range waves {
					for _, kv := range w.Attributes {
						if kv.Key == "hbgraph.wave.kind" {
							kinds = append(kinds, kv.Value.AsString())
						}
					}
				}
				slices.Sort(kinds)
				if want := []string{"articles", "relationships", "rows", "rows"}; !slices.Equal(kinds, want) {
					t.Errorf("batches of %v, want %v", kinds, want)
				}
			}
			if storeSpans != out.Extensions.Explain.Calls || storeSpans == 0 {
				t.Errorf("%d store spans under the waves, explain reports %d calls", storeSpans, out.Extensions.Explain.Calls)
			}
			if want := 2 + len(waves) + storeSpans; len(spans) != want {
				t.Errorf("%d spans, want %d: %v", len(spans), want, names(spans))
			}
		})
	}
}

// TestTracingOffByDefault: without the OTEL_* variables no SDK is set up,
// and the gateway answers without spans or a trace id.
func TestTracingOffByDefault(t *testing.T) {
	for _, env := range []map[string]string{
		{},
		{"OTEL_SERVICE_NAME": "x", "OTEL_TRACES_SAMPLER": "always_on"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "none"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"},
	} {
		s, err := tracing.FromEnv(func(k string) string { return env[k] })
		if err != nil || s.On {
			t.Errorf("%v: on %v, %v; want off", env, s.On, err)
		}
	}
	for _, env := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"},
		{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
	} {
		s, err := tracing.FromEnv(func(k string) string { return env[k] })
		if err != nil || !s.On {
			t.Errorf("%v: on %v, %v; want on", env, s.On, err)
		}
	}
	for _, env := range []map[string]string{
		{"OTEL_TRACES_EXPORTER": "zipkin"},
		{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
	} {
		if _, err := tracing.FromEnv(func(k string) string { return env[k] }); err == nil {
			t.Errorf("%v: accepted", env)
		}
	}
	if tracing.Enabled() {
		t.Fatal("tracing on without Setup or Use")
	}
}

// waitForSpan returns the exported spans once one is named name: the
// server span ends after the client has its response.
func waitForSpan(t *testing.T, exp *tracetest.InMemoryExporter, name string) tracetest.SpanStubs {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		spans := exp.GetSpans()
		for _, s := range spans {
			if s.Name == name {
				return spans
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q span; exported: %v", name, names(spans))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func names(spans []tracetest.SpanStub) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name+" < "+s.Parent.SpanID().String())
	}
	return out
}
