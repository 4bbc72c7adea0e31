package importer

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestTimeLeft: the time left comes from the bytes imported at the rate of
// the last etaWindow; unknown until a byte is done, 0 when all are.
func TestTimeLeft(t *testing.T) {
	type step struct {
		at   time.Duration
		done int64
	}
	for _, tc := range []struct {
		name   string
		size   int64
		steps  []step
		want   time.Duration
		wantOK bool
	}{
		{"nothing done yet", 1000, []step{{time.Second, 0}, {2 * time.Second, 0}}, 0, false},
		{"steady", 1000, []step{{5 * time.Second, 125}, {10 * time.Second, 250}}, 30 * time.Second, true},
		// A rerun skips what the last run imported fast, then slows to
		// the import's pace: the average since the start would say 2.5 s.
		{"skipped fast, then slow", 1000, []step{{time.Second, 900}, {31 * time.Second, 930}, {61 * time.Second, 960}},
			40 * time.Second, true},
		{"stalled for a window", 1000, []step{{time.Second, 500}, {40 * time.Second, 500}, {75 * time.Second, 500}}, 0, false},
		{"all done", 1000, []step{{time.Second, 1000}}, 0, true},
		{"empty file", 0, nil, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEstimator(tc.size)
			for _, s := range tc.steps {
				e.add(s.at, s.done, 0)
			}
			got, ok := e.left()
			if ok != tc.wantOK || got.Round(time.Millisecond) != tc.want {
				t.Fatalf("left %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// TestProgressFormat: the line says 0s and 100% only when all is done.
func TestProgressFormat(t *testing.T) {
	for _, tc := range []struct {
		left time.Duration
		ok   bool
		want string
	}{
		{0, false, "?"}, {0, true, "0s"}, {time.Millisecond, true, "1s"}, {1500 * time.Millisecond, true, "2s"},
		{time.Minute, true, "1m0s"},
	} {
		if got := formatLeft(tc.left, tc.ok); got != tc.want {
			t.Errorf("formatLeft(%v, %v) = %q, want %q", tc.left, tc.ok, got, tc.want)
		}
	}
	for _, tc := range []struct {
		done, size int64
		want       float64
	}{{0, 10, 0}, {9999, 10000, 99.9}, {10000, 10000, 100}, {0, 0, 100}} {
		if got := donePercent(tc.done, tc.size); got != tc.want {
			t.Errorf("donePercent(%d, %d) = %v, want %v", tc.done, tc.size, got, tc.want)
		}
	}
}

// syncWriter is a bytes.Buffer for the progress goroutine and the test.
type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestProgressDoesNotSayDoneBeforeItIs: the reader reads a small file
// whole into the workers' queue at once; while its lines are still being
// imported, the progress line must not say that no time is left (it said
// 0s, from the bytes read).
func TestProgressDoesNotSayDoneBeforeItIs(t *testing.T) {
	lines := make([]string, 80)
	for i := range lines {
		lines[i] = fmt.Sprintf(`{"n":%d}`, i)
	}
	path := write(t, t.TempDir(), "lines.jsonl", lines...)
	slow := func(ctx context.Context, batch [][]byte) []outcome {
		time.Sleep(time.Second)
		out := make([]outcome, len(batch))
		for i := range out {
			out[i].ok = true
		}
		return out
	}
	var w syncWriter
	r, err := importFile(context.Background(), "lines", path, slow, 10, nil, Options{Workers: 8, Log: zerolog.Nop(), Progress: &w})
	if err != nil || r.Imported != 80 {
		t.Fatalf("%+v, %v", r, err)
	}
	report := regexp.MustCompile(`(\d+) rows .*?(\d+\.\d)% (?:left|ETA) (\S+)`)
	reports := strings.Split(w.String(), "\r")
	var before int
	for _, line := range reports {
		m := report.FindStringSubmatch(line)
		if m == nil || m[1] == "80" {
			continue
		}
		before++
		if m[2] == "100.0" || m[3] == "0s" {
			t.Errorf("%q: %s of 80 rows imported, but %s%% done and %s left", line, m[1], m[2], m[3])
		}
	}
	if before == 0 {
		t.Fatalf("no progress line before the end: %q", reports)
	}
	if last := reports[len(reports)-1]; !strings.Contains(last, "100.0% left 0s") {
		t.Errorf("the last progress line %q does not say it is done", last)
	}
}

// TestRunSaysWhatFollowsTheFiles: the last file's progress says 0s left,
// and the home feeds are written after it (a minute at 100,000 nodes): the
// log says so when that starts, after the last progress line.
func TestRunSaysWhatFollowsTheFiles(t *testing.T) {
	st := newStore(t)
	dir := t.TempDir()
	files := Files{
		Nodes: write(t, dir, "nodes.jsonl", `{"id":"n1","created_at":1000}`, `{"id":"n2","created_at":1000}`),
		Relationships: write(t, dir, "rels.jsonl",
			`{"start_node_id":"n2","type":"follow","end_node_id":"n1","created_at":3000}`),
		Articles: write(t, dir, "articles.jsonl",
			`{"id":1,"author_id":"n1","title":"t","body":"b","category":"c","posted_at":4000}`),
	}
	var log syncWriter
	if _, err := Run(context.Background(), st, files, Options{Log: zerolog.New(&log), LogEvery: time.Hour}); err != nil {
		t.Fatal(err)
	}
	lastProgress, feeds := lastLogLine(&log, `"message":"importing"`), lastLogLine(&log, "writing the home feeds")
	if feeds < 0 || feeds < lastProgress {
		t.Fatalf("the home feeds are not announced after the files' progress:\n%s", log.String())
	}
}

// TestRunCompactsBeforeTheFeeds: on the embedded engine, once articles
// are in, the store is compacted before their home feeds are written (the
// fan-outs would otherwise read through a bulk load's L0); an import with
// no article leaves that to its caller's compaction at the end.
func TestRunCompactsBeforeTheFeeds(t *testing.T) {
	for _, tc := range []struct {
		name        string
		articles    bool
		wantCompact bool
	}{
		{"with articles", true, true},
		{"without articles", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := Files{Nodes: write(t, dir, "nodes.jsonl", `{"id":"n1","created_at":1000}`)}
			if tc.articles {
				files.Articles = write(t, dir, "articles.jsonl",
					`{"id":1,"author_id":"n1","title":"t","body":"b","category":"c","posted_at":4000}`)
			}
			var log syncWriter
			if _, err := Run(context.Background(), newStore(t), files, Options{Log: zerolog.New(&log), LogEvery: time.Hour}); err != nil {
				t.Fatal(err)
			}
			compacted, feeds := lastLogLine(&log, "store compacted before the home feeds"), lastLogLine(&log, "writing the home feeds")
			ok := compacted < 0 // not at all
			if tc.wantCompact {
				ok = compacted >= 0 && compacted < feeds
			}
			if !ok {
				t.Fatalf("compacted (log line %d) before the home feeds (line %d): want %v:\n%s", compacted, feeds, tc.wantCompact, log.String())
			}
		})
	}
}

// lastLogLine is the index of the last line of log that contains text,
// or -1.
func lastLogLine(log *syncWriter, text string) int {
	last := -1
	for i, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		if strings.Contains(l, text) {
			last = i
		}
	}
	return last
}

// TestRateIsTheWindowsPace: the rate is the rows of the last etaWindow a
// second, the pace the time left assumes: a rerun that skipped 9,000 rows
// in a second and then imports 10 a second says 10, not the average since
// the start (151 after a minute).
func TestRateIsTheWindowsPace(t *testing.T) {
	e := newEstimator(10000)
	e.add(time.Second, 9000, 9000)
	e.add(31*time.Second, 9300, 9300)
	e.add(61*time.Second, 9600, 9600)
	if got := e.rate(); got != 10 {
		t.Fatalf("rate %v, want 10", got)
	}
	if got := newEstimator(10).rate(); got != 0 {
		t.Fatalf("rate before any sample %v, want 0", got)
	}
}
