package loaders

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// TestScanEach checks that every key gets its own result, in key order,
// with no more scans running at once than the limit.
func TestScanEach(t *testing.T) {
	keys := make([]int, 40)
	for i := range keys {
		keys[i] = i
	}
	errOdd := errors.New("odd key")
	for _, limit := range []int{0, 1, 3, 16} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			var running, most atomic.Int32
			res := scanEach(t.Context(), limit, keys, func(_ context.Context, k int) (string, error) {
				n := running.Add(1)
				defer running.Add(-1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(100 * time.Microsecond) // let others start, if they may
				if k%2 == 1 {
					return "", fmt.Errorf("key %d: %w", k, errOdd)
				}
				return fmt.Sprint("page ", k), nil
			})
			if len(res) != len(keys) {
				t.Fatalf("%d results for %d keys", len(res), len(keys))
			}
			for i, r := range res {
				switch {
				case i%2 == 1 && !errors.Is(r.Error, errOdd):
					t.Errorf("key %d: error %v, want %v", i, r.Error, errOdd)
				case i%2 == 0 && (r.Error != nil || r.Data != fmt.Sprint("page ", i)):
					t.Errorf("key %d: %q, %v", i, r.Data, r.Error)
				}
			}
			if want := int32(max(limit, 1)); most.Load() > want {
				t.Errorf("%d scans ran at once, limit %d", most.Load(), want)
			}
			if limit > 1 && most.Load() < 2 {
				t.Errorf("scans ran one at a time, limit %d", limit)
			}
		})
	}
}
