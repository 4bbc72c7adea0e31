package store

import (
	"fmt"
	"slices"
	"testing"
)

// TestPageNoLookahead checks that a page read without looking ahead has the
// same items and cursors as one that looks, reads only the rows it returns
// (plus the cursor row a backward scan starts on), and leaves false only the
// flag the extra row would have decided.
func TestPageNoLookahead(t *testing.T) {
	clk := newFakeClock()
	clk.step = 1 // distinct created times
	s := newTestStoreWithClock(t, clk)
	mustNode(t, s, "hub", nil)
	const n = 10
	for i := range n {
		id := fmt.Sprintf("n%02d", i)
		mustNode(t, s, id, nil)
		mustRel(t, s, "hub", "follows", id, nil)
	}
	all, err := s.Adjacent(bg, "hub", "follows", Outgoing, PageRequest{Size: n})
	if err != nil {
		t.Fatal(err)
	}
	middle := all.Cursors.All()[4] // five items on either side
	for _, backward := range []bool{false, true} {
		for _, cursor := range []string{"", middle} {
			for _, size := range []int{0, 1, 3, 5, n, n + 2} {
				name := fmt.Sprintf("backward=%v cursor=%v size=%d", backward, cursor != "", size)
				t.Run(name, func(t *testing.T) {
					req := PageRequest{Size: size, Backward: backward, Cursor: cursor}
					want, err := s.Adjacent(bg, "hub", "follows", Outgoing, req)
					if err != nil {
						t.Fatal(err)
					}
					log := &callLog{}
					req.NoLookahead = true
					got, err := s.Adjacent(WithTracer(bg, log), "hub", "follows", Outgoing, req)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got.Cursors.All(), want.Cursors.All()) || len(got.Relationships) != len(want.Relationships) {
						t.Fatalf("cursors %q, want %q", got.Cursors.All(), want.Cursors.All())
					}
					for i := range got.Relationships {
						if got.Relationships[i].End != want.Relationships[i].End {
							t.Errorf("item %d: %s, want %s", i, got.Relationships[i].End, want.Relationships[i].End)
						}
					}
					// The flag the cursor decides is unchanged; the one the
					// extra row decides is false.
					wantInfo := want.PageInfo
					if backward {
						wantInfo.HasPrevious = false
					} else {
						wantInfo.HasNext = false
					}
					if got.PageInfo != wantInfo {
						t.Errorf("page info %+v, want %+v", got.PageInfo, wantInfo)
					}
					read := 0
					for _, c := range log.take() {
						if c.Op == "Scan" { // (not the Gets of the ends)
							read += c.RowsRead
						}
					}
					wantRead := len(want.Relationships)
					if backward && cursor != "" && size > 0 {
						wantRead++ // the reversed scan starts on the cursor row
					}
					if read != wantRead {
						t.Errorf("read %d rows, want %d", read, wantRead)
					}
				})
			}
		}
	}
}
