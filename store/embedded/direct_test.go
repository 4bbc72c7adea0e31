package embedded_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/hbgraph/hbgraph/store/embedded"
)

// PutCells (pagescan.Putter) leaves what an hrpc Put of the same cells
// and stamp leaves: over a delete marker that hides the older stamp and
// not the newer, over a newer cell it does not replace, in two families.
func TestPutCellsIsAPut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	viaHrpc, direct := twinEngines(t)
	for _, cl := range []*embedded.Client{viaHrpc, direct} {
		mustPut(t, cl, "r", map[string]map[string][]byte{"f": {"newer": []byte("stays")}}, at(500))
		mustDel(t, cl, "r", map[string]map[string][]byte{"g": {"hidden": nil}}, at(300))
	}
	puts := []struct {
		values map[string]map[string][]byte
		ts     uint64
	}{
		{map[string]map[string][]byte{"f": {"a": []byte("1"), "newer": []byte("older")}, "g": {"hidden": []byte("x"), "b": []byte("2")}}, 200},
		{map[string]map[string][]byte{"g": {"hidden": []byte("shown")}, "f": {"a": []byte("3")}}, 400},
	}
	for _, p := range puts {
		mustPut(t, viaHrpc, "r", p.values, at(p.ts))
		if err := direct.PutCells(ctx, specTable, []byte("r"), p.values, p.ts); err != nil {
			t.Fatal(err)
		}
	}
	want, got := cellsTS(mustGet(t, viaHrpc, "r").Cells), cellsTS(mustGet(t, direct, "r").Cells)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("PutCells left %q, an hrpc Put %q", got, want)
	}
	if err := direct.PutCells(ctx, specTable, []byte("r"), map[string]map[string][]byte{"nofamily": {"a": nil}}, 1); err == nil {
		t.Fatal("a put to an unknown family applied")
	}
}

// CheckAndPutCells (pagescan.CheckAndPutter) answers and leaves what an
// hrpc CheckAndMutate of the same Put answers and leaves: a condition that
// holds, one that does not, and "absent" (nil) on a column there and on
// one not there.
func TestCheckAndPutCellsIsACheckAndMutate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	viaHrpc, direct := twinEngines(t)
	for _, cl := range []*embedded.Client{viaHrpc, direct} {
		mustPut(t, cl, "r", map[string]map[string][]byte{"f": {"u": []byte("1")}}, at(100))
	}
	steps := []struct {
		qualifier string
		expected  []byte
		values    map[string]map[string][]byte
		ts        uint64
	}{
		{"u", []byte("1"), map[string]map[string][]byte{"f": {"u": []byte("2"), "t": []byte("a")}, "g": {"x": []byte("y")}}, 200},
		{"u", []byte("1"), map[string]map[string][]byte{"f": {"u": []byte("3")}}, 300},
		{"u", nil, map[string]map[string][]byte{"f": {"u": []byte("4")}}, 400},
		{"c", nil, map[string]map[string][]byte{"f": {"c": []byte("made")}}, 500},
		{"c", nil, map[string]map[string][]byte{"f": {"c": []byte("again")}}, 600},
	}
	for i, st := range steps {
		p, err := hrpc.NewPutStr(ctx, specTable, "r", st.values, at(st.ts))
		if err != nil {
			t.Fatal(err)
		}
		want, werr := viaHrpc.CheckAndMutate(newCAM(t, p, "f", st.qualifier, pb.CompareType_EQUAL, st.expected))
		got, gerr := direct.CheckAndPutCells(ctx, specTable, []byte("r"), "f", st.qualifier, st.expected, st.values, st.ts)
		if got != want || (gerr == nil) != (werr == nil) {
			t.Fatalf("step %d: CheckAndPutCells %v, %v; CheckAndMutate %v, %v", i, got, gerr, want, werr)
		}
	}
	want, got := cellsTS(mustGet(t, viaHrpc, "r").Cells), cellsTS(mustGet(t, direct, "r").Cells)
	if !slices.Equal(got, want) || !slices.Contains(got, "f:c=made@500") {
		t.Fatalf("CheckAndPutCells left %q, CheckAndMutate %q", got, want)
	}
}

// DeleteRowAt and CheckAndDeleteRowAt (pagescan.RowDeleter) leave what an
// hrpc Delete of the row, and a CheckAndMutate of it, leave: cells at and
// before the stamp hidden in every family, a newer one kept; a condition
// that fails deletes nothing.
func TestDeleteRowAtIsADelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	viaHrpc, direct := twinEngines(t)
	for _, cl := range []*embedded.Client{viaHrpc, direct} {
		for _, row := range []string{"r", "s"} {
			mustPut(t, cl, row, map[string]map[string][]byte{"f": {"a": []byte("1"), "u": []byte("u1")}, "g": {"b": []byte("2")}}, at(100))
			mustPut(t, cl, row, map[string]map[string][]byte{"f": {"late": []byte("3")}}, at(300))
		}
	}
	mustDel(t, viaHrpc, "r", nil, at(200))
	if err := direct.DeleteRowAt(ctx, specTable, []byte("r"), 200); err != nil {
		t.Fatal(err)
	}
	for i, expected := range [][]byte{[]byte("nope"), []byte("u1")} {
		d, err := hrpc.NewDelStr(ctx, specTable, "s", nil, at(200))
		if err != nil {
			t.Fatal(err)
		}
		want, werr := viaHrpc.CheckAndMutate(newCAM(t, d, "f", "u", pb.CompareType_EQUAL, expected))
		got, gerr := direct.CheckAndDeleteRowAt(ctx, specTable, []byte("s"), "f", "u", expected, 200)
		if got != want || werr != nil || gerr != nil {
			t.Fatalf("condition %d: CheckAndDeleteRowAt %v, %v; CheckAndMutate %v, %v", i, got, gerr, want, werr)
		}
	}
	for _, row := range []string{"r", "s"} {
		want, got := cellsTS(mustGet(t, viaHrpc, row).Cells), cellsTS(mustGet(t, direct, row).Cells)
		if !slices.Equal(got, want) || !slices.Equal(got, []string{"f:late=3@300"}) {
			t.Fatalf("%s: the direct calls left %q, hrpc %q", row, got, want)
		}
	}
}

// twinEngines are two fresh engines on clocks that read the same: one to
// be written with hrpc calls, the other with the direct calls they stand
// for.
func twinEngines(t *testing.T) (viaHrpc, direct *embedded.Client) {
	return openSpec(t, embedded.Options{Clock: newFakeClock(specT0).Now}), openSpec(t, embedded.Options{Clock: newFakeClock(specT0).Now})
}
