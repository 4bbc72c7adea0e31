package main

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/rs/zerolog"
)

// recordingWS is a socket that records the types of the messages written.
type recordingWS struct {
	mu      sync.Mutex
	written []string // in order
}

func (w *recordingWS) Close() error                        { return nil }
func (w *recordingWS) NextReader() (int, io.Reader, error) { return 0, nil, io.EOF }
func (w *recordingWS) WriteClose(int, string) error        { return nil }
func (w *recordingWS) Subprotocol() string                 { return transportWSProtocol }
func (w *recordingWS) types() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.written...)
}
func (w *recordingWS) WriteJSON(v any) error {
	m := v.(wsMessage)
	w.mu.Lock()
	w.written = append(w.written, m.Type)
	w.mu.Unlock()
	return nil
}

// TestWSCompleteWaitsForNext: the client's complete, handled while one of
// the operation's responses is being made (past the check that the
// operation is live, before its write), returns only once that response
// is sent, and none follows it: a client that reuses the id at once never
// gets the old subscription's event (review finding 5).
func TestWSCompleteWaitsForNext(t *testing.T) {
	ws := &recordingWS{}
	responding, release := make(chan struct{}), make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &wsSession{t: wsTransport{s: &subscriptionServer{log: zerolog.Nop()}}, ws: ws, ctx: ctx, cancel: cancel,
		ops: map[string]*wsOperation{}, wake: make(chan struct{}, 1)}
	opCtx, opCancel := context.WithCancel(ctx)
	op := &wsOperation{id: "1", cancel: opCancel, ctx: opCtx, live: true,
		responses: func(context.Context) *graphql.Response {
			responding <- struct{}{}
			<-release
			return &graphql.Response{Data: []byte(`{}`)}
		}}
	c.ops["1"] = op

	go c.respond(op)
	<-responding
	stopped := make(chan struct{})
	go func() {
		c.stop("1")
		close(stopped)
	}()
	select {
	case <-stopped:
		t.Fatal("the client's complete was handled while a next of its operation was still being sent")
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	<-stopped
	if c.respond(op) {
		t.Error("a response was sent after the client's complete")
	}
	if got := ws.types(); len(got) != 1 || got[0] != "next" {
		t.Errorf("messages written: %v, want the one next (no complete echoed)", got)
	}
}
