package events

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/store"
)

// Subject is the NATS subject every replica publishes its events on and
// listens to. One subject: each replica receives every write's event
// and delivers it to its own subscribers of the event's topics.
const Subject = "hbgraph.events"

// Hydrate fills in, on the replica that receives an event from another,
// what the wire does not carry: a node's and a relationship's properties
// (read from the store, which the replicas share). An error or a missing
// item drops the event here.
type Hydrate func(ctx context.Context, ev *Event) (ok bool, err error)

// NATS is the Remote of a replica: it publishes this replica's events
// and delivers the others'.
type NATS struct {
	nc      *nats.Conn
	bus     *Bus
	replica string
	hydrate Hydrate
	log     zerolog.Logger

	received prometheus.Counter
	dropped  prometheus.Counter
}

// errNATSDown: the connection is down; the event stays on this replica.
var errNATSDown = errors.New("NATS is not connected")

// ConnectNATS connects the bus to the NATS server at url and makes it
// the bus's Remote. A server that is down at start or later is retried
// for ever: meanwhile each replica delivers its own events only (warned
// once per outage, counted per event).
func ConnectNATS(url string, b *Bus, hydrate Hydrate, log zerolog.Logger, reg prometheus.Registerer) (*NATS, error) {
	var id [8]byte
	_, _ = rand.Read(id[:])
	n := &NATS{bus: b, replica: hex.EncodeToString(id[:]), hydrate: hydrate, log: log}
	n.received = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hbgraph_events_remote_received_total", Help: "Events received from the other replicas over NATS.",
	})
	n.dropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hbgraph_events_remote_dropped_total", Help: "Events from the other replicas dropped here: undecodable, or their item gone or unreadable by the time they arrived.",
	})
	connected := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "hbgraph_events_nats_connected", Help: "1 while the events bus is connected to NATS (--events-nats).",
	}, func() float64 {
		if n.nc != nil && n.nc.IsConnected() {
			return 1
		}
		return 0
	})
	if reg != nil {
		reg.MustRegister(n.received, n.dropped, connected)
	}
	nc, err := nats.Connect(url,
		nats.Name("hbgraph"),
		nats.NoEcho(), // this replica's events are delivered here by Publish already
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			log.Warn().Err(err).Str("nats", url).Msg("events: NATS disconnected: subscribers see this replica's writes only until it is back")
		}),
		nats.ReconnectHandler(func(*nats.Conn) {
			log.Info().Str("nats", url).Msg("events: NATS connected again")
		}),
		nats.ConnectHandler(func(*nats.Conn) {
			log.Info().Str("nats", url).Msg("events: NATS connected")
		}),
	)
	if err != nil {
		return nil, err
	}
	n.nc = nc
	if _, err := nc.Subscribe(Subject, n.receive); err != nil {
		nc.Close()
		return nil, err
	}
	if !nc.IsConnected() {
		log.Warn().Str("nats", url).Msg("events: NATS unreachable at start, retrying: subscribers see this replica's writes only until it is reached")
	}
	b.SetRemote(n)
	return n, nil
}

// wireEvent is an event on the wire. Properties do not travel: the
// receiving replica reads them (Hydrate).
type wireEvent struct {
	Replica      string         `json:"replica"`
	Kind         Kind           `json:"kind"`
	Article      *store.Article `json:"article,omitempty"`
	Relationship *wireRel       `json:"relationship,omitempty"`
	NodeID       string         `json:"nodeId,omitempty"`
}

type wireRel struct {
	Start   string    `json:"start"`
	Type    string    `json:"type"`
	End     string    `json:"end"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// Publish sends ev to the other replicas, or fails at once when NATS is
// down (the event is not queued to arrive late).
func (n *NATS) Publish(ev *Event) error {
	if !n.nc.IsConnected() {
		return errNATSDown
	}
	w := wireEvent{Replica: n.replica, Kind: ev.Kind, Article: ev.Article, NodeID: ev.NodeID}
	if r := ev.Relationship; r != nil {
		w.Relationship = &wireRel{Start: r.Start, Type: r.Type, End: r.End, Created: r.Created, Updated: r.Updated}
	}
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	return n.nc.Publish(Subject, b)
}

func (n *NATS) receive(m *nats.Msg) {
	var w wireEvent
	if err := json.Unmarshal(m.Data, &w); err != nil {
		n.dropped.Inc()
		n.log.Warn().Err(err).Msg("events: an undecodable event from NATS dropped")
		return
	}
	if w.Replica == n.replica {
		return
	}
	n.received.Inc()
	ev := &Event{Kind: w.Kind, Article: w.Article, NodeID: w.NodeID}
	if r := w.Relationship; r != nil {
		ev.Relationship = &store.Relationship{Start: r.Start, Type: r.Type, End: r.End, Created: r.Created, Updated: r.Updated}
	}
	if n.hydrate != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ok, err := n.hydrate(ctx, ev)
		cancel()
		if err != nil || !ok {
			n.dropped.Inc()
			if err != nil {
				n.log.Warn().Err(err).Str("kind", string(ev.Kind)).Msg("events: an event from another replica dropped: its item could not be read")
			}
			return
		}
	}
	n.bus.Deliver(ev)
}

// Close drains nothing: events are notifications, and a subscriber that
// missed some catches up by cursor.
func (n *NATS) Close() { n.nc.Close() }
