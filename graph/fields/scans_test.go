package fields

import (
	"errors"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/store"
)

func ptr[T any](v T) *T { return &v }

// TestPageRequest: Relay's arguments in, the store's page request (or a
// BAD_USER_INPUT error) out.
func TestPageRequest(t *testing.T) {
	for _, c := range []struct {
		name          string
		wanted        PageInfoWanted
		first, last   *int
		after, before *string
		want          store.PageRequest
		bad           bool
	}{
		{name: "defaults", want: store.PageRequest{Size: DefaultPageSize, NoLookahead: true}},
		{name: "next wanted", wanted: PageInfoWanted{Next: true}, first: ptr(3), want: store.PageRequest{Size: 3}},
		{name: "forward after", first: ptr(0), after: ptr("c"), want: store.PageRequest{Size: 0, Cursor: "c", NoLookahead: true}},
		{name: "backward", wanted: PageInfoWanted{Next: true}, last: ptr(2), before: ptr("c"), want: store.PageRequest{Size: 2, Backward: true, Cursor: "c", NoLookahead: true}},
		{name: "backward previous wanted", wanted: AllPageInfo, last: ptr(2), want: store.PageRequest{Size: 2, Backward: true}},
		{name: "both directions", first: ptr(1), last: ptr(1), bad: true},
		{name: "too many", first: ptr(store.MaxPageSize + 1), bad: true},
		{name: "negative", last: ptr(-1), bad: true},
		{name: "empty cursor", after: ptr(""), bad: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := PageRequest(c.wanted, PageArgs{First: c.first, After: c.after, Last: c.last, Before: c.before})
			switch {
			case c.bad && !errors.Is(err, store.ErrInvalidInput):
				t.Errorf("error %v, want invalid input", err)
			case !c.bad && (err != nil || got != c.want):
				t.Errorf("%+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

// TestArticles: a category may not be empty, and window bounds round up
// to the store's milliseconds.
func TestArticles(t *testing.T) {
	if _, err := articles("a", &ArticlesArgs{Category: ptr("")}, AllPageInfo); !errors.Is(err, store.ErrInvalidInput) {
		t.Errorf("empty category: %v", err)
	}
	after := time.UnixMilli(1000).Add(time.Microsecond)
	k, err := articles("a", &ArticlesArgs{Category: ptr("tech"), PostedAfter: &after}, AllPageInfo)
	if err != nil || k.Category != "tech" || !k.HasAfter || k.After != 1001 || k.HasBefore {
		t.Errorf("%+v, %v", k, err)
	}
}

// TestPageSize: the size a page asks for, which the read uses
// (PageRequest) and the complexity prices (graph/limits).
func TestPageSize(t *testing.T) {
	for _, c := range []struct {
		p    PageArgs
		want int
	}{
		{PageArgs{}, DefaultPageSize},
		{PageArgs{After: ptr("c")}, DefaultPageSize},
		{PageArgs{First: ptr(3)}, 3},
		{PageArgs{Last: ptr(4), Before: ptr("c")}, 4},
		{PageArgs{First: ptr(0)}, 0},
	} {
		if got := c.p.Size(); got != c.want {
			t.Errorf("%+v: %d, want %d", c.p, got, c.want)
		}
		if req, err := PageRequest(AllPageInfo, c.p); err != nil || req.Size != c.want {
			t.Errorf("%+v: PageRequest %+v, %v; want size %d", c.p, req, err, c.want)
		}
	}
}
