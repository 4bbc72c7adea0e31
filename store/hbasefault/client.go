// Package hbasefault wraps a gohbase.Client (the embedded engine, in
// tests and benchmarks) with the faults and latency of a cluster, so that
// what the store does when an RPC goes wrong can be tested without one.
//
// Faults are chosen per call, by rules (the Nth call of a kind, on a table,
// matching a predicate on its row) or by a seeded random plan, and a fault
// is one of:
//
//   - FailBefore: the call is not applied and returns an error.
//   - FailAfter: the call is applied, then returns an error: the region
//     server wrote it, and the connection was reset before the answer came.
//   - ApplyTwice: the call is applied, then applied again, and the caller
//     gets the second answer: gohbase's re-send of an RPC whose connection
//     was reset after the server applied it (a re-sent CheckAndMutate
//     answers false, a re-sent Increment counts twice unless it carries
//     a nonce the server recognises). The same call object is sent again,
//     nonce and all.
//
// # Which error a failed call returns
//
// On a connection reset, gohbase's region client fails every RPC on the
// wire with region.ErrClientClosed, a region.ServerError
// (region/client.go: receiveRPCs, fail, failSentRPCs); a response that
// does not decode is a region.RetryableError. gohbase's SendRPC and
// SendBatch retry both, re-sending the RPC, until its context is done, and
// then return the context's error. A region server that is down before
// the RPC reaches it ends the same way: SendRPC waits for the region to
// come back until the deadline. So an RPC that failed, applied or not,
// reaches the caller of gohbase.Client as context.DeadlineExceeded, and
// that is what a fault returns unless Rule.Err says otherwise
// (ErrInjected: it matches both context.DeadlineExceeded and *Error). The
// store maps it to ErrUnavailable (store/errors.go, classify), and a
// caller cannot tell FailBefore from FailAfter, as on a cluster.
//
// # Latency
//
// SetLatency adds a fixed delay to every round trip: each Get, Put,
// Delete, Increment, Append and CheckAndMutate, each SendBatch (gohbase
// sends a batch's RPCs to their region servers at once), and each page of
// a scan (NumberOfRows rows). The delay is a sleep in the caller's
// goroutine, so concurrent calls overlap as they would on the wire; it
// ends early, with the context's error, when the call's context is done.
//
// # Determinism
//
// A rule counts the calls it matches in the order the client receives
// them: deterministic for a caller that makes its calls one at a time. A
// random plan (SetRandom) decides each call from its seed, its kind, table
// and row and how many calls of that kind to that row came before it, so
// calls to different rows get the same faults however they interleave.
//
// The wrapper does not pass on the embedded engine's extras (CompactAll):
// over it a store behaves as over a cluster.
package hbasefault

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"
)

// Kind is the kind of an RPC, as a rule selects it.
type Kind string

// The kinds of RPC. CheckAndPut is a CheckAndMutate on the wire, and
// counted as one.
const (
	Get            Kind = "Get"
	Scan           Kind = "Scan"
	Put            Kind = "Put"
	Delete         Kind = "Delete"
	Increment      Kind = "Increment"
	Append         Kind = "Append"
	CheckAndMutate Kind = "CheckAndMutate"
)

// IsRead reports whether k only reads: failing it after it was applied is
// failing it, and applying it twice changes nothing.
func (k Kind) IsRead() bool { return k == Get || k == Scan }

// Mode is what a fault does to a call.
type Mode int

const (
	Pass       Mode = iota // no fault: the call goes through
	FailBefore             // not applied; an error
	FailAfter              // applied; then an error
	ApplyTwice             // applied, then re-sent; the caller gets the second answer
)

// Modes are the faults, without Pass.
var Modes = []Mode{FailBefore, FailAfter, ApplyTwice}

func (m Mode) String() string {
	switch m {
	case Pass:
		return "pass"
	case FailBefore:
		return "fail-before"
	case FailAfter:
		return "fail-after"
	case ApplyTwice:
		return "apply-twice"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Error is the error a failed call returns: it says which fault it was
// and unwraps to the error gohbase would have returned (Err).
type Error struct {
	Mode Mode
	Kind Kind
	Err  error
}

func (e *Error) Error() string {
	return fmt.Sprintf("hbasefault: %s %s: %v", e.Kind, e.Mode, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrInjected is the error a fault returns by default: what gohbase returns
// for an RPC whose connection failed until its deadline (see the package
// comment).
var ErrInjected = context.DeadlineExceeded

// Rule selects calls to fault. The zero fields match everything.
type Rule struct {
	Kind  Kind                                // "" any kind
	Table string                              // "" any table
	Match func(table string, row []byte) bool // nil: any row
	// Nth is the matching call to fault, from 1; 0 faults every one.
	Nth  int
	Mode Mode
	// Err is returned by a failed call; nil means ErrInjected.
	Err error
}

func (r *Rule) matches(k Kind, table string, row []byte) bool {
	return (r.Kind == "" || r.Kind == k) && (r.Table == "" || r.Table == table) &&
		(r.Match == nil || r.Match(table, row))
}

// Random is a seeded random plan: each call of one of Kinds (nil: all) is
// faulted with probability Rate, with one of Modes (nil: all three) chosen
// at random.
type Random struct {
	Seed  uint64
	Rate  float64
	Kinds []Kind
	Modes []Mode
	Err   error // nil: ErrInjected
}

// Call is one call the client received, with the fault it was given.
type Call struct {
	Kind  Kind
	Table string
	Row   []byte // the row; a scan's start row
	Mode  Mode
}

// Client is a gohbase.Client that passes calls on to another, with the
// faults and latency it was given. It is safe for concurrent use; rules
// and plans may be changed while calls run.
type Client struct {
	inner   gohbase.Client
	latency atomic.Int64 // ns per round trip

	mu     sync.Mutex
	rules  []*ruleState
	random *Random
	seen   map[string]int // random plan: calls so far per kind, table and row
	record bool
	calls  []Call
}

type ruleState struct {
	Rule
	n int // calls matched so far
}

var _ gohbase.Client = (*Client)(nil)

// New wraps inner with no faults and no latency.
func New(inner gohbase.Client) *Client {
	return &Client{inner: inner}
}

// Inner is the wrapped client.
func (c *Client) Inner() gohbase.Client { return c.inner }

// SetLatency sets the delay of every round trip from now on (0: none).
func (c *Client) SetLatency(d time.Duration) { c.latency.Store(int64(d)) }

// Add adds a rule. A call is given the fault of the first rule that fires
// on it; every rule counts the calls it matches, whether it fires or not.
func (c *Client) Add(r Rule) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rules = append(c.rules, &ruleState{Rule: r})
}

// SetRandom sets a random plan, consulted for calls no rule fires on; nil
// removes it.
func (c *Client) SetRandom(r *Random) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.random, c.seen = r, map[string]int{}
}

// Clear removes every rule and the random plan.
func (c *Client) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rules, c.random, c.seen = nil, nil, nil
}

// Record starts (true) or stops keeping every call; starting drops the
// calls kept so far.
func (c *Client) Record(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.record, c.calls = on, nil
}

// Calls returns the calls kept since Record(true), in the order received.
func (c *Client) Calls() []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Call(nil), c.calls...)
}

// decide picks the fault of one call and the error it fails with.
func (c *Client) decide(k Kind, table []byte, row []byte) (Mode, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	mode, err := Pass, error(nil)
	if len(c.rules) > 0 || c.random != nil || c.record {
		t := string(table)
		for _, r := range c.rules {
			if !r.matches(k, t, row) {
				continue
			}
			r.n++
			if mode == Pass && (r.Nth == 0 || r.n == r.Nth) {
				mode, err = r.Mode, r.Err
			}
		}
		if mode == Pass && c.random != nil {
			mode, err = c.random.decide(c.seen, k, t, row)
		}
		if c.record {
			c.calls = append(c.calls, Call{Kind: k, Table: t, Row: append([]byte(nil), row...), Mode: mode})
		}
	}
	if mode != Pass {
		if err == nil {
			err = ErrInjected
		}
		err = &Error{Mode: mode, Kind: k, Err: err}
	}
	return mode, err
}

func (r *Random) decide(seen map[string]int, k Kind, table string, row []byte) (Mode, error) {
	if r.Rate <= 0 || (r.Kinds != nil && !contains(r.Kinds, k)) {
		return Pass, nil
	}
	key := string(k) + "\x00" + table + "\x00" + string(row)
	n := seen[key]
	seen[key] = n + 1
	h := fnv.New64a()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], r.Seed)
	binary.BigEndian.PutUint64(b[8:], uint64(n))
	h.Write(b[:])
	h.Write([]byte(key))
	x := h.Sum64()
	if float64(x>>11)/(1<<53) >= r.Rate {
		return Pass, nil
	}
	modes := r.Modes
	if modes == nil {
		modes = Modes
	}
	return modes[(x*0x9e3779b97f4a7c15)>>32%uint64(len(modes))], r.Err
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// roundTrip waits the latency, or until ctx is done.
func (c *Client) roundTrip(ctx context.Context) error {
	d := time.Duration(c.latency.Load())
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// kindOf is the kind of a call, "" for one the wrapper does not know
// (passed on without faults). A call that embeds an *hrpc.Mutate (the
// store's Increment with a nonce) is a Mutate of its type: its
// Description is the Mutate's.
func kindOf(call hrpc.Call) Kind {
	switch call.(type) {
	case *hrpc.Get:
		return Get
	case *hrpc.Scan:
		return Scan
	case *hrpc.CheckAndMutate, *hrpc.CheckAndPut:
		return CheckAndMutate
	}
	switch call.Description() {
	case pb.MutationProto_PUT.String():
		return Put
	case pb.MutationProto_DELETE.String():
		return Delete
	case pb.MutationProto_INCREMENT.String():
		return Increment
	case pb.MutationProto_APPEND.String():
		return Append
	}
	return ""
}

// do sends one call of kind k with its fault: send is one round trip.
func do[T any](c *Client, call hrpc.Call, k Kind, send func() (T, error)) (T, error) {
	var zero T
	mode, ferr := c.decide(k, call.Table(), call.Key())
	if err := c.roundTrip(call.Context()); err != nil {
		return zero, err
	}
	if mode == FailBefore {
		return zero, ferr
	}
	v, err := send()
	switch mode {
	case FailAfter:
		return zero, ferr
	case ApplyTwice:
		if err := c.roundTrip(call.Context()); err != nil {
			return zero, err
		}
		return send()
	}
	return v, err
}

func (c *Client) Get(g *hrpc.Get) (*hrpc.Result, error) {
	return do(c, g, Get, func() (*hrpc.Result, error) { return c.inner.Get(g) })
}

func (c *Client) Put(p *hrpc.Mutate) (*hrpc.Result, error) {
	return do(c, p, Put, func() (*hrpc.Result, error) { return c.inner.Put(p) })
}

func (c *Client) Delete(d *hrpc.Mutate) (*hrpc.Result, error) {
	return do(c, d, Delete, func() (*hrpc.Result, error) { return c.inner.Delete(d) })
}

func (c *Client) Append(a *hrpc.Mutate) (*hrpc.Result, error) {
	return do(c, a, Append, func() (*hrpc.Result, error) { return c.inner.Append(a) })
}

func (c *Client) Increment(i *hrpc.Mutate) (int64, error) {
	return do(c, i, Increment, func() (int64, error) { return c.inner.Increment(i) })
}

func (c *Client) CheckAndPut(p *hrpc.Mutate, family, qualifier string, expectedValue []byte) (bool, error) {
	return do(c, p, CheckAndMutate, func() (bool, error) {
		return c.inner.CheckAndPut(p, family, qualifier, expectedValue)
	})
}

func (c *Client) CheckAndPutWithCompareType(p *hrpc.Mutate, family, qualifier string,
	expectedValue []byte, compareType pb.CompareType) (bool, error) {
	return do(c, p, CheckAndMutate, func() (bool, error) {
		return c.inner.CheckAndPutWithCompareType(p, family, qualifier, expectedValue, compareType)
	})
}

func (c *Client) CheckAndMutate(cam *hrpc.CheckAndMutate) (bool, error) {
	return do(c, cam, CheckAndMutate, func() (bool, error) { return c.inner.CheckAndMutate(cam) })
}

// rpcSender is gohbase's client's SendRPC, which gohbase.Client does not
// list: the embedded engine has it too.
type rpcSender interface {
	SendRPC(hrpc.Call) (proto.Message, error)
}

// SendRPC sends one call with its fault, as the method of its kind does.
// ApplyTwice sends the same call object again, as gohbase's re-send does,
// so whatever the call puts in its protobuf (an Increment's nonce) is sent
// twice. It fails if the wrapped client has no SendRPC.
func (c *Client) SendRPC(call hrpc.Call) (proto.Message, error) {
	inner, ok := c.inner.(rpcSender)
	if !ok {
		return nil, fmt.Errorf("hbasefault: the wrapped %T has no SendRPC", c.inner)
	}
	k := kindOf(call)
	if k == "" {
		return inner.SendRPC(call)
	}
	return do(c, call, k, func() (proto.Message, error) { return inner.SendRPC(call) })
}

// SendBatch is one round trip for the whole batch, and one more for the
// calls re-sent (ApplyTwice). Each call of the batch is a call of its
// kind, faulted on its own, as HBase applies a batch's calls independently.
func (c *Client) SendBatch(ctx context.Context, batch []hrpc.Call) ([]hrpc.RPCResult, bool) {
	if len(batch) == 0 {
		return c.inner.SendBatch(ctx, batch)
	}
	modes := make([]Mode, len(batch))
	errs := make([]error, len(batch))
	faulted := false
	for i, call := range batch {
		if k := kindOf(call); k != "" {
			modes[i], errs[i] = c.decide(k, call.Table(), call.Key())
			faulted = faulted || modes[i] != Pass
		}
	}
	if err := c.roundTrip(ctx); err != nil {
		res := make([]hrpc.RPCResult, len(batch))
		for i := range res {
			res[i].Error = err
		}
		return res, false
	}
	if !faulted {
		return c.inner.SendBatch(ctx, batch)
	}
	res := make([]hrpc.RPCResult, len(batch))
	send, at := c.subset(batch, modes, func(m Mode) bool { return m != FailBefore })
	if len(send) > 0 {
		r, _ := c.inner.SendBatch(ctx, send)
		for j, i := range at {
			res[i] = r[j]
		}
	}
	again, againAt := c.subset(batch, modes, func(m Mode) bool { return m == ApplyTwice })
	if len(again) > 0 {
		if err := c.roundTrip(ctx); err != nil {
			for _, i := range againAt {
				res[i] = hrpc.RPCResult{Error: err}
			}
		} else {
			r, _ := c.inner.SendBatch(ctx, again)
			for j, i := range againAt {
				res[i] = r[j]
			}
		}
	}
	allOK := true
	for i := range res {
		if modes[i] == FailBefore || modes[i] == FailAfter {
			res[i] = hrpc.RPCResult{Error: errs[i]}
		}
		allOK = allOK && res[i].Error == nil
	}
	return res, allOK
}

func (c *Client) subset(batch []hrpc.Call, modes []Mode, keep func(Mode) bool) ([]hrpc.Call, []int) {
	var calls []hrpc.Call
	var at []int
	for i, call := range batch {
		if keep(modes[i]) {
			calls, at = append(calls, call), append(at, i)
		}
	}
	return calls, at
}

// Scan is a round trip for each page of NumberOfRows rows. A fault fails
// the first Next (ApplyTwice does nothing to a read).
func (c *Client) Scan(s *hrpc.Scan) hrpc.Scanner {
	mode, err := c.decide(Scan, s.Table(), s.StartRow())
	sc := &scanner{c: c, ctx: s.Context(), page: int(s.NumberOfRows())}
	if mode == FailBefore || mode == FailAfter {
		sc.err = err
		return sc
	}
	sc.inner = c.inner.Scan(s)
	return sc
}

type scanner struct {
	c     *Client
	ctx   context.Context
	inner hrpc.Scanner
	err   error // returned by the first Next
	page  int   // rows per round trip
	rows  int   // rows returned so far
}

func (s *scanner) Next() (*hrpc.Result, error) {
	if s.inner == nil {
		err := s.err
		s.err = nil
		if err == nil {
			return nil, errEOF
		}
		if rerr := s.c.roundTrip(s.ctx); rerr != nil {
			return nil, rerr
		}
		return nil, err
	}
	if s.page <= 0 || s.rows%s.page == 0 {
		if err := s.c.roundTrip(s.ctx); err != nil {
			return nil, err
		}
	}
	r, err := s.inner.Next()
	if err == nil {
		s.rows++
	}
	return r, err
}

func (s *scanner) Close() error {
	if s.inner == nil {
		return nil
	}
	return s.inner.Close()
}

func (s *scanner) GetScanMetrics() map[string]int64 {
	if s.inner == nil {
		return nil
	}
	return s.inner.GetScanMetrics()
}

// ScanV2 is a round trip for each Next; faults as Scan's.
func (c *Client) ScanV2(s *hrpc.Scan) hrpc.ScannerV2 {
	mode, err := c.decide(Scan, s.Table(), s.StartRow())
	sc := &scannerV2{c: c, ctx: s.Context()}
	if mode == FailBefore || mode == FailAfter {
		sc.err = err
		return sc
	}
	sc.inner = c.inner.ScanV2(s)
	return sc
}

type scannerV2 struct {
	c     *Client
	ctx   context.Context
	inner hrpc.ScannerV2
	err   error
}

func (s *scannerV2) Next() (*hrpc.ScanResponseV2, error) { return s.Scan(0) }

func (s *scannerV2) Scan(rows uint32) (*hrpc.ScanResponseV2, error) {
	if err := s.c.roundTrip(s.ctx); err != nil {
		return nil, err
	}
	if s.inner == nil {
		err := s.err
		s.err = nil
		if err == nil {
			return nil, errEOF
		}
		return nil, err
	}
	return s.inner.Scan(rows)
}

func (s *scannerV2) Close() error {
	if s.inner == nil {
		return nil
	}
	return s.inner.Close()
}

func (s *scannerV2) GetScanMetrics() map[string]int64 {
	if s.inner == nil {
		return nil
	}
	return s.inner.GetScanMetrics()
}

func (c *Client) CacheRegions(table []byte) error { return c.inner.CacheRegions(table) }

// Close closes the wrapped client.
func (c *Client) Close() { c.inner.Close() }

var errEOF = io.EOF
