package limits

import (
	"testing"

	"github.com/hbgraph/hbgraph/graph/fields"
)

// TestPageScansPricedAndBounded: every connection (a page scan of
// graph/fields) is checked as a page and priced by its page size, from
// its descriptor, so a new connection is bounded the day it is added.
func TestPageScansPricedAndBounded(t *testing.T) {
	n := 0
	for _, d := range fields.All() {
		if d.Kind != fields.PageScan {
			continue
		}
		n++
		if got := rulesOf(d.Type, d.Name); len(got) != len(pageRules) {
			t.Errorf("%s.%s: rules %v, want the page rules", d.Type, d.Name, got)
		}
		for _, c := range []struct {
			args map[string]any
			want int
		}{
			{map[string]any{}, 1 + fields.DefaultPageSize*3},
			{map[string]any{"first": int64(5)}, 1 + 5*3},
			{map[string]any{"last": int64(7)}, 1 + 7*3},
		} {
			if got, ok := scanPrice(d.Type, d.Name, 3, c.args); !ok || got != c.want {
				t.Errorf("%s.%s %v: priced %d, %v; want %d", d.Type, d.Name, c.args, got, ok, c.want)
			}
		}
	}
	if n < 2 {
		t.Errorf("%d page scans: the connections are not described", n)
	}
	if _, ok := scanPrice("Node", "id", 3, nil); ok {
		t.Error("Node.id priced as a page")
	}
}
