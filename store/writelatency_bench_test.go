package store

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/store/hbasefault"
)

// go test -run '^$' -bench WriteLatency ./store
//
// BenchmarkWriteLatency is a write's latency on an engine with round
// trips: the embedded engine behind the fault injector's latency mode
// (every call, and every SendBatch, takes the round trip; calls sent at
// once overlap), each write alone, one after another, its calls one
// after the other ("sequential", as over the embedded engine) or its
// independent calls at once ("overlap", Options.OverlapCalls, as on a
// cluster). It reports the p50 and the round trips it stands for: p50
// less the same write's p50 at 0 ms, over the p50 of one Get through the
// store at that latency (a round trip as this machine's timers make it:
// a sleep of 500 µs takes about 1 ms here). At 645e710,
// before exactly once, createRelationship made 7 calls one after another
// and postArticle 10 (docs/write-costs.md).
func BenchmarkWriteLatency(b *testing.B) {
	writes := []struct {
		name  string
		setup func(b *testing.B, s *Store)
		// before is the untimed write that the i-th needs (nil: none).
		before func(s *Store, i int) error
		write  func(s *Store, i int) error
	}{
		{"createRelationship", func(b *testing.B, s *Store) {
			mustNode(b, s, "hub", nil)
		}, func(s *Store, i int) error {
			_, err := s.CreateNode(bg, fmt.Sprintf("n%d", i), "", nil)
			return err
		}, func(s *Store, i int) error {
			_, err := s.CreateRelationship(bg, RelationshipKey{"hub", "follows", fmt.Sprintf("n%d", i)}, Properties{"w": i})
			return err
		}},
		{"postArticle", func(b *testing.B, s *Store) {
			mustNode(b, s, "author", nil)
		}, nil, func(s *Store, i int) error {
			_, err := s.PostArticle(bg, "author", fmt.Sprintf("title %d", i), "kernel gopher year good", "tech")
			return err
		}},
	}
	cpu := map[string]time.Duration{}
	for _, rtt := range []time.Duration{0, 500 * time.Microsecond, 2 * time.Millisecond} {
		var trip time.Duration
		b.Run(fmt.Sprintf("rtt=%s/get", rtt), func(b *testing.B) {
			hc := hbasefault.New(openTestEngine(b, nil))
			s, err := New(hc, Options{})
			if err != nil {
				b.Fatal(err)
			}
			mustNode(b, s, "n", nil)
			g, err := NodeGet("n")
			if err != nil {
				b.Fatal(err)
			}
			hc.SetLatency(rtt)
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := s.Read(bg, []Get{g}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			trip = p50Of(lat)
			b.ReportMetric(float64(trip)/float64(time.Millisecond), "p50-ms")
		})
		for _, w := range writes {
			for _, overlap := range []bool{false, true} {
				mode := map[bool]string{false: "sequential", true: "overlap"}[overlap]
				name := fmt.Sprintf("rtt=%s/%s/%s", rtt, w.name, mode)
				b.Run(name, func(b *testing.B) {
					hc := hbasefault.New(openTestEngine(b, nil))
					s, err := New(hc, Options{OverlapCalls: overlap})
					if err != nil {
						b.Fatal(err)
					}
					w.setup(b, s)
					var lat []time.Duration
					i := 0
					for b.Loop() {
						i++
						if w.before != nil {
							if err := w.before(s, i); err != nil {
								b.Fatal(err)
							}
						}
						hc.SetLatency(rtt)
						start := time.Now()
						err := w.write(s, i)
						lat = append(lat, time.Since(start))
						hc.SetLatency(0)
						if err != nil {
							b.Fatal(err)
						}
					}
					p50 := p50Of(lat)
					key := w.name + "/" + mode
					if rtt == 0 {
						cpu[key] = p50
					}
					b.ReportMetric(float64(p50)/float64(time.Millisecond), "p50-ms")
					if base, ok := cpu[key]; ok && rtt > 0 && trip > 0 {
						b.ReportMetric(float64(p50-base)/float64(trip), "round-trips")
					}
				})
			}
		}
	}
}

func p50Of(lat []time.Duration) time.Duration {
	slices.Sort(lat)
	return lat[len(lat)/2]
}
