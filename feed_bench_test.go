package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/store"
)

// go test -run '^$' -bench GatewayFeed -benchtime 200x .
//
// A page of 20 of Node.feed through the whole gateway (HTTP, the plan,
// the store), page 1 and page 5, for a reader following 10 to 10,000
// nodes: time per request, store calls and waves (from explain).

const feedPageQuery = `query Feed($id: ID!, $after: String) {
  node(id: $id) { feed(first: 20, after: $after) {
    edges { cursor node { id title postedAt author { id } } }
    pageInfo { hasNextPage endCursor } } } }`

// feedGateway serves the gateway over an in-memory engine keeping follows
// feeds, with "reader" following n nodes that posted 120 articles.
func feedGateway(b *testing.B, n int) *httptest.Server {
	b.Helper()
	st, err := store.New(memstore.Engine(b), store.Options{Feed: store.FeedOptions{Types: []string{"follows"}}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	at := time.Now().Add(-time.Hour)
	if _, err := st.ImportNode(ctx, "reader", "", nil, at, at); err != nil {
		b.Fatal(err)
	}
	var rels []store.RelationshipImport
	for i := range n {
		id := fmt.Sprintf("author%05d", i)
		if _, err := st.ImportNode(ctx, id, "", nil, at, at); err != nil {
			b.Fatal(err)
		}
		rels = append(rels, store.RelationshipImport{Key: store.RelationshipKey{Start: "reader", Type: "follows", End: id}, Created: at, Updated: at})
	}
	for lo := 0; lo < len(rels); lo += 1000 {
		if _, err := st.ImportRelationships(ctx, rels[lo:min(lo+1000, len(rels))]); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 120 {
		if _, err := st.PostArticle(ctx, fmt.Sprintf("author%05d", i%n), fmt.Sprintf("post %d", i), "some words here", "tech"); err != nil {
			b.Fatal(err)
		}
	}
	cfg, err := parseConfig(nil)
	if err != nil {
		b.Fatal(err)
	}
	gateway, _ := newGateway(cfg, st, zerolog.Nop(), security{})
	srv := httptest.NewServer(gateway)
	b.Cleanup(srv.Close)
	return srv
}

func BenchmarkGatewayFeed(b *testing.B) {
	for _, n := range []int{10, 100, 1_000, 10_000} {
		srv := feedGateway(b, n)
		for _, page := range []int{1, 5} {
			b.Run(fmt.Sprintf("followees=%d/page=%d", n, page), func(b *testing.B) {
				vars := map[string]any{"id": "reader"}
				for range page - 1 {
					body, _ := json.Marshal(map[string]any{"query": feedPageQuery, "variables": vars})
					resp, err := srv.Client().Post(srv.URL+"/query", "application/json", bytes.NewReader(body))
					if err != nil {
						b.Fatal(err)
					}
					var out struct {
						Data struct {
							Node struct {
								Feed struct{ PageInfo struct{ EndCursor string } }
							}
						}
					}
					err = json.NewDecoder(resp.Body).Decode(&out)
					resp.Body.Close()
					if err != nil || out.Data.Node.Feed.PageInfo.EndCursor == "" {
						b.Fatal("no next page", err)
					}
					vars["after"] = out.Data.Node.Feed.PageInfo.EndCursor
				}
				benchQueryTimed(b, srv, feedPageQuery, vars)
			})
		}
	}
}

// benchQueryTimed is benchQuery that also reports the CPU per request (the
// whole process: server and client, the same at every size) and the p50
// latency of one request at a time.
func benchQueryTimed(b *testing.B, srv *httptest.Server, query string, vars map[string]any) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	explained, _ := json.Marshal(map[string]any{"query": query, "variables": vars,
		"extensions": map[string]any{"explain": true}})
	client := srv.Client()
	probe := postQuery(b, client, srv.URL+"/query", explained)
	b.ReportAllocs()
	var took []time.Duration
	var cpu time.Duration
	for b.Loop() {
		if len(took) == 0 {
			cpu = cpuTime(b)
		}
		start := time.Now()
		postQuery(b, client, srv.URL+"/query", body)
		took = append(took, time.Since(start))
	}
	cpu = cpuTime(b) - cpu
	slices.Sort(took)
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(took)), "cpu-us/op")
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(len(probe.Extensions.Explain.Waves)), "waves/op")
	b.ReportMetric(float64(probe.Extensions.Explain.Calls), "calls/op")
}
