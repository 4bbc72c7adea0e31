package resolvers

import (
	"context"
	"errors"
	"fmt"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/events"
	"github.com/hbgraph/hbgraph/graph/codes"
	"github.com/hbgraph/hbgraph/graph/model"
	"github.com/hbgraph/hbgraph/store"
)

// publish hands the event of a write that succeeded to the bus (none in
// tests that build a Resolver without one).
func (r *Resolver) publish(ev *events.Event) {
	if r.Events != nil {
		r.Events.Publish(ev)
	}
}

// The mutation resolvers call these after their write succeeded, once.

func (r *Resolver) publishArticle(a *model.Article, err error) {
	if err == nil && a != nil {
		art := a.Article
		r.publish(&events.Event{Kind: events.ArticlePosted, Article: &art})
	}
}

func (r *Resolver) publishRelationship(kind events.Kind, rel *store.Relationship, err error) {
	if err == nil && rel != nil {
		r.publish(&events.Event{Kind: kind, Relationship: rel})
	}
}

func (r *Resolver) publishNode(kind events.Kind, id string, n *model.Node, err error) {
	if err != nil {
		return
	}
	ev := &events.Event{Kind: kind, NodeID: id}
	if n != nil {
		node := n.Node
		ev.Node = &node
	}
	r.publish(ev)
}

// relationshipBeforeDelete reads the relationship deleteRelationship is
// about to delete, for its event (its cursor needs its creation time):
// nil when it does not exist or cannot be read, or when nobody listens
// for it (no read then), and then no event.
func (r *Resolver) relationshipBeforeDelete(ctx context.Context, k store.RelationshipKey) *store.Relationship {
	if !r.Events.Listened(k) {
		return nil
	}
	rel, err := readRelationship(ctx, r.Store, k)
	if err != nil {
		return nil
	}
	return rel
}

// maxDetachEvents bounds the relationships a detaching deleteNode reads
// for their events (and holds until its deletion is acknowledged).
const maxDetachEvents = 10_000

// detachReadBatch is how many relationships one Read of them asks for.
const detachReadBatch = 100

var errDetachEventsFull = errors.New("too many relationships for their events")

// relationshipsBeforeDetach reads the relationships deleteNode(detach:
// true) of id is about to delete with it, for their events: those someone
// may listen to (Bus.Listened), as they are before the deletion, at most
// maxDetachEvents (past it the rest go without an event, logged), and the
// node as it was, which their events show as that end. No read
// when nobody listens to any relationship. A relationship created while
// the deletion runs goes without an event; one deleted by
// deleteRelationship meanwhile gets its event twice.
func (r *Resolver) relationshipsBeforeDetach(ctx context.Context, id string) (rels []*store.Relationship, node *store.Node) {
	if !r.Events.ListenedRelationships() {
		return nil, nil
	}
	var ks []store.RelationshipKey
	seen := map[store.RelationshipKey]bool{}
	err := r.Store.AttachedKeys(ctx, id, func(k store.RelationshipKey) error {
		if seen[k] || !r.Events.Listened(k) {
			return nil
		}
		if len(ks) == maxDetachEvents {
			return errDetachEventsFull
		}
		seen[k] = true
		ks = append(ks, k)
		return nil
	})
	if err != nil {
		r.Events.Logger().Warn().Err(err).Int("events", len(ks)).Msg("deleteNode(detach): relationships past these go without a subscription event")
		if !errors.Is(err, errDetachEventsFull) {
			return nil, nil
		}
	}
	for len(ks) > 0 {
		batch := ks[:min(len(ks), detachReadBatch)]
		ks = ks[len(batch):]
		gets := make([]store.Get, 0, 3*len(batch))
		for _, k := range batch {
			rg, sg, eg, err := k.Gets()
			if err != nil {
				return rels, node
			}
			gets = append(gets, rg, sg, eg)
		}
		rows, err := r.Store.Read(ctx, gets)
		if err != nil {
			r.Events.Logger().Warn().Err(err).Msg("deleteNode(detach): its relationships could not be read: they go without a subscription event")
			return rels, node
		}
		for i, k := range batch {
			start, end := rows[3*i+1], rows[3*i+2]
			if rel, err := rows[3*i].Relationship(k, start, end); err == nil && rel != nil {
				rels = append(rels, rel)
			}
			if node == nil {
				if k.End == id {
					start = end
				}
				node, _ = start.Node(id)
			}
		}
	}
	return rels, node
}

// goneEnd is the end id of an event's relationship deleted with it (see
// model.Relationship.Gone), or nil.
func goneEnd(rel *model.Relationship, id string) *model.Node {
	if rel.Gone == nil || rel.Gone.ID != id {
		return nil
	}
	return &model.Node{Node: *rel.Gone}
}

// readRelationship reads one relationship and its ends (Row.Relationship
// needs them to tell a live relationship): nil when there is none.
func readRelationship(ctx context.Context, st *store.Store, k store.RelationshipKey) (*store.Relationship, error) {
	rg, sg, eg, err := k.Gets()
	if err != nil {
		return nil, err
	}
	rows, err := st.Read(ctx, []store.Get{rg, sg, eg})
	if err != nil {
		return nil, err
	}
	return rows[0].Relationship(k, rows[1], rows[2])
}

// subscribe starts a subscription to topic and converts its events with
// convert (false: not for this subscriber) as they are published, into
// the channel gqlgen reads: no goroutine of its own per subscription (over
// graphql-transport-ws none at all: see events.Notifier). The channel is closed when the
// subscription ends: the client stops it, its connection closes, it
// overflowed, or the server shuts down.
func subscribe[T any](ctx context.Context, bus *events.Bus, topic string, convert func(*events.Event) (*T, bool)) (<-chan *T, error) {
	if bus == nil {
		return nil, subscriptionError(codes.Unavailable, "subscriptions are not served here")
	}
	out := make(chan *T, bus.Buffer())
	// With a transport that reads out only when told (graphql-transport-ws),
	// each value and the close are announced; else it waits on out.
	notifier := events.NotifierFrom(ctx)
	_, err := bus.Subscribe(ctx, topic, func(ev *events.Event) bool {
		v, ok := convert(ev)
		if !ok {
			return true
		}
		select {
		case out <- v:
			notifier.Notify()
			return true
		default:
			return false
		}
	}, func() {
		close(out)
		notifier.Notify()
	})
	switch {
	case errors.Is(err, events.ErrTooMany):
		return nil, subscriptionError(codes.RateLimited, "too many active subscriptions: end one before starting another")
	case errors.Is(err, events.ErrClosed):
		return nil, subscriptionError(codes.Unavailable, "the server is shutting down: reconnect")
	case err != nil:
		return nil, err
	}
	notifier.Claim()
	return out, nil
}

// subscriptionError is an error a subscriber caused or must wait out, with
// its code.
func subscriptionError(code, msg string) error {
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": code}}
}

// feedOfType is the relationship type of the feed articlePosted(feedOf:)
// watches: Node.feed's default.
const feedOfType = "follows"

func (r *subscriptionResolver) articlePosted(ctx context.Context, authorID, feedOf *string) (<-chan *model.ArticleEdge, error) {
	switch {
	case authorID != nil && feedOf != nil, authorID == nil && feedOf == nil:
		return nil, subscriptionError(codes.BadUserInput, "articlePosted takes exactly one of authorId and feedOf")
	case feedOf != nil:
		return r.feedPosted(ctx, *feedOf)
	}
	if err := store.ValidateNodeID(*authorID); err != nil {
		return nil, err
	}
	return subscribe(ctx, r.Events, events.ArticleTopic(*authorID), func(ev *events.Event) (*model.ArticleEdge, bool) {
		if ev.Article == nil {
			return nil, false
		}
		cursor, err := store.ArticleCursor(*ev.Article)
		if err != nil {
			return nil, false
		}
		return &model.ArticleEdge{Cursor: cursor, Node: model.Article{Article: *ev.Article}}, true
	})
}

// feedPosted is articlePosted(feedOf: reader): every article that enters
// reader's feed of feedOfType, with its cursor there (events/feed.go
// finds them).
func (r *subscriptionResolver) feedPosted(ctx context.Context, reader string) (<-chan *model.ArticleEdge, error) {
	if err := store.ValidateNodeID(reader); err != nil {
		return nil, err
	}
	if err := r.Store.CheckFeedKept(feedOfType); err != nil {
		return nil, err
	}
	// A feed's place on the replica is for a node's: an id of none would
	// take one for nothing.
	if err := nodeExists(ctx, r.Store, reader); err != nil {
		return nil, err
	}
	ch, err := subscribe(ctx, r.Events, events.FeedTopic(reader, feedOfType), func(ev *events.Event) (*model.ArticleEdge, bool) {
		if ev.Article == nil {
			return nil, false
		}
		cursor, err := store.FeedCursor(reader, feedOfType, *ev.Article)
		if err != nil {
			return nil, false
		}
		return &model.ArticleEdge{Cursor: cursor, Node: model.Article{Article: *ev.Article}}, true
	})
	switch {
	case errors.Is(err, events.ErrTooManyFeeds):
		return nil, subscriptionError(codes.RateLimited, "too many home feeds are watched on this server: try again later")
	case errors.Is(err, events.ErrTooManyFeedsForCaller):
		return nil, subscriptionError(codes.RateLimited, "you watch too many home feeds (--subscriptions-feeds-per-caller): end one before watching another")
	}
	return ch, err
}

// nodeExists is nil when node id exists, else a NOT_FOUND error.
func nodeExists(ctx context.Context, st *store.Store, id string) error {
	get, err := store.NodeGet(id)
	if err != nil {
		return err
	}
	rows, err := st.Read(ctx, []store.Get{get})
	if err != nil {
		return err
	}
	n, err := rows[0].Node(id)
	if err != nil {
		return err
	}
	if n == nil {
		return subscriptionError(codes.NotFound, fmt.Sprintf("no node %q: its feed cannot be watched", id))
	}
	return nil
}

func (r *subscriptionResolver) relationshipChanged(ctx context.Context, nodeID, relType string, direction model.Direction) (<-chan *model.RelationshipEvent, error) {
	// The node id's and the type's rules are a relationship's.
	if err := (store.RelationshipKey{Start: nodeID, Type: relType, End: nodeID}).Validate(); err != nil {
		return nil, err
	}
	dir := store.Outgoing
	if direction == model.DirectionIncoming {
		dir = store.Incoming
	}
	return subscribe(ctx, r.Events, events.RelationshipTopic(nodeID, dir, relType), func(ev *events.Event) (*model.RelationshipEvent, bool) {
		if ev.Relationship == nil {
			return nil, false
		}
		cursor, err := store.RelationshipCursor(*ev.Relationship, nodeID, dir)
		if err != nil {
			return nil, false
		}
		kind := model.RelationshipEventKindCreated
		if ev.Kind == events.RelationshipDeleted {
			kind = model.RelationshipEventKindDeleted
		}
		return &model.RelationshipEvent{Kind: kind, Relationship: &model.Relationship{Relationship: *ev.Relationship, Gone: ev.GoneNode}, Cursor: cursor}, true
	})
}

func (r *subscriptionResolver) nodeChanged(ctx context.Context, id string) (<-chan *model.NodeEvent, error) {
	if err := store.ValidateNodeID(id); err != nil {
		return nil, err
	}
	return subscribe(ctx, r.Events, events.NodeTopic(id), func(ev *events.Event) (*model.NodeEvent, bool) {
		out := &model.NodeEvent{Kind: model.NodeEventKindUpdated, ID: ev.NodeID}
		if ev.Kind == events.NodeDeleted {
			out.Kind = model.NodeEventKindDeleted
		} else if ev.Node != nil {
			out.Node = &model.Node{Node: *ev.Node}
		}
		return out, true
	})
}

// Hydrate reads, on the replica that receives another's event over NATS,
// what the wire does not carry: the node updated (as it is now) and the
// relationship created, with their properties. An item gone since is no
// event here (its deletion's event follows); a deleted relationship
// arrives without its properties.
func Hydrate(st *store.Store) events.Hydrate {
	return func(ctx context.Context, ev *events.Event) (bool, error) {
		switch ev.Kind {
		case events.NodeUpdated:
			get, err := store.NodeGet(ev.NodeID)
			if err != nil {
				return false, err
			}
			rows, err := st.Read(ctx, []store.Get{get})
			if err != nil {
				return false, err
			}
			n, err := rows[0].Node(ev.NodeID)
			if err != nil || n == nil {
				return false, err
			}
			ev.Node = n
		case events.RelationshipCreated:
			if ev.Relationship == nil {
				return false, nil
			}
			k := store.RelationshipKey{Start: ev.Relationship.Start, Type: ev.Relationship.Type, End: ev.Relationship.End}
			rel, err := readRelationship(ctx, st, k)
			if err != nil || rel == nil || !rel.Created.Equal(ev.Relationship.Created) {
				return false, err
			}
			ev.Relationship = rel
		}
		return true, nil
	}
}
