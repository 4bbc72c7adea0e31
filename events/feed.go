package events

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Subscriptions to a home feed (articlePosted(feedOf:); docs/design.md,
// "Subscriptions to a home feed"). A post's event names its author only,
// not who follows it: the replica that delivers it (the one that wrote
// it, or one that got it over NATS) asks the store, for the distinct
// readers whose feeds its own subscribers watch, which of them follow the
// author now. That is one batched read per post, sized by this replica's
// watched feeds (capped by FeedOptions.Readers), made by one worker off
// the publish path: a post never waits for it, and posts beyond the
// worker's bounded queue are dropped from the feeds' subscriptions and
// counted (a subscriber catches up by cursor with Node.feed). Wide authors
// need nothing more: the check is the follow, not the feed rows.

// FeedTopic is reader's home feed of relType.
func FeedTopic(reader, relType string) string { return "f\x00" + reader + "\x00" + relType }

func isFeedTopic(topic string) bool { return strings.HasPrefix(topic, "f\x00") }

// feedOfTopic splits a FeedTopic.
func feedOfTopic(topic string) (reader, relType string) {
	reader, relType, _ = strings.Cut(topic[2:], "\x00")
	return reader, relType
}

// Following reports, for each reader, whether it follows author by
// relType now (store.Store.Following).
type Following func(ctx context.Context, relType, author string, readers []string) ([]bool, error)

// FeedOptions configure the feeds' subscriptions.
type FeedOptions struct {
	Following Following
	// Readers caps the distinct feeds this replica's subscriptions watch
	// (a second subscriber of a watched feed is free): the size of a
	// post's check. 0: DefaultFeedReaders.
	Readers int
	// Queue is how many posts may wait for their check. 0:
	// DefaultFeedQueue.
	Queue int
	// PerCaller caps the distinct feeds one caller's subscriptions watch
	// (Conn.Caller), so that no caller takes every one of Readers' places.
	// 0: DefaultFeedsPerCaller; negative: no cap.
	PerCaller int
}

const (
	DefaultFeedReaders = 1000
	DefaultFeedQueue   = 1024
	// DefaultFeedsPerCaller is FeedOptions.PerCaller's default.
	DefaultFeedsPerCaller = 10
	// feedCheckTimeout bounds one post's check.
	feedCheckTimeout = 5 * time.Second
)

// ErrTooManyFeeds: FeedOptions.Readers feeds are watched here already.
var ErrTooManyFeeds = errors.New("events: too many home feeds watched")

// ErrTooManyFeedsForCaller: the caller's subscriptions watch
// FeedOptions.PerCaller feeds already.
var ErrTooManyFeedsForCaller = errors.New("events: the caller watches too many home feeds")

type feedMatcher struct {
	following Following
	readers   int
	perCaller int // < 0: no cap
	queue     chan *Event
	done      chan struct{}
	closeOnce sync.Once

	checked, dropped prometheus.Counter
}

// SetFeeds lets subscriptions watch home feeds (FeedTopic): without it a
// feed's subscription gets no events. It starts the worker that checks
// each post, until Close.
func (b *Bus) SetFeeds(o FeedOptions) {
	if o.Readers <= 0 {
		o.Readers = DefaultFeedReaders
	}
	if o.Queue <= 0 {
		o.Queue = DefaultFeedQueue
	}
	if o.PerCaller == 0 {
		o.PerCaller = DefaultFeedsPerCaller
	}
	m := &feedMatcher{following: o.Following, readers: o.Readers, perCaller: o.PerCaller,
		queue: make(chan *Event, o.Queue), done: make(chan struct{})}
	m.checked = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hbgraph_events_feed_checks_total", Help: "Posts checked against the home feeds this replica's subscriptions watch (articlePosted(feedOf:)).",
	})
	m.dropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hbgraph_events_feed_dropped_total", Help: "Posts not delivered to the home feeds' subscriptions: their check's queue was full, or its read failed.",
	})
	if b.opts.Registerer != nil {
		b.opts.Registerer.MustRegister(m.checked, m.dropped)
	}
	b.mu.Lock()
	b.feedMatch = m
	b.mu.Unlock()
	go b.matchFeeds(m)
}

// enqueueFeeds hands a post to the feeds' worker without waiting.
func (b *Bus) enqueueFeeds(m *feedMatcher, ev *Event) {
	select {
	case m.queue <- ev:
	default:
		m.dropped.Inc()
		b.opts.Log.Warn().Int("queue", cap(m.queue)).Msg("events: a post not delivered to the home feeds' subscriptions: their queue is full")
	}
}

// matchFeeds is the worker: for each post, which watched feeds it enters.
func (b *Bus) matchFeeds(m *feedMatcher) {
	for {
		select {
		case <-m.done:
			return
		case ev := <-m.queue:
			b.matchFeed(m, ev)
		}
	}
}

func (b *Bus) matchFeed(m *feedMatcher, ev *Event) {
	author := ev.Article.Author
	b.mu.RLock()
	byType := make(map[string][]string, len(b.feeds))
	for relType, readers := range b.feeds {
		for r := range readers {
			byType[relType] = append(byType[relType], r)
		}
	}
	b.mu.RUnlock()
	var topics []string
	for relType, readers := range byType {
		ctx, cancel := context.WithTimeout(context.Background(), feedCheckTimeout)
		follows, err := m.following(ctx, relType, author, readers)
		cancel()
		if err != nil {
			m.dropped.Inc()
			b.opts.Log.Warn().Err(err).Msg("events: a post not delivered to the home feeds' subscriptions: its followers could not be read")
			continue
		}
		for i, ok := range follows {
			if ok {
				topics = append(topics, FeedTopic(readers[i], relType))
			}
		}
	}
	m.checked.Inc()
	if len(topics) > 0 {
		b.deliverTo(ev, topics)
	}
}

func (m *feedMatcher) close() {
	m.closeOnce.Do(func() { close(m.done) })
}

// addFeedLocked counts a feed topic that got its first subscriber.
func (b *Bus) addFeedLocked(topic string) {
	reader, relType := feedOfTopic(topic)
	if b.feeds[relType] == nil {
		b.feeds[relType] = map[string]struct{}{}
	}
	b.feeds[relType][reader] = struct{}{}
	b.feedCount++
}

// removeFeedLocked forgets a feed topic that lost its last subscriber.
func (b *Bus) removeFeedLocked(topic string) {
	reader, relType := feedOfTopic(topic)
	delete(b.feeds[relType], reader)
	if len(b.feeds[relType]) == 0 {
		delete(b.feeds, relType)
	}
	b.feedCount--
}
