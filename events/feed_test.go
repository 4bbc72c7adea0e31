package events

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// following is a Following over a fixed set of "reader>author" follows,
// recording each call's readers.
type following struct {
	mu      sync.Mutex
	follows map[string]bool
	calls   [][]string
	block   chan struct{} // when set, each call waits for it
}

func (f *following) check(_ context.Context, relType, author string, readers []string) ([]bool, error) {
	if f.block != nil {
		<-f.block
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, slices.Sorted(slices.Values(readers)))
	out := make([]bool, len(readers))
	for i, r := range readers {
		out[i] = f.follows[r+">"+author]
	}
	return out, nil
}

func TestBusFeedsDeliverToFollowersOnly(t *testing.T) {
	f := &following{follows: map[string]bool{"r>ann": true, "q>ann": true}}
	b := New(Options{})
	defer b.Close()
	b.SetFeeds(FeedOptions{Following: f.check})
	_, r1, _ := b.Channel(context.Background(), FeedTopic("r", "follows"))
	_, r2, _ := b.Channel(context.Background(), FeedTopic("r", "follows"))
	_, p, _ := b.Channel(context.Background(), FeedTopic("p", "follows"))
	b.Publish(article("bob", "by bob"))
	b.Publish(article("ann", "by ann"))
	// Posts are checked in order: bob's reached nobody.
	if ev := recv(t, r1); ev.Article.Title != "by ann" {
		t.Fatalf("r got %+v", ev)
	}
	recv(t, r2)
	select {
	case ev := <-p:
		t.Fatalf("p got %+v", ev)
	case <-time.After(50 * time.Millisecond):
	}
	// One check per post, over the distinct readers watched.
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) != 2 || !slices.Equal(f.calls[1], []string{"p", "r"}) {
		t.Fatalf("checks %v", f.calls)
	}
}

func TestBusFeedsCapAndQueue(t *testing.T) {
	f := &following{follows: map[string]bool{"r>ann": true}, block: make(chan struct{})}
	b := New(Options{})
	defer b.Close()
	b.SetFeeds(FeedOptions{Following: f.check, Readers: 2, Queue: 1})
	ctx, cancel := context.WithCancel(context.Background())
	_, r, _ := b.Channel(context.Background(), FeedTopic("r", "follows"))
	if _, _, err := b.Channel(ctx, FeedTopic("q", "follows")); err != nil {
		t.Fatal(err)
	}
	// A third feed is refused; a second subscriber of a watched one is not.
	if _, _, err := b.Channel(context.Background(), FeedTopic("p", "follows")); !errors.Is(err, ErrTooManyFeeds) {
		t.Fatalf("third feed: %v", err)
	}
	if _, _, err := b.Channel(context.Background(), FeedTopic("r", "follows")); err != nil {
		t.Fatalf("second subscriber of r: %v", err)
	}
	// q's feed no longer watched: room for p.
	cancel()
	waitFor(t, func() bool { b.mu.RLock(); defer b.mu.RUnlock(); return b.feedCount == 1 })
	if _, _, err := b.Channel(context.Background(), FeedTopic("p", "follows")); err != nil {
		t.Fatalf("p after q ended: %v", err)
	}
	// The worker is stuck on the first post, one waits: a third is
	// dropped, never blocking Publish.
	b.Publish(article("ann", "a"))
	waitFor(t, func() bool { return len(b.feedMatch.queue) == 0 }) // the worker has it
	done := make(chan struct{})
	go func() {
		b.Publish(article("ann", "b"))
		b.Publish(article("ann", "c"))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Publish waited for the feeds' check")
	}
	waitFor(t, func() bool { return len(b.feedMatch.queue) == 1 })
	close(f.block)
	got := []string{recv(t, r).Article.Title, recv(t, r).Article.Title}
	if got[0] != "a" || got[1] != "b" {
		t.Fatalf("delivered %v", got)
	}
	select {
	case ev := <-r:
		t.Fatalf("a dropped post delivered: %+v", ev)
	case <-time.After(50 * time.Millisecond):
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not reached")
}

// TestBusFeedsPerCaller: one caller watches at most PerCaller distinct
// feeds, across its connections (a second subscription of one of them is
// free), so that it cannot take every feed of the replica; another caller
// is not held back, and an ended feed frees the caller's place.
func TestBusFeedsPerCaller(t *testing.T) {
	b := New(Options{})
	defer b.Close()
	b.SetFeeds(FeedOptions{Following: (&following{}).check, Readers: 10, PerCaller: 2})
	alice1 := WithConn(context.Background(), &Conn{Caller: "sub:alice"})
	alice2 := WithConn(context.Background(), &Conn{Caller: "sub:alice"})
	bob := WithConn(context.Background(), &Conn{Caller: "sub:bob"})
	rCtx, endR := context.WithCancel(alice1)
	qCtx, endQ := context.WithCancel(alice2)
	for _, sub := range []struct {
		ctx    context.Context
		reader string
	}{{rCtx, "r"}, {qCtx, "q"}, {alice2, "r"}, {bob, "p"}, {bob, "o"}} {
		if _, _, err := b.Channel(sub.ctx, FeedTopic(sub.reader, "follows")); err != nil {
			t.Fatalf("%s: %v", sub.reader, err)
		}
	}
	if _, _, err := b.Channel(alice2, FeedTopic("p", "follows")); !errors.Is(err, ErrTooManyFeedsForCaller) {
		t.Fatalf("alice's third feed: %v", err)
	}
	// r's first subscription ends: alice still watches r (its second).
	endR()
	waitFor(t, func() bool { return b.Active() == 4 })
	if _, _, err := b.Channel(alice1, FeedTopic("p", "follows")); !errors.Is(err, ErrTooManyFeedsForCaller) {
		t.Fatalf("alice's third feed after one of two subscriptions of r ended: %v", err)
	}
	// q ends: alice may watch p.
	endQ()
	waitFor(t, func() bool { return b.Active() == 3 })
	if _, _, err := b.Channel(alice1, FeedTopic("p", "follows")); err != nil {
		t.Fatalf("alice's feed after q ended: %v", err)
	}
}
