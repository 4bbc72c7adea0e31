package embedded_test

// Durability: DESIGN.md "An acknowledged write survives the process being
// killed". A child process (this test binary re-executed, the standard
// helper-process pattern of os/exec's own tests) writes and acknowledges on
// stdout; the parent kills it with SIGKILL at an arbitrary point and checks
// that every acknowledged write is in the data directory.
//
// With Sync:false the WAL is written (not fsynced) before a call returns:
// that survives a process kill, which is what this test can check; power
// loss would need Sync:true, whose variant here checks the same promise.

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/embedded"
)

const (
	durabilityDirEnv   = "HBGRAPH_EMBEDDED_DURABILITY_DIR"
	durabilitySyncEnv  = "HBGRAPH_EMBEDDED_DURABILITY_SYNC"
	durabilityNoWALEnv = "HBGRAPH_EMBEDDED_DURABILITY_NOWAL"
)

// durabilityPad is the size of the padding cell each step of a child
// without a log writes, so that its memtables fill and are flushed while
// it runs (a bulk load's 256 MiB: every 4,000 steps or so).
const durabilityPad = 64 << 10

func durabilityRow(i int) string { return fmt.Sprintf("row%08d", i) }

// TestDurabilityChild is the child process; it does nothing unless the
// parent set durabilityDirEnv. It writes row i (Put) and bumps a counter
// (Increment) per step, printing "ack i" once both calls have returned,
// until it is killed (or, as a safety net, after two minutes). Without a
// log it also prints "flushed" once its first memtable flush completed.
func TestDurabilityChild(t *testing.T) {
	dir := os.Getenv(durabilityDirEnv)
	if dir == "" {
		t.Skip("helper process for TestAcknowledgedWritesSurviveKill")
	}
	noWAL := os.Getenv(durabilityNoWALEnv) == "1"
	c, err := embedded.Open(embedded.Options{
		Dir:    dir,
		Tables: specTables(),
		Sync:   os.Getenv(durabilitySyncEnv) == "1",
		NoWAL:  noWAL,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "open: %v\n", err)
		os.Exit(2)
	}
	var cl gohbase.Client = c
	ctx := context.Background()
	w := bufio.NewWriterSize(os.Stdout, 64)
	stop := time.Now().Add(2 * time.Minute)
	flushed := false
	for i := 0; time.Now().Before(stop); i++ {
		row := durabilityRow(i)
		values := vals("f", "v", row)
		if noWAL {
			values["f"]["pad"] = make([]byte, durabilityPad)
		}
		p, err := hrpc.NewPutStr(ctx, specTable, row, values)
		if err == nil {
			_, err = cl.Put(p)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "put %d: %v\n", i, err)
			os.Exit(2)
		}
		inc, err := hrpc.NewIncStrSingle(ctx, specTable, "counter", "f", "n", 1)
		if err == nil {
			_, err = cl.Increment(inc)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "increment %d: %v\n", i, err)
			os.Exit(2)
		}
		// Acknowledge only after the calls returned; flush so the parent
		// sees it now.
		fmt.Fprintf(w, "ack %d\n", i)
		if noWAL && !flushed && embedded.FlushesCompleted(c) > 0 {
			fmt.Fprintln(w, "flushed")
			flushed = true
		}
		if err := w.Flush(); err != nil {
			os.Exit(2)
		}
	}
	os.Exit(3) // never killed: the parent reports it
}

func TestAcknowledgedWritesSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL")
	}
	t.Parallel()
	for _, tc := range []struct {
		name  string
		sync  bool
		noWAL bool // then only a prefix of the steps need survive, and a flush
		acks  int  // kill after this many acknowledgements (and the flush)
	}{
		{"sync off", false, false, 3000},
		{"sync on", true, false, 200},
		{"no log", false, true, 8000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestDurabilityChild$", "-test.count=1", "-test.v=false")
			syncEnv := "0"
			if tc.sync {
				syncEnv = "1"
			}
			noWALEnv := "0"
			if tc.noWAL {
				noWALEnv = "1"
			}
			cmd.Env = append(os.Environ(), durabilityDirEnv+"="+dir, durabilitySyncEnv+"="+syncEnv, durabilityNoWALEnv+"="+noWALEnv)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			killed := false
			t.Cleanup(func() {
				if !killed {
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
				}
			})

			// Read acknowledgements; kill after tc.acks of them, then keep
			// draining: lines already in the pipe were acknowledged too.
			// Without a log, kill only once a flush completed: how many
			// steps pass before one does depends on the machine's load (CI
			// once killed a child after 8,002 steps with none done).
			lastAck := -1
			flushed := !tc.noWAL
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				line := sc.Text()
				if line == "flushed" {
					flushed = true
					continue
				}
				n, ok := strings.CutPrefix(line, "ack ")
				if !ok {
					continue // testing's own output
				}
				i, err := strconv.Atoi(n)
				if err != nil || i != lastAck+1 {
					t.Fatalf("child printed %q after ack %d", line, lastAck)
				}
				lastAck = i
				if !killed && flushed && lastAck+1 >= tc.acks {
					if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
						t.Fatalf("kill: %v", err)
					}
					killed = true
				}
			}
			err = cmd.Wait()
			if !killed {
				t.Fatalf("child exited (%v) after %d acks without being killed; stderr:\n%s", err, lastAck+1, stderr.String())
			}
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("child ended with %v, want killed by SIGKILL; stderr:\n%s", cmd.ProcessState, stderr.String())
			}
			t.Logf("child killed after %d acknowledged steps", lastAck+1)

			// Reopen the directory the killed process left behind.
			c := openSpec(t, embedded.Options{Dir: dir})
			var cl gohbase.Client = c
			s, err := hrpc.NewScanRangeStr(context.Background(), specTable, "row", "rox", hrpc.NumberOfRows(1000),
				hrpc.Families(map[string][]string{"f": {"v"}}))
			if err != nil {
				t.Fatal(err)
			}
			res, err := scanAll(t, cl, s)
			if err != nil {
				t.Fatalf("scan after reopen: %v", err)
			}
			present := make(map[string]string, len(res))
			for _, r := range res {
				for _, cell := range r.Cells {
					present[string(cell.Row)] = string(cell.Value)
				}
			}
			if tc.noWAL {
				checkSurvivingPrefix(t, cl, present, lastAck)
				return
			}
			missing := 0
			for i := 0; i <= lastAck; i++ {
				row := durabilityRow(i)
				if v, ok := present[row]; !ok || v != row {
					if missing < 10 {
						t.Errorf("acknowledged put %d lost (present=%v value=%q)", i, ok, v)
					}
					missing++
				}
			}
			if missing > 0 {
				t.Fatalf("%d of %d acknowledged puts lost after SIGKILL", missing, lastAck+1)
			}
			counter := mustGet(t, cl, "counter")
			if len(counter.Cells) != 1 || len(counter.Cells[0].Value) != 8 {
				t.Fatalf("counter after reopen = %q, want one 8-byte cell", cellsTS(counter.Cells))
			}
			// Step lastAck+1 may have been applied without being
			// acknowledged, so the counter may be one ahead.
			if n := int64(binary.BigEndian.Uint64(counter.Cells[0].Value)); n < int64(lastAck+1) || n > int64(lastAck+2) {
				t.Fatalf("counter after reopen = %d, want %d (or one more)", n, lastAck+1)
			}
		})
	}
}

// checkSurvivingPrefix checks what a killed child without a log left: a
// prefix of its commits (Put of row i, then the counter's Increment to
// i+1), so rows 0 to k-1 and no other, and the counter at k-1 or k; and
// that a flush kept some (k > 0), or the check would hold of nothing.
func checkSurvivingPrefix(t *testing.T, cl gohbase.Client, present map[string]string, lastAck int) {
	t.Helper()
	k := 0
	for ; k <= lastAck+1; k++ {
		if present[durabilityRow(k)] != durabilityRow(k) {
			break
		}
	}
	if len(present) != k {
		t.Fatalf("rows 0 to %d survived, and %d others: not a prefix of the commits", k-1, len(present)-k)
	}
	if k == 0 || k > lastAck+2 {
		t.Fatalf("%d steps survived of %d acknowledged: want some (a flush), and no more than one past them", k, lastAck+1)
	}
	var n int64
	if counter := mustGet(t, cl, "counter"); len(counter.Cells) == 1 && len(counter.Cells[0].Value) == 8 {
		n = int64(binary.BigEndian.Uint64(counter.Cells[0].Value))
	}
	if n != int64(k) && n != int64(k-1) {
		t.Fatalf("counter = %d after rows 0 to %d survived, want %d or %d", n, k-1, k-1, k)
	}
	t.Logf("without a log, %d of %d acknowledged steps survived the kill", k, lastAck+1)
}

// A clean Close and Open of the same directory keeps cells and delete
// markers ([book 27.3.1]: a marker keeps masking older Puts until a major
// compaction removes it, whether or not the region was reopened), and a
// major compaction after the horizon still purges what was written before
// the reopen without resurrecting what the marker hid.
func TestReopenKeepsCellsAndDeleteMarkers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clock := newFakeClock(specT0)
	open := func() *embedded.Client {
		c, err := embedded.Open(embedded.Options{Dir: dir, Tables: specTables(), Clock: clock.Now, DeleteMarkerHorizon: time.Hour})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return c
	}

	c := open()
	var cl gohbase.Client = c
	now := clock.Millis()
	putDeleteBase(t, cl, now-100)
	mustPut(t, cl, "keep", vals("f", "a", "kept"), at(now-100))
	mustInc(t, cl, "keep", "g", "n", 7)
	mustDel(t, cl, "r", map[string]map[string][]byte{"f": nil}) // family marker at now
	c.Close()

	c = open()
	cl = c
	if got, want := cellsKV(mustGet(t, cl, "r").Cells), []string{"g:c=base"}; !slices.Equal(got, want) {
		t.Fatalf("after reopen: Get r = %q, want %q", got, want)
	}
	if got, want := cellsKV(mustGet(t, cl, "keep").Cells), []string{"f:a=kept", "g:n=" + string(be64(7))}; !slices.Equal(got, want) {
		t.Fatalf("after reopen: Get keep = %q, want %q", got, want)
	}
	mustPut(t, cl, "r", vals("f", "a", "late"), at(now-50))
	if got, want := cellsKV(mustGet(t, cl, "r").Cells), []string{"g:c=base"}; !slices.Equal(got, want) {
		t.Fatalf("after reopen: late put below the marker shows: Get r = %q, want %q", got, want)
	}
	if got := mustInc(t, cl, "keep", "g", "n", 1); got != 8 {
		t.Fatalf("after reopen: Increment = %d, want 8", got)
	}
	c.Close()

	clock.Advance(2 * time.Hour) // past the one-hour horizon
	c = open()
	t.Cleanup(c.Close)
	cl = c
	if _, err := c.MajorCompact(); err != nil {
		t.Fatalf("MajorCompact: %v", err)
	}
	if got, want := cellsKV(mustGet(t, cl, "r").Cells), []string{"g:c=base"}; !slices.Equal(got, want) {
		t.Fatalf("after purge: Get r = %q, want %q (no resurrection)", got, want)
	}
	mustPut(t, cl, "r", vals("f", "a", "old"), at(now-50))
	if got, want := cellsKV(mustGet(t, cl, "r").Cells), []string{"f:a=old", "g:c=base"}; !slices.Equal(got, want) {
		t.Fatalf("after purge: Get r = %q, want %q", got, want)
	}
}

// TestCloseWithoutALogKeepsEveryWrite: an engine without a log (import's)
// keeps its writes in memtables only until a flush; Close flushes, so
// what a process wrote before closing is there when the directory is
// opened again.
func TestCloseWithoutALogKeepsEveryWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, err := embedded.Open(embedded.Options{Dir: dir, Tables: specTables(), NoWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	const rows = 100
	for i := range rows {
		mustPut(t, c, durabilityRow(i), vals("f", "v", durabilityRow(i)))
	}
	c.Close()
	reopened := openSpec(t, embedded.Options{Dir: dir})
	for i := range rows {
		if res := mustGet(t, reopened, durabilityRow(i)); len(res.Cells) != 1 || string(res.Cells[0].Value) != durabilityRow(i) {
			t.Fatalf("row %d after Close and reopen: %q", i, cellsTS(res.Cells))
		}
	}
}
