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

// Keys written again, as counters and word counts are by most commits, do
// not fill the filter: it is rebuilt larger for a store that grows, not
// for one that is written.
func TestKeyFilterIsNotFilledByKeysWrittenAgain(t *testing.T) {
	f := newKeyFilter(1000, DefaultMaxKeyFilterBytes)
	for range 10 * f.capacity / 100 {
		for i := range 100 {
			f.add(filterHash(fmt.Sprintf("counter %d", i)))
		}
	}
	if f.full() {
		t.Errorf("full after 100 keys written %d times each, made for %d", 10*f.capacity/100, f.capacity)
	}
	if got := f.added.Load(); got > 100 {
		t.Errorf("%d adds counted for 100 keys", got)
	}
}
