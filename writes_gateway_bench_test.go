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

// BenchmarkGatewayDeleteNode deletes, one request each over HTTP, nodes
// with nothing attached: the mutation as a client sends it (the same
// file builds against 645e710: bench/RESULTS.md).
func BenchmarkGatewayDeleteNode(b *testing.B) {
	st, _ := memstore.New(b)
	cfg, err := parseConfig(nil)
	if err != nil {
		b.Fatal(err)
	}
	gateway, _ := newGateway(cfg, st, zerolog.Nop(), security{})
	srv := httptest.NewServer(gateway)
	defer srv.Close()
	for i := range b.N {
		if _, err := st.CreateNode(context.Background(), fmt.Sprintf("n%d", i), "", store.Properties{"name": "n"}); err != nil {
			b.Fatal(err)
		}
	}
	bodies := make([][]byte, b.N)
	for i := range b.N {
		bodies[i], _ = json.Marshal(map[string]any{"query": `mutation D($id: ID!) { deleteNode(id: $id) }`,
			"variables": map[string]any{"id": fmt.Sprintf("n%d", i)}})
	}
	client := srv.Client()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		postQuery(b, client, srv.URL+"/query", bodies[i])
	}
}
