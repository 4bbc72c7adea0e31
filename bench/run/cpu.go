package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CPU per request is read from /proc: the CPU a server's processes spent
// over the driver's measured window, divided by the requests of that
// window. A sampler reads the processes every cpuSampleEvery while the
// driver runs; the window is taken from the samples afterwards, once the
// driver's exit says where its measured part ended, so that neither the
// driver's start (reading its variables, walking Q4's pages) nor its end
// is in it.

const cpuSampleEvery = 100 * time.Millisecond

// pidFile reads the PID on a PID file's first line; 0 when there is none.
func pidFile(path string) int {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	return pid
}

// processTree is pid and its children (PostgreSQL's backends are the
// postmaster's children).
func processTree(pid int) []int {
	if pid == 0 {
		return nil
	}
	pids := []int{pid}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, ok := procStat(child); ok && len(f) > 1 && f[1] == strconv.Itoa(pid) {
			pids = append(pids, child)
		}
	}
	return pids
}

// procStat is /proc/PID/stat's fields after the command name: f[0] is
// field 3 (state), f[1] field 4 (ppid), f[N-3] field N.
func procStat(pid int) ([]string, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, false
	}
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(string(raw[i+1:])), true
}

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times.
var clockTicks = func() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if n, perr := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && perr == nil && n > 0 {
		return float64(n)
	}
	return 100
}()

// cpuSeconds is the CPU time the processes have spent, their reaped
// children's included: fields 14-17 of /proc/PID/stat (utime, stime,
// cutime, cstime). A PostgreSQL backend that exits between two readings
// moves from the live children into the postmaster's cutime and cstime,
// so summing both counts it once, whenever it ends.
func cpuSeconds(pids []int) float64 {
	var ticks int64
	for _, pid := range pids {
		f, ok := procStat(pid)
		if !ok || len(f) < 15 {
			continue
		}
		ticks += statTicks(f)
	}
	return float64(ticks) / clockTicks
}

// statTicks sums utime, stime, cutime and cstime of procStat's fields.
func statTicks(f []string) int64 {
	var sum int64
	for _, i := range []int{11, 12, 13, 14} { // fields 14-17
		n, _ := strconv.ParseInt(f[i], 10, 64)
		sum += n
	}
	return sum
}

// cpuSample is the CPU seconds the processes had spent at a time, and
// the machine's CPU ticks in all and those its hypervisor stole.
type cpuSample struct {
	at  time.Time
	cpu float64
	machineTicks
}

// machineTicks is /proc/stat's first line: the ticks the steal column
// counts (time a virtual CPU was ready to run and the hypervisor ran
// something else), and the ticks of every column before guest (which
// user already counts).
type machineTicks struct{ steal, total int64 }

func readMachineTicks() (t machineTicks) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return t
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return t
	}
	for i, v := range f[1:9] { // user nice system idle iowait irq softirq steal
		n, _ := strconv.ParseInt(v, 10, 64)
		t.total += n
		if i == 7 {
			t.steal = n
		}
	}
	return t
}

// stealSince is the share of the machine's CPU time the hypervisor stole
// between from and t (0 when /proc says nothing of it).
func (t machineTicks) stealSince(from machineTicks) float64 {
	if total := t.total - from.total; total > 0 {
		return float64(t.steal-from.steal) / float64(total)
	}
	return 0
}

// maxSteal is the largest share of the machine's CPU time the hypervisor
// may steal over a run for it to count as quiet. On the shared machines
// these figures come from, steal moved from 1-3% idle to 41-49% under a
// load within minutes: latencies and req/s measured then are the
// neighbours', not the server's.
const maxSteal = 0.10

// sampleCPU reads pids' CPU every cpuSampleEvery until the returned stop,
// which returns the samples (the last one taken at stop).
func sampleCPU(pids func() []int) (stop func() []cpuSample) {
	var (
		mu      sync.Mutex
		samples []cpuSample
		done    = make(chan struct{})
		wg      sync.WaitGroup
	)
	take := func() {
		c := cpuSeconds(pids())
		ticks := readMachineTicks()
		mu.Lock()
		samples = append(samples, cpuSample{at: time.Now(), cpu: c, machineTicks: ticks})
		mu.Unlock()
	}
	take()
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(cpuSampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				take()
			}
		}
	}()
	return func() []cpuSample {
		close(done)
		wg.Wait()
		take()
		return samples
	}
}

// windowCores is the cores the processes kept busy between from and to:
// the CPU between the first sample at or after from and the last at or
// before to, over the time between them; and the share of the machine's
// CPU time stolen by its hypervisor over the same samples (0 when /proc
// says nothing of it). ok is false when the samples cover less than half
// the window.
func windowCores(samples []cpuSample, from, to time.Time) (cores, seconds, steal float64, ok bool) {
	first, last := -1, -1
	for i, s := range samples {
		if first < 0 && !s.at.Before(from) {
			first = i
		}
		if !s.at.After(to) {
			last = i
		}
	}
	if first < 0 || last <= first {
		return 0, 0, 0, false
	}
	span := samples[last].at.Sub(samples[first].at).Seconds()
	if span < to.Sub(from).Seconds()/2 {
		return 0, 0, 0, false
	}
	steal = samples[last].stealSince(samples[first].machineTicks)
	return (samples[last].cpu - samples[first].cpu) / span, span, steal, true
}

// driverTail is how long the peer driver takes, after its measured
// window ends, to let the requests in flight finish, sort its latencies
// and exit; the CPU window ends that long before the driver's exit.
const driverTail = 50 * time.Millisecond

// Background work is kept out of the CPU figures, and a run where any
// happened is marked (and run again once):
//   - hbgraph's store is compacted into one level at the end of the import
//     and the runs only read, so Pebble has nothing to flush or compact;
//     the periodic purge of delete markers first runs half the horizon
//     (at most an hour) after the start, later than any run here. That
//     nothing ran is checked: the set of the store's files (.sst) is the
//     same before and after the run.
//   - PostgreSQL: load.sh ends with VACUUM ANALYZE and the runs only read,
//     so autovacuum has nothing to do, but catalogue churn of the load may
//     still wake it. Before each run the bench waits until no autovacuum
//     worker runs, and checks after it that none runs and that no table's
//     vacuum or analyze count moved (pg_stat_all_tables).

// storeFiles lists the .sst files of an embedded store's data directory:
// a flush or compaction changes the list.
func storeFiles(dataDir string) (string, error) {
	names, err := filepath.Glob(filepath.Join(dataDir, "*.sst"))
	if err != nil {
		return "", err
	}
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	slices.Sort(names)
	return strings.Join(names, " "), nil
}

// postgresActivity is a PostgreSQL cluster's background work: how many
// autovacuum workers run, and the sum of every table's vacuum and analyze
// counts. It asks as the postgres OS user over the cluster's socket.
func postgresActivity(ctx context.Context, socketDir string, port int) (workers int, counts string, err error) {
	out, err := psql(ctx, socketDir, port, `SELECT (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'),
	  (SELECT coalesce(sum(vacuum_count + autovacuum_count + analyze_count + autoanalyze_count), 0) FROM pg_stat_all_tables)`)
	if err != nil {
		return 0, "", fmt.Errorf("asking PostgreSQL for autovacuum: %w", err)
	}
	f := strings.Fields(out)
	if len(f) != 2 {
		return 0, "", fmt.Errorf("asking PostgreSQL for autovacuum: unexpected answer %q", out)
	}
	workers, _ = strconv.Atoi(f[0])
	return workers, f[1], nil
}

// psql runs one query on the peers' database as the postgres OS user
// over the cluster's socket, and returns its unaligned output.
func psql(ctx context.Context, socketDir string, port int, query string) (string, error) {
	out, err := exec.CommandContext(ctx, "runuser", "-u", "postgres", "--", "psql", "-X", "-At", "-F", " ",
		"-h", socketDir, "-p", strconv.Itoa(port), "-d", "graph", "-c", query).Output()
	return string(out), err
}

// rssBytes is a process's resident set (VmRSS), 0 when unknown.
func rssBytes(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
