package embedded_test

// Benchmarks of the calls package store makes, each in memory ("mem") and on
// disk without fsync ("disk"). Data is preloaded before the timed loop;
// requests are built inside it, as the store builds one per call.
//
//	go test -run '^$' -bench . -benchmem ./store/embedded/

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/hbgraph/hbgraph/store/embedded"
)

const benchRows = 1000

func benchRow(i int) string { return fmt.Sprintf("bench%06d", i%benchRows) }

// benchEngines runs f against a fresh in-memory engine and a fresh on-disk
// one, each preloaded with benchRows rows of one 100-byte cell.
func benchEngines(b *testing.B, f func(b *testing.B, cl gohbase.Client)) {
	for _, mode := range []string{"mem", "disk"} {
		b.Run(mode, func(b *testing.B) {
			opts := embedded.Options{}
			if mode == "disk" {
				opts.Dir = b.TempDir()
			}
			var cl gohbase.Client = openSpec(b, opts)
			value := make([]byte, 100)
			for i := range benchRows {
				p, err := hrpc.NewPutStr(context.Background(), specTable, benchRow(i), map[string]map[string][]byte{"f": {"v": value}})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := cl.Put(p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			f(b, cl)
		})
	}
}

func BenchmarkGet(b *testing.B) {
	benchEngines(b, func(b *testing.B, cl gohbase.Client) {
		ctx := context.Background()
		i := 0
		for b.Loop() {
			g, _ := hrpc.NewGetStr(ctx, specTable, benchRow(i))
			res, err := cl.Get(g)
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Cells) != 1 {
				b.Fatalf("Get returned %d cells, want 1", len(res.Cells))
			}
			i++
		}
	})
}

func BenchmarkPut(b *testing.B) {
	benchEngines(b, func(b *testing.B, cl gohbase.Client) {
		ctx := context.Background()
		value := make([]byte, 100)
		i := 0
		for b.Loop() {
			p, _ := hrpc.NewPutStr(ctx, specTable, fmt.Sprintf("put%09d", i), map[string]map[string][]byte{"f": {"v": value}})
			if _, err := cl.Put(p); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkCheckAndMutate is the compare-and-set on the update time that
// every graph update does (seed 002); each call succeeds.
func BenchmarkCheckAndMutate(b *testing.B) {
	benchEngines(b, func(b *testing.B, cl gohbase.Client) {
		ctx := context.Background()
		var prev []byte
		i := 0
		for b.Loop() {
			next := be64(int64(i))
			p, _ := hrpc.NewPutStr(ctx, specTable, "cas", map[string]map[string][]byte{"f": {"u": next}})
			cam, err := hrpc.NewCheckAndMutate(p, "f", "u", pb.CompareType_EQUAL, binaryComparator(prev))
			if err != nil {
				b.Fatal(err)
			}
			ok, err := cl.CheckAndMutate(cam)
			if err != nil || !ok {
				b.Fatalf("CheckAndMutate: %v, %v", ok, err)
			}
			prev = next
			i++
		}
	})
}

func BenchmarkIncrement(b *testing.B) {
	benchEngines(b, func(b *testing.B, cl gohbase.Client) {
		ctx := context.Background()
		for b.Loop() {
			inc, _ := hrpc.NewIncStrSingle(ctx, specTable, "counter", "f", "n", 1)
			if _, err := cl.Increment(inc); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkScan20 reads a 20-row page, the size of a typical connection
// page of the GraphQL API.
func BenchmarkScan20(b *testing.B) {
	benchEngines(b, func(b *testing.B, cl gohbase.Client) {
		ctx := context.Background()
		i := 0
		for b.Loop() {
			start := i % (benchRows - 20)
			s, _ := hrpc.NewScanRangeStr(ctx, specTable, benchRow(start), benchRow(start+20), hrpc.NumberOfRows(21))
			sc := cl.Scan(s)
			n := 0
			for {
				_, err := sc.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			sc.Close()
			if n != 20 {
				b.Fatalf("scan returned %d rows, want 20", n)
			}
			i++
		}
	})
}

// BenchmarkSendBatch100Gets is one loader batch: 100 Gets in one SendBatch.
func BenchmarkSendBatch100Gets(b *testing.B) {
	benchEngines(b, func(b *testing.B, cl gohbase.Client) {
		ctx := context.Background()
		batch := make([]hrpc.Call, 100)
		i := 0
		for b.Loop() {
			for j := range batch {
				batch[j], _ = hrpc.NewGetStr(ctx, specTable, benchRow(i*100+j))
			}
			if _, allOK := cl.SendBatch(ctx, batch); !allOK {
				b.Fatal("SendBatch: not all OK")
			}
			i++
		}
	})
}

// BenchmarkGetHotRow reads a three-cell row after 20,000 updates of two of
// its cells: the superseded versions are still in Pebble's memtable, and a
// row read must not step over them one by one.
func BenchmarkGetHotRow(b *testing.B) {
	benchEngines(b, func(b *testing.B, cl gohbase.Client) {
		ctx := context.Background()
		b.StopTimer()
		for i := range 20_000 {
			p, err := hrpc.NewPutStr(ctx, specTable, "hot", map[string]map[string][]byte{"f": {
				"c": []byte("created"), "p": []byte(fmt.Sprint("props", i)), "u": []byte(fmt.Sprint(i)),
			}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := cl.Put(p); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		for b.Loop() {
			g, _ := hrpc.NewGetStr(ctx, specTable, "hot")
			res, err := cl.Get(g)
			if err != nil || len(res.Cells) != 3 {
				b.Fatalf("%v %v", res, err)
			}
		}
	})
}

// BenchmarkGetFamilyPastDeadColumns reads family f of a row whose family g
// holds 4,000 dead columns (put, then deleted), as a node's row holds one
// per relationship create on it until a major compaction; the result cache
// is off, as after an eviction. The read must not pay for them.
func BenchmarkGetFamilyPastDeadColumns(b *testing.B) {
	ctx := context.Background()
	for _, mode := range []string{"mem", "disk"} {
		b.Run(mode, func(b *testing.B) {
			opts := embedded.Options{ResultCacheBytes: -1}
			if mode == "disk" {
				opts.Dir = b.TempDir()
			}
			cl := openSpec(b, opts)
			mustPut(b, cl, "node", map[string]map[string][]byte{"f": {"c": []byte("1"), "p": []byte("{}"), "u": []byte("1")}})
			deadColumns(b, cl, "node", 4000)
			b.ReportAllocs()
			for b.Loop() {
				g, _ := hrpc.NewGetStr(ctx, specTable, "node", hrpc.Families(map[string][]string{"f": nil}))
				res, err := cl.Get(g)
				if err != nil || len(res.Cells) != 3 {
					b.Fatalf("%v %v", res, err)
				}
			}
		})
	}
}
