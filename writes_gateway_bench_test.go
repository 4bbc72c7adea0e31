package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/store"
)

// Mutations as a client sends them, one request each over HTTP to the
// gateway in-process, one after another: what a write costs end to end.
// The same file builds against 645e710: bench/RESULTS.md.

func BenchmarkGatewayCreateNode(b *testing.B) {
	benchMutation(b, nil, `mutation M($id: ID!) { createNode(id: $id, properties: {name: "n"}) { id } }`,
		func(i int) map[string]any { return map[string]any{"id": fmt.Sprintf("n%d", i)} })
}

func BenchmarkGatewayUpdateNodeProperties(b *testing.B) {
	benchMutation(b, func(st *store.Store, n int) { mustCreate(b, st, "n") },
		`mutation M($v: JSON) { updateNodeProperties(id: "n", set: $v) { id } }`,
		func(i int) map[string]any { return map[string]any{"v": map[string]any{"rank": i}} })
}

func BenchmarkGatewayCreateRelationship(b *testing.B) {
	benchMutation(b, func(st *store.Store, n int) {
		mustCreate(b, st, "hub")
		for i := range n {
			mustCreate(b, st, fmt.Sprintf("n%d", i))
		}
	}, `mutation M($id: ID!) { createRelationship(startNodeId: "hub", type: "follows", endNodeId: $id) { id } }`,
		func(i int) map[string]any { return map[string]any{"id": fmt.Sprintf("n%d", i)} })
}

func BenchmarkGatewayPostArticle(b *testing.B) {
	benchMutation(b, func(st *store.Store, n int) { mustCreate(b, st, "author") },
		`mutation M($t: String!) { postArticle(authorId: "author", title: $t, body: "Some body text with a few words in it.", category: "bench") { id } }`,
		func(i int) map[string]any { return map[string]any{"t": fmt.Sprintf("title %d", i)} })
}

// BenchmarkGatewayDeleteNode deletes nodes with nothing attached.
func BenchmarkGatewayDeleteNode(b *testing.B) {
	benchMutation(b, func(st *store.Store, n int) {
		for i := range n {
			mustCreate(b, st, fmt.Sprintf("n%d", i))
		}
	}, `mutation M($id: ID!) { deleteNode(id: $id) }`,
		func(i int) map[string]any { return map[string]any{"id": fmt.Sprintf("n%d", i)} })
}

// benchMutation serves the gateway over an in-memory engine, runs setup
// (nil: none) for b.N requests, then sends query with vars(i) for each,
// the setup outside the timer.
func benchMutation(b *testing.B, setup func(st *store.Store, n int), query string, vars func(i int) map[string]any) {
	st, _ := memstore.New(b)
	cfg, err := parseConfig(nil)
	if err != nil {
		b.Fatal(err)
	}
	gateway, _ := newGateway(cfg, st, zerolog.Nop(), security{})
	srv := httptest.NewServer(gateway)
	defer srv.Close()
	if setup != nil {
		setup(st, b.N)
	}
	bodies := make([][]byte, b.N)
	for i := range b.N {
		bodies[i], _ = json.Marshal(map[string]any{"query": query, "variables": vars(i)})
	}
	client := srv.Client()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		postQuery(b, client, srv.URL+"/query", bodies[i])
	}
}

func mustCreate(b *testing.B, st *store.Store, id string) {
	if _, err := st.CreateNode(context.Background(), id, "", store.Properties{"name": id}); err != nil {
		b.Fatal(err)
	}
}
