package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/hbgraph/hbgraph/graph/generated"
	"github.com/hbgraph/hbgraph/graph/jsonpost"
	"github.com/hbgraph/hbgraph/graph/model"
	"github.com/hbgraph/hbgraph/graph/resolvers"
	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/store"
)

// go test -run '^$' -bench ExecutorFloor -benchmem .
//
// BenchmarkExecutorFloor measures what gqlgen alone costs for the benchmark's
// Q2 and Q3 (bench/queries): the resolvers answer from memory (no loader,
// no store, no scheduler), the handler has only the POST transport and the
// query cache, and requests go straight to ServeHTTP (no network). It is a
// floor under the gateway's CPU per request: bench/RESULTS.md compares it
// with what the targets allow.
func BenchmarkExecutorFloor(b *testing.B) {
	mem := newMemGraph(b, 10, 3)
	gql := handler.New(generated.NewExecutableSchema(generated.Config{Resolvers: mem}))
	gql.AddTransport(jsonpost.Transport{})
	gql.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	for _, q := range []string{"q2", "q3"} {
		b.Run(q, func(b *testing.B) {
			query, err := os.ReadFile("bench/queries/" + q + ".graphql")
			if err != nil {
				b.Fatal(err)
			}
			body, _ := json.Marshal(map[string]any{"query": string(query), "variables": map[string]any{"id": "n0"}})
			check := serve(gql, body)
			if bytes.Contains(check, []byte(`"errors"`)) || !bytes.Contains(check, []byte(`"n10"`)) {
				b.Fatalf("unexpected answer: %s", check)
			}
			b.ReportAllocs()
			before := cpuTime(b)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					serve(gql, body)
				}
			})
			// The process's CPU time per request: RunParallel's ns/op is
			// wall time, which understates CPU on more than one core.
			b.ReportMetric(float64((cpuTime(b)-before).Microseconds())/float64(b.N), "cpu-us/op")
		})
	}
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func serve(h http.Handler, body []byte) []byte {
	r := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Body.Bytes()
}

// memGraph is a resolver root whose Q2/Q3 fields answer from memory: node
// n0 follows n1..nN, each with a few articles. Every other field is the
// real resolver's (and is not asked).
type memGraph struct {
	*resolvers.Resolver
	nodes    map[string]*model.Node
	follows  []model.RelationshipEdge
	articles map[string][]model.ArticleEdge
}

// newMemGraph reads its nodes back from an in-memory store, so that their
// properties are stored JSON as the gateway serves it.
func newMemGraph(b *testing.B, followees, articlesEach int) *memGraph {
	st, _ := memstore.New(b)
	ctx := context.Background()
	m := &memGraph{Resolver: &resolvers.Resolver{Store: st}, nodes: map[string]*model.Node{}, articles: map[string][]model.ArticleEdge{}}
	for i := range followees + 1 {
		id := fmt.Sprintf("n%d", i)
		props := store.Properties{"name": "Ursula Thompson", "age": 35, "city": "Zurich", "score": 78.99, "tags": []any{"rust", "cooking"}}
		if _, err := st.CreateNode(ctx, id, "", props); err != nil {
			b.Fatal(err)
		}
		m.nodes[id] = &model.Node{Node: *memstore.Node(b, st, id)}
		if i == 0 {
			continue
		}
		m.follows = append(m.follows, model.RelationshipEdge{Cursor: "c" + id, NeighborID: id,
			Node: model.Relationship{Relationship: store.Relationship{Start: "n0", Type: "follow", End: id}}})
		for a := range articlesEach {
			m.articles[id] = append(m.articles[id], model.ArticleEdge{Cursor: fmt.Sprint("a", a), Node: model.Article{Article: store.Article{
				ID: fmt.Sprintf("%s-%d", id, a), Author: id, Title: "kernel important people year good gopher",
				Category: "tech", Posted: time.UnixMilli(1743022721824 + int64(a)), Updated: time.UnixMilli(1743022721824),
			}}})
		}
	}
	return m
}

func (m *memGraph) Query() generated.QueryResolver { return memQuery{m.Resolver.Query(), m} }
func (m *memGraph) Node() generated.NodeResolver   { return memNode{m.Resolver.Node(), m} }
func (m *memGraph) RelationshipEdge() generated.RelationshipEdgeResolver {
	return memEdge{m.Resolver.RelationshipEdge(), m}
}

type memQuery struct {
	generated.QueryResolver
	m *memGraph
}

func (q memQuery) Node(_ context.Context, id string) (*model.Node, error) { return q.m.nodes[id], nil }

type memNode struct {
	generated.NodeResolver
	m *memGraph
}

func (n memNode) Relationships(_ context.Context, obj *model.Node, _ string, _ model.Direction, first *int, _ *string, _ *int, _ *string) (*model.RelationshipConnection, error) {
	edges := n.m.follows
	if obj.ID != "n0" {
		edges = nil
	}
	return &model.RelationshipConnection{Edges: edges[:min(len(edges), *first)], Node: obj.ID}, nil
}

func (n memNode) Articles(_ context.Context, obj *model.Node, _ *string, _, _ *time.Time, first *int, _ *string, _ *int, _ *string) (*model.ArticleConnection, error) {
	edges := n.m.articles[obj.ID]
	return &model.ArticleConnection{Edges: edges[:min(len(edges), *first)], Author: obj.ID}, nil
}

type memEdge struct {
	generated.RelationshipEdgeResolver
	m *memGraph
}

func (e memEdge) Neighbor(_ context.Context, obj *model.RelationshipEdge) (*model.Node, error) {
	return e.m.nodes[obj.NeighborID], nil
}
