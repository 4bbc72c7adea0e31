package events

import (
	"context"
	"testing"
)

func TestNotifierClaim(t *testing.T) {
	if NotifierFrom(context.Background()) != nil {
		t.Fatal("a notifier from nowhere")
	}
	var nilNotifier *Notifier
	nilNotifier.Notify() // no transport's notifier: nothing
	nilNotifier.Claim()
	calls := 0
	n := &Notifier{Ready: func() { calls++ }}
	got := NotifierFrom(WithNotifier(context.Background(), n))
	if got != n || n.Claimed() {
		t.Fatalf("NotifierFrom: %v, claimed %v", got, n.Claimed())
	}
	got.Notify()
	got.Claim()
	if calls != 1 || !n.Claimed() {
		t.Fatalf("calls %d, claimed %v", calls, n.Claimed())
	}
	if NotifierFrom(WithNotifier(context.Background(), &Notifier{})) != nil {
		t.Fatal("a notifier without Ready")
	}
}

// TestListenedRelationships: true while a relationship topic has a
// subscriber (or with a Remote), false once the last one ends.
func TestListenedRelationships(t *testing.T) {
	b := New(Options{})
	if b.ListenedRelationships() || (*Bus)(nil).ListenedRelationships() {
		t.Fatal("listened with no subscriber")
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, _, _ = b.Channel(context.Background(), NodeTopic("n"))
	if b.ListenedRelationships() {
		t.Fatal("a node's subscriber listens to relationships")
	}
	s1, _, _ := b.Channel(ctx, RelationshipTopic("n", 0x01, "t"))
	s2, _, _ := b.Channel(context.Background(), RelationshipTopic("n", 0x01, "t"))
	if !b.ListenedRelationships() {
		t.Fatal("not listened with two subscribers")
	}
	s1.Close()
	s1.Close()
	if !b.ListenedRelationships() {
		t.Fatal("not listened with one subscriber left")
	}
	s2.Close()
	cancel()
	if b.ListenedRelationships() {
		t.Fatal("listened after every subscriber ended")
	}
}
