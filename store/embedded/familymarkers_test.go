package embedded

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsuna/gohbase/hrpc"
)

// A mutation reads a row's family marker only when familyMarkers lists it.
// The list must hold every stored marker: after the delete that writes one
// (rows sharing its stripe unaffected), after a reopen, and until a major
// compaction purges it, when the list must let go of it too.
func TestFamilyMarkersListEveryStoredMarker(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var nowMs atomic.Int64
	nowMs.Store(1767225600000)
	t0 := uint64(nowMs.Load())
	open := func() *Client {
		c, err := Open(Options{Dir: dir, Tables: map[string][]string{"t": {"f", "g"}},
			Clock: func() time.Time { return time.UnixMilli(nowMs.Load()) }, DeleteMarkerHorizon: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close) // Close is safe twice
		return c
	}
	c := open()
	tb := c.tables["t"]
	stripe := rowStripe(tb, []byte("a"))
	mate := ""
	for i := 0; mate == ""; i++ {
		if r := fmt.Sprint("b", i); rowStripe(tb, []byte(r)) == stripe {
			mate = r
		}
	}
	put := func(c *Client, row, value string, ts uint64) {
		t.Helper()
		p, err := hrpc.NewPutStr(ctx, "t", row, map[string]map[string][]byte{"f": {"q": []byte(value)}}, hrpc.TimestampUint64(ts))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Put(p); err != nil {
			t.Fatal(err)
		}
	}
	get := func(c *Client, row string) string {
		t.Helper()
		g, err := hrpc.NewGetStr(ctx, "t", row)
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.Get(g)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Cells) == 0 {
			return ""
		}
		return string(r.Cells[0].Value)
	}
	listed := func(c *Client) []string {
		var keys []string
		for k := range c.familyMarkers[stripe] {
			dk, _ := parseDataKey([]byte(k))
			keys = append(keys, fmt.Sprintf("%s/%s", unescape(nil, dk.rowEsc), unescape(nil, dk.familyEsc)))
		}
		slices.Sort(keys)
		return keys
	}

	put(c, "a", "old", t0-100)
	put(c, mate, "old", t0-100)
	if got := listed(c); len(got) != 0 {
		t.Fatalf("markers listed before any delete: %v", got)
	}
	d, err := hrpc.NewDelStr(ctx, "t", "a", nil, hrpc.TimestampUint64(t0)) // a row delete: a marker per family
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(d); err != nil {
		t.Fatal(err)
	}
	want := []string{"a/f", "a/g"}
	if got := listed(c); !slices.Equal(got, want) {
		t.Fatalf("after the row delete: listed %v, want %v", got, want)
	}
	put(c, "a", "late", t0-50)
	put(c, mate, "late", t0-50)
	if got := get(c, "a"); got != "" {
		t.Fatalf("a put below the marker shows: %q", got)
	}
	if got := get(c, mate); got != "late" {
		t.Fatalf("%s, in the stripe of a but without a marker: %q, want late", mate, got)
	}

	c.Close()
	c = open()
	if got := listed(c); !slices.Equal(got, want) {
		t.Fatalf("after reopen: listed %v, want %v", got, want)
	}
	put(c, "a", "after reopen", t0-50)
	if got := get(c, "a"); got != "" {
		t.Fatalf("after reopen, a put below the marker shows: %q", got)
	}

	nowMs.Add(2 * time.Hour.Milliseconds())
	if _, err := c.MajorCompact(); err != nil {
		t.Fatal(err)
	}
	if got := listed(c); len(got) != 0 {
		t.Fatalf("after the purge: still listed %v", got)
	}
	put(c, "a", "after purge", t0-50)
	if got := get(c, "a"); got != "after purge" {
		t.Fatalf("after the purge: a = %q, want the put", got)
	}
}
