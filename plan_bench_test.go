package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/explain"
	"github.com/hbgraph/hbgraph/graph/generated"
	"github.com/hbgraph/hbgraph/graph/jsonpost"
	"github.com/hbgraph/hbgraph/graph/limits"
	"github.com/hbgraph/hbgraph/graph/plan"
	"github.com/hbgraph/hbgraph/graph/querycache"
	"github.com/hbgraph/hbgraph/graph/resolvers"
	"github.com/hbgraph/hbgraph/graph/shed"
	"github.com/hbgraph/hbgraph/loaders"
	"github.com/hbgraph/hbgraph/store"
)

// go test -run '^$' -bench PlanExecutor -benchtime 2000x .
//
// BenchmarkPlanExecutor measures CPU per request of the gateway's /query
// stack in-process (ServeHTTP, no network) over the embedded store, with
// gqlgen's executor and with the plan (graph/plan) in front of it,
// alternating the two in one sitting. queryGateway is newGateway's /query
// chain (server.go is not wired to the plan yet): keep the two alike.

// queryGateway is newGateway's /query handler, its executable schema
// wrapped by plan.Wrap when withPlan is set.
func queryGateway(cfg config, st *store.Store, withPlan bool) http.Handler {
	log := zerolog.Nop()
	m := newMetrics()
	limiter := shed.New(cfg.maxInFlight, cfg.maxComplexityInFlight, time.Second)
	loaderCfg := loaders.Config{Wait: cfg.batchWait, BatchSize: cfg.batchSize, ScanConcurrency: cfg.scanConcurrency()}
	var es graphql.ExecutableSchema = generated.NewExecutableSchema(generated.Config{
		Resolvers:  &resolvers.Resolver{Store: st},
		Complexity: limits.Pricing(),
	})
	if withPlan {
		es = plan.Wrap(es, plan.Options{Store: st, Loaders: loaderCfg, Log: log, Registerer: m.registry})
	}
	gql := handler.New(es)
	gql.AddTransport(transport.Options{})
	gql.AddTransport(jsonpost.GET{})
	gql.AddTransport(jsonpost.Transport{})
	gql.AddTransport(jsonpost.OtherMethods{})
	docs := querycache.Documents(cfg.queryCacheEntries, cfg.queryCacheBytes, cfg.queryCacheMaxQuery)
	gql.SetQueryCache(docs)
	gql.Use(extension.Introspection{})
	gql.Use(extension.AutomaticPersistedQuery{Cache: querycache.PersistedQueries(cfg.queryCacheEntries, cfg.queryCacheBytes/querycache.BytesPerQueryByte, cfg.queryCacheMaxQuery)})
	gql.SetParserTokenLimit(cfg.limits.Tokens)
	gql.Use(limits.New(cfg.limits, docs))
	gql.Use(limiter.Extension(operationComplexity))
	gql.Use(explain.Extension{Always: cfg.explain})
	gql.AroundFields(loaders.AroundField)
	gql.SetErrorPresenter(presentError(log))
	gql.SetRecoverFunc(func(ctx context.Context, v any) error { return errors.New("panic in resolver") })
	return observe(log, m, cfg.maxBodyBytes, cfg.requestTimeout, limiter.Middleware(loaders.Middleware(st, loaderCfg, gql)))
}

func BenchmarkPlanExecutor(b *testing.B) {
	st, _ := memStore(b)
	ctx := context.Background()
	props := store.Properties{"name": "Ursula Thompson", "age": 35, "city": "Zurich", "score": 78.99, "tags": []any{"rust", "cooking"}}
	if _, err := st.CreateNode(ctx, "n0", props); err != nil {
		b.Fatal(err)
	}
	var ids []any
	for i := 1; i <= 20; i++ {
		id := fmt.Sprintf("n%d", i)
		ids = append(ids, id)
		if _, err := st.CreateNode(ctx, id, props); err != nil {
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
	if _, err := st.CreateNode(ctx, "me", store.Properties{"name": "me"}); err != nil {
		b.Fatal(err)
	}
	for i := range 50 {
		id := fmt.Sprintf("f%03d", i)
		if _, err := st.CreateNode(ctx, id, store.Properties{"name": id, "rank": i}); err != nil {
			b.Fatal(err)
		}
		if _, err := st.CreateRelationship(ctx, store.RelationshipKey{Start: "me", Type: "follows", End: id}, nil); err != nil {
			b.Fatal(err)
		}
		for a := range 5 {
			if _, err := st.PostArticle(ctx, id, fmt.Sprintf("post %d of %s", a, id), "some words here", "tech"); err != nil {
				b.Fatal(err)
			}
		}
	}
	cfg, err := parseConfig(nil)
	if err != nil {
		b.Fatal(err)
	}
	gw, gwPlan := queryGateway(cfg, st, false), queryGateway(cfg, st, true)

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
