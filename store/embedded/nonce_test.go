package embedded_test

// Nonces: HBase's de-duplication of re-sent Increments and Appends.
//
//	[RSRpcServices]  increment, append: startNonceOperation(mutation,
//	                 nonceGroup); when it says the nonce was seen, "convert
//	                 duplicate increment to get": the answer is a Get of
//	                 the mutation's cells (ProtobufUtil.toGet), so their
//	                 current values, and nothing is applied. A mutation
//	                 without a nonce always proceeds. In a multi the group
//	                 is MultiRequest.nonceGroup, which gohbase never sets.
//	[NonceManager]   ServerNonceManager: (group, nonce) -> operation;
//	                 startOperation returns true for NO_NONCE (0), waits
//	                 for an operation in flight with the same key, and
//	                 proceeds if that one failed (endOperation removes
//	                 it); an applied one is kept for
//	                 hbase.server.hashNonce.gracePeriod (30 minutes).

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/hbgraph/hbgraph/store/embedded"
)

// noncedCall is an Increment or Append with a nonce, built the way package
// store builds its own: gohbase's Mutate, with the nonce group and nonce
// set on its protobuf, in both of its wire forms.
type noncedCall struct {
	*hrpc.Mutate
	group, nonce uint64
}

func (m *noncedCall) ToProto() proto.Message { return m.withNonce(m.Mutate.ToProto()) }

// SerializeCellBlocks is the form gohbase's region client sends (and the
// engine reads): the nonce is set on it too.
func (m *noncedCall) SerializeCellBlocks(cbs [][]byte) (proto.Message, [][]byte, uint32) {
	msg, cbs, n := m.Mutate.SerializeCellBlocks(cbs)
	return m.withNonce(msg), cbs, n
}

func (m *noncedCall) withNonce(msg proto.Message) proto.Message {
	req := msg.(*pb.MutateRequest)
	req.NonceGroup = proto.Uint64(m.group)
	req.Mutation.Nonce = proto.Uint64(m.nonce)
	return req
}

func nonceInc(tb testing.TB, row string, group, nonce uint64, deltas map[string]int64) *noncedCall {
	tb.Helper()
	values := map[string][]byte{}
	for q, d := range deltas {
		values[q] = be64(d)
	}
	inc, err := hrpc.NewIncStr(context.Background(), specTable, row, map[string]map[string][]byte{"f": values})
	if err != nil {
		tb.Fatal(err)
	}
	return &noncedCall{Mutate: inc, group: group, nonce: nonce}
}

// sendNonced sends call with SendRPC and returns the cells it answers, by
// qualifier.
func sendNonced(tb testing.TB, cl *embedded.Client, call hrpc.Call) map[string]int64 {
	tb.Helper()
	msg, err := cl.SendRPC(call)
	if err != nil {
		tb.Fatalf("SendRPC: %v", err)
	}
	return longCells(hrpc.ToLocalResult(msg.(*pb.MutateResponse).GetResult()))
}

func longCells(r *hrpc.Result) map[string]int64 {
	out := map[string]int64{}
	for _, c := range r.Cells {
		out[string(c.Qualifier)] = int64(binary.BigEndian.Uint64(c.Value))
	}
	return out
}

func stored(tb testing.TB, cl *embedded.Client, row string) map[string]int64 {
	tb.Helper()
	return longCells(mustGet(tb, cl, row))
}

func equalCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// [RSRpcServices, NonceManager] An Increment re-sent with the nonce it was
// applied with is not applied again.
func TestNonceSameNonceAppliesOnce(t *testing.T) {
	t.Parallel()
	cl := openSpec(t, embedded.Options{Clock: newFakeClock(specT0).Now})
	call := nonceInc(t, "r", 7, 42, map[string]int64{"a": 5, "b": -2})
	want := map[string]int64{"a": 5, "b": -2}
	if got := sendNonced(t, cl, call); !equalCounts(got, want) {
		t.Fatalf("first Increment = %v, want %v", got, want)
	}
	// gohbase re-sends the same call object; a retry builds a new one with
	// the same nonce. Neither applies.
	if got := sendNonced(t, cl, call); !equalCounts(got, want) {
		t.Fatalf("re-sent Increment = %v, want %v", got, want)
	}
	if got := sendNonced(t, cl, nonceInc(t, "r", 7, 42, map[string]int64{"a": 5, "b": -2})); !equalCounts(got, want) {
		t.Fatalf("retried Increment = %v, want %v", got, want)
	}
	if got := stored(t, cl, "r"); !equalCounts(got, want) {
		t.Fatalf("stored = %v, want %v (applied once)", got, want)
	}
}

// [NonceManager] Nonces are keyed by (group, nonce): another nonce, or the
// same nonce in another group, is another operation.
func TestNonceDifferentNoncesApplyTwice(t *testing.T) {
	t.Parallel()
	cl := openSpec(t, embedded.Options{Clock: newFakeClock(specT0).Now})
	sendNonced(t, cl, nonceInc(t, "r", 7, 42, map[string]int64{"a": 1}))
	sendNonced(t, cl, nonceInc(t, "r", 7, 43, map[string]int64{"a": 1}))
	sendNonced(t, cl, nonceInc(t, "r", 8, 42, map[string]int64{"a": 1}))
	if got := stored(t, cl, "r")["a"]; got != 3 {
		t.Fatalf("stored = %d, want 3", got)
	}
}

// [RSRpcServices, NonceManager] No nonce (gohbase's own Increment), or
// nonce 0 (HConstants.NO_NONCE), never de-duplicates.
func TestNonceAbsentNeverDeduplicates(t *testing.T) {
	t.Parallel()
	cl := openSpec(t, embedded.Options{Clock: newFakeClock(specT0).Now})
	inc, err := hrpc.NewIncStrSingle(context.Background(), specTable, "r", "f", "a", 1)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := cl.Increment(inc); err != nil {
			t.Fatal(err)
		}
	}
	zero := nonceInc(t, "r", 7, 0, map[string]int64{"a": 1})
	sendNonced(t, cl, zero)
	sendNonced(t, cl, zero)
	if got := stored(t, cl, "r")["a"]; got != 4 {
		t.Fatalf("stored = %d, want 4", got)
	}
}

// [RSRpcServices] A duplicate is answered with a Get of its cells: their
// current values, including what others added since, not the answer the
// first one had; a cell the Get does not find is not in the answer.
func TestNonceDuplicateAnsweredWithCurrentValues(t *testing.T) {
	t.Parallel()
	cl := openSpec(t, embedded.Options{Clock: newFakeClock(specT0).Now})
	call := nonceInc(t, "r", 7, 42, map[string]int64{"a": 5})
	sendNonced(t, cl, call)
	mustInc(t, cl, "r", "f", "a", 10) // another writer
	if got := sendNonced(t, cl, call); got["a"] != 15 {
		t.Fatalf("duplicate answered %v, want a=15 (the current value)", got)
	}
	// Increments stamp one past the cell they read: the delete must be
	// later than both.
	mustDel(t, cl, "r", map[string]map[string][]byte{"f": {"a": nil}}, at(uint64(specT0)+1000))
	if got := sendNonced(t, cl, call); len(got) != 0 {
		t.Fatalf("duplicate of a deleted cell answered %v, want no cells", got)
	}
	if got := stored(t, cl, "r"); len(got) != 0 {
		t.Fatalf("duplicate applied: stored %v", got)
	}

	// Append too.
	app, err := hrpc.NewAppStr(context.Background(), specTable, "s", vals("f", "x", "ab"))
	if err != nil {
		t.Fatal(err)
	}
	nApp := &noncedCall{Mutate: app, group: 7, nonce: 99}
	for range 2 {
		if _, err := cl.SendRPC(nApp); err != nil {
			t.Fatal(err)
		}
	}
	if got := cellsKV(mustGet(t, cl, "s").Cells); len(got) != 1 || got[0] != "f:x=ab" {
		t.Fatalf("Append re-sent: Get = %q, want [f:x=ab]", got)
	}
}

// [NonceManager] A nonce whose operation failed is not remembered: the
// retry proceeds.
func TestNonceOfFailedOperationIsForgotten(t *testing.T) {
	t.Parallel()
	cl := openSpec(t, embedded.Options{Clock: newFakeClock(specT0).Now})
	mustPut(t, cl, "r", vals("f", "a", "abc")) // not a long: the Increment fails
	call := nonceInc(t, "r", 7, 42, map[string]int64{"a": 5})
	if _, err := cl.SendRPC(call); err == nil {
		t.Fatal("Increment of a 3-byte cell succeeded")
	}
	mustPut(t, cl, "r", map[string]map[string][]byte{"f": {"a": be64(1)}})
	if got := sendNonced(t, cl, call); got["a"] != 6 {
		t.Fatalf("retry after a failure = %v, want a=6 (applied)", got)
	}
}

// [NonceManager] A nonce is remembered for the grace period
// (Options.NonceGracePeriod), then forgotten: a re-send after that applies.
func TestNonceGracePeriod(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(specT0)
	cl := openSpec(t, embedded.Options{Clock: clock.Now})
	call := nonceInc(t, "r", 7, 42, map[string]int64{"a": 1})
	sendNonced(t, cl, call)
	clock.Advance(embedded.DefaultNonceGracePeriod - time.Second)
	sendNonced(t, cl, call)
	if got := stored(t, cl, "r")["a"]; got != 1 {
		t.Fatalf("re-sent within the grace period: stored %d, want 1", got)
	}
	clock.Advance(2 * time.Second)
	sendNonced(t, cl, call)
	if got := stored(t, cl, "r")["a"]; got != 2 {
		t.Fatalf("re-sent after the grace period: stored %d, want 2", got)
	}
}

// The engine's own bound (HBase has none): at most Options.MaxNonces are
// remembered, the oldest forgotten first.
func TestNonceTableCapForgetsOldestFirst(t *testing.T) {
	t.Parallel()
	cl := openSpec(t, embedded.Options{Clock: newFakeClock(specT0).Now, MaxNonces: 2})
	calls := []*noncedCall{
		nonceInc(t, "r", 7, 1, map[string]int64{"a": 1}),
		nonceInc(t, "r", 7, 2, map[string]int64{"a": 1}),
		nonceInc(t, "r", 7, 3, map[string]int64{"a": 1}),
	}
	for _, c := range calls {
		sendNonced(t, cl, c)
	}
	sendNonced(t, cl, calls[2]) // remembered
	sendNonced(t, cl, calls[1]) // remembered
	if got := stored(t, cl, "r")["a"]; got != 3 {
		t.Fatalf("the two newest re-sent: stored %d, want 3", got)
	}
	sendNonced(t, cl, calls[0]) // forgotten past the cap: applies again
	if got := stored(t, cl, "r")["a"]; got != 4 {
		t.Fatalf("the oldest re-sent past the cap: stored %d, want 4", got)
	}
}

// [NonceManager] Concurrent requests with one nonce: one applies, the
// others wait for it and are answered as duplicates. Nothing applies twice.
func TestNonceConcurrentDuplicatesApplyOnce(t *testing.T) {
	t.Parallel()
	cl := openSpec(t, embedded.Options{Clock: newFakeClock(specT0).Now})
	const senders = 32
	for round := range 20 {
		row := "r" + string(rune('a'+round))
		var wg sync.WaitGroup
		answers := make([]map[string]int64, senders)
		start := make(chan struct{})
		for i := range senders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				// A new call object each: gohbase's re-send and a retry on
				// another connection alike.
				msg, err := cl.SendRPC(nonceInc(t, row, 7, uint64(1000+round), map[string]int64{"a": 3, "b": 1}))
				if err != nil {
					t.Error(err)
					return
				}
				answers[i] = longCells(hrpc.ToLocalResult(msg.(*pb.MutateResponse).GetResult()))
			}()
		}
		close(start)
		wg.Wait()
		want := map[string]int64{"a": 3, "b": 1}
		if got := stored(t, cl, row); !equalCounts(got, want) {
			t.Fatalf("round %d: stored %v, want %v (applied once)", round, got, want)
		}
		for i, a := range answers {
			if a != nil && !equalCounts(a, want) {
				t.Fatalf("round %d: sender %d answered %v, want %v", round, i, a, want)
			}
		}
	}
}

// [RSRpcServices multi, gohbase region/multi.go] In a batch the
// MutationProto carries its nonce, and the nonce group, which only the
// MultiRequest could carry, is not sent: the batch's Increments are
// de-duplicated by nonce alone.
func TestNonceInBatch(t *testing.T) {
	t.Parallel()
	cl := openSpec(t, embedded.Options{Clock: newFakeClock(specT0).Now})
	batch := []hrpc.Call{
		nonceInc(t, "r1", 7, 42, map[string]int64{"a": 1}),
		nonceInc(t, "r2", 7, 43, map[string]int64{"a": 1}),
	}
	for range 2 {
		if res, ok := cl.SendBatch(context.Background(), batch); !ok {
			t.Fatalf("SendBatch: %v", res)
		}
	}
	// Another group, the same nonce: in a batch, the same operation.
	if res, ok := cl.SendBatch(context.Background(), []hrpc.Call{nonceInc(t, "r1", 8, 42, map[string]int64{"a": 1})}); !ok {
		t.Fatalf("SendBatch: %v", res)
	}
	for _, row := range []string{"r1", "r2"} {
		if got := stored(t, cl, row)["a"]; got != 1 {
			t.Errorf("%s: stored %d, want 1 (applied once)", row, got)
		}
	}
}

// Options.NoNonces (import's engine): every Increment is applied as sent,
// a re-send too, and nothing is remembered, so no count of them can
// overflow the table.
func TestNoNoncesAppliesEveryIncrement(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	cl := openSpec(t, embedded.Options{Clock: newFakeClock(specT0).Now, MaxNonces: 2, NoNonces: true,
		Logger: zerolog.New(&log)})
	call := nonceInc(t, "r", 7, 42, map[string]int64{"a": 1})
	for range 5 {
		sendNonced(t, cl, call)
	}
	for n := range uint64(100) {
		sendNonced(t, cl, nonceInc(t, "r", 7, 100+n, map[string]int64{"a": 1}))
	}
	if got := stored(t, cl, "r")["a"]; got != 105 {
		t.Fatalf("stored %d, want 105 (every Increment applied)", got)
	}
	if strings.Contains(log.String(), "nonce table full") {
		t.Fatalf("NoNonces filled the nonce table: %s", log.String())
	}
}

// IncrementNonced (pagescan.Incrementer) is a nonced Increment made
// without hrpc: it answers the new values as one does, and shares the
// nonce table with the hrpc form: the same nonce sent either way, again,
// applies once; another nonce applies.
func TestIncrementNoncedIsANoncedIncrement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cl := openSpec(t, embedded.Options{Clock: newFakeClock(specT0).Now})
	inc := func(nonce uint64) map[string]int64 {
		t.Helper()
		res, err := cl.IncrementNonced(ctx, specTable, []byte("r"), "f", []string{"a", "b"}, []int64{5, -2}, 7, nonce)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, c := range res.Cells {
			if string(c.Row) != "r" || string(c.Family) != "f" || c.Timestamp == nil {
				t.Fatalf("answered cell %v", c)
			}
			got[string(c.Qualifier)] = int64(binary.BigEndian.Uint64(c.Value))
		}
		return got
	}
	want := map[string]int64{"a": 5, "b": -2}
	if got := inc(42); !equalCounts(got, want) {
		t.Fatalf("first Increment = %v, want %v", got, want)
	}
	if got := sendNonced(t, cl, nonceInc(t, "r", 7, 42, map[string]int64{"a": 5, "b": -2})); !equalCounts(got, want) {
		t.Fatalf("the same nonce by hrpc = %v, want %v", got, want)
	}
	if got := inc(42); !equalCounts(got, want) {
		t.Fatalf("the same nonce again = %v, want %v", got, want)
	}
	if got := stored(t, cl, "r"); !equalCounts(got, want) {
		t.Fatalf("stored = %v, want %v (applied once)", got, want)
	}
	want = map[string]int64{"a": 10, "b": -4}
	if got := inc(43); !equalCounts(got, want) {
		t.Fatalf("another nonce = %v, want %v", got, want)
	}
	if _, err := cl.IncrementNonced(ctx, specTable, []byte("r"), "f", []string{"a"}, []int64{1, 2}, 7, 44); !errors.Is(err, embedded.ErrInvalidRequest) {
		t.Fatalf("2 deltas for 1 qualifier: %v, want ErrInvalidRequest", err)
	}
	if _, err := cl.IncrementNonced(ctx, specTable, []byte("r"), "nofamily", []string{"a"}, []int64{1}, 7, 45); err == nil {
		t.Fatal("an unknown family was incremented")
	}
}
