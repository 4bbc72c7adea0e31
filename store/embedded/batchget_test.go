package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
)

// TestSendBatchOfGets checks the batch that reads every row with one
// iterator: results in request order whatever the rows' key order, rows
// that are prefixes of one another kept apart, missing and deleted rows
// empty, each Get's own columns, and a Get whose context is done failing
// alone.
func TestSendBatchOfGets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cl := newSpecClient(t, newFakeClock(specT0))
	putRows(t, cl, "b", "a", "ab", "a\x00", "zz", "gone")
	mustPut(t, cl, "ab", vals("f", "b", "second"))
	del, _ := hrpc.NewDelStr(ctx, specTable, "gone", nil)
	if _, err := cl.Delete(del); err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()

	type want struct {
		row   string
		cells []string
		err   error
	}
	wants := []want{
		{row: "zz", cells: []string{"f:a=zz"}},
		{row: "missing", cells: []string{}},
		{row: "a", cells: []string{"f:a=a"}},
		{row: "ab", cells: []string{"f:a=ab", "f:b=second"}},
		{row: "gone", cells: []string{}},
		{row: "a\x00", cells: []string{"f:a=a\x00"}},
		{row: "b", err: context.Canceled},
		{row: "ab", cells: []string{"f:b=second"}}, // only f:b
		{row: "", cells: []string{}},               // sorts first, matches nothing
	}
	var batch []hrpc.Call
	for i, w := range wants {
		var (
			g   *hrpc.Get
			err error
		)
		switch {
		case w.err != nil:
			g, err = hrpc.NewGetStr(done, specTable, w.row)
		case i == 7:
			g, err = hrpc.NewGetStr(ctx, specTable, w.row, hrpc.Families(map[string][]string{"f": {"b"}}))
		default:
			g, err = hrpc.NewGetStr(ctx, specTable, w.row)
		}
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, g)
	}
	res, allOK := cl.SendBatch(ctx, batch)
	if allOK {
		t.Error("allOK with a Get whose context is done")
	}
	for i, w := range wants {
		r := res[i]
		if w.err != nil {
			if !errors.Is(r.Error, w.err) {
				t.Errorf("Get %d (%q): error %v, want %v", i, w.row, r.Error, w.err)
			}
			continue
		}
		if r.Error != nil {
			t.Errorf("Get %d (%q): %v", i, w.row, r.Error)
			continue
		}
		got := cellsKV(hrpc.ToLocalResult(r.Msg.(*pb.GetResponse).GetResult()).Cells)
		if !slices.Equal(got, w.cells) {
			t.Errorf("Get %d (%q): cells %q, want %q", i, w.row, got, w.cells)
		}
	}
}

// TestSendBatchOfGetsMatchesGet reads 200 rows in one batch, in an order
// unlike the keys', and compares each with a Get of its own.
func TestSendBatchOfGetsMatchesGet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cl := newSpecClient(t, newFakeClock(specT0))
	var rows []string
	for i := range 200 {
		rows = append(rows, fmt.Sprintf("r%03d", (i*7919)%1000))
	}
	putRows(t, cl, rows[:150]...) // the last 50 are missing
	var batch []hrpc.Call
	for _, r := range rows {
		g, _ := hrpc.NewGetStr(ctx, specTable, r)
		batch = append(batch, g)
	}
	res, allOK := cl.SendBatch(ctx, batch)
	if !allOK {
		t.Fatal("not all OK")
	}
	for i, r := range rows {
		got := cellsKV(hrpc.ToLocalResult(res[i].Msg.(*pb.GetResponse).GetResult()).Cells)
		want := cellsKV(mustGet(t, cl, r).Cells)
		if !slices.Equal(got, want) {
			t.Errorf("%s: batch %q, Get %q", r, got, want)
		}
	}
}
