package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWaitClockPast: the one wait for the clock returns once it has passed
// t, refuses a t further ahead than its budget without waiting, gives up on
// a frozen clock, and returns when its context is done.
func TestWaitClockPast(t *testing.T) {
	clk := newFakeClock()
	s := newTestStoreWithClock(t, clk)
	now := s.nowMs()
	ctx := context.Background()

	if err := s.waitClockPast(ctx, now-1, time.Second); err != nil {
		t.Errorf("a time already passed: %v", err)
	}
	go func() { time.Sleep(20 * time.Millisecond); clk.Advance(time.Second) }()
	if err := s.waitClockPast(ctx, now+500, 2*time.Second); err != nil {
		t.Errorf("a clock that moves past t: %v", err)
	}
	now = s.nowMs()
	start := time.Now()
	if err := s.waitClockPast(ctx, now+int64(time.Hour/time.Millisecond), time.Minute); err == nil || time.Since(start) > time.Second {
		t.Errorf("an hour ahead with a minute's budget: %v after %v", err, time.Since(start))
	}
	if err := s.waitClockPast(ctx, now+2, 30*time.Millisecond); err == nil {
		t.Error("a frozen clock was waited out")
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if err := s.waitClockPast(cctx, now+2, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("with its context canceled: %v", err)
	}
}
