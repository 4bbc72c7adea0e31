package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/internal/memstore"
)

// go test -run '^$' -bench SubscriptionFanOut -benchtime 30x .
//
// BenchmarkSubscriptionFanOut: 1,000 subscribers of one author, each on a
// WebSocket connection of its own to the in-process gateway, receive one
// article posted over HTTP. Latency is from the post's request to each
// subscriber's read of the event; p50_ms and p99_ms are over every
// delivery of every post.
func BenchmarkSubscriptionFanOut(b *testing.B) {
	const subscribers = 1000
	st, _ := memstore.New(b)
	if _, err := st.CreateNode(context.Background(), "ann", "", nil); err != nil {
		b.Fatal(err)
	}
	cfg, err := parseConfig([]string{"--subscriptions-per-caller", "0"})
	if err != nil {
		b.Fatal(err)
	}
	gateway, _ := newGateway(cfg, st, zerolog.Nop(), security{})
	srv := httptest.NewServer(gateway)
	b.Cleanup(srv.Close)
	bus := gateway.(gatewayHandler).subs.bus

	var mu sync.Mutex
	var latencies []time.Duration
	var start time.Time
	var pending sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	url := strings.Replace(srv.URL, "http://", "ws://", 1) + "/query"
	for i := range subscribers {
		conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			b.Fatalf("subscriber %d: %v", i, err)
		}
		b.Cleanup(func() { _ = conn.CloseNow() })
		_ = conn.Write(ctx, websocket.MessageText, []byte(`{"type":"connection_init"}`))
		_ = conn.Write(ctx, websocket.MessageText, []byte(`{"id":"1","type":"subscribe","payload":{"query":"subscription { articlePosted(authorId: \"ann\") { cursor node { id title } } }"}}`))
		go func() {
			for {
				_, msg, err := conn.Read(ctx)
				if err != nil {
					return
				}
				var m struct{ Type string }
				if json.Unmarshal(msg, &m) != nil || m.Type != "next" {
					continue
				}
				mu.Lock()
				latencies = append(latencies, time.Since(start))
				mu.Unlock()
				pending.Done()
			}
		}()
	}
	for bus.Active() < subscribers {
		time.Sleep(10 * time.Millisecond)
	}
	body := []byte(`{"query":"mutation { postArticle(authorId: \"ann\", title: \"t\", body: \"b\", category: \"c\") { id } }"}`)
	client := srv.Client()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pending.Add(subscribers)
		mu.Lock()
		start = time.Now()
		mu.Unlock()
		resp, err := client.Post(srv.URL+"/query", "application/json", strings.NewReader(string(body)))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		pending.Wait()
	}
	b.StopTimer()
	slices.Sort(latencies)
	at := func(q float64) float64 {
		return float64(latencies[int(q*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50_ms")
	b.ReportMetric(at(0.99), "p99_ms")
	b.ReportMetric(float64(len(latencies))/float64(b.N), "deliveries/op")
}
