package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Limits on the configuration.
const (
	maxConcurrency = 10_000
	maxVarsLine    = 1 << 20 // bytes in one line of a vars file
)

// config is one load run. Build it, then validate it (load does).
type config struct {
	url   string
	query string
	// vars are the variables objects used round-robin; none sends no
	// variables.
	vars        []json.RawMessage
	concurrency int
	duration    time.Duration // measured, after the warm-up
	warmup      time.Duration
	timeout     time.Duration // per request
	name        string
}

func (c config) validate() error {
	if err := checkLoopbackURL(c.url); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(c.query) == "":
		return errors.New("the query is empty")
	case c.concurrency < 1 || c.concurrency > maxConcurrency:
		return fmt.Errorf("-concurrency must be 1-%d, not %d", maxConcurrency, c.concurrency)
	case c.duration <= 0:
		return fmt.Errorf("-duration must be positive, not %s", c.duration)
	case c.warmup < 0:
		return fmt.Errorf("-warmup must not be negative, not %s", c.warmup)
	case c.timeout <= 0:
		return fmt.Errorf("-timeout must be positive, not %s", c.timeout)
	}
	return nil
}

// errNotLoopback is returned for a URL, or a dialed address, that is not
// on a loopback interface.
var errNotLoopback = errors.New("not a loopback address (127.0.0.0/8, ::1, localhost)")

// checkLoopbackURL reports whether raw is an http or https URL whose host
// is localhost or a loopback IP address.
func checkLoopbackURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("-url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("-url %q: scheme must be http or https", raw)
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Unmap().IsLoopback() {
		return nil
	}
	return fmt.Errorf("-url %q: host %q: %w", raw, host, errNotLoopback)
}

// checkLoopbackDial is a net.Dialer Control func that refuses to connect
// to an address that is not loopback, whatever the host name resolved to.
func checkLoopbackDial(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s %s: %w", network, address, err)
	}
	if !ap.Addr().Unmap().IsLoopback() {
		return fmt.Errorf("dial %s %s: %w", network, address, errNotLoopback)
	}
	return nil
}

// readVars reads JSON Lines of variables objects; blank lines are skipped.
// It fails on a line that is not one JSON object, or if there are none.
func readVars(r io.Reader) ([]json.RawMessage, error) {
	var out []json.RawMessage
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxVarsLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(line, &obj); err != nil || obj == nil {
			return nil, fmt.Errorf("line %d: want one JSON object: %s", n, line)
		}
		out = append(out, json.RawMessage(bytes.Clone(line)))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no variables objects")
	}
	return out, nil
}

// outcome classifies one request.
type outcome int

const (
	outcomeOK outcome = iota
	outcomeTransport
	outcomeTimeout
	outcomeStatus
	outcomeGraphQL
	outcomeDecode
	numOutcomes
)

// load runs cfg until its warm-up and duration have passed, or ctx is
// done, and returns what was measured. It returns an error only for a bad
// configuration; failed requests are counted, not returned. Everything it
// starts has stopped when it returns.
func load(ctx context.Context, cfg config) (result, error) {
	if err := cfg.validate(); err != nil {
		return result{}, err
	}
	bodies, err := requestBodies(cfg.query, cfg.vars)
	if err != nil {
		return result{}, err
	}
	target, err := parseTarget(cfg.url)
	if err != nil {
		return result{}, err
	}

	measureStart := time.Now().Add(cfg.warmup)
	end := measureStart.Add(cfg.duration)
	ctx, cancel := context.WithDeadline(ctx, end)
	defer cancel()

	var next atomic.Uint64 // round-robin index into bodies
	tallies := make([]tally, cfg.concurrency)
	var wg sync.WaitGroup
	for i := range tallies {
		w := newWorker(target, cfg.timeout)
		wg.Go(func() {
			for ctx.Err() == nil {
				body := bodies[(next.Add(1)-1)%uint64(len(bodies))]
				sent := time.Now()
				o := w.do(ctx, body)
				took := time.Since(sent)
				// A request cut off by the end of the run, or one that
				// started during the warm-up, does not count. The
				// connection's deadline can pass before ctx's timer has
				// fired, hence the clock.
				if ctx.Err() != nil || !time.Now().Before(end) || sent.Before(measureStart) {
					continue
				}
				tallies[i].add(o, took)
			}
			w.close()
		})
	}
	wg.Wait()

	// The window is shorter than cfg.duration if ctx was cancelled early.
	measured := min(time.Since(measureStart), cfg.duration)
	return summarize(cfg, max(measured, 0), tallies), nil
}

// requestBodies encodes one request body per variables object.
func requestBodies(query string, vars []json.RawMessage) ([][]byte, error) {
	type request struct {
		Query     string          `json:"query"`
		Variables json.RawMessage `json:"variables,omitempty"`
	}
	if len(vars) == 0 {
		vars = []json.RawMessage{nil}
	}
	bodies := make([][]byte, len(vars))
	for i, v := range vars {
		b, err := json.Marshal(request{Query: query, Variables: v})
		if err != nil {
			return nil, fmt.Errorf("variables %d: %w", i+1, err)
		}
		bodies[i] = b
	}
	return bodies, nil
}

// failed classifies the error of a call made with ctx.
func failed(ctx context.Context, err error) outcome {
	var ne net.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return outcomeTimeout
	}
	return outcomeTransport
}

// tally is one worker's counts and the latencies of its ok requests.
type tally struct {
	counts    [numOutcomes]int
	latencies []time.Duration
}

func (t *tally) add(o outcome, took time.Duration) {
	t.counts[o]++
	if o == outcomeOK {
		t.latencies = append(t.latencies, took)
	}
}
