package events

import (
	"context"
	"errors"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/store"
)

func article(author, title string) *Event {
	return &Event{Kind: ArticlePosted, Article: &store.Article{ID: title, Author: author, Title: title, Posted: time.UnixMilli(1)}}
}

func recv(t *testing.T, c <-chan *Event) *Event {
	t.Helper()
	select {
	case ev, ok := <-c:
		if !ok {
			t.Fatal("subscription ended")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	return nil
}

func TestBusDeliversToItsTopicsOnly(t *testing.T) {
	b := New(Options{})
	_, ann, _ := b.Channel(context.Background(), ArticleTopic("ann"))
	_, bob, _ := b.Channel(context.Background(), ArticleTopic("bob"))
	b.Publish(article("ann", "one"))
	if ev := recv(t, ann); ev.Article.Title != "one" {
		t.Fatalf("got %+v", ev)
	}
	select {
	case ev := <-bob:
		t.Fatalf("bob got %+v", ev)
	default:
	}
	// A relationship reaches both ends, a loop both directions of its node.
	_, out, _ := b.Channel(context.Background(), RelationshipTopic("n", 0x01, "t"))
	_, in, _ := b.Channel(context.Background(), RelationshipTopic("n", 0x02, "t"))
	b.Publish(&Event{Kind: RelationshipCreated, Relationship: &store.Relationship{Start: "n", Type: "t", End: "n"}})
	recv(t, out)
	recv(t, in)
}

func TestBusCapsAndSlowConsumer(t *testing.T) {
	b := New(Options{Buffer: 2, PerConnection: 2, PerCaller: 3})
	slow := make(chan struct{}, 1)
	c1 := &Conn{Caller: "sub:x", Slow: func() { slow <- struct{}{} }}
	c2 := &Conn{Caller: "sub:x"}
	ctx1, ctx2 := WithConn(context.Background(), c1), WithConn(context.Background(), c2)
	_, s1, err := b.Channel(ctx1, ArticleTopic("a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Channel(ctx1, ArticleTopic("b")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Channel(ctx1, ArticleTopic("c")); !errors.Is(err, ErrTooMany) {
		t.Fatalf("third on a connection: %v", err)
	}
	if _, _, err := b.Channel(ctx2, ArticleTopic("c")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Channel(ctx2, ArticleTopic("d")); !errors.Is(err, ErrTooMany) {
		t.Fatalf("fourth of a caller: %v", err)
	}
	// s1 reads nothing: the third event overflows its buffer of 2.
	for i := range 3 {
		b.Publish(article("a", string(rune('0'+i))))
	}
	select {
	case <-slow:
	case <-time.After(5 * time.Second):
		t.Fatal("the slow consumer was not reported")
	}
	n := 0
	for range s1 {
		n++
	}
	if n != 2 {
		t.Errorf("the slow subscription had %d events buffered, want 2", n)
	}
	// Its slot is free again.
	if _, _, err := b.Channel(ctx2, ArticleTopic("d")); err != nil {
		t.Fatalf("after the slow one ended: %v", err)
	}
	b.Close()
	if _, _, err := b.Channel(ctx2, ArticleTopic("e")); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if b.Active() != 0 {
		t.Errorf("%d active after Close", b.Active())
	}
}

// TestBusesShareNATS: two buses (two replicas) over one NATS deliver each
// other's events once; with NATS down each still delivers its own.
func TestBusesShareNATS(t *testing.T) {
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	defer ns.Shutdown()
	a, b := New(Options{}), New(Options{})
	for _, bus := range []*Bus{a, b} {
		n, err := ConnectNATS(ns.ClientURL(), bus, nil, zerolog.Nop(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer bus.Close()
		deadline := time.Now().Add(5 * time.Second)
		for !n.nc.IsConnected() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	_, onA, _ := a.Channel(context.Background(), ArticleTopic("ann"))
	_, onB, _ := b.Channel(context.Background(), ArticleTopic("ann"))
	// NATS subscriptions are registered asynchronously: flush both.
	for _, bus := range []*Bus{a, b} {
		if err := bus.remote.(*NATS).nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	a.Publish(article("ann", "one"))
	if ev := recv(t, onB); ev.Article.Title != "one" || !ev.Article.Posted.Equal(time.UnixMilli(1)) {
		t.Fatalf("b got %+v", ev.Article)
	}
	recv(t, onA)
	b.Publish(article("ann", "two"))
	recv(t, onA)
	recv(t, onB)
	time.Sleep(100 * time.Millisecond)
	if len(onA)+len(onB) != 0 {
		t.Fatalf("duplicates: %d on a, %d on b", len(onA), len(onB))
	}

	ns.Shutdown()
	deadline := time.Now().Add(5 * time.Second)
	for a.remote.(*NATS).nc.IsConnected() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	a.Publish(article("ann", "alone")) // never blocks, never fails
	if ev := recv(t, onA); ev.Article.Title != "alone" {
		t.Fatalf("a got %+v", ev)
	}
}

// Listened: only a relationship whose topics have a subscriber here, or
// any with other replicas, is worth reading for its event.
func TestBusListened(t *testing.T) {
	var none *Bus
	k := store.RelationshipKey{Start: "a", Type: "t", End: "b"}
	if none.Listened(k) {
		t.Fatal("a nil bus listens")
	}
	b := New(Options{})
	if b.Listened(k) {
		t.Fatal("a bus without subscribers listens")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, _, err := b.Channel(ctx, RelationshipTopic("b", store.Incoming, "t")); err != nil {
		t.Fatal(err)
	}
	if !b.Listened(k) {
		t.Fatal("the end's subscriber does not count")
	}
	if b.Listened(store.RelationshipKey{Start: "a", Type: "u", End: "b"}) {
		t.Fatal("another type's relationship is listened for")
	}
}
