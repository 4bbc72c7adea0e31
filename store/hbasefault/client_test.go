package hbasefault_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/hbgraph/hbgraph/store"
	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/hbasefault"
	"github.com/hbgraph/hbgraph/store/keys"
)

var bg = context.Background()

// open wraps a fresh in-memory engine with tables t and u (family f).
func open(t *testing.T) *hbasefault.Client {
	t.Helper()
	db, err := embedded.Open(embedded.Options{Tables: map[string][]string{"t": {"f"}, "u": {"f"}}, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return hbasefault.New(db)
}

func put(t *testing.T, c *hbasefault.Client, table, row, value string) error {
	t.Helper()
	p, err := hrpc.NewPutStr(bg, table, row, map[string]map[string][]byte{"f": {"q": []byte(value)}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Put(p)
	return err
}

// value reads cell f:q of a row from the engine itself, past the faults.
func value(t *testing.T, c *hbasefault.Client, table, row string) string {
	t.Helper()
	g, err := hrpc.NewGetStr(bg, table, row)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Inner().Get(g)
	if err != nil {
		t.Fatal(err)
	}
	for _, cell := range r.Cells {
		if string(cell.Qualifier) == "q" {
			return string(cell.Value)
		}
	}
	return ""
}

func increment(t *testing.T, c *hbasefault.Client, row string) (int64, error) {
	t.Helper()
	inc, err := hrpc.NewIncStrSingle(bg, "t", row, "f", "q", 1)
	if err != nil {
		t.Fatal(err)
	}
	return c.Increment(inc)
}

func casAbsent(t *testing.T, c *hbasefault.Client, row, v string) (bool, error) {
	t.Helper()
	p, err := hrpc.NewPutStr(bg, "t", row, map[string]map[string][]byte{"f": {"q": []byte(v)}})
	if err != nil {
		t.Fatal(err)
	}
	return c.CheckAndPut(p, "f", "q", nil)
}

// isInjected checks that err is a fault's, as gohbase would return it.
func isInjected(t *testing.T, err error, mode hbasefault.Mode) {
	t.Helper()
	var fe *hbasefault.Error
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &fe) || fe.Mode != mode {
		t.Fatalf("error %v: want an injected %s matching context.DeadlineExceeded", err, mode)
	}
}

func TestFailBeforeAppliesNothing(t *testing.T) {
	c := open(t)
	c.Add(hbasefault.Rule{Kind: hbasefault.Put, Nth: 1, Mode: hbasefault.FailBefore})
	isInjected(t, put(t, c, "t", "r", "1"), hbasefault.FailBefore)
	if v := value(t, c, "t", "r"); v != "" {
		t.Fatalf("row written: %q", v)
	}
	// The rule fired on its first call only.
	if err := put(t, c, "t", "r", "2"); err != nil || value(t, c, "t", "r") != "2" {
		t.Fatalf("second put: %v, %q", err, value(t, c, "t", "r"))
	}
}

func TestFailAfterApplies(t *testing.T) {
	c := open(t)
	c.Add(hbasefault.Rule{Kind: hbasefault.Put, Mode: hbasefault.FailAfter})
	isInjected(t, put(t, c, "t", "r", "1"), hbasefault.FailAfter)
	if v := value(t, c, "t", "r"); v != "1" {
		t.Fatalf("row %q, want the put applied", v)
	}
}

// A re-sent CheckAndPut finds its own write and answers false; a re-sent
// Increment counts twice and answers the second sum.
func TestApplyTwiceIsGohbasesResend(t *testing.T) {
	c := open(t)
	c.Add(hbasefault.Rule{Mode: hbasefault.ApplyTwice})
	ok, err := casAbsent(t, c, "r", "1")
	if err != nil || ok {
		t.Fatalf("re-sent CheckAndPut: %v, %v; want false", ok, err)
	}
	if v := value(t, c, "t", "r"); v != "1" {
		t.Fatalf("row %q", v)
	}
	n, err := increment(t, c, "n")
	if err != nil || n != 2 {
		t.Fatalf("re-sent Increment: %d, %v; want 2", n, err)
	}
}

// Nth counts the calls of the rule's kind, on its table, that match its
// predicate, and no others.
func TestRuleSelectsKindTableRowAndPosition(t *testing.T) {
	c := open(t)
	c.Record(true)
	c.Add(hbasefault.Rule{Kind: hbasefault.Put, Table: "t", Nth: 2, Mode: hbasefault.FailBefore,
		Match: func(_ string, row []byte) bool { return row[0] == 'a' }})
	steps := []struct {
		table, row string
		fail       bool
	}{
		{"t", "a1", false}, {"t", "b1", false}, {"u", "a2", false}, {"t", "a3", true}, {"t", "a4", false},
	}
	for _, s := range steps {
		if _, err := increment(t, c, "n"); err != nil { // another kind: not counted
			t.Fatal(err)
		}
		err := put(t, c, s.table, s.row, "x")
		if (err != nil) != s.fail {
			t.Fatalf("put %s/%s: %v, want failed %v", s.table, s.row, err, s.fail)
		}
	}
	var faulted []string
	for _, call := range c.Calls() {
		if call.Mode != hbasefault.Pass {
			faulted = append(faulted, fmt.Sprintf("%s %s/%s %s", call.Kind, call.Table, call.Row, call.Mode))
		}
	}
	if want := []string{"Put t/a3 fail-before"}; !slices.Equal(faulted, want) {
		t.Fatalf("faulted %v, want %v", faulted, want)
	}
	if n := len(c.Calls()); n != 10 {
		t.Fatalf("%d calls recorded, want 10", n)
	}
}

// Each call of a batch is faulted on its own; the others are applied.
func TestSendBatchFaultsEachCall(t *testing.T) {
	c := open(t)
	c.Add(hbasefault.Rule{Kind: hbasefault.Increment, Nth: 1, Mode: hbasefault.FailBefore})
	c.Add(hbasefault.Rule{Kind: hbasefault.Increment, Nth: 2, Mode: hbasefault.FailAfter})
	c.Add(hbasefault.Rule{Kind: hbasefault.Increment, Nth: 3, Mode: hbasefault.ApplyTwice})
	var batch []hrpc.Call
	for _, row := range []string{"a", "b", "c", "d"} {
		inc, err := hrpc.NewIncStrSingle(bg, "t", row, "f", "q", 1)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, inc)
	}
	res, allOK := c.SendBatch(bg, batch)
	if allOK {
		t.Fatal("allOK with two failed calls")
	}
	isInjected(t, res[0].Error, hbasefault.FailBefore)
	isInjected(t, res[1].Error, hbasefault.FailAfter)
	if res[2].Error != nil || res[3].Error != nil {
		t.Fatalf("errors %v, %v", res[2].Error, res[3].Error)
	}
	want := map[string]int64{"a": 0, "b": 1, "c": 2, "d": 1}
	for row, n := range want {
		var got int64
		if v := value(t, c, "t", row); v != "" {
			got = int64(binary.BigEndian.Uint64([]byte(v)))
		}
		if got != n {
			t.Errorf("row %s counted %d, want %d", row, got, n)
		}
	}
}

func TestScanFails(t *testing.T) {
	c := open(t)
	for _, r := range []string{"a", "b"} {
		if err := put(t, c, "t", r, r); err != nil {
			t.Fatal(err)
		}
	}
	c.Add(hbasefault.Rule{Kind: hbasefault.Scan, Nth: 1, Mode: hbasefault.FailAfter})
	scan := func() (int, error) {
		sc, err := hrpc.NewScanStr(bg, "t")
		if err != nil {
			t.Fatal(err)
		}
		s := c.Scan(sc)
		defer s.Close()
		n := 0
		for {
			_, err := s.Next()
			if err == io.EOF {
				return n, nil
			}
			if err != nil {
				return n, err
			}
			n++
		}
	}
	n, err := scan()
	isInjected(t, err, hbasefault.FailAfter)
	if n != 0 {
		t.Fatalf("%d rows before the error", n)
	}
	if n, err := scan(); n != 2 || err != nil {
		t.Fatalf("second scan: %d rows, %v", n, err)
	}
}

// A random plan faults the same calls for the same seed, whatever the
// order of calls to different rows, and other calls for another seed.
func TestRandomPlanIsSeeded(t *testing.T) {
	plan := func(seed uint64, order []string) map[string]hbasefault.Mode {
		c := open(t)
		c.Record(true)
		c.SetRandom(&hbasefault.Random{Seed: seed, Rate: 0.3, Kinds: []hbasefault.Kind{hbasefault.Put}})
		for _, row := range order {
			for i := range 3 {
				_ = put(t, c, "t", row, fmt.Sprint(i))
			}
		}
		out := map[string]hbasefault.Mode{}
		seen := map[string]int{}
		for _, call := range c.Calls() {
			out[fmt.Sprintf("%s#%d", call.Row, seen[string(call.Row)])] = call.Mode
			seen[string(call.Row)]++
		}
		return out
	}
	var rows []string
	for i := range 100 {
		rows = append(rows, fmt.Sprintf("r%03d", i))
	}
	a := plan(7, rows)
	reversed := slices.Clone(rows)
	slices.Reverse(reversed)
	b := plan(7, reversed)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("same seed, different faults")
	}
	faulted := 0
	modes := map[hbasefault.Mode]int{}
	for _, m := range a {
		if m != hbasefault.Pass {
			faulted++
			modes[m]++
		}
	}
	if faulted < 60 || faulted > 120 || len(modes) != 3 {
		t.Fatalf("%d of 300 calls faulted (%v), want about 90 of every mode", faulted, modes)
	}
	if fmt.Sprint(plan(8, rows)) == fmt.Sprint(a) {
		t.Fatal("another seed, same faults")
	}
}

// Latency is per round trip: concurrent calls overlap, a batch is one
// round trip, a re-sent call two.
func TestLatencyPerRoundTrip(t *testing.T) {
	const rtt = 30 * time.Millisecond // 20 calls one after another: 600 ms
	c := open(t)
	c.SetLatency(rtt)
	timed := func(f func()) time.Duration {
		start := time.Now()
		f()
		return time.Since(start)
	}
	wave := timed(func() {
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() { _ = put(t, c, "t", fmt.Sprint(i), "x") })
		}
		wg.Wait()
	})
	if wave < rtt || wave > 8*rtt {
		t.Errorf("a wave of 20 puts took %v, want about one round trip of %v", wave, rtt)
	}
	batch := timed(func() {
		var calls []hrpc.Call
		for i := range 20 {
			g, _ := hrpc.NewGetStr(bg, "t", fmt.Sprint(i))
			calls = append(calls, g)
		}
		if _, ok := c.SendBatch(bg, calls); !ok {
			t.Error("batch failed")
		}
	})
	if batch < rtt || batch > 8*rtt {
		t.Errorf("a batch took %v, want one round trip", batch)
	}
	c.Add(hbasefault.Rule{Mode: hbasefault.ApplyTwice})
	twice := timed(func() { _ = put(t, c, "t", "x", "y") })
	if twice < 2*rtt {
		t.Errorf("a re-sent put took %v, want two round trips", twice)
	}
	ctx, cancel := context.WithTimeout(bg, rtt/4)
	defer cancel()
	g, _ := hrpc.NewGetStr(ctx, "t", "x")
	if _, err := c.Get(g); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a get past its deadline: %v", err)
	}
}

// The store takes a fault's error for what it is, an RPC that may or may
// not have been applied: ErrUnavailable.
func TestStoreMapsFaultsToUnavailable(t *testing.T) {
	db, err := embedded.Open(embedded.Options{Tables: keys.Tables(), Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := hbasefault.New(db)
	s, err := store.New(c, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []hbasefault.Mode{hbasefault.FailBefore, hbasefault.FailAfter} {
		c.Add(hbasefault.Rule{Kind: hbasefault.CheckAndMutate, Nth: 1, Mode: mode})
		_, err := s.CreateNode(bg, "n"+mode.String(), "", nil)
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s: %v, want ErrUnavailable", mode, err)
		}
		c.Clear()
	}
}

// noncedInc is an Increment with a nonce, as package store sends it: a
// call that embeds an *hrpc.Mutate and sets the nonce on its protobuf, in
// both of its wire forms.
type noncedInc struct {
	*hrpc.Mutate
	nonce uint64
}

func (m *noncedInc) ToProto() proto.Message { return m.withNonce(m.Mutate.ToProto()) }

// SerializeCellBlocks is the form gohbase's region client sends (and the
// engine reads): the nonce is set on it too.
func (m *noncedInc) SerializeCellBlocks(cbs [][]byte) (proto.Message, [][]byte, uint32) {
	msg, cbs, n := m.Mutate.SerializeCellBlocks(cbs)
	return m.withNonce(msg), cbs, n
}

func (m *noncedInc) withNonce(msg proto.Message) proto.Message {
	req := msg.(*pb.MutateRequest)
	req.NonceGroup = proto.Uint64(1)
	req.Mutation.Nonce = proto.Uint64(m.nonce)
	return req
}

// SendRPC faults a call by its kind, a call that embeds a Mutate included,
// and ApplyTwice re-sends the same call object, nonce and all, which the
// engine recognises: the re-sent Increment counts once, and answers the
// current value.
func TestSendRPCResendsTheSameCall(t *testing.T) {
	c := open(t)
	c.Add(hbasefault.Rule{Kind: hbasefault.Increment, Mode: hbasefault.ApplyTwice})
	c.Record(true)
	inc, err := hrpc.NewIncStrSingle(bg, "t", "n", "f", "q", 5)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := c.SendRPC(&noncedInc{Mutate: inc, nonce: 42})
	if err != nil {
		t.Fatal(err)
	}
	cells := msg.(*pb.MutateResponse).GetResult().GetCell()
	if len(cells) != 1 || binary.BigEndian.Uint64(cells[0].GetValue()) != 5 {
		t.Fatalf("re-sent Increment with a nonce answered %v, want 5", cells)
	}
	if calls := c.Calls(); len(calls) != 1 || calls[0].Kind != hbasefault.Increment || calls[0].Mode != hbasefault.ApplyTwice {
		t.Fatalf("calls %v, want one re-sent Increment", calls)
	}
	// Without a nonce, the re-send counts twice (gohbase's own Increment).
	if n, err := increment(t, c, "m"); err != nil || n != 2 {
		t.Fatalf("re-sent Increment without a nonce: %d, %v; want 2", n, err)
	}
	// In a batch too.
	inc2, err := hrpc.NewIncStrSingle(bg, "t", "b", "f", "q", 1)
	if err != nil {
		t.Fatal(err)
	}
	res, ok := c.SendBatch(bg, []hrpc.Call{&noncedInc{Mutate: inc2, nonce: 43}})
	if !ok {
		t.Fatalf("SendBatch: %v", res)
	}
	cells = res[0].Msg.(*pb.MutateResponse).GetResult().GetCell()
	if len(cells) != 1 || binary.BigEndian.Uint64(cells[0].GetValue()) != 1 {
		t.Fatalf("re-sent batched Increment with a nonce answered %v, want 1", cells)
	}
}
