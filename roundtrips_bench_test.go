package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/store"
	"github.com/hbgraph/hbgraph/store/hbasefault"
)

// go test -run '^$' -bench RoundTrips .   (make bench-roundtrips tabulates it)
//
// BenchmarkRoundTrips is where batching pays: the gateway in-process
// (newGateway's /query handler, ServeHTTP, no network) over the embedded
// engine behind the fault injector's latency mode, which makes every
// round trip (a Get, a SendBatch, a scan's page) take a fixed time, as a
// cluster's network does, while calls sent at once overlap. Each request
// runs alone, one after another, so its latency is its own: the waves of
// store calls it waits for one after another, times the round trip, plus
// its CPU. The benchmark reports per request the p50 latency, the waves
// and store calls explain counted, the round trips on the critical path
// (trips: a wave's calls go out --scan-concurrency at a time), and the
// prediction: waves x round trip plus the p50 of the same request at 0 ms
// (its CPU, the batch wait of gqlgen's loaders included). The "get" rows
// time one Get through the store alone: a round trip as this machine's
// timers make it.
//
// Every gateway runs with --scan-concurrency 16, the cluster's default
// (the embedded engine's default of 1 would send a wave's scans one after
// another), but plan-scan64, with 64.
func BenchmarkRoundTrips(b *testing.B) {
	hc := hbasefault.New(memstore.Engine(b))
	st, err := store.New(hc, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	queries := roundTripQueries(b, st)
	gateways := []struct {
		name, args string
		scans      int // --scan-concurrency
	}{
		{"plan", "", 16},
		{"plan-batch1", "--batch-size 1", 16},
		{"gqlgen", "--executor gqlgen", 16},
		{"plan-scan64", "", 64},
	}
	handlers := make([]http.Handler, len(gateways))
	for i, g := range gateways {
		args := append([]string{"--scan-concurrency", fmt.Sprint(g.scans)}, strings.Fields(g.args)...)
		cfg, err := parseConfig(args)
		if err != nil {
			b.Fatal(err)
		}
		handlers[i], _ = newGateway(cfg, st, zerolog.Nop(), security{})
	}
	// The same answers from every gateway, and every reader's first read
	// done (the article layout check) before anything is measured.
	for _, q := range queries {
		want := postLocal(handlers[0], q.body)
		if bytes.Contains(want, []byte(`"errors"`)) || !bytes.Contains(want, []byte(q.expect)) {
			b.Fatalf("%s: %s", q.name, want)
		}
		for i, h := range handlers[1:] {
			if got := postLocal(h, q.body); !bytes.Equal(got, want) {
				b.Fatalf("%s: %s answers %s\nplan answers %s", q.name, gateways[i+1].name, got, want)
			}
		}
	}
	// Waves and calls as explain sees them at 2 ms a round trip: at 0 ms a
	// call to the embedded engine ends before the next one starts, and the
	// waves of gqlgen's loaders, which tag no dispatch round, blur.
	// A wave's calls run --scan-concurrency at a time, so a wave of more
	// calls is more than one round trip: trips counts them.
	type counts struct{ calls, waves, trips int }
	explained := map[string]counts{}
	hc.SetLatency(2 * time.Millisecond)
	for _, q := range queries {
		for i, g := range gateways {
			perWave := explainWaves(b, handlers[i], q.explained)
			c := counts{waves: len(perWave)}
			for _, n := range perWave {
				c.calls += n
				c.trips += (n + g.scans - 1) / g.scans
			}
			explained[q.name+"/"+g.name] = c
		}
	}
	hc.SetLatency(0)
	cpu := map[string]float64{} // p50 ms at 0 ms a round trip, by query and gateway
	for _, rtt := range []time.Duration{0, 500 * time.Microsecond, 2 * time.Millisecond} {
		// One Get through the store alone: what a round trip takes on
		// this machine (the injector's timer, the scheduler, the engine).
		b.Run(fmt.Sprintf("rtt=%s/get/store", rttName(rtt)), func(b *testing.B) {
			hc.SetLatency(rtt)
			defer hc.SetLatency(0)
			g, err := store.NodeGet("n1")
			if err != nil {
				b.Fatal(err)
			}
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := st.Read(context.Background(), []store.Get{g}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.ReportMetric(median(lat), "p50-ms")
		})
		for _, q := range queries {
			for i, g := range gateways {
				b.Run(fmt.Sprintf("rtt=%s/%s/%s", rttName(rtt), q.name, g.name), func(b *testing.B) {
					hc.SetLatency(rtt)
					defer hc.SetLatency(0)
					key := q.name + "/" + g.name
					counts := explained[key]
					postLocal(handlers[i], q.body) // warm at this latency
					var lat []time.Duration
					for b.Loop() {
						start := time.Now()
						postLocal(handlers[i], q.body)
						lat = append(lat, time.Since(start))
					}
					p50 := median(lat)
					if rtt == 0 {
						cpu[key] = p50
					}
					b.ReportMetric(p50, "p50-ms")
					b.ReportMetric(float64(counts.waves), "waves")
					b.ReportMetric(float64(counts.trips), "trips")
					b.ReportMetric(float64(counts.calls), "calls")
					if c, ok := cpu[key]; ok {
						b.ReportMetric(float64(counts.waves)*float64(rtt)/float64(time.Millisecond)+c, "predicted-ms")
					}
				})
			}
		}
	}
}

// median is the median of lat, in milliseconds.
func median(lat []time.Duration) float64 {
	slices.Sort(lat)
	return float64(lat[len(lat)/2]) / float64(time.Millisecond)
}

func rttName(d time.Duration) string {
	return fmt.Sprintf("%gms", float64(d)/float64(time.Millisecond))
}

type roundTripQuery struct {
	name            string
	body, explained []byte
	expect          string // a fragment of the answer, so that it is known to have data
}

// writeBenchGraph writes the graph of bench/queries into st: n0 follows
// n1..n10, each with 5 articles in "tech".
func writeBenchGraph(tb testing.TB, st *store.Store) {
	ctx := context.Background()
	props := store.Properties{"name": "Ursula Thompson", "age": 35, "city": "Zurich", "score": 78.99, "tags": []any{"rust", "cooking"}}
	for i := 0; i <= 10; i++ {
		id := fmt.Sprintf("n%d", i)
		if _, err := st.CreateNode(ctx, id, "", props); err != nil {
			tb.Fatal(err)
		}
		if i == 0 {
			continue
		}
		if _, err := st.CreateRelationship(ctx, store.RelationshipKey{Start: "n0", Type: "follow", End: id}, nil); err != nil {
			tb.Fatal(err)
		}
		for a := range 5 {
			if _, err := st.PostArticle(ctx, id, fmt.Sprintf("kernel important people year good gopher %d", a), "some words here", "tech"); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// roundTripQueries writes the benchmark's graph into st and returns Q1-Q4
// of bench/queries over it and the 2-hop query with 50 followees: n0
// follows n1..n10, each with 5 articles in "tech" (Q1 and Q4 ask for n1,
// Q2 and Q3 for n0), and "me" follows 50 nodes with 5 articles each.
func roundTripQueries(b *testing.B, st *store.Store) []roundTripQuery {
	writeBenchGraph(b, st)
	followeesWithArticles(b, st, 50)

	request := func(name, query string, vars map[string]any, expect string) roundTripQuery {
		body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		explained, _ := json.Marshal(map[string]any{"query": query, "variables": vars, "extensions": map[string]any{"explain": true}})
		return roundTripQuery{name: name, body: body, explained: explained, expect: expect}
	}
	var out []roundTripQuery
	for _, q := range []struct{ name, id, expect string }{
		{"q1", "n1", `"Zurich"`}, {"q2", "n0", `"n10"`}, {"q3", "n0", `"postedAt"`}, {"q4", "n1", `"endCursor"`},
	} {
		text, err := os.ReadFile("bench/queries/" + q.name + ".graphql")
		if err != nil {
			b.Fatal(err)
		}
		vars := map[string]any{"id": q.id}
		if q.name == "q4" {
			vars["category"] = "tech"
		}
		out = append(out, request(q.name, string(text), vars, q.expect))
	}
	return append(out, request("twohop50", twoHopQuery, map[string]any{"id": "me", "n": 50}, `"f049"`))
}

// postLocal serves one POST /query in-process and returns the body.
func postLocal(h http.Handler, body []byte) []byte {
	r := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Body.Bytes()
}

// explainWaves asks explain for the waves of a request and returns how
// many store calls each had: the answer with the most waves of three (a
// wave boundary is seen from the calls' times, which the scheduler can
// blur).
func explainWaves(b *testing.B, h http.Handler, explained []byte) []int {
	var most []int
	for range 3 {
		var resp struct {
			Errors     []json.RawMessage `json:"errors"`
			Extensions struct {
				Explain struct {
					Waves []struct {
						Calls []json.RawMessage `json:"calls"`
					} `json:"waves"`
				} `json:"explain"`
			} `json:"extensions"`
		}
		if raw := postLocal(h, explained); json.Unmarshal(raw, &resp) != nil || len(resp.Errors) > 0 {
			b.Fatalf("explain: %s", raw)
		}
		if waves := resp.Extensions.Explain.Waves; len(waves) > len(most) {
			most = most[:0]
			for _, w := range waves {
				most = append(most, len(w.Calls))
			}
		}
	}
	return most
}
