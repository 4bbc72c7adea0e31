package store

import (
	"context"
	"testing"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"github.com/tsuna/gohbase/region"

	"github.com/hbgraph/hbgraph/store/hbasefault"
	"github.com/hbgraph/hbgraph/store/keys"
)

// Both ways gohbase turns a call into protobuf carry the nonce: ToProto,
// and SerializeCellBlocks (what region/client.go and region/multi.go use
// when cell blocks are on, as they are for a Mutate).
func TestNoncedIncrementCarriesItsNonce(t *testing.T) {
	op := DeriveOpID("test", "key")
	row := []byte("row")
	inc, err := newNoncedIncrement(bg, op, "degree", []byte(keys.TableGraph), keys.FamilyGraph, row,
		map[string]int64{keys.QualDegree: 1}, true)
	if err != nil {
		t.Fatal(err)
	}
	// As a region server's client does before it sends it.
	inc.SetRegion(region.NewInfo(0, nil, []byte(keys.TableGraph), []byte(keys.TableGraph+",,0.test."), nil, nil))
	want := op.nonce("degree", row)
	if want == 0 || want == op.nonce("article-count", row) || want == op.nonce("degree", []byte("other")) {
		t.Fatalf("nonces of different purposes or rows collide, or one is 0 (no nonce)")
	}
	check := func(how string, msg any) {
		req, ok := msg.(*pb.MutateRequest)
		if !ok {
			t.Fatalf("%s: a %T", how, msg)
		}
		if req.GetNonceGroup() != nonceGroup || req.GetMutation().GetNonce() != want {
			t.Errorf("%s: nonce group %d, nonce %d; want %d, %d", how,
				req.GetNonceGroup(), req.GetMutation().GetNonce(), nonceGroup, want)
		}
		if req.GetMutation().GetMutateType() != pb.MutationProto_INCREMENT {
			t.Errorf("%s: a %v", how, req.GetMutation().GetMutateType())
		}
	}
	check("ToProto", inc.ToProto())
	msg, _, _ := inc.SerializeCellBlocks(nil)
	check("SerializeCellBlocks", msg)
	if hrpc.CanBatch(inc) {
		t.Error("an Increment sent alone may be batched by gohbase, which drops its nonce group")
	}
	batched, err := newNoncedIncrement(bg, op, "degree", []byte(keys.TableGraph), keys.FamilyGraph, row,
		map[string]int64{keys.QualDegree: 1}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !hrpc.CanBatch(batched) {
		t.Error("an Increment for a batch cannot be batched")
	}
}

// noSendRPC hides the wrapped client's SendRPC: a client the store sends
// its Increments to as batches of one.
type noSendRPC struct{ gohbase.Client }

// A re-sent Increment (the fault injector's ApplyTwice: the same call
// object, as gohbase re-sends it) counts once, whether the store sends it
// by SendRPC or in a batch, and answers the value it made.
func TestIncrementResentCountsOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		wrap func(*hbasefault.Client) gohbase.Client
	}{
		{"SendRPC", func(c *hbasefault.Client) gohbase.Client { return c }},
		{"SendBatch", func(c *hbasefault.Client) gohbase.Client { return noSendRPC{c} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			fc := hbasefault.New(openTestEngine(t, clk))
			s, err := New(tc.wrap(fc), Options{Clock: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			fc.Add(hbasefault.Rule{Kind: hbasefault.Increment, Mode: hbasefault.ApplyTwice})
			fc.Record(true)
			row := []byte("counter")
			n, err := s.increment(bg, keys.TableGraph, keys.FamilyGraph, row, keys.QualDegree, 3)
			if err != nil || n != 3 {
				t.Fatalf("increment = %d, %v; want 3", n, err)
			}
			if err := s.incrementColumns(bg, keys.TableGraph, keys.FamilyGraph, row, map[string]int64{keys.QualDegree: 2}); err != nil {
				t.Fatal(err)
			}
			if calls := fc.Calls(); len(calls) != 2 || calls[0].Mode != hbasefault.ApplyTwice {
				t.Fatalf("the fault injector saw %v, want two re-sent Increments", calls)
			}
			c, err := s.get(bg, keys.TableGraph, keys.FamilyGraph, row)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := decodeMs(c[keys.QualDegree]); got != 5 {
				t.Fatalf("stored %d, want 5 (each Increment applied once)", got)
			}
		})
	}
}

// Two Increments of one op to one row apply both when their purposes
// differ, and once when they are the same (a retry of the same step).
func TestIncrementPurposes(t *testing.T) {
	s := newTestStoreWithClock(t, newFakeClock())
	ctx := WithOp(bg, DeriveOpID("test", "op"))
	row := []byte("counter")
	for _, purpose := range []string{"a", "b", "a"} {
		if _, err := s.incrementFor(ctx, purpose, keys.TableGraph, keys.FamilyGraph, row, keys.QualDegree, 1); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.get(bg, keys.TableGraph, keys.FamilyGraph, row)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := decodeMs(c[keys.QualDegree]); got != 2 {
		t.Fatalf("stored %d, want 2", got)
	}
	// increment, without a purpose, has a nonce of its own, with an op
	// (a detach's degrees of one row) or without.
	for _, ctx := range []context.Context{ctx, ctx, bg, bg} {
		if _, err := s.increment(ctx, keys.TableGraph, keys.FamilyGraph, row, keys.QualDegree, 1); err != nil {
			t.Fatal(err)
		}
	}
	if c, err = s.get(bg, keys.TableGraph, keys.FamilyGraph, row); err != nil {
		t.Fatal(err)
	}
	if got, _ := decodeMs(c[keys.QualDegree]); got != 6 {
		t.Fatalf("stored %d, want 6", got)
	}
	// incrementColumns: one per op and row (an article's counters).
	for _, ctx := range []context.Context{ctx, ctx, bg, bg} {
		if err := s.incrementColumns(ctx, keys.TableGraph, keys.FamilyGraph, row, map[string]int64{keys.QualDegree: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if c, err = s.get(bg, keys.TableGraph, keys.FamilyGraph, row); err != nil {
		t.Fatal(err)
	}
	if got, _ := decodeMs(c[keys.QualDegree]); got != 9 {
		t.Fatalf("stored %d, want 9 (the op's second incrementColumns is its first's re-send)", got)
	}
}
