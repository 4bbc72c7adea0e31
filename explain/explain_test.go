package explain

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/store"
)

// TestCountsAgreesWithWaves: Counts, which builds no groups, counts the
// calls and waves Waves groups, on random calls: rounds and round-less
// calls, overlapping and not, out of order.
func TestCountsAgreesWithWaves(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Unix(1_700_000_000, 0)
	for trial := range 2000 {
		r := NewRequest("r")
		n := rng.IntN(40)
		for range n {
			r.StoreCall(store.Call{
				Round:    rng.IntN(6), // 0: sent on its own
				Start:    t0.Add(time.Duration(rng.IntN(1000)) * time.Microsecond),
				Duration: time.Duration(rng.IntN(300)) * time.Microsecond,
			})
		}
		calls, waves := r.Counts()
		w := r.Waves()
		got := 0
		for _, wave := range w {
			got += len(wave)
		}
		if calls != n || got != n || waves != len(w) {
			t.Fatalf("trial %d: Counts %d calls %d waves; Waves %d calls in %d waves", trial, calls, waves, got, len(w))
		}
	}
}
