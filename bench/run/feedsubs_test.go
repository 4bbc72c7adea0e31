package main

import (
	"strings"
	"testing"
	"time"
)

func TestFeedSubsReport(t *testing.T) {
	pages := parseBenchLines([]byte(`goos: linux
BenchmarkGatewayFeed/followees=10/page=1-2         	     300	   1192645 ns/op	         6.000 calls/op	       600.0 cpu-us/op	         0.5000 p50_ms	         2.000 waves/op	  249973 B/op	    1970 allocs/op
BenchmarkGatewayFeed/followees=10000/page=1-2      	     300	   1192645 ns/op	         6.000 calls/op	       960.0 cpu-us/op	         0.6000 p50_ms	         2.000 waves/op	  249973 B/op	    2543 allocs/op
BenchmarkGatewayFeed/followees=100/page=1-2      	     300	   1192645 ns/op	         6.000 calls/op	       700.0 cpu-us/op	         0.6000 p50_ms	         2.000 waves/op	  249973 B/op	    2543 allocs/op
    feed_bench_test.go:12: a log line
PASS`))
	if len(pages) != 3 || pages[0].Name != "GatewayFeed/followees=10/page=1" || pages[1].Metrics["cpu-us/op"] != 960 {
		t.Fatalf("parsed %+v", pages)
	}
	posts := parseBenchLines([]byte("BenchmarkFeedPost/followers=10000-2 20 340000000 ns/op 12 calls/op 10007 rows-written/op\n"))
	fanOut := parseBenchLines([]byte("BenchmarkSubscriptionFanOut-2 30 75000000 ns/op 1000 deliveries/op 53.1 p50_ms 196.9 p99_ms\n"))
	r := feedSubsReport(pages, posts, fanOut, time.Unix(0, 0), "1", "2", []string{"go test"})
	for _, want := range []string{
		"| 10000 | 1 | 6 | 2 | 960 | 0.600 | 2543 | 1.00 | 1.60 | 1.20 | **no** |",
		"| 100 | 1 | 6 | 2 | 700 | 0.600 | 2543 | 1.00 | 1.17 | 1.20 | yes |",
		"| 10000 | 340.00 | 12 | 10007 |",
		"| 1,000 | 1000 | 53.1 | 196.9 | **no** |",
	} {
		if !strings.Contains(r, want) {
			t.Errorf("report lacks %q:\n%s", want, r)
		}
	}
}
