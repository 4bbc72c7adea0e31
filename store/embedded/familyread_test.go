package embedded_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/pagescan"
)

// deadColumns puts n columns in family g of row and deletes them, as a
// relationship create's intents on a node are: the row keeps a dead column
// (a delete marker) for each until a major compaction.
func deadColumns(tb testing.TB, cl gohbase.Client, row string, n int) {
	tb.Helper()
	for i := range n {
		q := fmt.Sprintf("xr%05d", i)
		mustPut(tb, cl, row, vals("g", q, "intent"))
		mustDel(tb, cl, row, map[string]map[string][]byte{"g": {q: nil}})
	}
}

// A read of some families answers as a read of the whole row filtered to
// them: whether the families it skips sort before or after, hold dead
// columns or hold nothing, for Gets, batches of Gets and scans both ways.
// (The engine seeks past what a read does not select, so a scan goes on
// from inside a row: the row after it must still be found.)
func TestReadOfSomeFamiliesAnswersAsTheWholeRowFiltered(t *testing.T) {
	ctx := context.Background()
	for _, cache := range []bool{false, true} {
		t.Run(fmt.Sprint("result cache ", cache), func(t *testing.T) {
			opts := embedded.Options{}
			if !cache {
				opts.ResultCacheBytes = -1
			}
			cl := openSpec(t, opts)
			for _, row := range []string{"a", "b", "c"} {
				mustPut(t, cl, row, map[string]map[string][]byte{
					"f": {"c": []byte(row + "-created"), "p": []byte(row + "-props")},
					"g": {"keep": []byte(row + "-kept")},
				})
			}
			deadColumns(t, cl, "b", 300)
			mustPut(t, cl, "d", vals("g", "only", "d-only")) // nothing in f
			mustPut(t, cl, "e", vals("f", "c", "e-created")) // nothing in g
			deadColumns(t, cl, "e", 50)

			want := func(row, fams string) []string {
				var out []string
				if row != "d" && (fams == "f" || fams == "fg") {
					out = append(out, "f:c="+row+"-created")
					if row != "e" {
						out = append(out, "f:p="+row+"-props")
					}
				}
				if fams == "g" || fams == "fg" {
					switch row {
					case "d":
						out = append(out, "g:only=d-only")
					case "e":
					default:
						out = append(out, "g:keep="+row+"-kept")
					}
				}
				return out
			}
			selections := map[string]map[string][]string{"f": {"f": nil}, "g": {"g": nil}, "fg": {"f": nil, "g": nil}, "all": nil}
			rows := []string{"a", "b", "c", "d", "e"}
			// Each row read whole, then by one family and another, then
			// whole again: with the cache on, a read of one family is
			// answered from the whole row a read kept before it.
			for _, row := range rows {
				for _, fams := range []string{"all", "f", "g", "fg", "f", "all", "g", "g", "f"} {
					var opts []func(hrpc.Call) error
					if sel := selections[fams]; sel != nil {
						opts = append(opts, hrpc.Families(sel))
					}
					w := want(row, fams)
					if fams == "all" {
						w = want(row, "fg")
					}
					got := cellsKV(mustGet(t, cl, row, opts...).Cells)
					if fmt.Sprint(got) != fmt.Sprint(w) {
						t.Fatalf("Get %s of %s: %v; want %v", row, fams, got, w)
					}
				}
			}
			// GetRows, the store's batch of Gets, answers as they do.
			for _, fams := range []string{"f", "g", ""} {
				keys := make([][]byte, len(rows))
				for i, row := range rows {
					keys[i] = []byte(row)
				}
				out := make([]pagescan.Row, len(rows))
				cl.GetRows(ctx, specTable, keys, fams, out)
				for i, row := range rows {
					w := want(row, fams)
					if fams == "" {
						w = want(row, "fg")
					}
					if got := cellsKV(out[i].Cells); out[i].Err != nil || fmt.Sprint(got) != fmt.Sprint(w) {
						t.Fatalf("GetRows %s of %q: %v, %v; want %v", row, fams, got, out[i].Err, w)
					}
				}
			}
			for fams, sel := range selections {
				if sel == nil {
					continue
				}
				for _, reversed := range []bool{false, true} {
					opts := []func(hrpc.Call) error{hrpc.Families(sel)}
					if reversed {
						opts = append(opts, hrpc.Reversed())
					}
					scan, err := hrpc.NewScanStr(ctx, specTable, opts...)
					if err != nil {
						t.Fatal(err)
					}
					results, err := scanAll(t, cl, scan)
					if err != nil {
						t.Fatal(err)
					}
					var got, wantRows []string
					for _, r := range results {
						got = append(got, fmt.Sprintf("%s %v", r.Cells[0].Row, cellsKV(r.Cells)))
					}
					for i := range rows {
						row := rows[i]
						if reversed {
							row = rows[len(rows)-1-i]
						}
						if w := want(row, fams); len(w) > 0 {
							wantRows = append(wantRows, fmt.Sprintf("%s %v", row, w))
						}
					}
					if fmt.Sprint(got) != fmt.Sprint(wantRows) {
						t.Fatalf("scan of %s (reversed %v):\n got %v\nwant %v", fams, reversed, got, wantRows)
					}
				}
			}
		})
	}
}
