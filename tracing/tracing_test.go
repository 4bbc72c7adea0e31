package tracing

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
)

// TestSetup builds the SDK for each protocol from the variables alone (the
// exporters connect lazily), and nothing without them.
func TestSetup(t *testing.T) {
	t.Cleanup(func() { Use(nil) })
	for _, proto := range []string{"http/protobuf", "grpc"} {
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
		Use(nil)
		shutdown, err := Setup(context.Background(), zerolog.Nop(), "test")
		if err != nil || !Enabled() {
			t.Fatalf("%s: on %v, %v", proto, Enabled(), err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = shutdown(ctx)
		cancel()
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	Use(nil)
	if _, err := Setup(context.Background(), zerolog.Nop(), "test"); err != nil || Enabled() {
		t.Fatalf("no variables: on %v, %v", Enabled(), err)
	}
}

// TestOffStartsNothing: off, the hooks hand back their context unchanged.
func TestOffStartsNothing(t *testing.T) {
	Use(nil)
	ctx := context.Background()
	if got, w := StartWave(ctx, "wave", "", 1, 3); got != ctx || w.span != nil {
		t.Error("StartWave wrapped the context while off")
	}
	if got, o := StartOperation(ctx, "query", "Q", "plan", 1); got != ctx || o.span != nil {
		t.Error("StartOperation wrapped the context while off")
	}
	if RequestStarted(ctx, "id") != "" || trace.SpanFromContext(ctx).IsRecording() {
		t.Error("a trace id while off")
	}
	if testing.AllocsPerRun(100, func() {
		c, w := StartWave(ctx, "wave", "rows", 1, 3)
		w.End(0)
		PlanRan(c, 2)
	}) != 0 {
		t.Error("the hooks allocate while off")
	}
}
