package tests

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP trace receiver on 127.0.0.1: it decodes
// every ExportTraceServiceRequest and keeps the spans.
type otlpReceiver struct {
	url string
	srv *http.Server

	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rc := &otlpReceiver{url: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		raw, err := io.ReadAll(body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(raw, &req)
		}
		if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("receiver: %s request: %v", r.Header.Get("Content-Type"), err)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.Key == "service.name" {
					rc.services = append(rc.services, kv.GetValue().GetStringValue())
				}
			}
			for _, ss := range rs.ScopeSpans {
				rc.spans = append(rc.spans, ss.Spans...)
			}
		}
		rc.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	})
	rc.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = rc.srv.Serve(ln) }()
	t.Cleanup(func() { rc.srv.Close() })
	return rc
}

// waitFor returns the spans of trace traceID once one is named name.
func (rc *otlpReceiver) waitFor(t *testing.T, traceID, name string) []*tracepb.Span {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		rc.mu.Lock()
		var spans []*tracepb.Span
		found := false
		for _, s := range rc.spans {
			if hex.EncodeToString(s.TraceId) == traceID {
				spans = append(spans, s)
				found = found || s.Name == name
			}
		}
		rc.mu.Unlock()
		if found {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q span of trace %s arrived in 10 s (%d spans of that trace)", name, traceID, len(spans))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			if v := kv.GetValue().GetStringValue(); v != "" {
				return v
			}
			return strconv.FormatInt(kv.GetValue().GetIntValue(), 10)
		}
	}
	return ""
}

// TestTracingExportsOTLP: the built binary, given only the standard OTEL_*
// variables, exports its spans over OTLP/HTTP to a receiver on 127.0.0.1;
// a request's spans continue the traceparent the client sent (so they join
// a router's trace), the operation's and the store calls' spans are among
// them, and the request's log line carries the trace id.
func TestTracingExportsOTLP(t *testing.T) {
	rc := startOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rc.url)
	t.Setenv("OTEL_SERVICE_NAME", "hbgraph-e2e")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50") // ms: export at once
	s := startServer(t, "--example-data", "--log-level", "info")

	const traceID, parentID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	body, _ := json.Marshal(gqlRequest{Query: `query Traced($id: ID!) { node(id: $id) { id relationships(type: "follows", direction: OUTGOING, first: 5) { edges { neighbor { id } } } } }`,
		Variables: map[string]any{"id": "alice"}})
	hr, _ := http.NewRequest(http.MethodPost, s.url+"/query", bytes.NewReader(body))
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("traceparent", "00-"+traceID+"-"+parentID+"-01")
	s.send(t, hr).ok(t, nil)

	spans := rc.waitFor(t, traceID, "POST /query")
	var server, op *tracepb.Span
	for _, sp := range spans {
		switch sp.Name {
		case "POST /query":
			server = sp
		case "query Traced":
			op = sp
		}
	}
	if got := hex.EncodeToString(server.ParentSpanId); got != parentID {
		t.Errorf("server span's parent %s, want the traceparent's %s", got, parentID)
	}
	if op == nil || !bytes.Equal(op.ParentSpanId, server.SpanId) {
		t.Fatalf("no operation span under the server span: %v", spanNames(spans))
	}
	if spanAttr(op, "hbgraph.executor") != "plan" || spanAttr(op, "graphql.operation.type") != "query" {
		t.Errorf("operation span's attributes: %v", op.Attributes)
	}
	waves, calls := 0, 0
	for _, sp := range spans {
		switch {
		case sp.Name == "wave":
			waves++
			if !bytes.Equal(sp.ParentSpanId, op.SpanId) {
				t.Errorf("wave span not under the operation's")
			}
		case spanAttr(sp, "db.system.name") == "hbase":
			calls++
			if sp.Kind != tracepb.Span_SPAN_KIND_CLIENT || spanAttr(sp, "db.collection.name") == "" {
				t.Errorf("store span %q: kind %v, attributes %v", sp.Name, sp.Kind, sp.Attributes)
			}
		}
		for _, kv := range sp.Attributes {
			if strings.Contains(kv.GetValue().String(), "alice") {
				t.Errorf("span %q attribute %s carries the node id", sp.Name, kv.Key)
			}
		}
	}
	// The node and its relationship page, the page's far ends checked,
	// then the neighbours (read by the check already).
	if waves != 3 || calls < 3 {
		t.Errorf("%d wave spans, %d store call spans; want 3 waves (one the end check) and their calls: %v", waves, calls, spanNames(spans))
	}
	rc.mu.Lock()
	services := strings.Join(rc.services, ",")
	rc.mu.Unlock()
	if !strings.Contains(services, "hbgraph-e2e") {
		t.Errorf("service names %q, want OTEL_SERVICE_NAME's", services)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(s.out.String(), `"trace_id":"`+traceID+`"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line with trace_id %s:\n%s", traceID, s.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTracingOffWithExporterNone: OTEL_TRACES_EXPORTER=none turns tracing
// off even with an endpoint set: nothing reaches the receiver, no trace id
// is logged, traceparent or not.
func TestTracingOffWithExporterNone(t *testing.T) {
	rc := startOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rc.url)
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	s := startServer(t, "--example-data", "--log-level", "info")
	body, _ := json.Marshal(gqlRequest{Query: `{ node(id: "alice") { id } }`})
	hr, _ := http.NewRequest(http.MethodPost, s.url+"/query", bytes.NewReader(body))
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	s.send(t, hr).ok(t, nil)
	time.Sleep(300 * time.Millisecond)
	rc.mu.Lock()
	n := len(rc.spans)
	rc.mu.Unlock()
	if n != 0 {
		t.Errorf("tracing off, yet %d spans were exported", n)
	}
	if out := s.out.String(); strings.Contains(out, "trace_id") || !strings.Contains(out, `"message":"graphql"`) {
		t.Errorf("tracing off: want a graphql log line without a trace id:\n%s", out)
	}
}

func spanNames(spans []*tracepb.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}
