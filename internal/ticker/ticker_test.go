package ticker

import (
	"sync/atomic"
	"testing"
	"time"
)

// The reports come on the interval, and the final one exactly once,
// before stop returns.
func TestEvery(t *testing.T) {
	var ticks, finals atomic.Int64
	stop := Every(time.Millisecond, func(final bool) {
		if final {
			finals.Add(1)
			return
		}
		ticks.Add(1)
	})
	for ticks.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	stop()
	if n := finals.Load(); n != 1 {
		t.Fatalf("%d final reports, want 1", n)
	}
	after := ticks.Load()
	time.Sleep(5 * time.Millisecond)
	if ticks.Load() != after {
		t.Fatal("reports after stop returned")
	}
}
