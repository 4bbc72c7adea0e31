package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/pagescan"
)

// hrpcRow is what the store read through hrpc before GetRows: a Get of
// row, of family alone or (family "") of the whole row, rendered cell by
// cell.
func hrpcRow(tb testing.TB, cl *embedded.Client, row []byte, family string) (string, error) {
	tb.Helper()
	var opts []func(hrpc.Call) error
	if family != "" {
		opts = append(opts, hrpc.Families(map[string][]string{family: nil}))
	}
	g, err := hrpc.NewGet(context.Background(), []byte(specTable), row, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	res, err := cl.Get(g)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if len(res.Cells) > 0 {
		writeRow(&b, res.Cells)
	}
	return b.String(), nil
}

// hrpcBatchRows is the same Gets in one SendBatch, as the store sends a
// wave's rows.
func hrpcBatchRows(tb testing.TB, cl *embedded.Client, rows [][]byte, family string) []string {
	tb.Helper()
	var opts []func(hrpc.Call) error
	if family != "" {
		opts = append(opts, hrpc.Families(map[string][]string{family: nil}))
	}
	batch := make([]hrpc.Call, len(rows))
	for i, row := range rows {
		g, err := hrpc.NewGet(context.Background(), []byte(specTable), row, opts...)
		if err != nil {
			tb.Fatal(err)
		}
		batch[i] = g
	}
	res, _ := cl.SendBatch(context.Background(), batch)
	out := make([]string, len(rows))
	for i, r := range res {
		if r.Error != nil {
			tb.Fatalf("SendBatch: %v", r.Error)
		}
		res := hrpc.ToLocalResult(r.Msg.(*pb.GetResponse).GetResult())
		var b strings.Builder
		if len(res.Cells) > 0 {
			writeRow(&b, res.Cells)
		}
		out[i] = b.String()
	}
	return out
}

func renderRow(r pagescan.Row) string {
	var b strings.Builder
	if len(r.Cells) > 0 {
		writeRow(&b, r.Cells)
	}
	return b.String()
}

// randomWriteTo makes one random write (randomWrite's) to each client,
// the same on each, the clock one millisecond on.
func randomWriteTo(tb testing.TB, clock *fakeClock, r *rand.Rand, cls ...*embedded.Client) {
	clock.Advance(time.Millisecond)
	row := "p" + string(randomKey(r, 3))
	op, fam := r.IntN(4), "fg"[r.IntN(2):][:1]
	qual, value := string(randomKey(r, 2)), fmt.Sprint(r.IntN(1000))
	for _, cl := range cls {
		switch op {
		case 0:
			mustDel(tb, cl, row, nil)
		case 1:
			mustDel(tb, cl, row, map[string]map[string][]byte{fam: nil})
		default:
			mustPut(tb, cl, row, vals(fam, qual, value))
		}
	}
}

// TestGetRowsAnswersAsGet is the differential test of GetRows against the
// hrpc Gets the store sent before (one by one, and in a SendBatch), of an
// engine with the same data and no result cache, and of this one: random
// rows in two families, deleted rows, whole families deleted, rows that
// never existed, a row twice in one call; every selection (a family, the
// whole row) in turn; with the result cache on (each call made three
// times: a miss, then hits) and off; writes between the rounds
// invalidating what the cache holds.
func TestGetRowsAnswersAsGet(t *testing.T) {
	t.Parallel()
	for _, cacheBytes := range []int64{0, -1} {
		t.Run(fmt.Sprintf("cache=%v", cacheBytes >= 0), func(t *testing.T) {
			t.Parallel()
			clock := newFakeClock(specT0)
			cl := openSpec(t, embedded.Options{ResultCacheBytes: cacheBytes, Clock: clock.Now})
			ref := openSpec(t, embedded.Options{ResultCacheBytes: -1, Clock: clock.Now})
			r := rand.New(rand.NewPCG(2, uint64(-cacheBytes)))
			for range 200 {
				randomWriteTo(t, clock, r, cl, ref)
			}
			for round := range 80 {
				rows := make([][]byte, 1+r.IntN(20))
				for i := range rows {
					rows[i] = append([]byte("p"), randomKey(r, 3)...)
					if i > 0 && r.IntN(6) == 0 {
						rows[i] = rows[r.IntN(i)] // the same row twice
					}
				}
				// Every selection, in a random order, read by GetRows
				// before hrpc reads any (misses it fills): a row the cache
				// kept for one selection must not answer another.
				families := []string{"", "f", "g"}
				r.Shuffle(len(families), func(i, j int) { families[i], families[j] = families[j], families[i] })
				for pass := range 3 {
					outs := make([][]pagescan.Row, len(families))
					for f, family := range families {
						outs[f] = make([]pagescan.Row, len(rows))
						cl.GetRows(context.Background(), specTable, rows, family, outs[f])
					}
					for f, family := range families {
						out := outs[f]
						var want, same []string
						if pass == 2 {
							want, same = hrpcBatchRows(t, ref, rows, family), hrpcBatchRows(t, cl, rows, family)
						} else {
							for _, row := range rows {
								w, err := hrpcRow(t, ref, row, family)
								if err != nil {
									t.Fatalf("hrpc Get %q: %v", row, err)
								}
								want = append(want, w)
								w, err = hrpcRow(t, cl, row, family)
								if err != nil {
									t.Fatalf("hrpc Get %q: %v", row, err)
								}
								same = append(same, w)
							}
						}
						for i, row := range rows {
							if out[i].Err != nil {
								t.Fatalf("GetRows %q: %v", row, out[i].Err)
							}
							got := renderRow(out[i])
							if got != want[i] || same[i] != want[i] {
								t.Fatalf("round %d pass %d, row %q family %q:\nGetRows: %s\nhrpc, this engine: %s\nhrpc, no cache: %s",
									round, pass, row, family, got, same[i], want[i])
							}
						}
					}
				}
				for range r.IntN(6) {
					randomWriteTo(t, clock, r, cl, ref)
				}
			}
		})
	}
}

// TestGetRowsErrors fails a read of an unknown table or family, as a Get
// does, and a cancelled read.
func TestGetRowsErrors(t *testing.T) {
	t.Parallel()
	cl := openSpec(t, embedded.Options{})
	putRows(t, cl, "p1", "p2")
	rows := [][]byte{[]byte("p1"), []byte("p2")}
	out := make([]pagescan.Row, 2)
	cl.GetRows(context.Background(), "nope", rows, "", out)
	if !errors.Is(out[0].Err, embedded.ErrUnknownTable) || !errors.Is(out[1].Err, embedded.ErrUnknownTable) {
		t.Errorf("unknown table: %+v", out)
	}
	cl.GetRows(context.Background(), specTable, rows, "zz", out)
	if !errors.Is(out[0].Err, embedded.ErrUnknownFamily) {
		t.Errorf("unknown family: %+v", out)
	}
	cl.GetRows(context.Background(), specTable, rows, "f", out)
	if out[0].Err != nil || len(out[0].Cells) == 0 || out[1].Err != nil || len(out[1].Cells) == 0 {
		t.Errorf("rows: %+v", out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cl.GetRows(ctx, specTable, rows, "", out)
	if !errors.Is(out[0].Err, context.Canceled) || !errors.Is(out[1].Err, context.Canceled) {
		t.Errorf("cancelled: %+v", out)
	}
	cl.Close()
	cl.GetRows(context.Background(), specTable, rows, "", out)
	if !errors.Is(out[0].Err, embedded.ErrClosed) {
		t.Errorf("closed: %+v", out)
	}
}

// TestGetRowsNeverServesAChangedRow writes and deletes rows while readers
// keep reading them through GetRows (filling the result cache): a read
// begun after a write returned sees it.
func TestGetRowsNeverServesAChangedRow(t *testing.T) {
	t.Parallel()
	cl := openSpec(t, embedded.Options{})
	const writers, perWriter, readers = 4, 40, 3
	value := func(row string) (string, bool) {
		out := make([]pagescan.Row, 2)
		cl.GetRows(context.Background(), specTable, [][]byte{[]byte(row), []byte("t/other")}, "", out)
		if out[0].Err != nil {
			t.Error(out[0].Err)
			return "", false
		}
		for _, c := range out[0].Cells {
			if string(c.Family) == "f" && string(c.Qualifier) == "a" {
				return string(c.Value), true
			}
		}
		return "", false
	}
	var all [][]byte // every row a writer writes, read in one call to fill the cache
	for w := range writers {
		for i := range perWriter {
			all = append(all, []byte(fmt.Sprintf("t/%d/%03d", w, i)))
		}
	}
	stop := keepReading(readers, func() {
		out := make([]pagescan.Row, len(all))
		cl.GetRows(context.Background(), specTable, all, "", out)
	})
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				row := fmt.Sprintf("t/%d/%03d", w, i)
				v := fmt.Sprint(i)
				mustPut(t, cl, row, vals("f", "a", v))
				if got, ok := value(row); !ok || got != v {
					errs <- fmt.Errorf("a read after the Put of %s=%s finds %q (%v)", row, v, got, ok)
					return
				}
				if i%3 == 0 {
					mustDel(t, cl, row, nil)
					if got, ok := value(row); ok {
						errs <- fmt.Errorf("a read after the Delete of %s finds %q", row, got)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	stop()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
