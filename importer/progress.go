package importer

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/hbgraph/hbgraph/internal/ticker"
)

// etaWindow is how far back the time left looks for its rate: long enough
// to smooth the batches' completions, short enough to follow a change of
// pace, as on a rerun, where the lines imported before are skipped fast
// and the rest import at the usual rate.
const etaWindow = 30 * time.Second

// sample is the bytes done and the rows settled at a time since the
// start.
type sample struct {
	at         time.Duration
	done, rows int64
}

// estimator tells the time left to import a file of size bytes from the
// bytes whose lines are imported (not read: the reader runs ahead of the
// workers by the batches queued, so bytes read reach the file's size long
// before the end), at the rate of the last etaWindow.
type estimator struct {
	size    int64
	samples []sample // oldest first: one at or before the window's start, then those in it
}

func newEstimator(size int64) *estimator {
	return &estimator{size: size, samples: []sample{{}}}
}

// add records that done bytes were done, and rows settled, at at.
func (e *estimator) add(at time.Duration, done, rows int64) {
	e.samples = append(e.samples, sample{at, done, rows})
	for len(e.samples) > 2 && e.samples[1].at <= at-etaWindow {
		e.samples = e.samples[1:]
	}
}

// left is the time left at the window's rate; ok is false while the
// window saw no progress (nothing to estimate from).
func (e *estimator) left() (left time.Duration, ok bool) {
	first, last := e.samples[0], e.samples[len(e.samples)-1]
	if last.done >= e.size {
		return 0, true
	}
	if last.done <= first.done || last.at <= first.at {
		return 0, false
	}
	rate := float64(last.done-first.done) / float64(last.at-first.at) // bytes per ns
	return time.Duration(float64(e.size-last.done) / rate), true
}

// rate is rows a second over the window: the pace the time left assumes
// (the average since the start overstates it on a rerun, whose skipped
// rows go fast, and as a large import slows with its store's size).
func (e *estimator) rate() float64 {
	first, last := e.samples[0], e.samples[len(e.samples)-1]
	if last.at <= first.at {
		return 0
	}
	return float64(last.rows-first.rows) / (last.at - first.at).Seconds()
}

// formatLeft is left for the progress line: "?" when unknown, whole
// seconds rounded up (0s only when nothing is left).
func formatLeft(left time.Duration, ok bool) string {
	if !ok {
		return "?"
	}
	return ceilSecond(left).String()
}

func ceilSecond(d time.Duration) time.Duration {
	return (d + time.Second - 1).Truncate(time.Second)
}

// donePercent is the share of size that done is, rounded down (100 only
// when all is done).
func donePercent(done, size int64) float64 {
	if size <= 0 || done >= size {
		return 100
	}
	return math.Floor(1000*float64(done)/float64(size)) / 10
}

// progress reports an import's progress until the returned func is
// called: rows, rate, the share of the file done and the time left.
func progress(kind string, size int64, done, imported, skipped, failed *atomic.Int64, start time.Time, opts Options) func() {
	every := opts.LogEvery
	if opts.Progress != nil {
		every = 250 * time.Millisecond
	}
	est := newEstimator(size)
	report := func(final bool) {
		rows := imported.Load() + skipped.Load()
		elapsed := time.Since(start)
		d := done.Load()
		est.add(elapsed, d, rows)
		left, ok := est.left()
		rate := est.rate() // the window's pace; the last line's is the whole file's
		if final {
			rate = float64(rows) / max(elapsed.Seconds(), 1e-9)
		}
		if opts.Progress != nil {
			end := ""
			if final {
				end = "\n"
			}
			fmt.Fprintf(opts.Progress, "\r%-13s %10d rows %8.0f rows/s %5.1f%% left %-8s failed %d  %s",
				kind, rows, rate, donePercent(d, size), formatLeft(left, ok), failed.Load(), end)
			return
		}
		ev := opts.Log.Info().Str("kind", kind).Int64("rows", rows).Int64("failed", failed.Load()).
			Float64("rows_per_s", rate).Float64("done_percent", donePercent(d, size))
		if ok {
			ev = ev.Float64("eta_s", ceilSecond(left).Seconds())
		}
		ev.Msg("importing")
	}
	return ticker.Every(every, report)
}
