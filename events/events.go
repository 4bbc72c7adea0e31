// Package events is the bus that carries the writes that succeeded to the
// GraphQL subscriptions: in process by default, and between replicas over
// NATS when --events-nats names a server (nats.go). Events are published
// by the mutation resolvers once their write is acknowledged, never by the
// store, so a write that failed or was retried publishes nothing or once.
package events

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hbgraph/hbgraph/store"
)

// Kind is what happened.
type Kind string

// The kinds of events, one per subscription field and kind.
const (
	ArticlePosted       Kind = "ARTICLE_POSTED"
	RelationshipCreated Kind = "RELATIONSHIP_CREATED"
	RelationshipDeleted Kind = "RELATIONSHIP_DELETED"
	NodeUpdated         Kind = "NODE_UPDATED"
	NodeDeleted         Kind = "NODE_DELETED"
)

// Event is one write that succeeded, with the item it wrote.
type Event struct {
	Kind         Kind
	Article      *store.Article      // ArticlePosted
	Relationship *store.Relationship // RelationshipCreated and RelationshipDeleted (as it was)
	// GoneNode is, for a RelationshipDeleted by a node's detaching
	// deletion, that node as it was (not carried over NATS).
	GoneNode *store.Node
	NodeID   string      // NodeUpdated and NodeDeleted
	Node     *store.Node // NodeUpdated
}

// Topics a subscription listens on. The parts are joined by NUL, which no
// id or type can hold ambiguously here: each part is length-free but the
// number of parts is fixed per kind and the kind comes first.
func ArticleTopic(author string) string { return "a\x00" + author }

// RelationshipTopic is node's relationships of relType seen in direction dir.
func RelationshipTopic(node string, dir store.Direction, relType string) string {
	return "r\x00" + node + "\x00" + dir.String() + "\x00" + relType
}

func isRelationshipTopic(topic string) bool { return strings.HasPrefix(topic, "r\x00") }

// NodeTopic is one node's changes.
func NodeTopic(id string) string { return "n\x00" + id }

// topics are the topics ev is delivered to.
func (ev *Event) topics(dst []string) []string {
	switch ev.Kind {
	case ArticlePosted:
		if ev.Article != nil {
			dst = append(dst, ArticleTopic(ev.Article.Author))
		}
	case RelationshipCreated, RelationshipDeleted:
		if r := ev.Relationship; r != nil {
			// Both ends see it, a loop (start = end) in both directions.
			dst = append(dst, RelationshipTopic(r.Start, store.Outgoing, r.Type),
				RelationshipTopic(r.End, store.Incoming, r.Type))
		}
	case NodeUpdated, NodeDeleted:
		dst = append(dst, NodeTopic(ev.NodeID))
	}
	return dst
}

// Errors a subscriber can meet; the resolvers give them codes.
var (
	// ErrTooMany: a cap on active subscriptions (per connection or per
	// caller) is reached.
	ErrTooMany = errors.New("events: too many active subscriptions")
	// ErrClosed: the bus is shutting down.
	ErrClosed = errors.New("events: shutting down")
)

// Conn is one client connection's share of the bus: what its
// subscriptions count against, and what to do when one of them cannot
// keep up. The transport puts it in the connection's context (WithConn).
type Conn struct {
	// Caller is whose cap the subscriptions count against: the token's
	// subject, or the client address when anonymous.
	Caller string
	// Slow is called (once) when a subscription's buffer overflowed: the
	// transport closes the connection.
	Slow func()

	active   atomic.Int64
	slowOnce sync.Once
}

type connKey struct{}

// WithConn returns ctx carrying c.
func WithConn(ctx context.Context, c *Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// ConnFrom returns the Conn of ctx, or nil.
func ConnFrom(ctx context.Context) *Conn {
	c, _ := ctx.Value(connKey{}).(*Conn)
	return c
}

func (c *Conn) slow() {
	if c == nil || c.Slow == nil {
		return
	}
	c.slowOnce.Do(c.Slow)
}

// Active is the number of the connection's active subscriptions.
func (c *Conn) Active() int64 { return c.active.Load() }
