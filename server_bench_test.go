package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/store"
)

// go test -run '^$' -bench Gateway -benchmem .

const twoHopQuery = `query TwoHop($id: ID!, $n: Int!) {
  node(id: $id) {
    id
    relationships(type: "follows", direction: OUTGOING, first: $n) {
      totalCount
      edges { neighbor { id properties
        articles(first: 3) { totalCount edges { node { id title postedAt } } } } }
    }
  }
}`

// followeesWithArticles writes "me", following n nodes that have 5
// articles each.
func followeesWithArticles(b *testing.B, st *store.Store, n int) {
	b.Helper()
	ctx := context.Background()
	if _, err := st.CreateNode(ctx, "me", "", store.Properties{"name": "me"}); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		id := fmt.Sprintf("f%03d", i)
		if _, err := st.CreateNode(ctx, id, "", store.Properties{"name": id, "rank": i}); err != nil {
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
}

// benchGateway serves the gateway in-process over an in-memory engine with
// "me" following n nodes that have 5 articles each.
func benchGateway(b *testing.B, followees int, args ...string) *httptest.Server {
	b.Helper()
	st, _ := memstore.New(b)
	followeesWithArticles(b, st, followees)
	cfg, err := parseConfig(args)
	if err != nil {
		b.Fatal(err)
	}
	gateway, _ := newGateway(cfg, st, zerolog.Nop(), security{})
	srv := httptest.NewServer(gateway)
	b.Cleanup(srv.Close)
	return srv
}

type benchResponse struct {
	Errors     []json.RawMessage `json:"errors"`
	Extensions struct {
		Explain struct {
			Calls int               `json:"calls"`
			Waves []json.RawMessage `json:"waves"`
		} `json:"explain"`
	} `json:"extensions"`
}

func postQuery(b *testing.B, client *http.Client, url string, body []byte) benchResponse {
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	var out benchResponse
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Errors) > 0 {
		b.Fatalf("%s: %v", raw, err)
	}
	return out
}

func benchQuery(b *testing.B, srv *httptest.Server, query string, vars map[string]any) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	explained, _ := json.Marshal(map[string]any{"query": query, "variables": vars,
		"extensions": map[string]any{"explain": true}})
	client := srv.Client()
	probe := postQuery(b, client, srv.URL+"/query", explained)
	b.ReportAllocs()
	for b.Loop() {
		postQuery(b, client, srv.URL+"/query", body)
	}
	// After the loop: b.Loop resets reported metrics when it starts timing.
	b.ReportMetric(float64(len(probe.Extensions.Explain.Waves)), "waves/op")
	b.ReportMetric(float64(probe.Extensions.Explain.Calls), "calls/op")
}

func BenchmarkGatewayNode(b *testing.B) {
	srv := benchGateway(b, 1)
	benchQuery(b, srv, `query Node($id: ID!) { node(id: $id) { id properties createdAt } }`, map[string]any{"id": "f000"})
}

func BenchmarkGatewayTwoHop(b *testing.B) {
	for _, n := range []int{10, 50} {
		b.Run(fmt.Sprintf("followees=%d", n), func(b *testing.B) {
			srv := benchGateway(b, n)
			benchQuery(b, srv, twoHopQuery, map[string]any{"id": "me", "n": n})
		})
	}
	// The same query with batching off (one key per batch), for comparison.
	b.Run("followees=10/nobatch", func(b *testing.B) {
		srv := benchGateway(b, 10, "--batch-size", "1")
		benchQuery(b, srv, twoHopQuery, map[string]any{"id": "me", "n": 10})
	})
}
