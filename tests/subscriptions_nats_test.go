package tests

import (
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// startNATS runs a NATS server in this test process on a free port.
func startNATS(t testing.TB) *natsserver.Server {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(ns.Shutdown)
	return ns
}

// waitMetric polls /metrics until sample name has value.
func (s *server) waitMetric(t testing.TB, name string, value float64) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for s.metrics(t)[name] != value {
		if time.Now().After(deadline) {
			t.Fatalf("%s is %v, not %v, after 15 s", name, s.metrics(t)[name], value)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSubscriptionsAcrossReplicas: two gateways sharing one NATS deliver
// each other's events to their subscribers; with NATS down, writes still
// succeed and each replica still delivers its own, counted as not sent.
func TestSubscriptionsAcrossReplicas(t *testing.T) {
	parallelTest(t)
	ns := startNATS(t)
	a := startServer(t, "--events-nats", ns.ClientURL())
	b := startServer(t, "--events-nats", ns.ClientURL())
	a.waitMetric(t, "hbgraph_events_nats_connected", 1)
	b.waitMetric(t, "hbgraph_events_nats_connected", 1)
	// Each replica has an embedded engine of its own here; an article's
	// event carries the article, so the other replica needs none of it.
	a.mustDo(t, `mutation { createNode(id: "ann") { id } }`, nil, nil)
	b.mustDo(t, `mutation { createNode(id: "bob") { id } }`, nil, nil)

	onB := connectWS(t, b, nil)
	annOnB := onB.subscribe(`subscription { articlePosted(authorId: "ann") { cursor node { id title } } }`, nil)
	onA := connectWS(t, a, nil)
	bobOnA := onA.subscribe(`subscription { articlePosted(authorId: "bob") { cursor node { id title } } }`, nil)
	annOnA := onA.subscribe(`subscription { articlePosted(authorId: "ann") { cursor node { id title } } }`, nil)
	waitSubscribed(t, b, 1)
	waitSubscribed(t, a, 2)

	var posted struct{ PostArticle struct{ ID string } }
	a.mustDo(t, `mutation { postArticle(authorId: "ann", title: "from a", body: "x", category: "c") { id } }`, nil, &posted)
	var ev articlePostedData
	onB.event(annOnB, &ev)
	if ev.ArticlePosted.Node.ID != posted.PostArticle.ID || ev.ArticlePosted.Node.Title != "from a" || ev.ArticlePosted.Cursor == "" {
		t.Fatalf("on b: %+v", ev)
	}
	onA.event(annOnA, &ev) // the replica that wrote delivers it too, once
	b.mustDo(t, `mutation { postArticle(authorId: "bob", title: "from b", body: "x", category: "c") { id } }`, nil, nil)
	onA.event(bobOnA, &ev)
	if ev.ArticlePosted.Node.Title != "from b" {
		t.Fatalf("on a: %+v", ev)
	}

	// NATS goes down: a's write succeeds and its own subscriber has it.
	ns.Shutdown()
	a.waitMetric(t, "hbgraph_events_nats_connected", 0)
	a.mustDo(t, `mutation { postArticle(authorId: "ann", title: "alone", body: "x", category: "c") { id } }`, nil, nil)
	onA.event(annOnA, &ev)
	if ev.ArticlePosted.Node.Title != "alone" {
		t.Fatalf("on a with NATS down: %+v", ev)
	}
	a.waitMetric(t, "hbgraph_events_remote_errors_total", 1)
	// And b never gets it, nor a duplicate of anything.
	if m, err := onB.tryRead(500 * time.Millisecond); err == nil {
		t.Errorf("b got %+v with NATS down", m)
	}
}
