// Package store is hbgraph's domain store: the property graph of seeds
// 000/002 (nodes, relationships, newest-first adjacency, degree counters)
// and the blog of seed 001 (per-author timelines, a category index,
// counters) with seed 004's word counts, kept in HBase rows.
//
// It talks to a gohbase.Client and nothing else: a real cluster, or the
// embedded engine. Every row key comes from store/keys. Writes follow seed
// 002 without locks: creates are CheckAndMutate "c absent", updates and
// deletes are compare-and-set loops on the row's update time `u`, and index
// rows carry `u` as their cell timestamp so concurrent updates converge on
// the newest. Multi-row operations are not atomic; Repair finds and fixes
// what a crash between their writes leaves behind.
//
// A Store is safe for concurrent use. Every call to HBase carries a deadline
// (Options.CallTimeout). Errors wrap one of ErrNotFound, ErrAlreadyExists,
// ErrConflict, ErrInvalidInput or ErrUnavailable, so callers can tell what
// to do: report, fix the input, retry, or give up.
package store

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsuna/gohbase"

	"github.com/hbgraph/hbgraph/store/pagescan"
)

var (
	// ErrNotFound: the node, relationship or article does not exist (or an
	// endpoint of a relationship being created does not).
	ErrNotFound = errors.New("store: not found")
	// ErrAlreadyExists: a create found the row already there.
	ErrAlreadyExists = errors.New("store: already exists")
	// ErrConflict: compare-and-set retries ran out under contention, or a
	// node that still has relationships was deleted without detach.
	ErrConflict = errors.New("store: conflict")
	// ErrInvalidInput: an id, type, category, property map, page request or
	// cursor the caller must fix. Nothing was written.
	ErrInvalidInput = errors.New("store: invalid input")
	// ErrForbidden: the write's Writer (WithWriter) may not write the node
	// it changes, as read in the compare-and-set that guards the write.
	ErrForbidden = errors.New("store: forbidden")
	// ErrUnavailable: HBase could not be reached or did not answer in time.
	// The operation may be retried.
	ErrUnavailable = errors.New("store: unavailable")
)

// Options configure a Store. The zero value is usable.
type Options struct {
	// Clock returns the current time; nil means time.Now.
	Clock func() time.Time
	// CallTimeout bounds each HBase call; 0 means DefaultCallTimeout. A
	// call to an engine in this process (the embedded one) has no
	// deadline of its own (see Store.deadline).
	CallTimeout time.Duration
	// MaxAttempts bounds a compare-and-set loop; 0 means DefaultMaxAttempts.
	MaxAttempts int
	// BatchRowTimeout is the time a batched call (one SendBatch) gets
	// beyond CallTimeout for each call it carries: an import's batches
	// carry thousands, which a loaded machine or cluster may not serve
	// within one CallTimeout. 0: a batch gets CallTimeout, as one call.
	BatchRowTimeout time.Duration
	// Feed configures the home feed (feed.go); the zero value keeps none.
	Feed FeedOptions
	// OverlapCalls sends the independent calls of a write at once (see
	// overlap): on a cluster, where each call is a round trip, a write
	// then waits for as many round trips as at 645e710. Off, the calls go
	// one after the other, as over the embedded engine, where a call
	// costs its CPU and nothing is gained by overlapping them.
	OverlapCalls bool
	// EngineSharesClock says the engine stamps cells with this store's
	// Clock: the embedded engine, in this process. A counter's deletion
	// then waits only for that clock to pass the counter's stamp, not
	// counterSettle more for a region server's clock behind it.
	EngineSharesClock bool
}

const (
	DefaultCallTimeout = 5 * time.Second
	DefaultMaxAttempts = 64
)

// Store is the domain store over one gohbase.Client.
type Store struct {
	hc          gohbase.Client
	clock       func() time.Time
	callTimeout time.Duration
	maxAttempts int
	// batchRowTimeout is Options.BatchRowTimeout.
	batchRowTimeout time.Duration
	// clockWait bounds how long a delete waits for the clock to pass a
	// counter's timestamp (see deleteDegreeRows).
	clockWait time.Duration
	// fault, set by tests only, is called at every point between two
	// writes of a multi-row operation; an error from it stops the
	// operation there, as a crash would.
	fault func(point string) error
	// articleLayoutOK is set once CheckArticleLayout has found the table
	// articles of the current layout.
	articleLayoutOK atomic.Bool
	// uncountedAuthors holds the authors (string keys) of article
	// deletions finished without their counts (a mark older than
	// nonceRecent): recountAuthor recounts only those.
	uncountedAuthors sync.Map
	// migration is the state of an online layout migration (migrate.go).
	migration articleMigration
	// feed is Options.Feed, normalised.
	feed FeedOptions
	// overlapCalls is Options.OverlapCalls.
	overlapCalls bool
	// counterSettle is the real time a counter's deletion waits beyond
	// the clock (waitCounterPast): 0 when the engine shares the clock.
	counterSettle time.Duration
	// flushBackoff is the wait before a degree tally flush sends again
	// what failed (writeDegreeTotals), doubling: defaultFlushBackoff.
	flushBackoff time.Duration
	// rows is the client when it is an engine in this process that reads
	// rows directly (pagescan.RowReader; nil for a client with round
	// trips): reads go through it without an hrpc Get, and its calls are
	// CPU, so a call gets no deadline of its own (a timer each, 4% of a
	// write's CPU), only its caller's (a request's --request-timeout).
	rows pagescan.RowReader
}

// New returns a Store over hc. It fails on invalid options.
func New(hc gohbase.Client, opts Options) (*Store, error) {
	if hc == nil {
		return nil, errors.New("store: nil gohbase.Client")
	}
	if opts.CallTimeout < 0 || opts.MaxAttempts < 0 || opts.BatchRowTimeout < 0 {
		return nil, errors.New("store: negative CallTimeout, MaxAttempts or BatchRowTimeout")
	}
	if err := opts.Feed.Validate(); err != nil {
		return nil, fmt.Errorf("store: feed options: %w", err)
	}
	s := &Store{hc: hc, clock: opts.Clock, callTimeout: opts.CallTimeout, maxAttempts: opts.MaxAttempts,
		batchRowTimeout: opts.BatchRowTimeout, clockWait: time.Second, feed: opts.Feed.normalised(),
		overlapCalls: opts.OverlapCalls, counterSettle: counterSettle, flushBackoff: defaultFlushBackoff}
	if opts.EngineSharesClock {
		s.counterSettle = 0
	}
	s.rows, _ = hc.(pagescan.RowReader)
	if s.clock == nil {
		s.clock = time.Now
	}
	if s.callTimeout == 0 {
		s.callTimeout = DefaultCallTimeout
	}
	if s.maxAttempts == 0 {
		s.maxAttempts = DefaultMaxAttempts
	}
	return s, nil
}

// nowMs is the clock in milliseconds, HBase's timestamp unit.
func (s *Store) nowMs() int64 { return s.clock().UnixMilli() }

// faultPoint marks a point between two writes; see Store.fault.
func (s *Store) faultPoint(point string) error {
	if s.fault == nil {
		return nil
	}
	if err := s.fault(point); err != nil {
		return fmt.Errorf("fault at %s: %w", point, err)
	}
	return nil
}

// nextUpdate is seed 002's new update time: never behind the clock and
// always after the old one, so CAS winners' timestamps increase.
func (s *Store) nextUpdate(old int64) int64 {
	return max(s.nowMs(), old+1)
}
