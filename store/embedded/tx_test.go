package embedded_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/pagescan"
)

// txPut puts one cell of row within ctx (a transaction's or none).
func txPut(tb testing.TB, c *embedded.Client, ctx context.Context, row, q, v string) error {
	tb.Helper()
	p, err := hrpc.NewPutStr(ctx, specTable, row, vals("f", q, v))
	if err != nil {
		tb.Fatal(err)
	}
	_, err = c.Put(p)
	return err
}

// txRow reads row whole within ctx through GetRows, as "f:q=v" strings.
func txRow(tb testing.TB, c *embedded.Client, ctx context.Context, row string) ([]string, error) {
	tb.Helper()
	out := make([]pagescan.Row, 1)
	c.GetRows(ctx, specTable, [][]byte{[]byte(row)}, "", out)
	return cellsKV(out[0].Cells), out[0].Err
}

// A transaction's writes are seen by its own calls at once, by no one else
// before Commit, and by everyone after it; Get and GetRows of a row it
// wrote read its columns over the stored ones.
func TestTxAppliesItsWritesAtCommit(t *testing.T) {
	c := openSpec(t, embedded.Options{})
	mustPut(t, c, "a", vals("f", "old", "1"))
	ctx, tx := c.BeginTx(context.Background())
	if err := txPut(t, c, ctx, "a", "new", "2"); err != nil {
		t.Fatal(err)
	}
	if err := txPut(t, c, ctx, "b", "x", "3"); err != nil {
		t.Fatal(err)
	}
	d, err := hrpc.NewDelStr(ctx, specTable, "a", vals("f", "old", ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(d); err != nil {
		t.Fatal(err)
	}
	inc, err := hrpc.NewIncStrSingle(ctx, specTable, "b", "f", "n", 5)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := c.Increment(inc); err != nil || n != 5 {
		t.Fatalf("Increment within: %d, %v", n, err)
	}
	p, err := hrpc.NewPutStr(ctx, specTable, "b", vals("f", "x", "4"))
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := c.CheckAndPut(p, "f", "x", []byte("3")); err != nil || !ok {
		t.Fatalf("CheckAndPut of the value the transaction put: %v, %v", ok, err)
	}

	wantA, wantB := []string{"f:new=2"}, []string{"f:n=" + string(be64(5)), "f:x=4"}
	for _, w := range []struct {
		row  string
		want []string
	}{{"a", wantA}, {"b", wantB}} {
		got, err := txRow(t, c, ctx, w.row)
		if err != nil || !slices.Equal(got, w.want) {
			t.Errorf("GetRows of %s within: %q, %v; want %q", w.row, got, err, w.want)
		}
		g, err := hrpc.NewGetStr(ctx, specTable, w.row)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Get(g)
		if err != nil || !slices.Equal(cellsKV(res.Cells), w.want) {
			t.Errorf("Get of %s within: %v; want %q", w.row, err, w.want)
		}
	}
	if got := cellsKV(mustGet(t, c, "a").Cells); !slices.Equal(got, []string{"f:old=1"}) {
		t.Errorf("row a outside before Commit: %q, want it as it was", got)
	}
	if got := mustGet(t, c, "b").Cells; len(got) != 0 {
		t.Errorf("row b outside before Commit: %q, want none", cellsKV(got))
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := cellsKV(mustGet(t, c, "a").Cells); !slices.Equal(got, wantA) {
		t.Errorf("row a after Commit: %q, want %q", got, wantA)
	}
	if got := cellsKV(mustGet(t, c, "b").Cells); !slices.Equal(got, wantB) {
		t.Errorf("row b after Commit: %q, want %q", got, wantB)
	}
}

// Discard applies nothing and releases the rows: a write outside then
// goes through.
func TestTxDiscardAppliesNothing(t *testing.T) {
	c := openSpec(t, embedded.Options{})
	ctx, tx := c.BeginTx(context.Background())
	if err := txPut(t, c, ctx, "a", "q", "1"); err != nil {
		t.Fatal(err)
	}
	tx.Discard()
	tx.Discard() // a second time: nothing
	mustPut(t, c, "a", vals("f", "r", "2"))
	if got := cellsKV(mustGet(t, c, "a").Cells); !slices.Equal(got, []string{"f:r=2"}) {
		t.Errorf("row a: %q, want only the write after the discarded transaction", got)
	}
	if err := tx.Commit(); err == nil {
		t.Error("Commit after Discard: nil error")
	}
}

// A transaction holds every row it read until it commits: a write of the
// row from outside waits, so the transaction's compare-and-set of what it
// read holds, and the outside write lands after it.
func TestTxHoldsTheRowsItReads(t *testing.T) {
	c := openSpec(t, embedded.Options{})
	for i := range 50 {
		row := "r" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		mustPut(t, c, row, vals("f", "v", "1"))
		ctx, tx := c.BeginTx(context.Background())
		if got, err := txRow(t, c, ctx, row); err != nil || !slices.Equal(got, []string{"f:v=1"}) {
			t.Fatalf("read within: %q, %v", got, err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			mustPut(t, c, row, vals("f", "v", "outside"))
		}()
		p, err := hrpc.NewPutStr(ctx, specTable, row, vals("f", "v", "tx"))
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := c.CheckAndPut(p, "f", "v", []byte("1")); err != nil || !ok {
			t.Fatalf("CheckAndPut of what the transaction read: %v, %v (the outside write came between)", ok, err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		<-done
		if got := cellsKV(mustGet(t, c, row).Cells); !slices.Equal(got, []string{"f:v=outside"}) {
			t.Fatalf("row %s: %q, want the outside write, which waited for the commit", row, got)
		}
	}
}

// A transaction that would wait for a row another holds, while it holds
// rows of its own, cannot go on: that call and every later one fail with
// ErrTxConflict, and its Commit applies nothing. The other is unaffected.
// A scan within a transaction is a conflict too.
func TestTxConflicts(t *testing.T) {
	c := openSpec(t, embedded.Options{})
	mustPut(t, c, "held", vals("f", "v", "1"))
	ctx1, tx1 := c.BeginTx(context.Background())
	if _, err := txRow(t, c, ctx1, "held"); err != nil {
		t.Fatal(err)
	}
	ctx2, tx2 := c.BeginTx(context.Background())
	if err := txPut(t, c, ctx2, "mine", "v", "2"); err != nil {
		t.Fatal(err)
	}
	if _, err := txRow(t, c, ctx2, "held"); !errors.Is(err, pagescan.ErrTxConflict) {
		t.Fatalf("a read of a row another transaction holds: %v, want ErrTxConflict", err)
	}
	if err := txPut(t, c, ctx2, "other", "v", "3"); !errors.Is(err, pagescan.ErrTxConflict) {
		t.Errorf("a call after the conflict: %v, want ErrTxConflict", err)
	}
	if err := tx2.Commit(); !errors.Is(err, pagescan.ErrTxConflict) {
		t.Errorf("Commit after a conflict: %v, want ErrTxConflict", err)
	}
	if got := mustGet(t, c, "mine").Cells; len(got) != 0 {
		t.Errorf("row mine: %q, want nothing of the conflicted transaction", cellsKV(got))
	}
	if err := txPut(t, c, ctx1, "held", "v", "4"); err != nil {
		t.Fatal(err)
	}
	if err := tx1.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := cellsKV(mustGet(t, c, "held").Cells); !slices.Equal(got, []string{"f:v=4"}) {
		t.Errorf("row held: %q, want the first transaction's write", got)
	}

	ctx3, tx3 := c.BeginTx(context.Background())
	defer tx3.Discard()
	s, err := hrpc.NewScanRangeStr(ctx3, specTable, "a", "z")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scanAll(t, c, s); !errors.Is(err, pagescan.ErrTxConflict) {
		t.Errorf("a scan within: %v, want ErrTxConflict", err)
	}
	if c.TxConflicts() != 2 {
		t.Errorf("TxConflicts: %d, want 2", c.TxConflicts())
	}
}

// An Increment's nonce is the engine's once its transaction commits (a
// re-send outside is a duplicate), and not before: a discarded one leaves
// the nonce free.
func TestTxIncrementNonces(t *testing.T) {
	c := openSpec(t, embedded.Options{})
	for _, commit := range []bool{true, false} {
		row := map[bool]string{true: "committed", false: "discarded"}[commit]
		nonce := map[bool]uint64{true: 1, false: 2}[commit]
		ctx, tx := c.BeginTx(context.Background())
		inc := nonceIncCtx(t, ctx, row, 7, nonce, map[string]int64{"n": 1})
		sendNonced(t, c, inc)
		if commit {
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		} else {
			tx.Discard()
		}
		again := nonceIncCtx(t, context.Background(), row, 7, nonce, map[string]int64{"n": 1})
		sendNonced(t, c, again)
		const want = 1 // committed: the re-send is a duplicate; discarded: it is the first
		if got := stored(t, c, row); got["n"] != want {
			t.Errorf("%s: n = %d after the re-send outside, want %d", row, got["n"], want)
		}
		// A re-send within another transaction is answered, not applied.
		ctx, tx = c.BeginTx(context.Background())
		if got := sendNonced(t, c, nonceIncCtx(t, ctx, row, 7, nonce, map[string]int64{"n": 1})); got["n"] != want {
			t.Errorf("%s: a re-send within a transaction answered n = %d, want %d", row, got["n"], want)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := stored(t, c, row); got["n"] != want {
			t.Errorf("%s: n = %d after a re-send within a transaction, want %d", row, got["n"], want)
		}
	}
}

func nonceIncCtx(tb testing.TB, ctx context.Context, row string, group, nonce uint64, deltas map[string]int64) *noncedCall {
	tb.Helper()
	values := map[string][]byte{}
	for q, d := range deltas {
		values[q] = be64(d)
	}
	inc, err := hrpc.NewIncStr(ctx, specTable, row, map[string]map[string][]byte{"f": values})
	if err != nil {
		tb.Fatal(err)
	}
	return &noncedCall{Mutate: inc, group: group, nonce: nonce}
}

// A transaction begun within another is that one: its Commit and Discard
// leave the outer one to decide.
func TestTxWithinATransactionIsIt(t *testing.T) {
	c := openSpec(t, embedded.Options{})
	ctx, outer := c.BeginTx(context.Background())
	inner, tx := c.BeginTx(ctx)
	if err := txPut(t, c, inner, "a", "q", "1"); err != nil {
		t.Fatal(err)
	}
	tx.Discard()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, c, "a").Cells; len(got) != 0 {
		t.Errorf("row a before the outer Commit: %q", cellsKV(got))
	}
	if err := outer.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := cellsKV(mustGet(t, c, "a").Cells); !slices.Equal(got, []string{"f:q=1"}) {
		t.Errorf("row a after the outer Commit: %q", got)
	}
}

// Many transactions, each incrementing two counters of rows shared by all
// of them, and plain Increments of the same counters beside them: no
// count is lost and none counted twice, whichever went first, and a
// transaction that conflicted leaves nothing (it is not retried here).
func TestTxConcurrentCountersLoseNothing(t *testing.T) {
	c := openSpec(t, embedded.Options{})
	const workers, each = 8, 200
	var wg sync.WaitGroup
	var committed, plain [workers]int
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				rows := []string{"x", "y"}
				if i%2 == 1 {
					rows = []string{"y", "x"}
				}
				if (w+i)%3 == 0 {
					mustInc(t, c, rows[0], "f", "n", 1)
					mustInc(t, c, rows[1], "f", "n", 1)
					plain[w]++
					continue
				}
				ctx, tx := c.BeginTx(context.Background())
				ok := true
				for _, row := range rows {
					inc, err := hrpc.NewIncStrSingle(ctx, specTable, row, "f", "n", 1)
					if err != nil {
						t.Error(err)
						return
					}
					if _, err := c.Increment(inc); err != nil {
						if !errors.Is(err, pagescan.ErrTxConflict) {
							t.Error(err)
						}
						ok = false
						break
					}
				}
				if !ok {
					tx.Discard()
					continue
				}
				if err := tx.Commit(); err != nil {
					t.Error(err)
					continue
				}
				committed[w]++
			}
		})
	}
	wg.Wait()
	want := int64(0)
	for w := range workers {
		want += int64(committed[w] + plain[w])
	}
	for _, row := range []string{"x", "y"} {
		if got := stored(t, c, row)["n"]; got != want {
			t.Errorf("%s: n = %d, want %d (%d transactions committed)", row, got, want, want)
		}
	}
	t.Logf("%d conflicts", c.TxConflicts())
}

// Close waits for a transaction to end, and a transaction goes on while
// Close waits: a write waiting for a row the transaction holds, while
// Close waits for that write, does not stop the transaction's next call.
// Begun after Close, a transaction's calls fail with ErrClosed.
func TestCloseWaitsForATransaction(t *testing.T) {
	c, err := embedded.Open(embedded.Options{Tables: specTables()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, tx := c.BeginTx(context.Background())
	if _, err := txRow(t, c, ctx, "held"); err != nil {
		t.Fatal(err)
	}
	wrote, closed := make(chan error, 1), make(chan struct{})
	go func() { wrote <- txPut(t, c, context.Background(), "held", "v", "outside") }()
	go func() { c.Close(); close(closed) }()
	// Time for the write to wait for the row and Close for the write (the
	// test holds whichever of them is waiting yet).
	time.Sleep(10 * time.Millisecond)
	if err := txPut(t, c, ctx, "other", "v", "tx"); err != nil {
		t.Fatalf("a call of the transaction while Close waits: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(time.Minute):
		t.Fatal("Close did not return within a minute of the transaction's end")
	}
	<-wrote
	_, tx = c.BeginTx(context.Background())
	if err := tx.Commit(); !errors.Is(err, embedded.ErrClosed) {
		t.Errorf("a transaction begun after Close: %v, want ErrClosed", err)
	}
}
