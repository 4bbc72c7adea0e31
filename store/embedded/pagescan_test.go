package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/pagescan"
)

// hrpcPage is what the store read through hrpc before ScanPages: the first
// limit rows of a scan with NumberOfRows(limit), rendered cell by cell.
func hrpcPage(tb testing.TB, cl *embedded.Client, sc pagescan.Scan) (string, error) {
	tb.Helper()
	opts := []func(hrpc.Call) error{hrpc.NumberOfRows(uint32(sc.Limit))}
	if sc.Reversed {
		opts = append(opts, hrpc.Reversed())
	}
	if sc.Family != "" {
		opts = append(opts, hrpc.Families(map[string][]string{sc.Family: nil}))
	}
	s, err := hrpc.NewScanRange(context.Background(), []byte(specTable), sc.Start, sc.Stop, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	scanner := cl.Scan(s)
	defer scanner.Close()
	var b strings.Builder
	for n := 0; n < sc.Limit; {
		r, err := scanner.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		if len(r.Cells) == 0 {
			continue
		}
		n++
		writeRow(&b, r.Cells)
	}
	return b.String(), nil
}

func writeRow(b *strings.Builder, cells []*hrpc.Cell) {
	for _, c := range cells {
		pc := (*pb.Cell)(c)
		fmt.Fprintf(b, "%q %s:%q=%q@%d/%v|", pc.Row, pc.Family, pc.Qualifier, pc.Value, pc.GetTimestamp(), pc.GetCellType())
	}
	b.WriteString("\n")
}

func renderPage(p pagescan.Page) string {
	var b strings.Builder
	for _, cells := range p.Rows {
		if len(cells) == 0 {
			b.WriteString("<empty row>\n")
			continue
		}
		writeRow(&b, cells)
	}
	return b.String()
}

// randomKey is a short key over a small alphabet, so that scans share
// prefixes, bounds fall on rows and between them, and buckets collide.
func randomKey(r *rand.Rand, maxLen int) []byte {
	n := r.IntN(maxLen + 1)
	k := make([]byte, n)
	for i := range k {
		k[i] = "ab\x00\xff"[r.IntN(4)]
	}
	return k
}

func randomWrite(tb testing.TB, cl *embedded.Client, r *rand.Rand) {
	row := "p" + string(randomKey(r, 3))
	switch r.IntN(4) {
	case 0:
		mustDel(tb, cl, row, nil)
	case 1:
		mustDel(tb, cl, row, map[string]map[string][]byte{"fg"[r.IntN(2):][:1]: nil})
	default:
		fam := "fg"[r.IntN(2):][:1]
		mustPut(tb, cl, row, vals(fam, string(randomKey(r, 2)), fmt.Sprint(r.IntN(1000))))
	}
}

func randomScan(r *rand.Rand) pagescan.Scan {
	sc := pagescan.Scan{Reversed: r.IntN(2) == 0, Limit: 1 + r.IntN(6), Family: []string{"", "f", "g"}[r.IntN(3)]}
	if r.IntN(5) > 0 {
		sc.Start = append([]byte("p"), randomKey(r, 3)...)
	}
	if r.IntN(5) > 0 {
		sc.Stop = append([]byte("p"), randomKey(r, 3)...)
	}
	if r.IntN(8) == 0 {
		sc.Stop = []byte("q")
	}
	return sc
}

// TestScanPagesAnswersAsScan is the differential test of ScanPages against
// the hrpc scan the store made before: random rows in two families, random
// bounds (open, on rows, between them), both directions, a family or the
// whole row, small limits; with the result cache on (each scan made twice:
// a miss, then a hit) and off; in batches of several scans; writes between
// the rounds invalidating what the cache holds.
func TestScanPagesAnswersAsScan(t *testing.T) {
	t.Parallel()
	for _, cacheBytes := range []int64{0, -1} {
		t.Run(fmt.Sprintf("cache=%v", cacheBytes >= 0), func(t *testing.T) {
			t.Parallel()
			cl := openSpec(t, embedded.Options{ResultCacheBytes: cacheBytes})
			r := rand.New(rand.NewPCG(1, uint64(-cacheBytes)))
			for range 200 {
				randomWrite(t, cl, r)
			}
			for round := range 60 {
				scans := make([]pagescan.Scan, 1+r.IntN(8))
				for i := range scans {
					scans[i] = randomScan(r)
				}
				for pass := range 2 {
					pages := make([]pagescan.Page, len(scans))
					cl.ScanPages(context.Background(), specTable, scans, pages)
					for i, sc := range scans {
						want, err := hrpcPage(t, cl, sc)
						if err != nil {
							t.Fatalf("hrpc scan %+v: %v", sc, err)
						}
						if pages[i].Err != nil {
							t.Fatalf("ScanPages %+v: %v", sc, pages[i].Err)
						}
						if got := renderPage(pages[i]); got != want {
							t.Fatalf("round %d pass %d, scan %+v:\nScanPages:\n%s\nhrpc:\n%s", round, pass, sc, got, want)
						}
					}
				}
				for range r.IntN(6) {
					randomWrite(t, cl, r)
				}
			}
		})
	}
}

// TestScanPagesErrors fails a scan of an unknown table or family, as Scan
// does, and only the scans it concerns.
func TestScanPagesErrors(t *testing.T) {
	t.Parallel()
	cl := openSpec(t, embedded.Options{})
	putRows(t, cl, "p1", "p2")
	pages := make([]pagescan.Page, 1)
	cl.ScanPages(context.Background(), "nope", []pagescan.Scan{{Limit: 1}}, pages)
	if !errors.Is(pages[0].Err, embedded.ErrUnknownTable) {
		t.Errorf("unknown table: %v", pages[0].Err)
	}
	pages = make([]pagescan.Page, 3)
	cl.ScanPages(context.Background(), specTable, []pagescan.Scan{{Limit: 5}, {Limit: 5, Family: "zz"}, {Limit: 1, Family: "f"}}, pages)
	if len(pages[0].Rows) != 2 || len(pages[2].Rows) != 1 || !errors.Is(pages[1].Err, embedded.ErrUnknownFamily) {
		t.Errorf("pages %+v", pages)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cl.ScanPages(ctx, specTable, []pagescan.Scan{{Limit: 5}}, pages[:1])
	if !errors.Is(pages[0].Err, context.Canceled) {
		t.Errorf("cancelled: %v", pages[0].Err)
	}
}

// TestScanPagesNeverServesAChangedPage writes and deletes rows while
// readers keep scanning their range through ScanPages (filling the result
// cache): a scan begun after a write returned sees it.
func TestScanPagesNeverServesAChangedPage(t *testing.T) {
	t.Parallel()
	cl := openSpec(t, embedded.Options{})
	const writers, perWriter, readers = 4, 40, 3
	has := func(row string, reversed bool) bool {
		pages := make([]pagescan.Page, 2)
		scans := []pagescan.Scan{{Start: []byte("t/"), Stop: []byte("t0"), Limit: 1000, Family: "f"},
			{Start: []byte("t0"), Stop: []byte("t/"), Limit: 1000, Reversed: true}}
		cl.ScanPages(context.Background(), specTable, scans, pages)
		p := pages[0]
		if reversed {
			p = pages[1]
		}
		if p.Err != nil {
			t.Error(p.Err)
			return false
		}
		for _, cells := range p.Rows {
			if string(cells[0].Row) == row {
				return true
			}
		}
		return false
	}
	stop := keepReading(readers, func() { has("", false) })
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				row := fmt.Sprintf("t/%d/%03d", w, i)
				mustPut(t, cl, row, vals("f", "a", row))
				if !has(row, i%2 == 0) {
					errs <- fmt.Errorf("a page after the Put of %s lacks it", row)
					return
				}
				if i%3 == 0 {
					mustDel(t, cl, row, nil)
					if has(row, i%2 == 1) {
						errs <- fmt.Errorf("a page after the Delete of %s holds it", row)
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
