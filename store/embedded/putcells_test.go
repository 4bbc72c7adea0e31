package embedded_test

import (
	"context"
	"slices"
	"testing"

	"github.com/hbgraph/hbgraph/store/embedded"
)

// PutCells (pagescan.Putter) leaves what an hrpc Put of the same cells
// and stamp leaves: over a delete marker that hides the older stamp and
// not the newer, over a newer cell it does not replace, in two families.
func TestPutCellsIsAPut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	viaHrpc := openSpec(t, embedded.Options{Clock: newFakeClock(specT0).Now})
	direct := openSpec(t, embedded.Options{Clock: newFakeClock(specT0).Now})
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
