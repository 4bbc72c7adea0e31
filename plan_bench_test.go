package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/store"
)

// go test -run '^$' -bench PlanExecutor -benchtime 2000x .
//
// BenchmarkPlanExecutor measures CPU per request of the gateway's /query
// stack in-process (ServeHTTP, no network) over the embedded store, with
// gqlgen's executor and with the plan (graph/plan) in front of it,
// alternating the two in one sitting: newGateway with --executor gqlgen
// and with --executor plan.

func BenchmarkPlanExecutor(b *testing.B) {
	st, _ := memstore.New(b)
	ctx := context.Background()
	props := store.Properties{"name": "Ursula Thompson", "age": 35, "city": "Zurich", "score": 78.99, "tags": []any{"rust", "cooking"}}
	if _, err := st.CreateNode(ctx, "n0", "", props); err != nil {
		b.Fatal(err)
	}
	var ids []any
	for i := 1; i <= 20; i++ {
		id := fmt.Sprintf("n%d", i)
		ids = append(ids, id)
		if _, err := st.CreateNode(ctx, id, "", props); err != nil {
			b.Fatal(err)
		}
		if i <= 10 {
			if _, err := st.CreateRelationship(ctx, store.RelationshipKey{Start: "n0", Type: "follow", End: id}, nil); err != nil {
				b.Fatal(err)
			}
		}
		for a := range 5 {
			if _, err := st.PostArticle(ctx, id, fmt.Sprintf("kernel important people year good gopher %d", a), "some words here", "tech"); err != nil {
				b.Fatal(err)
			}
		}
	}
	// The two-hop query's "me" follows 50 nodes with 5 articles each.
	followeesWithArticles(b, st, 50)
	gateway := func(executor string) http.Handler {
		cfg, err := parseConfig([]string{"--executor", executor})
		if err != nil {
			b.Fatal(err)
		}
		gateway, _ := newGateway(cfg, st, zerolog.Nop(), security{})
		return gateway
	}
	gw, gwPlan := gateway("gqlgen"), gateway("plan")

	type query struct {
		name string
		body []byte
	}
	var queries []query
	for _, q := range []string{"q1", "q2", "q3", "q4"} {
		text, err := os.ReadFile("bench/queries/" + q + ".graphql")
		if err != nil {
			b.Fatal(err)
		}
		body, _ := json.Marshal(map[string]any{"query": string(text), "variables": map[string]any{"id": "n1", "category": "tech"}})
		if q == "q2" || q == "q3" {
			body, _ = json.Marshal(map[string]any{"query": string(text), "variables": map[string]any{"id": "n0"}})
		}
		queries = append(queries, query{q, body})
	}
	nodes20, _ := json.Marshal(map[string]any{"query": `query($ids: [ID!]!) { nodes(ids: $ids) { id properties createdAt } }`, "variables": map[string]any{"ids": ids}})
	queries = append(queries, query{"nodes20", nodes20})
	var reps []any
	for _, id := range ids {
		reps = append(reps, map[string]any{"__typename": "Node", "id": id})
	}
	entities20, _ := json.Marshal(map[string]any{"query": `query($r: [_Any!]!) { _entities(representations: $r) { ... on Node { id properties } } }`, "variables": map[string]any{"r": reps}})
	queries = append(queries, query{"entities20", entities20})
	twoHop50, _ := json.Marshal(map[string]any{"query": twoHopQuery, "variables": map[string]any{"id": "me", "n": 50}})
	queries = append(queries, query{"twohop50", twoHop50})
	mutation, _ := json.Marshal(map[string]any{"query": `mutation($p: JSON) { updateNodeProperties(id: "n20", set: $p) { id properties } }`, "variables": map[string]any{"p": map[string]any{"seen": 1}}})
	queries = append(queries, query{"mutation", mutation})

	post := func(h http.Handler, body []byte) []byte {
		r := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Body.Bytes()
	}
	for _, q := range queries {
		if q.name == "mutation" { // the same each time: both write the same value
			post(gw, q.body)
		}
		want, got := post(gw, q.body), post(gwPlan, q.body)
		if !bytes.Equal(want, got) || bytes.Contains(want, []byte(`"errors"`)) {
			b.Fatalf("%s: gqlgen %s\nplan %s", q.name, want, got)
		}
	}
	for round := range 3 { // alternating, in one sitting
		for _, q := range queries {
			for _, ex := range []struct {
				name string
				h    http.Handler
			}{{"gqlgen", gw}, {"plan", gwPlan}} {
				b.Run(fmt.Sprintf("%s/%s/round%d", q.name, ex.name, round), func(b *testing.B) {
					b.ReportAllocs()
					before := cpuTime(b)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							post(ex.h, q.body)
						}
					})
					b.ReportMetric(float64((cpuTime(b)-before).Microseconds())/float64(b.N), "cpu-us/op")
				})
			}
		}
	}
}
