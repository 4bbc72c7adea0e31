package embedded

import (
	"fmt"
	"testing"
)

// A key added is always there; one never added rarely is.
func TestKeyFilterHasNoFalseNegatives(t *testing.T) {
	const n = 200_000
	f := newKeyFilter(n, DefaultMaxKeyFilterBytes)
	for i := range n {
		f.add(filterHash(fmt.Sprintf("key %d", i)))
	}
	for i := range n {
		if !f.mayContain(filterHash(fmt.Sprintf("key %d", i))) {
			t.Fatalf("key %d added, not found", i)
		}
	}
	fp := 0
	for i := range n {
		if f.mayContain(filterHash(fmt.Sprintf("other %d", i))) {
			fp++
		}
	}
	if rate := float64(fp) / n; rate > 0.03 {
		t.Errorf("false positives: %.2f%% of keys never added, want about 1%%", 100*rate)
	}
	if f.full() {
		t.Errorf("full after %d keys, made for %d", n, f.capacity)
	}
}
