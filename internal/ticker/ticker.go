// Package ticker runs a report at a fixed interval until it is stopped,
// and once more at the end: the progress lines of import and export.
package ticker

import (
	"sync"
	"time"
)

// Every calls report(false) every interval on a goroutine of its own, and
// report(true) once when the returned stop is called; stop returns after
// that last report, so what it prints comes before what follows.
func Every(interval time.Duration, report func(final bool)) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				report(true)
				return
			case <-tick.C:
				report(false)
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
