package store

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hbgraph/hbgraph/store/hbasefault"
	"github.com/hbgraph/hbgraph/store/keys"
)

// A probe (a key-only scan of at most 2 rows) read as a page on the
// embedded engine answers what gohbase's scanner answers: the same keys,
// timestamps and qualifiers, every value empty, for ranges holding no
// row, one and many.
func TestProbeAnswersAsAKeyOnlyScan(t *testing.T) {
	db := openTestEngine(t, nil)
	paged, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	scanned, err := New(hbasefault.New(db), Options{}) // no pagescan: gohbase's scanner
	if err != nil {
		t.Fatal(err)
	}
	if !paged.PagesInOneCall() || scanned.PagesInOneCall() {
		t.Fatal("want one store reading pages and one scanning")
	}
	mustNode(t, paged, "hub", nil)
	for i := range 3 {
		mustNode(t, paged, fmt.Sprint("n", i), Properties{"name": "x"})
		mustRel(t, paged, "hub", "follows", fmt.Sprint("n", i), Properties{"w": i})
	}
	mustNode(t, paged, "alone", nil)
	describe := func(rows []row) []string {
		var out []string
		for _, rw := range rows {
			out = append(out, fmt.Sprintf("%q@%d", rw.key, rw.ts))
			for _, q := range slices.Sorted(func(yield func(string) bool) {
				for q := range rw.cells {
					if !yield(q) {
						return
					}
				}
			}) {
				out = append(out, fmt.Sprintf("  %s=%q", q, rw.cells[q]))
			}
		}
		return out
	}
	for _, id := range []string{"hub", "n1", "alone", "nobody"} {
		for _, limit := range []int{1, 2} {
			r := adjacencyOf(id)
			r.limit, r.keyOnly = limit, true
			if !r.isProbe() {
				t.Fatalf("%+v is not a probe", r)
			}
			got, err := paged.scan(bg, r)
			if err != nil {
				t.Fatal(err)
			}
			want, err := scanned.scan(bg, r)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := describe(got), describe(want); !slices.Equal(g, w) {
				t.Errorf("%s, limit %d: paged %q, scanned %q", id, limit, g, w)
			}
			if len(got) != min(limit, map[string]int{"hub": 3, "n1": 1}[id]) {
				t.Errorf("%s, limit %d: %d rows", id, limit, len(got))
			}
		}
	}
	r := scanRange{table: keys.TableGraph, family: keys.FamilyGraph, limit: 2, keyOnly: true}
	got, _ := paged.scan(bg, r)
	want, _ := scanned.scan(bg, r)
	if g, w := describe(got), describe(want); len(g) == 0 || !slices.Equal(g, w) {
		t.Errorf("the table's first rows: paged %q, scanned %q", g, w)
	}
}
