// Package tracing follows a GraphQL request with OpenTelemetry: a span for
// the HTTP request (continuing a W3C traceparent), one for the operation,
// one per wave of store reads (a plan's wave, or a dataloader batch under
// gqlgen's executor) and one per store call, built from the store's own
// call records (store.Tracer), whose start and end are known.
//
// It is off unless the standard OTEL_* variables configure an exporter
// (Setup). Off, no SDK is built and every hook returns at once on one
// atomic load: nothing is allocated, no context is wrapped. Spans never
// carry variable values, properties or row keys: only names, kinds and
// counts.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/hbgraph/hbgraph/explain"
	"github.com/hbgraph/hbgraph/store"
)

// instrumentation names hbgraph's spans in the SDK (their "scope").
const instrumentation = "github.com/hbgraph/hbgraph"

var (
	// on is set once tracing is configured: every hook checks it first.
	on     atomic.Bool
	tracer atomic.Pointer[tracerBox]
)

type tracerBox struct{ t trace.Tracer }

// Enabled tells whether tracing is on.
func Enabled() bool { return on.Load() }

// Settings is what the OTEL_* variables ask for, as Setup reads them.
type Settings struct {
	On       bool
	Protocol string // "http/protobuf" or "grpc"
}

// FromEnv reads the OTEL_* variables: tracing is on when an OTLP endpoint
// is set (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
// or OTEL_TRACES_EXPORTER=otlp, and off with OTEL_TRACES_EXPORTER=none or
// OTEL_SDK_DISABLED=true, whatever else is set.
func FromEnv(getenv func(string) string) (Settings, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return Settings{}, nil
	}
	var s Settings
	switch exp := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))); exp {
	case "none":
		return Settings{}, nil
	case "":
		s.On = getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	case "otlp":
		s.On = true
	default:
		return Settings{}, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: hbgraph exports traces over OTLP only (otlp, or none)", exp)
	}
	s.Protocol = getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if s.Protocol == "" {
		s.Protocol = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch s.Protocol {
	case "":
		s.Protocol = "http/protobuf"
	case "http/protobuf", "grpc":
	default:
		if s.On {
			return Settings{}, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: want http/protobuf or grpc", s.Protocol)
		}
	}
	return s, nil
}

// Setup turns tracing on when the OTEL_* variables configure it: an OTLP
// exporter (over HTTP or gRPC, its endpoint, headers and timeout read by
// the exporter from the same variables), the sampler of
// OTEL_TRACES_SAMPLER(_ARG) (default: parentbased_always_on), the service
// name of OTEL_SERVICE_NAME (default hbgraph) and W3C trace context
// propagation. shutdown flushes the spans not yet exported; it is a no-op
// when tracing is off.
func Setup(ctx context.Context, log zerolog.Logger, version string) (shutdown func(context.Context) error, err error) {
	noop := func(context.Context) error { return nil }
	s, err := FromEnv(os.Getenv)
	if err != nil || !s.On {
		return noop, err
	}
	var exp sdktrace.SpanExporter
	if s.Protocol == "grpc" {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return noop, fmt.Errorf("tracing: the OTLP exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "hbgraph"), attribute.String("service.version", version)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES override the above
		resource.WithTelemetrySDK())
	if err != nil {
		return noop, fmt.Errorf("tracing: the resource: %w", err)
	}
	// The SDK reports what it cannot do (an unreachable collector, a bad
	// sampler variable) here rather than failing a request.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn().Err(err).Msg("tracing")
	}))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	Use(tp)
	log.Info().Str("protocol", s.Protocol).Str("sampler", orDefault(os.Getenv("OTEL_TRACES_SAMPLER"), "parentbased_always_on")).
		Msg("tracing: exporting spans over OTLP")
	return tp.Shutdown, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Use turns tracing on with tp (Setup's, or a test's), and propagates W3C
// trace context. Use(nil) turns it off again.
func Use(tp trace.TracerProvider) {
	if tp == nil {
		on.Store(false)
		return
	}
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	tracer.Store(&tracerBox{tp.Tracer(instrumentation)})
	on.Store(true)
}

func getTracer() trace.Tracer { return tracer.Load().t }

// Handler wraps the GraphQL endpoint in a server span that continues the
// caller's traceparent; off, it returns h itself.
func Handler(h http.Handler) http.Handler {
	if !Enabled() {
		return h
	}
	return otelhttp.NewHandler(h, "graphql",
		otelhttp.WithTracerProvider(otel.GetTracerProvider()),
		otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + r.URL.Path }))
}

// RequestStarted tags the request's span with its request id and returns
// the trace id for the log line: "" when no span records the request.
func RequestStarted(ctx context.Context, requestID string) string {
	if !Enabled() {
		return ""
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return ""
	}
	span.SetAttributes(attribute.String("hbgraph.request_id", requestID))
	return span.SpanContext().TraceID().String()
}

// recording tells whether ctx's span records: children of a span that
// does not (tracing off, or sampled out) are not started at all.
func recording(ctx context.Context) bool {
	return Enabled() && trace.SpanFromContext(ctx).IsRecording()
}

// Wave is the span of one wave of store reads. The zero Wave (tracing
// off) does nothing.
type Wave struct{ span trace.Span }

// StartWave starts the span of a wave of store reads (name: "wave" for
// the plan's, "batch" for a dataloader's), of the given kind of read and
// number of keys, and returns the context whose store calls become its
// children.
func StartWave(ctx context.Context, name, kind string, round, keys int) (context.Context, Wave) {
	if !recording(ctx) {
		return ctx, Wave{}
	}
	attrs := []attribute.KeyValue{attribute.Int("hbgraph.wave.keys", keys)}
	if kind != "" {
		attrs = append(attrs, attribute.String("hbgraph.wave.kind", kind))
	}
	if round > 0 {
		attrs = append(attrs, attribute.Int("hbgraph.wave.round", round))
	}
	outer := trace.SpanFromContext(ctx)
	ctx, span := getTracer().Start(ctx, name, trace.WithAttributes(attrs...))
	return context.WithValue(withStoreSpans(ctx), outerSpanKey{}, outer), Wave{span}
}

type outerSpanKey struct{}

// BesideWave is ctx with the span it had before its wave began: a read
// that a wave's work sends through another batch (a relationship page's
// ends, read through the rows loader) is then that batch's child, beside
// the wave under the operation, not a wave inside a wave.
func BesideWave(ctx context.Context) context.Context {
	if outer, ok := ctx.Value(outerSpanKey{}).(trace.Span); ok {
		return trace.ContextWithSpan(ctx, outer)
	}
	return ctx
}

// End ends the wave's span, noting how many of its keys an earlier wave
// of the request had already read (no store call).
func (w Wave) End(cached int) {
	if w.span == nil {
		return
	}
	w.span.SetAttributes(attribute.Int("hbgraph.wave.cached", cached))
	w.span.End()
}

// Operation is the span of one GraphQL operation.
type Operation struct{ span trace.Span }

// StartOperation starts the operation's span: its type and name (the
// client's, cut to 128 bytes), the executor configured and the complexity
// charged. Store calls outside any wave (a mutation's) become its children.
func StartOperation(ctx context.Context, typ, name, executor string, complexity int) (context.Context, Operation) {
	if !recording(ctx) {
		return ctx, Operation{}
	}
	if len(name) > 128 {
		name = name[:128]
	}
	spanName := typ
	if name != "" {
		spanName += " " + name
	}
	ctx, span := getTracer().Start(ctx, spanName, trace.WithAttributes(
		attribute.String("graphql.operation.type", typ),
		attribute.String("graphql.operation.name", name),
		attribute.String("hbgraph.executor", executor),
		attribute.Int("hbgraph.complexity", complexity)))
	return withStoreSpans(ctx), Operation{span}
}

// End ends the operation's span with the codes of its errors.
func (o Operation) End(errorCodes []string) {
	if o.span == nil {
		return
	}
	if len(errorCodes) > 0 {
		o.span.SetAttributes(attribute.StringSlice("hbgraph.error_codes", errorCodes))
		o.span.SetStatus(codes.Error, errorCodes[0])
	}
	o.span.End()
}

// PlanRan notes on the operation's span that the plan executor ran it
// (gqlgen's otherwise, a plan that falls back included), in waves.
func PlanRan(ctx context.Context, waves int) {
	if !recording(ctx) {
		return
	}
	trace.SpanFromContext(ctx).SetAttributes(attribute.String("hbgraph.executor", "plan"), attribute.Int("hbgraph.waves", waves))
}

// withStoreSpans returns ctx whose store calls become spans under ctx's
// span, and still reach the request's explain record.
func withStoreSpans(ctx context.Context) context.Context {
	var next store.Tracer
	if r := explain.From(ctx); r != nil {
		next = r
	}
	return store.WithTracer(ctx, storeSpans{parent: ctx, next: next})
}

// storeSpans turns each store call into a span of its recorded start and
// duration, then passes the call on.
type storeSpans struct {
	parent context.Context
	next   store.Tracer
}

// StoreCall implements store.Tracer.
func (t storeSpans) StoreCall(c store.Call) {
	if t.next != nil {
		t.next.StoreCall(c)
	}
	_, span := getTracer().Start(t.parent, c.Op+" "+c.Table, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(c.Start), trace.WithAttributes(
			attribute.String("db.system.name", "hbase"),
			attribute.String("db.operation.name", c.Op),
			attribute.String("db.collection.name", c.Table),
			attribute.Int("hbgraph.store.keys", len(c.Rows)),
			attribute.Int("hbgraph.store.rows_read", c.RowsRead),
			attribute.Int("hbgraph.store.cells_read", c.CellsRead),
			attribute.Int("hbgraph.store.bytes_read", c.BytesRead),
			attribute.Int("hbgraph.store.round", c.Round)))
	if c.Err != nil {
		// A fixed word: the store's error may name a row.
		span.SetStatus(codes.Error, callFailure(c.Err))
	}
	span.End(trace.WithTimestamp(c.Start.Add(c.Duration)))
}

// callFailure classifies a store error without its text.
func callFailure(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline exceeded"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "store call failed"
}
