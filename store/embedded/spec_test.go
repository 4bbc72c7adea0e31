// Specification tests for the embedded engine, in the spirit of etcd raft's
// raft_paper_test.go: each test names the HBase rule it checks, and the rule
// is HBase's, not the engine's. The tests talk to the engine only through
// gohbase.Client with real hrpc requests, exactly as package store does.
//
// Sources cited below:
//
//	[book]     The Apache HBase Reference Guide: §27 "Versions" (27.2.4 Delete,
//	           27.3.1 "Deletes mask Puts", 27.3.2 "Major compactions change
//	           query results"), §"Scan".
//	[HRegion]  org.apache.hadoop.hbase.regionserver.HRegion: checkAndMutate,
//	           prepareDelete, checkFamilies, increment/reckonDelta.
//	[Protobuf] org.apache.hadoop.hbase.shaded.protobuf.ProtobufUtil.toDelete.
//	[gohbase]  github.com/tsuna/gohbase: hrpc/mutate.go, scanner.go, rpc.go.
//
// The helpers every test file of this package uses are in helpers_test.go.
package embedded_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/hbgraph/hbgraph/store/embedded"
)

// ---------------------------------------------------------------------------
// Versions and timestamps.

// [book 27.2.3] "By default, i.e. if you specify no explicit version, when
// doing a get, the cell whose version has the largest value is returned."
// A Put with an older timestamp than the stored one therefore does not win;
// two Puts with the same timestamp: the one written last wins ([book 27.3]
// "the last written is the one that will be returned").
func TestNewestTimestampWins(t *testing.T) {
	t.Parallel()
	type write struct {
		val string
		ts  uint64
	}
	for _, tc := range []struct {
		name   string
		writes []write
		want   string
	}{
		{"newer put wins", []write{{"v1", 100}, {"v2", 200}}, "f:a=v2@200"},
		{"older put written later does not win", []write{{"v2", 200}, {"v1", 100}}, "f:a=v2@200"},
		{"equal timestamps: the later write wins", []write{{"v1", 100}, {"v2", 100}}, "f:a=v2@100"},
		{"newest of three wins whatever the order", []write{{"a", 100}, {"c", 300}, {"b", 200}}, "f:a=c@300"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cl := newSpecClient(t, newFakeClock(specT0))
			for _, w := range tc.writes {
				mustPut(t, cl, "r", vals("f", "a", w.val), at(w.ts))
			}
			if got := cellsTS(mustGet(t, cl, "r").Cells); !slices.Equal(got, []string{tc.want}) {
				t.Errorf("Get = %q, want [%q]", got, tc.want)
			}
			// One version per cell (VERSIONS => 1): asking for more returns the same.
			got := cellsTS(mustGet(t, cl, "r", hrpc.MaxVersions(10)).Cells)
			if !slices.Equal(got, []string{tc.want}) {
				t.Errorf("Get MaxVersions(10) = %q, want [%q]", got, tc.want)
			}
		})
	}
}

// [book 27.2.4 Put] "Doing a put always creates a new version of a cell, at a
// certain timestamp. By default the system uses the server's
// currentTimeMillis". The newest timestamp still wins over the newest write.
func TestPutWithoutTimestampUsesClock(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(specT0)
	cl := newSpecClient(t, clock)

	mustPut(t, cl, "r", vals("f", "a", "v1"))
	if got, want := cellsTS(mustGet(t, cl, "r").Cells), []string{fmt.Sprintf("f:a=v1@%d", specT0)}; !slices.Equal(got, want) {
		t.Fatalf("after put at clock: Get = %q, want %q", got, want)
	}
	clock.Advance(time.Millisecond)
	mustPut(t, cl, "r", vals("f", "a", "v2"))
	if got, want := cellsTS(mustGet(t, cl, "r").Cells), []string{fmt.Sprintf("f:a=v2@%d", specT0+1)}; !slices.Equal(got, want) {
		t.Fatalf("after put 1ms later: Get = %q, want %q", got, want)
	}

	// A cell written with a timestamp in the future keeps winning over
	// puts stamped with the (earlier) current time.
	future := uint64(specT0 + 60_000)
	mustPut(t, cl, "r", vals("f", "b", "future"), at(future))
	clock.Advance(time.Millisecond)
	mustPut(t, cl, "r", vals("f", "b", "now"))
	if got, want := cellsTS(mustGet(t, cl, "r", hrpc.Families(map[string][]string{"f": {"b"}})).Cells),
		[]string{fmt.Sprintf("f:b=future@%d", future)}; !slices.Equal(got, want) {
		t.Fatalf("Get = %q, want %q", got, want)
	}
}

// Families of the hbgraph tables are declared with VERSIONS => 1 (see
// DESIGN.md): a read never returns more than one version of a cell, however
// many versions it asks for ([book 27.2.1] max versions is per family, and
// ScanQueryMatcher caps a request's max versions at the family's).
func TestOneVersionPerCell(t *testing.T) {
	t.Parallel()
	t.Run("after many increments", func(t *testing.T) {
		t.Parallel()
		clock := newFakeClock(specT0)
		cl := newSpecClient(t, clock)
		for i := range 50 {
			mustInc(t, cl, "r", "f", "n", 1)
			if i%2 == 0 {
				clock.Advance(time.Millisecond)
			}
		}
		res := mustGet(t, cl, "r", hrpc.MaxVersions(10))
		if len(res.Cells) != 1 {
			t.Fatalf("Get MaxVersions(10) returned %d cells, want 1: %q", len(res.Cells), cellsTS(res.Cells))
		}
		if got := res.Cells[0].Value; !bytes.Equal(got, be64(50)) {
			t.Fatalf("value = %x, want %x", got, be64(50))
		}
	})
	t.Run("after puts at distinct timestamps", func(t *testing.T) {
		t.Parallel()
		cl := newSpecClient(t, newFakeClock(specT0))
		for ts := uint64(1); ts <= 20; ts++ {
			mustPut(t, cl, "r", vals("f", "a", fmt.Sprint("v", ts)), at(ts))
		}
		if got, want := cellsTS(mustGet(t, cl, "r", hrpc.MaxVersions(10)).Cells), []string{"f:a=v20@20"}; !slices.Equal(got, want) {
			t.Fatalf("Get MaxVersions(10) = %q, want %q", got, want)
		}
		res := mustScan(t, cl, "", "", hrpc.MaxVersions(10))
		if got, want := rowsKV(res), []string{"r f:a=v20"}; !slices.Equal(got, want) {
			t.Fatalf("Scan MaxVersions(10) = %q, want %q", got, want)
		}
	})
}

// ---------------------------------------------------------------------------
// Deletes.

// deleteKinds are the three delete markers gohbase can send: a column delete
// (DELETE_MULTIPLE_VERSIONS: all versions <= T), a family delete
// (DELETE_FAMILY, sent for a nil qualifier map) and a row delete (nil values:
// a Delete without cells, which [HRegion.prepareDelete] turns into a family
// delete of every family). Each is applied to a row holding f:a, f:b and g:c;
// left lists the cells the marker does not touch.
var deleteKinds = []struct {
	name   string
	values map[string]map[string][]byte
	left   []string // cells of the base row left visible, as "f:q=v"
}{
	{"column", map[string]map[string][]byte{"f": {"a": nil}}, []string{"f:b=base", "g:c=base"}},
	{"family", map[string]map[string][]byte{"f": nil}, []string{"g:c=base"}},
	{"row", nil, nil},
}

func putDeleteBase(tb testing.TB, cl gohbase.Client, ts uint64) {
	tb.Helper()
	mustPut(tb, cl, "r", map[string]map[string][]byte{
		"f": {"a": []byte("base"), "b": []byte("base")},
		"g": {"c": []byte("base")},
	}, at(ts))
}

// [book 27.2.4 Delete] "Deletes work by creating tombstone markers ... a
// delete of all versions of a column with a timestamp T masks all versions
// with timestamp <= T", and [book 27.3.1] "Deletes mask Puts": a Put stamped
// <= T is hidden even when it arrives after the delete, until a major
// compaction removes the marker. A Put stamped > T shows.
func TestDeleteMasksVersionsUpToItsTimestamp(t *testing.T) {
	t.Parallel()
	const T = 150
	for _, kind := range deleteKinds {
		for _, tc := range []struct {
			name   string
			before []uint64 // f:a=early puts at these timestamps, before the delete
			after  []uint64 // f:a=late puts at these timestamps, after the delete
			shown  string   // the f:a cell expected visible at the end, or ""
		}{
			{name: "hides versions at or below T"},
			{name: "later put below T stays hidden", after: []uint64{T - 30}},
			{name: "later put at exactly T stays hidden", after: []uint64{T}},
			{name: "later put above T shows", after: []uint64{T + 1}, shown: "f:a=late"},
			{name: "version above T written before the delete survives", before: []uint64{T + 50}, shown: "f:a=early"},
			{name: "hidden late put then a newer one", after: []uint64{T, T + 5}, shown: "f:a=late"},
		} {
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				cl := newSpecClient(t, newFakeClock(specT0))
				putDeleteBase(t, cl, 100)
				for _, ts := range tc.before {
					mustPut(t, cl, "r", vals("f", "a", "early"), at(ts))
				}
				mustDel(t, cl, "r", kind.values, at(T))
				for _, ts := range tc.after {
					mustPut(t, cl, "r", vals("f", "a", "late"), at(ts))
				}
				want := slices.Clone(kind.left)
				if tc.shown != "" {
					want = sorted(append(want, tc.shown))
				}
				if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, want) {
					t.Errorf("Get = %q, want %q", got, want)
				}
			})
		}
	}
}

// [book 27.3.1] A delete marker and a Put with the same timestamp: the
// delete wins, whatever the order they arrive in. With no explicit
// timestamps and a clock that does not move, a Delete followed by a Put in
// the same millisecond leaves the Put hidden (the classic "put right after
// delete disappears" surprise); one millisecond later it shows.
func TestDeleteAndPutInSameMillisecond(t *testing.T) {
	t.Parallel()
	for _, kind := range deleteKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			clock := newFakeClock(specT0)
			cl := newSpecClient(t, clock)
			putDeleteBase(t, cl, clock.Millis())
			mustDel(t, cl, "r", kind.values)
			mustPut(t, cl, "r", vals("f", "a", "again"))
			if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, kind.left) {
				t.Fatalf("same millisecond: Get = %q, want %q", got, kind.left)
			}
			clock.Advance(time.Millisecond)
			mustPut(t, cl, "r", vals("f", "a", "again"))
			want := sorted(append(slices.Clone(kind.left), "f:a=again"))
			if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, want) {
				t.Fatalf("next millisecond: Get = %q, want %q", got, want)
			}
		})
	}
}

// [book 27.2.4 Delete] A Delete without a timestamp is stamped with the
// server's current time (gohbase sends LATEST_TIMESTAMP and the region server
// substitutes now): the marker sits exactly at the clock, so it hides a Put at
// now and below, and not one at now+1.
func TestDeleteWithoutTimestampUsesClock(t *testing.T) {
	t.Parallel()
	for _, kind := range deleteKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			clock := newFakeClock(specT0)
			cl := newSpecClient(t, clock)
			now := clock.Millis()
			putDeleteBase(t, cl, now-1)
			mustPut(t, cl, "r", vals("g", "future", "x"), at(now+1000))
			mustDel(t, cl, "r", kind.values)
			left := sorted(append(slices.Clone(kind.left), "g:future=x"))
			if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, left) {
				t.Fatalf("after delete: Get = %q, want %q", got, left)
			}
			mustPut(t, cl, "r", vals("f", "a", "at-now"), at(now))
			if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, left) {
				t.Fatalf("put at now: Get = %q, want %q (hidden by the marker at now)", got, left)
			}
			mustPut(t, cl, "r", vals("f", "a", "after"), at(now+1))
			want := sorted(append(slices.Clone(left), "f:a=after"))
			if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, want) {
				t.Fatalf("put at now+1: Get = %q, want %q", got, want)
			}
		})
	}
}

// A family given as an empty, non-nil qualifier map (map[string][]byte{})
// makes gohbase send a Delete that carries no cell at all (valuesToProto and
// valuesToCellblocks only substitute the empty qualifier for a nil map), and
// [Protobuf.toDelete] builds a Delete with an empty family map from it;
// [HRegion.prepareDelete] turns an empty Delete into a delete of every
// family. So on a two-family table, {"f": {}} deletes the whole row in HBase.
// With one family (the hbgraph tables) it is the same as a family delete.
func TestDeleteWithEmptyQualifierMapDeletesRow(t *testing.T) {
	t.Parallel()
	cl := newSpecClient(t, newFakeClock(specT0))
	putDeleteBase(t, cl, 100)
	mustDel(t, cl, "r", map[string]map[string][]byte{"f": {}}, at(150))
	if got := cellsKV(mustGet(t, cl, "r").Cells); len(got) != 0 {
		t.Fatalf("Get = %q, want no cells: HBase treats a Delete without cells as a row delete", got)
	}
}

// [book 27.3.1] "Deletes mask Puts" holds for every cell written, not only
// for Puts: Increment and Append write a new cell stamped
// max(now, current + 1) ([HRegion.reckonDelta]); the current value they read
// respects the marker (none), so the new cell is stamped now, and a marker at
// or above now hides it like any Put. Another Increment one millisecond after
// the marker shows, counting from zero.
func TestDeleteMasksIncrementAndAppend(t *testing.T) {
	t.Parallel()
	type rmw struct {
		name  string
		do    func(*testing.T, gohbase.Client)
		shown string // the cell once written past the marker
	}
	ops := []rmw{
		{"increment", func(t *testing.T, cl gohbase.Client) { mustInc(t, cl, "r", "f", "a", 1) }, "f:a=" + string(be64(1))},
		{"append", func(t *testing.T, cl gohbase.Client) {
			app, err := hrpc.NewAppStr(context.Background(), specTable, "r", vals("f", "a", "x"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cl.Append(app); err != nil {
				t.Fatalf("Append: %v", err)
			}
		}, "f:a=x"},
	}
	onlyFA := hrpc.Families(map[string][]string{"f": {"a"}})
	for _, kind := range deleteKinds {
		for _, op := range ops {
			t.Run(kind.name+"/"+op.name+"/marker stamped in the future", func(t *testing.T) {
				t.Parallel()
				clock := newFakeClock(specT0)
				cl := newSpecClient(t, clock)
				mustDel(t, cl, "r", kind.values, at(clock.Millis()+1000))
				op.do(t, cl)
				if got := cellsKV(mustGet(t, cl, "r", onlyFA).Cells); len(got) != 0 {
					t.Fatalf("Get = %q, want nothing: the new cell is stamped now, below the marker", got)
				}
			})
			t.Run(kind.name+"/"+op.name+"/same millisecond as the marker", func(t *testing.T) {
				t.Parallel()
				clock := newFakeClock(specT0)
				cl := newSpecClient(t, clock)
				mustDel(t, cl, "r", kind.values)
				op.do(t, cl)
				if got := cellsKV(mustGet(t, cl, "r", onlyFA).Cells); len(got) != 0 {
					t.Fatalf("Get = %q, want nothing: the new cell is stamped at the marker", got)
				}
				clock.Advance(time.Millisecond)
				op.do(t, cl)
				if got := cellsKV(mustGet(t, cl, "r", onlyFA).Cells); !slices.Equal(got, []string{op.shown}) {
					t.Fatalf("one millisecond later: Get = %q, want [%q]", got, op.shown)
				}
			})
		}
	}
}

// [book 27.3.2] "Major compactions change query results": a major compaction
// removes delete markers together with the cells they mask, after which a
// Put stamped below the old marker is visible. The engine keeps markers for
// DeleteMarkerHorizon (as hbase.hstore.time.to.purge.deletes does, measured
// on the injected clock): a major compaction before the horizon keeps the
// marker, one after it purges it. Purging must never resurrect the cells the
// marker hid.
func TestMajorCompactPurgesDeleteMarkersAfterHorizon(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		horizon time.Duration // Options.DeleteMarkerHorizon
		before  time.Duration // clock advance that stays within the horizon
		after   time.Duration // clock advance that goes past it
	}{
		{"explicit horizon of one hour", time.Hour, 59 * time.Minute, 61 * time.Minute},
		{"zero horizon means 24h", 0, 23 * time.Hour, 25 * time.Hour},
	} {
		for _, kind := range deleteKinds {
			t.Run(tc.name+"/"+kind.name, func(t *testing.T) {
				t.Parallel()
				clock := newFakeClock(specT0)
				c := openSpec(t, embedded.Options{Clock: clock.Now, DeleteMarkerHorizon: tc.horizon})
				var cl gohbase.Client = c
				now := clock.Millis()
				putDeleteBase(t, cl, now-100)
				mustDel(t, cl, "r", kind.values) // marker at now

				clock.Advance(tc.before)
				purged, err := c.MajorCompact()
				if err != nil {
					t.Fatalf("MajorCompact before horizon: %v", err)
				}
				if purged != 0 {
					t.Errorf("MajorCompact before horizon purged %d markers, want 0", purged)
				}
				mustPut(t, cl, "r", vals("f", "a", "old"), at(now-50))
				if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, kind.left) {
					t.Fatalf("before horizon: Get = %q, want %q (marker must still hide the put)", got, kind.left)
				}

				clock.Advance(tc.after - tc.before)
				purged, err = c.MajorCompact()
				if err != nil {
					t.Fatalf("MajorCompact after horizon: %v", err)
				}
				// The background compaction may have purged the marker
				// already, so the count is not asserted here.
				t.Logf("MajorCompact after horizon purged %d", purged)
				if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, kind.left) {
					t.Fatalf("after purge: Get = %q, want %q (purging a marker must not resurrect what it hid)", got, kind.left)
				}
				mustPut(t, cl, "r", vals("f", "a", "old"), at(now-50))
				want := sorted(append(slices.Clone(kind.left), "f:a=old"))
				if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, want) {
					t.Fatalf("after horizon: Get = %q, want %q (old-stamped put shows once the marker is gone)", got, want)
				}
			})
		}
	}
}

// ---------------------------------------------------------------------------
// Get.

// [book "Get"] A Get returns the row's cells sorted as HBase's CellComparator
// sorts them (family, then qualifier, bytewise), each with its row, family,
// qualifier and timestamp; hrpc.Families restricts it to whole families or
// to some qualifiers of a family; a missing row is an empty Result, not an
// error.
func TestGet(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) gohbase.Client {
		cl := newSpecClient(t, newFakeClock(specT0))
		mustPut(t, cl, "r", map[string]map[string][]byte{
			"g": {"z": []byte("1"), "a": []byte("2")},
			"f": {"m": []byte("3"), "aa": []byte("4"), "a": []byte("5"), "B": []byte("6")},
		}, at(1000))
		mustPut(t, cl, "other", vals("f", "a", "x"), at(1000))
		return cl
	}
	for _, tc := range []struct {
		name string
		row  string
		opts []func(hrpc.Call) error
		want []string
	}{
		{"cells sorted by family then qualifier, bytewise", "r", nil,
			[]string{"f:B=6", "f:a=5", "f:aa=4", "f:m=3", "g:a=2", "g:z=1"}},
		{"families option: whole family", "r",
			[]func(hrpc.Call) error{hrpc.Families(map[string][]string{"g": nil})},
			[]string{"g:a=2", "g:z=1"}},
		{"families option: family and qualifiers", "r",
			[]func(hrpc.Call) error{hrpc.Families(map[string][]string{"f": {"m", "a", "nope"}})},
			[]string{"f:a=5", "f:m=3"}},
		{"families option: two families", "r",
			[]func(hrpc.Call) error{hrpc.Families(map[string][]string{"f": {"aa"}, "g": {"z"}})},
			[]string{"f:aa=4", "g:z=1"}},
		{"missing row: zero cells, no error", "missing", nil, []string{}},
		{"missing qualifier: zero cells", "r",
			[]func(hrpc.Call) error{hrpc.Families(map[string][]string{"f": {"nope"}})},
			[]string{}},
		{"row is exact, not a prefix", "othe", nil, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cl := setup(t)
			if got := cellsKV(mustGet(t, cl, tc.row, tc.opts...).Cells); !slices.Equal(got, tc.want) {
				t.Fatalf("Get = %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("existence only", func(t *testing.T) {
		t.Parallel()
		cl := setup(t)
		mustDel(t, cl, "other", nil)
		for _, row := range []struct {
			key  string
			want bool
		}{{"r", true}, {"missing", false}, {"other", false}} {
			g, err := hrpc.NewGetStr(context.Background(), specTable, row.key)
			if err != nil {
				t.Fatal(err)
			}
			g.ExistsOnly()
			res, err := cl.Get(g)
			if err != nil {
				t.Fatalf("Get %s: %v", row.key, err)
			}
			if res.Exists == nil || *res.Exists != row.want || len(res.Cells) != 0 {
				t.Errorf("Get %s ExistsOnly = exists %v, %d cells; want %v and no cells", row.key, res.Exists, len(res.Cells), row.want)
			}
		}
	})
	t.Run("cells carry row, family, qualifier and timestamp", func(t *testing.T) {
		t.Parallel()
		cl := setup(t)
		res := mustGet(t, cl, "r")
		if len(res.Cells) == 0 {
			t.Fatal("Get returned no cells")
		}
		for _, c := range res.Cells {
			if string(c.Row) != "r" || len(c.Family) == 0 || len(c.Qualifier) == 0 {
				t.Errorf("cell %v: want row %q and a family and qualifier", c, "r")
			}
			if c.Timestamp == nil || *c.Timestamp != 1000 {
				t.Errorf("cell %s:%s: timestamp %v, want 1000", c.Family, c.Qualifier, c.Timestamp)
			}
		}
	})
}

// [book "Get", TimeRange] A time range is [from, to): from inclusive, to
// exclusive; a cell outside it is not returned.
func TestGetTimeRange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		from, to uint64
		want     []string
	}{
		{"range below the cell", 0, 150, []string{}},
		{"range around the cell", 150, 250, []string{"f:a=v@200"}},
		{"from is inclusive", 200, 201, []string{"f:a=v@200"}},
		{"to is exclusive", 100, 200, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cl := newSpecClient(t, newFakeClock(specT0))
			mustPut(t, cl, "r", vals("f", "a", "v"), at(200))
			if got := cellsTS(mustGet(t, cl, "r", hrpc.TimeRangeUint64(tc.from, tc.to)).Cells); !slices.Equal(got, tc.want) {
				t.Fatalf("Get TimeRange[%d,%d) = %q, want %q", tc.from, tc.to, got, tc.want)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Increment and Append.

// [HRegion.increment] Increment adds to a cell holding an 8-byte big-endian
// long, atomically, and returns the new value; a missing cell counts as 0; a
// cell of another width is an error ("Field is not a long, it's N bytes
// wide"), and the cell is left alone.
func TestIncrement(t *testing.T) {
	t.Parallel()
	t.Run("missing cell starts from zero", func(t *testing.T) {
		t.Parallel()
		cl := newSpecClient(t, newFakeClock(specT0))
		if got := mustInc(t, cl, "r", "f", "n", 5); got != 5 {
			t.Fatalf("Increment = %d, want 5", got)
		}
	})
	t.Run("returns the new sum", func(t *testing.T) {
		t.Parallel()
		cl := newSpecClient(t, newFakeClock(specT0))
		for _, step := range []struct{ by, want int64 }{{5, 5}, {7, 12}, {-20, -8}, {0, -8}, {8, 0}} {
			if got := mustInc(t, cl, "r", "f", "n", step.by); got != step.want {
				t.Fatalf("Increment by %d = %d, want %d", step.by, got, step.want)
			}
		}
	})
	t.Run("cell is an 8-byte big-endian long", func(t *testing.T) {
		t.Parallel()
		cl := newSpecClient(t, newFakeClock(specT0))
		mustInc(t, cl, "r", "f", "n", 300)
		res := mustGet(t, cl, "r")
		if len(res.Cells) != 1 || !bytes.Equal(res.Cells[0].Value, be64(300)) {
			t.Fatalf("Get = %q, want one cell with value %x", cellsTS(res.Cells), be64(300))
		}
	})
	t.Run("adds to a long written by a Put", func(t *testing.T) {
		t.Parallel()
		cl := newSpecClient(t, newFakeClock(specT0))
		mustPut(t, cl, "r", map[string]map[string][]byte{"f": {"n": be64(40)}})
		if got := mustInc(t, cl, "r", "f", "n", 2); got != 42 {
			t.Fatalf("Increment = %d, want 42", got)
		}
	})
	t.Run("cell that is not 8 bytes wide is an error", func(t *testing.T) {
		t.Parallel()
		cl := newSpecClient(t, newFakeClock(specT0))
		mustPut(t, cl, "r", vals("f", "n", "abc"))
		inc, err := hrpc.NewIncStrSingle(context.Background(), specTable, "r", "f", "n", 1)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := cl.Increment(inc); err == nil {
			t.Fatalf("Increment of a 3-byte cell = %d, nil error; want an error", n)
		}
		if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, []string{"f:n=abc"}) {
			t.Fatalf("after failed Increment: Get = %q, want the cell unchanged", got)
		}
	})
	// [HRegion.reckonDelta] The new cell is stamped
	// max(now, current cell's timestamp + 1), so an increment of a cell
	// stamped in the future is not hidden behind the cell it read.
	t.Run("cell stamped in the future", func(t *testing.T) {
		t.Parallel()
		cl := newSpecClient(t, newFakeClock(specT0))
		future := uint64(specT0 + 60_000)
		mustPut(t, cl, "r", map[string]map[string][]byte{"f": {"n": be64(10)}}, at(future))
		if got := mustInc(t, cl, "r", "f", "n", 1); got != 11 {
			t.Fatalf("Increment = %d, want 11", got)
		}
		if got := mustInc(t, cl, "r", "f", "n", 1); got != 12 {
			t.Fatalf("second Increment = %d, want 12", got)
		}
		res := mustGet(t, cl, "r")
		if len(res.Cells) != 1 || !bytes.Equal(res.Cells[0].Value, be64(12)) {
			t.Fatalf("Get = %q, want one cell holding 12", cellsTS(res.Cells))
		}
		if ts := res.Cells[0].Timestamp; ts == nil || *ts <= future {
			t.Errorf("incremented cell stamped %v, want above the old cell's %d", ts, future)
		}
	})
	t.Run("after a delete it starts from zero again", func(t *testing.T) {
		t.Parallel()
		clock := newFakeClock(specT0)
		cl := newSpecClient(t, clock)
		mustInc(t, cl, "r", "f", "n", 9)
		mustDel(t, cl, "r", map[string]map[string][]byte{"f": {"n": nil}})
		clock.Advance(time.Millisecond)
		if got := mustInc(t, cl, "r", "f", "n", 3); got != 3 {
			t.Fatalf("Increment after delete = %d, want 3", got)
		}
	})
}

// [HRegion.append] Append concatenates to the current value (a missing cell
// is empty) and, as Append.isReturnResults defaults to true, returns the new
// cell. Like Increment it stamps max(now, current + 1) ([HRegion.reckonDelta]),
// so it also works on a cell stamped in the future.
func TestAppend(t *testing.T) {
	t.Parallel()
	t.Run("concatenates", func(t *testing.T) {
		t.Parallel()
		testAppendSteps(t, newSpecClient(t, newFakeClock(specT0)))
	})
	t.Run("cell stamped in the future", func(t *testing.T) {
		t.Parallel()
		cl := newSpecClient(t, newFakeClock(specT0))
		mustPut(t, cl, "r", vals("f", "s", "a"), at(uint64(specT0+60_000)))
		app, err := hrpc.NewAppStr(context.Background(), specTable, "r", vals("f", "s", "b"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Append(app); err != nil {
			t.Fatalf("Append: %v", err)
		}
		if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, []string{"f:s=ab"}) {
			t.Fatalf("Get = %q, want [f:s=ab]", got)
		}
	})
}

func testAppendSteps(t *testing.T, cl gohbase.Client) {
	for _, step := range []struct{ add, want string }{{"ab", "ab"}, {"cd", "abcd"}, {"", "abcd"}, {"e", "abcde"}} {
		app, err := hrpc.NewAppStr(context.Background(), specTable, "r", vals("f", "s", step.add))
		if err != nil {
			t.Fatal(err)
		}
		res, err := cl.Append(app)
		if err != nil {
			t.Fatalf("Append %q: %v", step.add, err)
		}
		if got := cellsKV(res.Cells); !slices.Equal(got, []string{"f:s=" + step.want}) {
			t.Errorf("Append %q returned %q, want [f:s=%s]", step.add, got, step.want)
		}
		if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, []string{"f:s=" + step.want}) {
			t.Fatalf("after Append %q: Get = %q, want [f:s=%s]", step.add, got, step.want)
		}
	}
}

// ---------------------------------------------------------------------------
// CheckAndMutate.

func binaryComparator(v []byte) filter.Comparator {
	return filter.NewBinaryComparator(filter.NewByteArrayComparable(v))
}

func newCAM(tb testing.TB, m *hrpc.Mutate, family, qualifier string, op pb.CompareType, expected []byte) *hrpc.CheckAndMutate {
	tb.Helper()
	cam, err := hrpc.NewCheckAndMutate(m, family, qualifier, op, binaryComparator(expected))
	if err != nil {
		tb.Fatalf("NewCheckAndMutate: %v", err)
	}
	return cam
}

// [HRegion.checkAndMutate] The check reads the newest visible version of one
// cell and compares; only if it matches is the mutation applied, atomically
// with the check; otherwise nothing is written and the call returns false.
// A nil or empty expected value means "absent or empty": it matches a
// missing cell, a cell whose value is empty, and a deleted cell, and never a
// cell with a value. The comparison is comparator-to-cell:
// compareResult = comparator.compareTo(cellValue), and LESS matches when
// compareResult < 0, i.e. when the expected value is less than the stored
// one.
func TestCheckAndMutate(t *testing.T) {
	t.Parallel()
	type state int
	const (
		absent state = iota
		empty
		stored
		deleted
	)
	for _, tc := range []struct {
		name     string
		check    state  // the checked cell f:check
		value    string // its value when stored
		op       pb.CompareType
		expected []byte
		del      bool // the mutation deletes f:victim instead of putting f:out
		want     bool
	}{
		{name: "put: expected value matches", check: stored, value: "v1", op: pb.CompareType_EQUAL, expected: []byte("v1"), want: true},
		{name: "put: expected value differs", check: stored, value: "v1", op: pb.CompareType_EQUAL, expected: []byte("v2"), want: false},
		{name: "put: expected value but cell absent", check: absent, op: pb.CompareType_EQUAL, expected: []byte("v1"), want: false},
		{name: "put: expected is a prefix of the value", check: stored, value: "v1", op: pb.CompareType_EQUAL, expected: []byte("v"), want: false},
		{name: "put: nil expected, cell absent", check: absent, op: pb.CompareType_EQUAL, want: true},
		{name: "put: nil expected, cell empty", check: empty, op: pb.CompareType_EQUAL, want: true},
		{name: "put: nil expected, cell deleted", check: deleted, value: "v1", op: pb.CompareType_EQUAL, want: true},
		{name: "put: nil expected, cell has a value", check: stored, value: "v1", op: pb.CompareType_EQUAL, want: false},
		{name: "put: empty expected is the same as nil", check: absent, op: pb.CompareType_EQUAL, expected: []byte{}, want: true},
		{name: "put: expected value, cell deleted", check: deleted, value: "v1", op: pb.CompareType_EQUAL, expected: []byte("v1"), want: false},
		{name: "delete: expected value matches", check: stored, value: "v1", op: pb.CompareType_EQUAL, expected: []byte("v1"), del: true, want: true},
		{name: "delete: expected value differs", check: stored, value: "v1", op: pb.CompareType_EQUAL, expected: []byte("v2"), del: true, want: false},
		{name: "delete: nil expected, cell absent", check: absent, op: pb.CompareType_EQUAL, del: true, want: true},
		{name: "delete: nil expected, cell has a value", check: stored, value: "v1", op: pb.CompareType_EQUAL, del: true, want: false},
		// HBase compares comparator-to-cell: "a".compareTo("b") < 0, so
		// LESS matches when the expected value is below the stored one.
		{name: "LESS: expected below stored matches", check: stored, value: "b", op: pb.CompareType_LESS, expected: []byte("a"), want: true},
		{name: "LESS: expected above stored does not match", check: stored, value: "b", op: pb.CompareType_LESS, expected: []byte("c"), want: false},
		{name: "LESS: equal does not match", check: stored, value: "b", op: pb.CompareType_LESS, expected: []byte("b"), want: false},
		{name: "GREATER: expected above stored matches", check: stored, value: "b", op: pb.CompareType_GREATER, expected: []byte("c"), want: true},
		{name: "LESS_OR_EQUAL: equal matches", check: stored, value: "b", op: pb.CompareType_LESS_OR_EQUAL, expected: []byte("b"), want: true},
		{name: "NOT_EQUAL: a different value matches", check: stored, value: "b", op: pb.CompareType_NOT_EQUAL, expected: []byte("c"), want: true},
		// HBASE-26742 (HBase 2.4.10, 2.5.0): with a nil expected value,
		// NOT_EQUAL means "present and not empty".
		{name: "NOT_EQUAL: nil expected, cell has a value", check: stored, value: "b", op: pb.CompareType_NOT_EQUAL, want: true},
		{name: "NOT_EQUAL: nil expected, cell absent", check: absent, op: pb.CompareType_NOT_EQUAL, want: false},
		{name: "NOT_EQUAL: nil expected, cell empty", check: empty, op: pb.CompareType_NOT_EQUAL, want: false},
		{name: "NOT_EQUAL: the same value does not match", check: stored, value: "b", op: pb.CompareType_NOT_EQUAL, expected: []byte("b"), want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := newFakeClock(specT0)
			cl := newSpecClient(t, clock)
			mustPut(t, cl, "r", vals("f", "victim", "here"))
			switch tc.check {
			case empty:
				mustPut(t, cl, "r", vals("f", "check", ""))
			case stored:
				mustPut(t, cl, "r", vals("f", "check", tc.value))
			case deleted:
				mustPut(t, cl, "r", vals("f", "check", tc.value))
				mustDel(t, cl, "r", map[string]map[string][]byte{"f": {"check": nil}})
			}
			clock.Advance(time.Millisecond) // keep the mutation clear of the setup's markers
			before := cellsKV(mustGet(t, cl, "r").Cells)

			var m *hrpc.Mutate
			var err error
			if tc.del {
				m, err = hrpc.NewDelStr(context.Background(), specTable, "r", map[string]map[string][]byte{"f": {"victim": nil}})
			} else {
				m, err = hrpc.NewPutStr(context.Background(), specTable, "r", vals("f", "out", "written"))
			}
			if err != nil {
				t.Fatal(err)
			}
			ok, err := cl.CheckAndMutate(newCAM(t, m, "f", "check", tc.op, tc.expected))
			if err != nil {
				t.Fatalf("CheckAndMutate: %v", err)
			}
			if ok != tc.want {
				t.Fatalf("CheckAndMutate = %v, want %v", ok, tc.want)
			}
			want := before
			switch {
			case tc.want && tc.del:
				want = slices.DeleteFunc(slices.Clone(before), func(s string) bool { return s == "f:victim=here" })
			case tc.want:
				want = sorted(append(slices.Clone(before), "f:out=written"))
			}
			if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, want) {
				t.Fatalf("row after CheckAndMutate = %q, want %q", got, want)
			}
		})
	}
}

// gohbase's CheckAndPut is CheckAndMutate with EQUAL: nil expected means
// "absent", which is how hbgraph creates a node exactly once (seed 002).
func TestCheckAndPut(t *testing.T) {
	t.Parallel()
	cl := newSpecClient(t, newFakeClock(specT0))
	steps := []struct {
		expected []byte
		value    string
		want     bool
	}{
		{nil, "v1", true},           // create: absent
		{nil, "v2", false},          // create again: present now
		{[]byte("v2"), "v3", false}, // wrong expected value
		{[]byte("v1"), "v4", true},  // compare-and-set
		{[]byte("v1"), "v5", false}, // stale expected value
	}
	wantValue := ""
	for i, s := range steps {
		p, err := hrpc.NewPutStr(context.Background(), specTable, "r", vals("f", "c", s.value))
		if err != nil {
			t.Fatal(err)
		}
		ok, err := cl.CheckAndPut(p, "f", "c", s.expected)
		if err != nil {
			t.Fatalf("step %d: CheckAndPut: %v", i, err)
		}
		if ok != s.want {
			t.Fatalf("step %d: CheckAndPut(expected %q) = %v, want %v", i, s.expected, ok, s.want)
		}
		if ok {
			wantValue = s.value
		}
		if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, []string{"f:c=" + wantValue}) {
			t.Fatalf("step %d: Get = %q, want [f:c=%s]", i, got, wantValue)
		}
	}
}

// ---------------------------------------------------------------------------
// Scans.

// [book "Scan"] A scan covers [startRow, stopRow): start inclusive, stop
// exclusive, an empty start is the beginning and an empty stop the end of
// the table. A reversed scan starts at its start row (inclusive) and goes
// down to its stop row (exclusive); with an empty start it starts at the
// last row.
func TestScanRange(t *testing.T) {
	t.Parallel()
	all := rowNames("r%02d", 20)
	rev := func(s []string) []string { s = slices.Clone(s); slices.Reverse(s); return s }
	for _, tc := range []struct {
		name        string
		start, stop string
		reversed    bool
		want        []string
	}{
		{"start inclusive, stop exclusive", "r05", "r10", false, all[5:10]},
		{"empty stop is the end of the table", "r15", "", false, all[15:]},
		{"empty start and stop is the whole table", "", "", false, all},
		{"start between rows", "r05x", "r08", false, all[6:8]},
		{"stop between rows", "r05", "r07x", false, all[5:8]},
		{"empty range", "r05", "r05", false, nil},
		{"range past the last row", "s", "", false, nil},
		{"reversed: start inclusive, stop exclusive", "r10", "r05", true, rev(all[6:11])},
		{"reversed: empty stop runs to the first row", "r03", "", true, rev(all[:4])},
		{"reversed: empty start begins at the last row", "", "r17", true, rev(all[18:])},
		{"reversed: start between rows", "r10x", "r08", true, rev(all[9:11])},
		{"reversed: whole table", "", "", true, rev(all)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cl := newSpecClient(t, newFakeClock(specT0))
			putRows(t, cl, all...)
			putRows(t, cl, "a-before", "z-after")
			mustDel(t, cl, "a-before", nil)
			mustDel(t, cl, "z-after", nil)
			var opts []func(hrpc.Call) error
			if tc.reversed {
				opts = append(opts, hrpc.Reversed())
			}
			got := rowKeys(mustScan(t, cl, tc.start, tc.stop, opts...))
			if !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Fatalf("scan [%q, %q) reversed=%v = %q, want %q", tc.start, tc.stop, tc.reversed, got, tc.want)
			}
		})
	}
}

// [book "Rows"] "Rows are sorted lexicographically by row key", bytewise:
// any byte string is a row key, 0x00 and 0xFF included, and no row is
// confused with another it is a prefix of. hbgraph's pagination depends on
// it: the next page starts at the last row seen + 0x00 (DESIGN.md).
func TestScanBinaryRowKeysInByteOrder(t *testing.T) {
	t.Parallel()
	keys := []string{"b", "a\xff", "a", "a\x00\x01", "a\x00", "a\x01", "a\x00\x00", "a\x00\xff", "\x00", "\xff\xff", "a\xff\x00"}
	ordered := slices.Sorted(slices.Values(keys)) // Go compares strings bytewise
	cl := newSpecClient(t, newFakeClock(specT0))
	for _, k := range keys {
		mustPut(t, cl, k, vals("f", "a", fmt.Sprintf("%x", k)))
	}
	between := func(lo, hi string) []string { // [lo, hi), hi == "" is the end
		var out []string
		for _, k := range ordered {
			if k >= lo && (hi == "" || k < hi) {
				out = append(out, k)
			}
		}
		return out
	}
	rev := func(s []string) []string { s = slices.Clone(s); slices.Reverse(s); return s }
	withPrefix := func(p string) []string {
		var out []string
		for _, k := range ordered {
			if strings.HasPrefix(k, p) {
				out = append(out, k)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		start, stop string
		opts        []func(hrpc.Call) error
		want        []string
	}{
		{"whole table", "", "", nil, ordered},
		{"whole table reversed", "", "", []func(hrpc.Call) error{hrpc.Reversed()}, rev(ordered)},
		{"next page after a row: start at row+0x00", "a\x00", "", nil, between("a\x00", "")},
		{"start just after a", "a\x00\x00", "a\x01", nil, between("a\x00\x00", "a\x01")},
		{"stop at a prefix successor", "a", "b", nil, between("a", "b")},
		{"reversed from a row down to a", "a\x00\xff", "a", []func(hrpc.Call) error{hrpc.Reversed()}, rev(between("a\x00", "a\x00\xff\x00"))},
		{"prefix filter with a 0x00 byte", "", "", []func(hrpc.Call) error{hrpc.Filters(filter.NewPrefixFilter([]byte("a\x00")))}, withPrefix("a\x00")},
		{"prefix filter reversed", "", "", []func(hrpc.Call) error{hrpc.Reversed(), hrpc.Filters(filter.NewPrefixFilter([]byte("a\xff")))}, rev(withPrefix("a\xff"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rowKeys(mustScan(t, cl, tc.start, tc.stop, tc.opts...))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("scan [%q, %q) = %q, want %q", tc.start, tc.stop, got, tc.want)
			}
		})
	}
	t.Run("get is exact", func(t *testing.T) {
		for _, k := range keys {
			want := []string{fmt.Sprintf("f:a=%x", k)}
			if got := cellsKV(mustGet(t, cl, k).Cells); !slices.Equal(got, want) {
				t.Errorf("Get %q = %q, want %q", k, got, want)
			}
		}
	})
}

// [gohbase hrpc.NumberOfRows] "Specifies how many rows are fetched with each
// request to regionserver": a page size. The scanner keeps fetching pages
// until the range is exhausted, so 10,000 rows scanned with pages of 7 all
// come back, in order, each row once.
func TestScanNumberOfRowsIsPageSize(t *testing.T) {
	t.Parallel()
	const n = 10_000
	cl := newSpecClient(t, newFakeClock(specT0))
	rows := make([]string, n)
	for i := range rows {
		rows[i] = string(binary.BigEndian.AppendUint32([]byte("k"), uint32(i)))
	}
	// Write in a scrambled order: the scan order must come from the keys.
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(n) {
		mustPut(t, cl, rows[i], vals("f", "a", "v"))
	}
	for _, tc := range []struct {
		name     string
		reversed bool
	}{{"forward", false}, {"reversed", true}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := []func(hrpc.Call) error{hrpc.NumberOfRows(7)}
			want := rows
			if tc.reversed {
				opts = append(opts, hrpc.Reversed())
				want = slices.Clone(rows)
				slices.Reverse(want)
			}
			got := rowKeys(mustScan(t, cl, "", "", opts...))
			if len(got) != n {
				t.Fatalf("scan returned %d rows, want %d", len(got), n)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("row %d = %x, want %x", i, got[i], want[i])
				}
			}
		})
	}
}

// [book "Scan"] hrpc.Families restricts a scan to families or columns; a
// row with no cell in them is not returned at all (HBase never returns
// empty rows).
func TestScanFamilies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		families map[string][]string
		want     []string
	}{
		{"one family", map[string][]string{"g": nil}, []string{"r1 g:c=3", "r3 g:c=6"}},
		{"one column", map[string][]string{"f": {"b"}}, []string{"r1 f:b=2", "r2 f:b=5"}},
		{"both families", map[string][]string{"f": {"a"}, "g": nil}, []string{"r1 f:a=1", "r1 g:c=3", "r2 f:a=4", "r3 g:c=6"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cl := newSpecClient(t, newFakeClock(specT0))
			mustPut(t, cl, "r1", map[string]map[string][]byte{"f": {"a": []byte("1"), "b": []byte("2")}, "g": {"c": []byte("3")}})
			mustPut(t, cl, "r2", map[string]map[string][]byte{"f": {"a": []byte("4"), "b": []byte("5")}})
			mustPut(t, cl, "r3", map[string]map[string][]byte{"g": {"c": []byte("6")}})
			if got := rowsKV(mustScan(t, cl, "", "", hrpc.Families(tc.families))); !slices.Equal(got, tc.want) {
				t.Fatalf("scan = %q, want %q", got, tc.want)
			}
		})
	}
}

// The filters package store uses, with HBase's meaning: PrefixFilter keeps
// rows starting with the prefix; KeyOnlyFilter(false) strips values;
// FirstKeyOnlyFilter keeps the first cell of each row; ColumnPrefixFilter
// keeps cells whose qualifier starts with the prefix.
func TestScanFilters(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) gohbase.Client {
		cl := newSpecClient(t, newFakeClock(specT0))
		for _, row := range []string{"a1", "a2", "b1", "b2"} {
			mustPut(t, cl, row, map[string]map[string][]byte{
				"f": {"a1": []byte(row + "1"), "a2": []byte(row + "2"), "b1": []byte(row + "3")},
				"g": {"a3": []byte(row + "4")},
			})
		}
		return cl
	}
	fullRow := func(row string) []string {
		return []string{row + " f:a1=" + row + "1", row + " f:a2=" + row + "2", row + " f:b1=" + row + "3", row + " g:a3=" + row + "4"}
	}
	for _, tc := range []struct {
		name        string
		start, stop string
		f           filter.Filter
		want        []string
	}{
		{"PrefixFilter", "", "", filter.NewPrefixFilter([]byte("a")), slices.Concat(fullRow("a1"), fullRow("a2"))},
		{"PrefixFilter with a start row", "b", "", filter.NewPrefixFilter([]byte("b2")), fullRow("b2")},
		{"PrefixFilter matching nothing", "", "", filter.NewPrefixFilter([]byte("c")), nil},
		{"KeyOnlyFilter", "b", "", filter.NewKeyOnlyFilter(false), []string{
			"b1 f:a1=", "b1 f:a2=", "b1 f:b1=", "b1 g:a3=",
			"b2 f:a1=", "b2 f:a2=", "b2 f:b1=", "b2 g:a3=",
		}},
		{"FirstKeyOnlyFilter", "", "", filter.NewFirstKeyOnlyFilter(), []string{"a1 f:a1=a11", "a2 f:a1=a21", "b1 f:a1=b11", "b2 f:a1=b21"}},
		{"ColumnPrefixFilter", "b2", "", filter.NewColumnPrefixFilter([]byte("a")), []string{"b2 f:a1=b21", "b2 f:a2=b22", "b2 g:a3=b24"}},
		{"ColumnPrefixFilter matching one qualifier", "a1", "a2", filter.NewColumnPrefixFilter([]byte("b1")), []string{"a1 f:b1=a13"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cl := setup(t)
			got := rowsKV(mustScan(t, cl, tc.start, tc.stop, hrpc.Filters(tc.f)))
			if !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Fatalf("scan = %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("filters on Get", func(t *testing.T) {
		t.Parallel()
		cl := setup(t)
		if got, want := cellsKV(mustGet(t, cl, "a1", hrpc.Filters(filter.NewKeyOnlyFilter(false))).Cells),
			[]string{"f:a1=", "f:a2=", "f:b1=", "g:a3="}; !slices.Equal(got, want) {
			t.Errorf("Get KeyOnlyFilter = %q, want %q", got, want)
		}
		if got, want := cellsKV(mustGet(t, cl, "a1", hrpc.Filters(filter.NewColumnPrefixFilter([]byte("a")))).Cells),
			[]string{"f:a1=a11", "f:a2=a12", "g:a3=a14"}; !slices.Equal(got, want) {
			t.Errorf("Get ColumnPrefixFilter = %q, want %q", got, want)
		}
	})
}

// DESIGN.md: "anything the engine does not support returns an explicit
// error" — never a silently unfiltered (or wrongly filtered) result. The
// error satisfies errors.Is(err, embedded.ErrUnsupported) and names the
// filter's Java class.
func TestUnsupportedFilterIsAnError(t *testing.T) {
	t.Parallel()
	bin := filter.NewBinaryComparator(filter.NewByteArrayComparable([]byte("x")))
	for _, tc := range []struct {
		name string
		f    filter.Filter
	}{
		{"PageFilter", filter.NewPageFilter(5)},
		{"ValueFilter", filter.NewValueFilter(filter.NewCompareFilter(filter.Equal, bin))},
		{"SingleColumnValueFilter", filter.NewSingleColumnValueFilter([]byte("f"), []byte("a"), filter.Equal, bin, true, true)},
		{"RandomRowFilter", filter.NewRandomRowFilter(0.5)},
	} {
		check := func(t *testing.T, err error) {
			t.Helper()
			if err == nil {
				t.Fatalf("%s: nil error, want one wrapping embedded.ErrUnsupported", tc.name)
			}
			if !errors.Is(err, embedded.ErrUnsupported) {
				t.Errorf("%s: error %q does not satisfy errors.Is(err, embedded.ErrUnsupported)", tc.name, err)
			}
			if !strings.Contains(err.Error(), tc.name) {
				t.Errorf("%s: error %q does not name the filter", tc.name, err)
			}
		}
		t.Run("scan/"+tc.name, func(t *testing.T) {
			t.Parallel()
			cl := newSpecClient(t, newFakeClock(specT0))
			putRows(t, cl, "r1", "r2")
			s, err := hrpc.NewScanStr(context.Background(), specTable, hrpc.Filters(tc.f))
			if err != nil {
				t.Fatal(err)
			}
			res, err := scanAll(t, cl, s)
			if len(res) != 0 {
				t.Errorf("%s: scan returned %d rows before failing, want none", tc.name, len(res))
			}
			check(t, err)
		})
		t.Run("get/"+tc.name, func(t *testing.T) {
			t.Parallel()
			cl := newSpecClient(t, newFakeClock(specT0))
			putRows(t, cl, "r1")
			g, err := hrpc.NewGetStr(context.Background(), specTable, "r1", hrpc.Filters(tc.f))
			if err != nil {
				t.Fatal(err)
			}
			_, err = cl.Get(g)
			check(t, err)
		})
	}
}

// [gohbase hrpc.Scanner] "Close should be called if it is desired to stop
// scanning before getting all of results. If you call Next() after calling
// Close() you might still get buffered results", then io.EOF: at most a page
// of buffered rows, still in order, never an error.
func TestScannerClosedEarlyEndsWithEOF(t *testing.T) {
	t.Parallel()
	cl := newSpecClient(t, newFakeClock(specT0))
	all := rowNames("r%03d", 100)
	putRows(t, cl, all...)
	const page = 5
	s, err := hrpc.NewScanStr(context.Background(), specTable, hrpc.NumberOfRows(page))
	if err != nil {
		t.Fatal(err)
	}
	sc := cl.Scan(s)
	var got []*hrpc.Result
	for range 3 {
		r, err := sc.Next()
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		got = append(got, r)
	}
	if err := sc.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for i := 0; ; i++ {
		r, err := sc.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Next after Close: %v, want io.EOF", err)
		}
		if i >= page {
			t.Fatalf("Next after Close returned %d more rows; want io.EOF after at most a page (%d)", i+1, page)
		}
		got = append(got, r)
	}
	if keys := rowKeys(got); !slices.Equal(keys, all[:len(keys)]) {
		t.Fatalf("rows = %q, want a prefix of the table", keys)
	}
	if _, err := sc.Next(); err != io.EOF {
		t.Fatalf("Next again = %v, want io.EOF", err)
	}
	if err := sc.Close(); err != nil {
		t.Fatalf("second Close: %v (closing a closed scanner is okay)", err)
	}
}

// [book 27.3.1] Deleted cells are invisible to scans as to gets: a deleted
// row is skipped, a row with some families deleted shows the rest, and a row
// whose every cell is column-deleted is skipped too.
func TestScanSkipsDeletedRows(t *testing.T) {
	t.Parallel()
	cl := newSpecClient(t, newFakeClock(specT0))
	for _, r := range rowNames("r%d", 6) {
		mustPut(t, cl, r, map[string]map[string][]byte{"f": {"a": []byte("1")}, "g": {"c": []byte("2")}}, at(100))
	}
	mustDel(t, cl, "r0", nil, at(200))                                                            // first row
	mustDel(t, cl, "r2", nil, at(200))                                                            // middle row
	mustDel(t, cl, "r3", map[string]map[string][]byte{"f": nil}, at(200))                         // family f
	mustDel(t, cl, "r4", map[string]map[string][]byte{"f": {"a": nil}, "g": {"c": nil}}, at(200)) // every column
	mustDel(t, cl, "r5", nil, at(200))                                                            // last row
	want := []string{"r1 f:a=1", "r1 g:c=2", "r3 g:c=2"}
	if got := rowsKV(mustScan(t, cl, "", "")); !slices.Equal(got, want) {
		t.Fatalf("scan = %q, want %q", got, want)
	}
	if got := rowsKV(mustScan(t, cl, "", "", hrpc.Reversed())); !slices.Equal(got, []string{"r3 g:c=2", "r1 f:a=1", "r1 g:c=2"}) {
		t.Fatalf("reversed scan = %q", got)
	}
}

// ---------------------------------------------------------------------------
// Unknown tables and families.

// [gohbase rpc.go] A request for a table that does not exist fails with
// gohbase.TableNotFound (the engine's ErrUnknownTable wraps it), for every
// kind of request, never an empty result.
func TestUnknownTableIsAnError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const table = "nope"
	for _, tc := range []struct {
		name string
		call func(gohbase.Client) error
	}{
		{"Get", func(cl gohbase.Client) error {
			g, _ := hrpc.NewGetStr(ctx, table, "r")
			_, err := cl.Get(g)
			return err
		}},
		{"Put", func(cl gohbase.Client) error {
			p, _ := hrpc.NewPutStr(ctx, table, "r", vals("f", "a", "v"))
			_, err := cl.Put(p)
			return err
		}},
		{"Delete", func(cl gohbase.Client) error {
			d, _ := hrpc.NewDelStr(ctx, table, "r", nil)
			_, err := cl.Delete(d)
			return err
		}},
		{"Increment", func(cl gohbase.Client) error {
			i, _ := hrpc.NewIncStrSingle(ctx, table, "r", "f", "n", 1)
			_, err := cl.Increment(i)
			return err
		}},
		{"Append", func(cl gohbase.Client) error {
			a, _ := hrpc.NewAppStr(ctx, table, "r", vals("f", "a", "v"))
			_, err := cl.Append(a)
			return err
		}},
		{"CheckAndMutate", func(cl gohbase.Client) error {
			p, _ := hrpc.NewPutStr(ctx, table, "r", vals("f", "a", "v"))
			cam, err := hrpc.NewCheckAndMutate(p, "f", "a", pb.CompareType_EQUAL, filter.NewBinaryComparator(filter.NewByteArrayComparable(nil)))
			if err != nil {
				return fmt.Errorf("NewCheckAndMutate: %w", err)
			}
			_, err = cl.CheckAndMutate(cam)
			return err
		}},
		{"CheckAndPut", func(cl gohbase.Client) error {
			p, _ := hrpc.NewPutStr(ctx, table, "r", vals("f", "a", "v"))
			_, err := cl.CheckAndPut(p, "f", "a", nil)
			return err
		}},
		{"Scan", func(cl gohbase.Client) error {
			s, _ := hrpc.NewScanStr(ctx, table)
			sc := cl.Scan(s)
			defer sc.Close()
			r, err := sc.Next()
			if err == io.EOF {
				return fmt.Errorf("scan of an unknown table ended with io.EOF (an empty result), want an error")
			}
			if err == nil {
				return fmt.Errorf("scan of an unknown table returned a row %v", r)
			}
			return err
		}},
		{"SendBatch", func(cl gohbase.Client) error {
			g, _ := hrpc.NewGetStr(ctx, table, "r")
			res, allOK := cl.SendBatch(ctx, []hrpc.Call{g})
			if allOK || len(res) != 1 {
				return fmt.Errorf("SendBatch allOK=%v with %d results, want false and 1", allOK, len(res))
			}
			return res[0].Error
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cl := newSpecClient(t, newFakeClock(specT0))
			err := tc.call(cl)
			if !errors.Is(err, gohbase.TableNotFound) {
				t.Errorf("error %v does not satisfy errors.Is(err, gohbase.TableNotFound)", err)
			}
			if !errors.Is(err, embedded.ErrUnknownTable) {
				t.Errorf("error %v does not satisfy errors.Is(err, embedded.ErrUnknownTable)", err)
			}
		})
	}
}

// [HRegion.checkFamilies] A mutation or read naming a family the table does
// not have fails with NoSuchColumnFamilyException (embedded.ErrUnknownFamily)
// before anything is written: a Put with one good and one bad family writes
// neither.
func TestUnknownFamilyIsAnError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bad := map[string]map[string][]byte{"zz": {"a": []byte("v")}}
	for _, tc := range []struct {
		name string
		call func(*testing.T, gohbase.Client) error
	}{
		{"Put", func(t *testing.T, cl gohbase.Client) error {
			p, _ := hrpc.NewPutStr(ctx, specTable, "r", bad)
			_, err := cl.Put(p)
			return err
		}},
		{"Put with one good and one bad family", func(t *testing.T, cl gohbase.Client) error {
			p, _ := hrpc.NewPutStr(ctx, specTable, "r", map[string]map[string][]byte{
				"f": {"new": []byte("v")}, "zz": {"a": []byte("v")},
			})
			_, err := cl.Put(p)
			return err
		}},
		{"Put of a family of another table", func(t *testing.T, cl gohbase.Client) error {
			p, _ := hrpc.NewPutStr(ctx, specTable, "r", vals("x", "a", "v"))
			_, err := cl.Put(p)
			return err
		}},
		{"Delete of a family", func(t *testing.T, cl gohbase.Client) error {
			d, _ := hrpc.NewDelStr(ctx, specTable, "r", map[string]map[string][]byte{"zz": nil})
			_, err := cl.Delete(d)
			return err
		}},
		{"Delete of a column", func(t *testing.T, cl gohbase.Client) error {
			d, _ := hrpc.NewDelStr(ctx, specTable, "r", map[string]map[string][]byte{"zz": {"a": nil}})
			_, err := cl.Delete(d)
			return err
		}},
		{"Increment", func(t *testing.T, cl gohbase.Client) error {
			i, _ := hrpc.NewIncStrSingle(ctx, specTable, "r", "zz", "n", 1)
			_, err := cl.Increment(i)
			return err
		}},
		{"Append", func(t *testing.T, cl gohbase.Client) error {
			a, _ := hrpc.NewAppStr(ctx, specTable, "r", bad)
			_, err := cl.Append(a)
			return err
		}},
		{"Get", func(t *testing.T, cl gohbase.Client) error {
			g, _ := hrpc.NewGetStr(ctx, specTable, "r", hrpc.Families(map[string][]string{"zz": nil}))
			_, err := cl.Get(g)
			return err
		}},
		{"Get of a column", func(t *testing.T, cl gohbase.Client) error {
			g, _ := hrpc.NewGetStr(ctx, specTable, "r", hrpc.Families(map[string][]string{"f": {"a"}, "zz": {"a"}}))
			_, err := cl.Get(g)
			return err
		}},
		{"Scan", func(t *testing.T, cl gohbase.Client) error {
			s, _ := hrpc.NewScanStr(ctx, specTable, hrpc.Families(map[string][]string{"zz": nil}))
			res, err := scanAll(t, cl, s)
			if err == nil {
				return fmt.Errorf("scan of an unknown family returned %d rows and no error", len(res))
			}
			return err
		}},
		{"CheckAndMutate: condition on an unknown family", func(t *testing.T, cl gohbase.Client) error {
			p, _ := hrpc.NewPutStr(ctx, specTable, "r", vals("f", "new", "v"))
			cam, err := hrpc.NewCheckAndMutate(p, "zz", "a", pb.CompareType_EQUAL, filter.NewBinaryComparator(filter.NewByteArrayComparable(nil)))
			if err != nil {
				return fmt.Errorf("NewCheckAndMutate: %w", err)
			}
			_, err = cl.CheckAndMutate(cam)
			return err
		}},
		{"CheckAndMutate: mutation of an unknown family", func(t *testing.T, cl gohbase.Client) error {
			p, _ := hrpc.NewPutStr(ctx, specTable, "r", bad)
			cam, err := hrpc.NewCheckAndMutate(p, "f", "a", pb.CompareType_EQUAL, filter.NewBinaryComparator(filter.NewByteArrayComparable([]byte("base"))))
			if err != nil {
				return fmt.Errorf("NewCheckAndMutate: %w", err)
			}
			_, err = cl.CheckAndMutate(cam)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cl := newSpecClient(t, newFakeClock(specT0))
			mustPut(t, cl, "r", vals("f", "a", "base"))
			err := tc.call(t, cl)
			if !errors.Is(err, embedded.ErrUnknownFamily) {
				t.Errorf("error %v does not satisfy errors.Is(err, embedded.ErrUnknownFamily)", err)
			}
			if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, []string{"f:a=base"}) {
				t.Errorf("row after the failed call = %q, want it unchanged", got)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// SendBatch, ScanV2, CacheRegions.

// [gohbase rpc.go SendBatch] "The results will be returned in the same order
// as the Calls in the batch ... A nil error means the Call executed
// successfully. allOK is true if all calls completed successfully". A Get's
// message is a *pb.GetResponse and a Mutate's a *pb.MutateResponse, as
// region.Client returns them. SendBatch is not atomic: one failing call does
// not stop the others. (HBase runs a multi's Gets before its Puts, so a Get
// is not asserted to see a Put of the same batch.)
func TestSendBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cl := newSpecClient(t, newFakeClock(specT0))
	putRows(t, cl, "g0", "g1", "g2")

	var batch []hrpc.Call
	type want struct {
		get   string // expected f:a value for a Get; "-" for a missing row
		put   string // the row a successful Put writes
		fails bool   // the call fails with ErrUnknownFamily
	}
	var wants []want
	for i := range 6 {
		switch i % 3 {
		case 0:
			row := fmt.Sprint("g", i/3)
			g, _ := hrpc.NewGetStr(ctx, specTable, row)
			batch = append(batch, g)
			wants = append(wants, want{get: row})
		case 1:
			row := fmt.Sprint("p", i)
			p, _ := hrpc.NewPutStr(ctx, specTable, row, vals("f", "a", row))
			batch = append(batch, p)
			wants = append(wants, want{put: row})
		case 2:
			g, _ := hrpc.NewGetStr(ctx, specTable, fmt.Sprint("missing", i))
			batch = append(batch, g)
			wants = append(wants, want{get: "-"})
		}
	}
	bad, _ := hrpc.NewPutStr(ctx, specTable, "pbad", map[string]map[string][]byte{"zz": {"a": []byte("v")}})
	batch = slices.Insert(batch, 3, hrpc.Call(bad))
	wants = slices.Insert(wants, 3, want{fails: true})

	res, allOK := cl.SendBatch(ctx, batch)
	if allOK {
		t.Errorf("allOK = true, want false: call 3 puts to an unknown family")
	}
	if len(res) != len(batch) {
		t.Fatalf("SendBatch returned %d results for %d calls", len(res), len(batch))
	}
	for i, w := range wants {
		r := res[i]
		switch {
		case w.fails:
			if !errors.Is(r.Error, embedded.ErrUnknownFamily) {
				t.Errorf("result %d: error %v, want ErrUnknownFamily", i, r.Error)
			}
		case w.get != "":
			if r.Error != nil {
				t.Errorf("result %d (Get): %v", i, r.Error)
				continue
			}
			gr, ok := r.Msg.(*pb.GetResponse)
			if !ok {
				t.Errorf("result %d (Get): Msg is %T, want *pb.GetResponse", i, r.Msg)
				continue
			}
			got := cellsKV(hrpc.ToLocalResult(gr.GetResult()).Cells)
			wantCells := []string{"f:a=" + w.get}
			if w.get == "-" {
				wantCells = []string{}
			}
			if !slices.Equal(got, wantCells) {
				t.Errorf("result %d (Get): cells %q, want %q", i, got, wantCells)
			}
		default:
			if r.Error != nil {
				t.Errorf("result %d (Put): %v", i, r.Error)
				continue
			}
			if _, ok := r.Msg.(*pb.MutateResponse); !ok {
				t.Errorf("result %d (Put): Msg is %T, want *pb.MutateResponse", i, r.Msg)
			}
			if got := cellsKV(mustGet(t, cl, w.put).Cells); !slices.Equal(got, []string{"f:a=" + w.put}) {
				t.Errorf("after batch: Get %s = %q", w.put, got)
			}
		}
	}
	if got := cellsKV(mustGet(t, cl, "pbad").Cells); len(got) != 0 {
		t.Errorf("the failed put wrote %q", got)
	}

	t.Run("all calls succeed: allOK", func(t *testing.T) {
		g, _ := hrpc.NewGetStr(ctx, specTable, "g0")
		p, _ := hrpc.NewPutStr(ctx, specTable, "q", vals("f", "a", "v"))
		res, allOK := cl.SendBatch(ctx, []hrpc.Call{g, p})
		if !allOK || len(res) != 2 || res[0].Error != nil || res[1].Error != nil {
			t.Fatalf("SendBatch = %v, allOK %v; want two successes", res, allOK)
		}
	})
	// The Gets of a batch share one iterator: each must still read its own
	// row, in any key order, and a Get after a mutation of the same batch
	// must see it.
	t.Run("gets see their own rows and earlier mutations", func(t *testing.T) {
		putRows(t, cl, "s0", "s1", "s2")
		get := func(row string) hrpc.Call {
			g, _ := hrpc.NewGetStr(ctx, specTable, row)
			return g
		}
		put, _ := hrpc.NewPutStr(ctx, specTable, "s1", vals("f", "a", "new"))
		del, _ := hrpc.NewDelStr(ctx, specTable, "s2", nil)
		batch := []hrpc.Call{get("s2"), get("s0"), get("s1"), put, get("s1"), get("s0"), del, get("s2"), get("s9")}
		want := []string{"f:a=s2", "f:a=s0", "f:a=s1", "put", "f:a=new", "f:a=s0", "delete", "", ""}
		res, allOK := cl.SendBatch(ctx, batch)
		if !allOK {
			t.Fatalf("SendBatch: %v", res)
		}
		for i, w := range want {
			gr, ok := res[i].Msg.(*pb.GetResponse)
			if !ok {
				continue // the mutations
			}
			if got := strings.Join(cellsKV(hrpc.ToLocalResult(gr.GetResult()).Cells), " "); got != w {
				t.Errorf("call %d: cells %q, want %q", i, got, w)
			}
		}
	})
	t.Run("empty batch", func(t *testing.T) {
		res, allOK := cl.SendBatch(ctx, nil)
		if !allOK || len(res) != 0 {
			t.Fatalf("SendBatch(nil) = %v, %v; want no results, allOK", res, allOK)
		}
	})
}

// ScanV2 is part of gohbase.Client. The engine either implements it (every
// row comes back, in order) or refuses it with an explicit error from Next;
// it never ends early with io.EOF as if the table were empty.
func TestScanV2(t *testing.T) {
	t.Parallel()
	cl := newSpecClient(t, newFakeClock(specT0))
	all := rowNames("r%02d", 30)
	putRows(t, cl, all...)
	s, err := hrpc.NewScanStr(context.Background(), specTable, hrpc.NumberOfRows(7))
	if err != nil {
		t.Fatal(err)
	}
	sc := cl.ScanV2(s)
	defer sc.Close()
	var got []string
	for range scanLimit {
		resp, err := sc.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if len(got) != 0 {
				t.Fatalf("ScanV2 failed after %d rows: %v", len(got), err)
			}
			t.Logf("ScanV2 not supported: %v", err)
			if err.Error() == "" {
				t.Fatal("ScanV2 error has an empty message")
			}
			return
		}
		for _, r := range resp.Results {
			if r.Partial {
				t.Fatalf("ScanV2 returned a partial row %q", r.Cells[0].Row())
			}
			if len(r.Cells) == 0 {
				t.Fatal("ScanV2 returned an empty row")
			}
			got = append(got, string(r.Cells[0].Row()))
		}
	}
	if !slices.Equal(got, all) {
		t.Fatalf("ScanV2 rows = %q, want %q", got, all)
	}
}

// CacheRegions warms gohbase's region cache; the engine has one region per
// table and nothing to warm.
func TestCacheRegions(t *testing.T) {
	t.Parallel()
	cl := newSpecClient(t, newFakeClock(specT0))
	if err := cl.CacheRegions([]byte(specTable)); err != nil {
		t.Fatalf("CacheRegions: %v", err)
	}
}

// ---------------------------------------------------------------------------
// Close and contexts.

// requestKinds is one request of every kind, built with ctx, for the tests of
// Close and of cancelled contexts. Each returns the request's error.
func requestKinds(ctx context.Context) []struct {
	name string
	call func(*testing.T, gohbase.Client) error
} {
	return []struct {
		name string
		call func(*testing.T, gohbase.Client) error
	}{
		{"Get", func(t *testing.T, cl gohbase.Client) error {
			g, _ := hrpc.NewGetStr(ctx, specTable, "r")
			_, err := cl.Get(g)
			return err
		}},
		{"Put", func(t *testing.T, cl gohbase.Client) error {
			p, _ := hrpc.NewPutStr(ctx, specTable, "r", vals("f", "new", "v"))
			_, err := cl.Put(p)
			return err
		}},
		{"Delete", func(t *testing.T, cl gohbase.Client) error {
			d, _ := hrpc.NewDelStr(ctx, specTable, "r", nil)
			_, err := cl.Delete(d)
			return err
		}},
		{"Increment", func(t *testing.T, cl gohbase.Client) error {
			i, _ := hrpc.NewIncStrSingle(ctx, specTable, "r", "f", "n", 1)
			_, err := cl.Increment(i)
			return err
		}},
		{"Append", func(t *testing.T, cl gohbase.Client) error {
			a, _ := hrpc.NewAppStr(ctx, specTable, "r", vals("f", "s", "x"))
			_, err := cl.Append(a)
			return err
		}},
		{"CheckAndMutate", func(t *testing.T, cl gohbase.Client) error {
			p, _ := hrpc.NewPutStr(ctx, specTable, "r", vals("f", "new", "v"))
			_, err := cl.CheckAndMutate(newCAM(t, p, "f", "a", pb.CompareType_EQUAL, []byte("base")))
			return err
		}},
		{"CheckAndPut", func(t *testing.T, cl gohbase.Client) error {
			p, _ := hrpc.NewPutStr(ctx, specTable, "r", vals("f", "new", "v"))
			_, err := cl.CheckAndPut(p, "f", "a", []byte("base"))
			return err
		}},
		{"Scan", func(t *testing.T, cl gohbase.Client) error {
			s, _ := hrpc.NewScanStr(ctx, specTable)
			sc := cl.Scan(s)
			defer sc.Close()
			_, err := sc.Next()
			if err == nil || err == io.EOF {
				return fmt.Errorf("scan Next = %v, want an error", err)
			}
			return err
		}},
		{"SendBatch", func(t *testing.T, cl gohbase.Client) error {
			g, _ := hrpc.NewGetStr(ctx, specTable, "r")
			p, _ := hrpc.NewPutStr(ctx, specTable, "r", vals("f", "new", "v"))
			res, allOK := cl.SendBatch(ctx, []hrpc.Call{g, p})
			if allOK || len(res) != 2 {
				return fmt.Errorf("SendBatch allOK=%v with %d results, want false and 2", allOK, len(res))
			}
			if res[0].Error == nil || res[1].Error == nil {
				return fmt.Errorf("SendBatch errors %v, %v; want both set", res[0].Error, res[1].Error)
			}
			return errors.Join(res[0].Error, res[1].Error)
		}},
	}
}

// Close is safe twice; afterwards every call fails with embedded.ErrClosed
// (STYLE.md: "Close is safe twice and waits for what it started").
func TestCallsAfterCloseFail(t *testing.T) {
	t.Parallel()
	for _, tc := range requestKinds(context.Background()) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := openSpec(t, embedded.Options{Clock: newFakeClock(specT0).Now})
			var cl gohbase.Client = c
			mustPut(t, cl, "r", vals("f", "a", "base"))
			cl.Close()
			cl.Close()
			if err := tc.call(t, cl); !errors.Is(err, embedded.ErrClosed) {
				t.Fatalf("after Close: error %v, want errors.Is(err, embedded.ErrClosed)", err)
			}
		})
	}
	for _, tc := range []struct {
		name string
		call func(*embedded.Client) error
	}{
		{"CacheRegions", func(c *embedded.Client) error { return c.CacheRegions([]byte(specTable)) }},
		{"MajorCompact", func(c *embedded.Client) error { _, err := c.MajorCompact(); return err }},
		{"ScanV2", func(c *embedded.Client) error {
			s, _ := hrpc.NewScanStr(context.Background(), specTable)
			sc := c.ScanV2(s)
			defer sc.Close()
			_, err := sc.Next()
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := openSpec(t, embedded.Options{})
			c.Close()
			if err := tc.call(c); !errors.Is(err, embedded.ErrClosed) {
				t.Fatalf("after Close: error %v, want errors.Is(err, embedded.ErrClosed)", err)
			}
		})
	}
}

// engineGoroutines returns the stacks of live goroutines running engine or
// Pebble code, other than test goroutines.
func engineGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "testing.tRunner") {
			continue // a test's own goroutine (perhaps paused in t.Parallel)
		}
		if strings.Contains(g, "hbgraph/hbgraph/store/embedded.") || strings.Contains(g, "cockroachdb/pebble") {
			out = append(out, g)
		}
	}
	return out
}

// STYLE.md: "Close ... waits for what it started". After Close, no goroutine
// of the engine or of Pebble is left, in memory or on disk, even with a
// scanner the caller forgot to close. Not parallel: the other tests of this
// package are paused while it runs, so their engines are not open.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	if before := engineGoroutines(); len(before) != 0 {
		t.Skipf("engine goroutines already running (%d), cannot tell", len(before))
	}
	for _, dir := range []string{"", t.TempDir()} {
		c, err := embedded.Open(embedded.Options{Dir: dir, Tables: specTables(), Logger: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		var cl gohbase.Client = c
		putRows(t, cl, rowNames("r%02d", 50)...)
		mustInc(t, cl, "n", "f", "n", 1)
		s, _ := hrpc.NewScanStr(context.Background(), specTable, hrpc.NumberOfRows(3))
		sc := cl.Scan(s)
		if _, err := sc.Next(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.MajorCompact(); err != nil {
			t.Fatal(err)
		}
		c.Close()
		// Goroutines that were told to stop may need a moment to be
		// descheduled; this waits for them, it does not measure anything.
		var left []string
		for range 500 {
			if left = engineGoroutines(); len(left) == 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if len(left) != 0 {
			t.Fatalf("dir=%q: %d goroutines left after Close:\n%s", dir, len(left), strings.Join(left, "\n\n"))
		}
	}
}

// A request whose context is already done is not executed and fails with the
// context's error, as gohbase's SendRPC does (it returns ctx.Err() while
// waiting for the region); nothing is written.
func TestDoneContextFailsRequest(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel2()
	for _, ctxCase := range []struct {
		name string
		ctx  context.Context
		want error
	}{
		{"cancelled", cancelled, context.Canceled},
		{"deadline exceeded", expired, context.DeadlineExceeded},
	} {
		for _, tc := range requestKinds(ctxCase.ctx) {
			t.Run(ctxCase.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				cl := newSpecClient(t, newFakeClock(specT0))
				mustPut(t, cl, "r", vals("f", "a", "base"))
				if err := tc.call(t, cl); !errors.Is(err, ctxCase.want) {
					t.Fatalf("error %v, want errors.Is(err, %v)", err, ctxCase.want)
				}
				if got := cellsKV(mustGet(t, cl, "r").Cells); !slices.Equal(got, []string{"f:a=base"}) {
					t.Fatalf("row after the failed call = %q, want it unchanged", got)
				}
			})
		}
	}
}

// [gohbase scanner.go] Scanner.Next checks the scan's context first: once it
// is cancelled the scan stops with context.Canceled (at most a page of rows
// already buffered may come first), instead of running to the end.
func TestScanStopsWhenContextCancelled(t *testing.T) {
	t.Parallel()
	cl := newSpecClient(t, newFakeClock(specT0))
	const n, page = 10_000, 7
	for i := range n {
		mustPut(t, cl, fmt.Sprintf("r%05d", i), vals("f", "a", "v"))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := hrpc.NewScanStr(ctx, specTable, hrpc.NumberOfRows(page))
	if err != nil {
		t.Fatal(err)
	}
	sc := cl.Scan(s)
	defer sc.Close()
	for i := range 10 {
		if _, err := sc.Next(); err != nil {
			t.Fatalf("Next %d: %v", i, err)
		}
	}
	cancel()
	for i := 0; ; i++ {
		_, err := sc.Next()
		if err == nil {
			if i >= page {
				t.Fatalf("scan still returning rows %d calls after cancel", i+1)
			}
			continue
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Next after cancel: %v, want errors.Is(err, context.Canceled)", err)
		}
		break
	}
}

// ---------------------------------------------------------------------------
// Differential test against a model.

// model is a plain implementation of the cell rules above for one table with
// families f and g, no time ranges, no compaction: a cell's value is its
// newest Put (later write wins a tie) if that Put is newer than every marker
// covering the cell, else nothing.
type model struct {
	seq     int
	puts    map[[3]string]modelPut // (row, family, qualifier) -> newest put
	colDel  map[[3]string]uint64   // column markers, max timestamp
	famDel  map[[2]string]uint64   // family markers (row deletes set both families)
	touched map[string]bool
}

type modelPut struct {
	ts  uint64
	seq int
	val string
}

func newModel() *model {
	return &model{puts: map[[3]string]modelPut{}, colDel: map[[3]string]uint64{}, famDel: map[[2]string]uint64{}, touched: map[string]bool{}}
}

func (m *model) put(row, fam, qual, val string, ts uint64) {
	m.seq++
	m.touched[row] = true
	k := [3]string{row, fam, qual}
	if old, ok := m.puts[k]; !ok || ts >= old.ts {
		m.puts[k] = modelPut{ts, m.seq, val}
	}
}

func (m *model) visible(row string) []string {
	var out []string
	for k, p := range m.puts {
		if k[0] != row {
			continue
		}
		if p.ts <= m.colDel[k] || p.ts <= m.famDel[[2]string{k[0], k[1]}] {
			continue
		}
		out = append(out, fmt.Sprintf("%s:%s=%s", k[1], k[2], p.val))
	}
	sort.Strings(out)
	return out
}

// The same random operations on the engine and on the model must agree
// ([pebble metamorphic]); the key space is tiny and timestamps collide on
// purpose so ties, late puts and every delete kind meet often.
func TestMatchesModel(t *testing.T) {
	t.Parallel()
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			cl := newSpecClient(t, newFakeClock(specT0))
			m := newModel()
			rows := []string{"r0", "r1", "r2", "r3"}
			fams := []string{"f", "g"}
			quals := []string{"a", "b"}
			pick := func(s []string) string { return s[rng.IntN(len(s))] }
			var log []string
			check := func(step int) {
				t.Helper()
				for _, row := range rows {
					want := m.visible(row)
					if got := cellsKV(mustGet(t, cl, row).Cells); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
						t.Fatalf("step %d: Get %s = %q, model %q\nops:\n%s", step, row, got, want, strings.Join(log, "\n"))
					}
					// A Get that names its columns (read by seeking to
					// each): the model's cells of those columns, in order.
					cols := map[string][]string{}
					named := map[string]bool{}
					for range 1 + rng.IntN(4) {
						f, q := pick(fams), pick(append(quals, "z"))
						if !named[f+":"+q] {
							cols[f] = append(cols[f], q)
							named[f+":"+q] = true
						}
					}
					var wantCols []string
					for _, c := range want {
						if named[c[:strings.IndexByte(c, '=')]] {
							wantCols = append(wantCols, c)
						}
					}
					if got := cellsKV(mustGet(t, cl, row, hrpc.Families(cols)).Cells); !slices.Equal(got, wantCols) &&
						!(len(got) == 0 && len(wantCols) == 0) {
						t.Fatalf("step %d: Get %s of %v = %q, model %q\nops:\n%s", step, row, cols, got, wantCols, strings.Join(log, "\n"))
					}
				}
				var want []string
				for _, row := range rows {
					for _, c := range m.visible(row) {
						want = append(want, row+" "+c)
					}
				}
				if got := rowsKV(mustScan(t, cl, "", "")); !slices.Equal(got, want) {
					t.Fatalf("step %d: Scan = %q, model %q\nops:\n%s", step, got, want, strings.Join(log, "\n"))
				}
			}
			for step := range 400 {
				row, fam, qual := pick(rows), pick(fams), pick(quals)
				ts := uint64(1 + rng.IntN(30))
				switch op := rng.IntN(10); {
				case op < 6:
					val := fmt.Sprint("v", step)
					mustPut(t, cl, row, vals(fam, qual, val), at(ts))
					m.put(row, fam, qual, val, ts)
					log = append(log, fmt.Sprintf("put %s %s:%s=%s @%d", row, fam, qual, val, ts))
				case op < 8:
					mustDel(t, cl, row, map[string]map[string][]byte{fam: {qual: nil}}, at(ts))
					k := [3]string{row, fam, qual}
					m.colDel[k] = max(m.colDel[k], ts)
					log = append(log, fmt.Sprintf("del column %s %s:%s @%d", row, fam, qual, ts))
				case op < 9:
					mustDel(t, cl, row, map[string]map[string][]byte{fam: nil}, at(ts))
					k := [2]string{row, fam}
					m.famDel[k] = max(m.famDel[k], ts)
					log = append(log, fmt.Sprintf("del family %s %s @%d", row, fam, ts))
				default:
					mustDel(t, cl, row, nil, at(ts))
					for _, f := range fams {
						k := [2]string{row, f}
						m.famDel[k] = max(m.famDel[k], ts)
					}
					log = append(log, fmt.Sprintf("del row %s @%d", row, ts))
				}
				if step%20 == 19 {
					check(step)
				}
			}
			check(400)
		})
	}
}
