package events

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/store"
)

// Options configure a Bus.
type Options struct {
	// Buffer is how many events a subscriber may have waiting; one more
	// and it is disconnected as a slow consumer (default 64).
	Buffer int
	// PerConnection and PerCaller cap the active subscriptions of one
	// connection and of one caller across connections (0: no cap).
	PerConnection int
	PerCaller     int
	Log           zerolog.Logger
	// Registerer, when set, gets the bus's metrics.
	Registerer prometheus.Registerer
}

// DefaultBuffer is Options.Buffer's default.
const DefaultBuffer = 64

// Bus delivers events to the subscriptions of this process, and (with a
// Remote) to and from the other replicas.
type Bus struct {
	opts Options

	mu      sync.RWMutex
	closed  bool
	topics  map[string]map[*Subscription]struct{}
	callers map[string]int
	// relationshipSubs counts the subscriptions of relationship topics:
	// none, and a write that would read for such an event reads nothing.
	relationshipSubs int
	// feeds are the home feeds watched here (FeedTopic), reader by type;
	// feedMatch checks posts against them (SetFeeds; nil: none).
	feeds     map[string]map[string]struct{}
	feedCount int
	feedMatch *feedMatcher
	// callerFeeds counts, for each caller, its subscriptions of each feed
	// topic: its distinct feeds are the map's length.
	callerFeeds map[string]map[string]int

	remote Remote // nil: this process only

	published  *prometheus.CounterVec
	delivered  prometheus.Counter
	slow       prometheus.Counter
	refused    *prometheus.CounterVec
	active     prometheus.GaugeFunc
	remoteErrs prometheus.Counter
}

// Remote carries events between replicas (NATS).
type Remote interface {
	// Publish sends ev to the other replicas; an error means they will
	// not see it (the local subscribers have).
	Publish(ev *Event) error
	Close()
}

// New returns a bus delivering in process; SetRemote adds the replicas.
func New(opts Options) *Bus {
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultBuffer
	}
	b := &Bus{opts: opts, topics: map[string]map[*Subscription]struct{}{}, callers: map[string]int{},
		feeds: map[string]map[string]struct{}{}, callerFeeds: map[string]map[string]int{}}
	b.published = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hbgraph_events_published_total", Help: "Events published by this replica's mutations, by kind.",
	}, []string{"kind"})
	b.delivered = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hbgraph_events_delivered_total", Help: "Events handed to a subscription of this replica.",
	})
	b.slow = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hbgraph_subscriptions_slow_consumers_total", Help: "Subscriptions whose buffer overflowed: their connection was closed (code 4008).",
	})
	b.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hbgraph_subscriptions_refused_total", Help: "Subscriptions refused by a cap on active subscriptions, by cap.",
	}, []string{"cap"})
	b.active = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "hbgraph_subscriptions_active", Help: "Active subscriptions on this replica.",
	}, func() float64 { return float64(b.Active()) })
	b.remoteErrs = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hbgraph_events_remote_errors_total", Help: "Events not sent to the other replicas (NATS down): delivered on this replica only.",
	})
	if opts.Registerer != nil {
		opts.Registerer.MustRegister(b.published, b.delivered, b.slow, b.refused, b.active, b.remoteErrs)
	}
	return b
}

// SetRemote makes Publish send to the other replicas through r too.
func (b *Bus) SetRemote(r Remote) {
	b.mu.Lock()
	b.remote = r
	b.mu.Unlock()
}

// Publish delivers ev to this replica's subscribers and sends it to the
// other replicas. It never blocks on a subscriber and never fails: a
// replica that cannot be reached is logged and counted.
func (b *Bus) Publish(ev *Event) {
	if b == nil || ev == nil {
		return
	}
	b.published.WithLabelValues(string(ev.Kind)).Inc()
	b.Deliver(ev)
	b.mu.RLock()
	r := b.remote
	b.mu.RUnlock()
	if r == nil {
		return
	}
	if err := r.Publish(ev); err != nil {
		// Counted per event; the Remote warns once per outage.
		b.remoteErrs.Inc()
		b.opts.Log.Debug().Err(err).Str("kind", string(ev.Kind)).Msg("events: not sent to the other replicas (delivered on this one only)")
	}
}

// Listened reports whether an event of relationship k could reach anyone:
// a subscriber of one of its topics on this replica, or other replicas
// (with a Remote, whose subscribers this one does not know). A write whose
// event needs a read of its own (a deletion's, of what it deletes) skips
// it when nobody listens.
func (b *Bus) Listened(k store.RelationshipKey) bool {
	if b == nil {
		return false
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.remote != nil || len(b.topics[RelationshipTopic(k.Start, store.Outgoing, k.Type)]) > 0 ||
		len(b.topics[RelationshipTopic(k.End, store.Incoming, k.Type)]) > 0
}

// Logger is the bus's logger: for what publishers leave unpublished.
func (b *Bus) Logger() *zerolog.Logger { return &b.opts.Log }

// ListenedRelationships reports whether any relationship event could reach
// anyone: a subscriber of a relationship topic here, or other replicas.
func (b *Bus) ListenedRelationships() bool {
	if b == nil {
		return false
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.remote != nil || b.relationshipSubs > 0
}

// Deliver hands ev to this replica's subscribers of its topics (the
// Remote calls it for the other replicas' events).
func (b *Bus) Deliver(ev *Event) {
	var buf [2]string
	b.deliverTo(ev, ev.topics(buf[:0]))
	if ev.Kind != ArticlePosted || ev.Article == nil {
		return
	}
	b.mu.RLock()
	m := b.feedMatch
	watched := b.feedCount > 0
	b.mu.RUnlock()
	if m != nil && watched {
		b.enqueueFeeds(m, ev)
	}
}

// deliverTo hands ev to this replica's subscribers of topics.
func (b *Bus) deliverTo(ev *Event, topics []string) {
	var slow []*Subscription
	b.mu.RLock()
	for _, t := range topics {
		for s := range b.topics[t] {
			if s.send(ev) {
				b.delivered.Inc()
			} else {
				slow = append(slow, s)
			}
		}
	}
	b.mu.RUnlock()
	for _, s := range slow {
		b.slow.Inc()
		b.opts.Log.Warn().Str("caller", s.conn.callerOrEmpty()).Int("buffer", b.opts.Buffer).Msg("subscription: slow consumer disconnected")
		s.Close()
		s.conn.slow()
	}
}

func (c *Conn) callerOrEmpty() string {
	if c == nil {
		return ""
	}
	return c.Caller
}

// Subscription is one subscriber of one topic.
type Subscription struct {
	// send hands an event over without blocking; false: its buffer is
	// full (the subscriber is slow).
	send  func(*Event) bool
	end   func()
	bus   *Bus
	topic string
	conn  *Conn
	once  sync.Once
}

// Buffer is Options.Buffer: the capacity a subscriber's buffer has.
func (b *Bus) Buffer() int { return b.opts.Buffer }

// Subscribe starts a subscription to topic for the connection of ctx
// (see WithConn), within the caps. Publish calls send with each event of
// the topic, from the publisher's goroutine: it must not block (false: the
// subscriber's buffer is full, and the subscription ends as a slow
// consumer). end is called once when the subscription ends (Close, an
// overflow, the bus's shutdown), after the last send. The subscription
// ends by itself when ctx is done: no goroutine waits for it.
func (b *Bus) Subscribe(ctx context.Context, topic string, send func(*Event) bool, end func()) (*Subscription, error) {
	conn := ConnFrom(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	if conn != nil {
		if b.opts.PerConnection > 0 && conn.active.Load() >= int64(b.opts.PerConnection) {
			b.refused.WithLabelValues("connection").Inc()
			return nil, ErrTooMany
		}
		if b.opts.PerCaller > 0 && b.callers[conn.Caller] >= b.opts.PerCaller {
			b.refused.WithLabelValues("caller").Inc()
			return nil, ErrTooMany
		}
	}
	newFeed := isFeedTopic(topic) && len(b.topics[topic]) == 0
	if conn != nil && isFeedTopic(topic) && b.feedMatch != nil && b.feedMatch.perCaller > 0 {
		if feeds := b.callerFeeds[conn.Caller]; feeds[topic] == 0 && len(feeds) >= b.feedMatch.perCaller {
			b.refused.WithLabelValues("caller_feeds").Inc()
			return nil, ErrTooManyFeedsForCaller
		}
	}
	if newFeed && b.feedMatch != nil && b.feedCount >= b.feedMatch.readers {
		b.refused.WithLabelValues("feeds").Inc()
		return nil, ErrTooManyFeeds
	}
	if conn != nil {
		conn.active.Add(1)
		b.callers[conn.Caller]++
		if isFeedTopic(topic) {
			feeds := b.callerFeeds[conn.Caller]
			if feeds == nil {
				feeds = map[string]int{}
				b.callerFeeds[conn.Caller] = feeds
			}
			feeds[topic]++
		}
	}
	s := &Subscription{send: send, end: end, bus: b, topic: topic, conn: conn}
	subs := b.topics[topic]
	if subs == nil {
		subs = map[*Subscription]struct{}{}
		b.topics[topic] = subs
	}
	if newFeed {
		b.addFeedLocked(topic)
	}
	subs[s] = struct{}{}
	if isRelationshipTopic(topic) {
		b.relationshipSubs++
	}
	context.AfterFunc(ctx, s.Close)
	return s, nil
}

// Channel is a Subscribe whose events go to a channel of Buffer() events,
// closed when the subscription ends.
func (b *Bus) Channel(ctx context.Context, topic string) (*Subscription, <-chan *Event, error) {
	ch := make(chan *Event, b.opts.Buffer)
	s, err := b.Subscribe(ctx, topic, func(ev *Event) bool {
		select {
		case ch <- ev:
			return true
		default:
			return false
		}
	}, func() { close(ch) })
	return s, ch, err
}

// Close ends the subscription (end is called). Safe to call more than
// once and from any goroutine.
func (s *Subscription) Close() {
	s.once.Do(func() {
		b := s.bus
		b.mu.Lock()
		b.removeLocked(s)
		b.mu.Unlock()
		// No Deliver sees s any more (each held the read lock while it
		// sent): no send follows.
		if s.end != nil {
			s.end()
		}
	})
}

func (b *Bus) removeLocked(s *Subscription) {
	subs := b.topics[s.topic]
	if _, ok := subs[s]; !ok {
		return
	}
	delete(subs, s)
	if len(subs) == 0 {
		delete(b.topics, s.topic)
		if isFeedTopic(s.topic) {
			b.removeFeedLocked(s.topic)
		}
	}
	if isRelationshipTopic(s.topic) {
		b.relationshipSubs--
	}
	if c := s.conn; c != nil {
		c.active.Add(-1)
		if b.callers[c.Caller]--; b.callers[c.Caller] <= 0 {
			delete(b.callers, c.Caller)
		}
		if feeds := b.callerFeeds[c.Caller]; feeds != nil && isFeedTopic(s.topic) {
			if feeds[s.topic]--; feeds[s.topic] <= 0 {
				delete(feeds, s.topic)
			}
			if len(feeds) == 0 {
				delete(b.callerFeeds, c.Caller)
			}
		}
	}
}

// Active is the number of active subscriptions.
func (b *Bus) Active() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	n := 0
	for _, subs := range b.topics {
		n += len(subs)
	}
	return n
}

// Close ends every subscription (each completes) and refuses new ones;
// the Remote is closed.
func (b *Bus) Close() {
	b.mu.Lock()
	b.closed = true
	var all []*Subscription
	for _, subs := range b.topics {
		for s := range subs {
			all = append(all, s)
		}
	}
	r := b.remote
	m := b.feedMatch
	b.mu.Unlock()
	if m != nil {
		m.close()
	}
	for _, s := range all {
		s.Close()
	}
	if r != nil {
		r.Close()
	}
}
