package main

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// result is what one run measured; it is also the -json output.
type result struct {
	Name        string  `json:"name"`
	URL         string  `json:"url"`
	Concurrency int     `json:"concurrency"`
	Seconds     float64 `json:"seconds"` // the measured window, after the warm-up
	// Requests counts the requests that started after the warm-up and
	// finished before the end: OK plus the errors.
	Requests  int          `json:"requests"`
	OK        int          `json:"ok"`
	Errors    errorCounts  `json:"errors"`
	RPS       float64      `json:"rps"`        // Requests per second
	LatencyMs latencyStats `json:"latency_ms"` // of OK requests
}

// errorCounts counts failed requests by kind (see the package doc).
type errorCounts struct {
	Total     int `json:"total"`
	Transport int `json:"transport"`
	Timeout   int `json:"timeout"`
	Status    int `json:"status"`
	GraphQL   int `json:"graphql"`
	Decode    int `json:"decode"`
}

// latencyStats are in milliseconds; all zero when nothing succeeded.
type latencyStats struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// summarize merges the workers' tallies.
func summarize(cfg config, measured time.Duration, tallies []tally) result {
	var counts [numOutcomes]int
	var lat []time.Duration
	for _, t := range tallies {
		for o, n := range t.counts {
			counts[o] += n
		}
		lat = append(lat, t.latencies...)
	}
	r := result{
		Name:        cfg.name,
		URL:         cfg.url,
		Concurrency: cfg.concurrency,
		Seconds:     measured.Seconds(),
		OK:          counts[outcomeOK],
		Errors: errorCounts{
			Transport: counts[outcomeTransport],
			Timeout:   counts[outcomeTimeout],
			Status:    counts[outcomeStatus],
			GraphQL:   counts[outcomeGraphQL],
			Decode:    counts[outcomeDecode],
		},
		LatencyMs: latencies(lat),
	}
	r.Errors.Total = r.Errors.Transport + r.Errors.Timeout + r.Errors.Status + r.Errors.GraphQL + r.Errors.Decode
	r.Requests = r.OK + r.Errors.Total
	if measured > 0 {
		r.RPS = float64(r.Requests) / measured.Seconds()
	}
	return r
}

// latencies sorts lat and returns its percentiles.
func latencies(lat []time.Duration) latencyStats {
	if len(lat) == 0 {
		return latencyStats{}
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	return latencyStats{
		P50:  ms(percentile(lat, 50)),
		P90:  ms(percentile(lat, 90)),
		P99:  ms(percentile(lat, 99)),
		Max:  ms(lat[len(lat)-1]),
		Mean: ms(sum / time.Duration(len(lat))),
	}
}

// percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method: the smallest value with at least p% of the values
// at or below it. It is 0 for no values.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p * float64(len(sorted)) / 100))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// line is the one-line report.
func (r result) line() string {
	e := r.Errors
	return fmt.Sprintf("%s: %d requests, %d errors (transport %d, timeout %d, status %d, graphql %d, decode %d), "+
		"%.1f req/s, latency ms p50 %.2f p90 %.2f p99 %.2f max %.2f (concurrency %d, %.1fs)",
		r.Name, r.Requests, e.Total, e.Transport, e.Timeout, e.Status, e.GraphQL, e.Decode,
		r.RPS, r.LatencyMs.P50, r.LatencyMs.P90, r.LatencyMs.P99, r.LatencyMs.Max, r.Concurrency, r.Seconds)
}
