// Package explain records what one GraphQL request asked of the store, the
// way seed 003 lists the HBase operations under each statement: every call
// (Get, batch of Gets, Scan, mutation) grouped into round-trip waves. The
// server logs the counts of every request and, when asked, returns the full
// list in the response's extensions.
package explain

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hbgraph/hbgraph/store"
)

// Request is one HTTP request's record. Its methods may be called from the
// request's resolver goroutines concurrently.
type Request struct {
	ID string

	// mu guards the fields below.
	mu        sync.Mutex
	operation string
	subject   string
	codes     []string
	calls     []store.Call
	// first holds the first calls, in the Request's own allocation: most
	// requests make a few; grown from one at a time, the list of a query
	// of tens of calls was allocated six times.
	first [4]store.Call
	// refusedCode and refusedReason say why the edge (authentication,
	// rate limits) refused the request before GraphQL saw it.
	refusedCode, refusedReason string
}

// NewRequest starts the record of request id.
func NewRequest(id string) *Request { return &Request{ID: id} }

// StoreCall implements store.Tracer.
func (r *Request) StoreCall(c store.Call) {
	r.mu.Lock()
	if r.calls == nil {
		r.calls = r.first[:0]
	}
	r.calls = append(r.calls, c)
	r.mu.Unlock()
}

// SetOutcome records the operation's name and its errors' codes.
func (r *Request) SetOutcome(operation string, codes []string) {
	r.mu.Lock()
	r.operation, r.codes = operation, codes
	r.mu.Unlock()
}

// SetSubject records the caller's token subject (empty: anonymous, or
// authentication off).
func (r *Request) SetSubject(subject string) {
	r.mu.Lock()
	r.subject = subject
	r.mu.Unlock()
}

// Subject returns what SetSubject recorded.
func (r *Request) Subject() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.subject
}

// SetRefused records that the edge refused the request with code, for
// reason (a fixed word, never a token or a client's value).
func (r *Request) SetRefused(code, reason string) {
	r.mu.Lock()
	r.refusedCode, r.refusedReason = code, reason
	r.mu.Unlock()
}

// Refused returns what SetRefused recorded.
func (r *Request) Refused() (code, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refusedCode, r.refusedReason
}

// Outcome returns what SetOutcome recorded.
func (r *Request) Outcome() (operation string, codes []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.operation, slices.Clone(r.codes)
}

// Counts returns the number of store calls and of waves, as Waves groups
// them, without building the groups: it runs for every request (the log
// line, the metrics), where Waves runs only for explain.
func (r *Request) Counts() (calls, waves int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	type unit struct {
		round      int
		start, end time.Time
	}
	var buf [16]unit
	units := buf[:0]
	for _, c := range r.calls {
		end := c.Start.Add(c.Duration)
		i := -1
		if c.Round != 0 {
			i = slices.IndexFunc(units, func(u unit) bool { return u.round == c.Round })
		}
		if i < 0 {
			units = append(units, unit{round: c.Round, start: c.Start, end: end})
			continue
		}
		if c.Start.Before(units[i].start) {
			units[i].start = c.Start
		}
		if end.After(units[i].end) {
			units[i].end = end
		}
	}
	slices.SortStableFunc(units, func(a, b unit) int { return a.start.Compare(b.start) })
	var last time.Time
	for _, u := range units {
		if waves == 0 || !u.start.Before(last) {
			waves++
		}
		if u.end.After(last) {
			last = u.end
		}
	}
	return len(r.calls), waves
}

// Waves groups the calls into round-trip waves, the round trips a client
// waited for one after another. Calls its caller sent together (one
// dispatch round, store.Call.Round) form one unit; other calls are units of
// their own. A wave is a set of units that overlapped in time, and a new
// wave starts with the first unit that began after every earlier one had
// ended. (Rounds matter because two calls sent together can still run one
// after the other: a call to the embedded engine takes about as long as
// starting a goroutine.)
func (r *Request) Waves() [][]store.Call {
	r.mu.Lock()
	calls := slices.Clone(r.calls)
	r.mu.Unlock()
	type unit struct {
		start, end time.Time
		calls      []store.Call
	}
	var units []*unit
	byRound := map[int]*unit{}
	for _, c := range calls {
		end := c.Start.Add(c.Duration)
		u := byRound[c.Round]
		if c.Round == 0 || u == nil {
			u = &unit{start: c.Start, end: end}
			units = append(units, u)
			if c.Round != 0 {
				byRound[c.Round] = u
			}
		}
		u.calls = append(u.calls, c)
		if c.Start.Before(u.start) {
			u.start = c.Start
		}
		if end.After(u.end) {
			u.end = end
		}
	}
	slices.SortStableFunc(units, func(a, b *unit) int { return a.start.Compare(b.start) })
	var waves [][]store.Call
	var end time.Time
	for _, u := range units {
		if len(waves) == 0 || !u.start.Before(end) {
			waves = append(waves, nil)
		}
		waves[len(waves)-1] = append(waves[len(waves)-1], u.calls...)
		if u.end.After(end) {
			end = u.end
		}
	}
	return waves
}

// Report is the explain output: waves of calls, rows as escaped text.
type Report struct {
	Calls int          `json:"calls"`
	Waves []WaveReport `json:"waves"`
}

// WaveReport lists the calls of one wave.
type WaveReport struct {
	Wave  int          `json:"wave"`
	Calls []CallReport `json:"calls"`
}

// CallReport is one store call. Row keys (Rows, StartRow, StopRow) and the
// store's error are shown to admins only: keys hold ids and hashes, and an
// error may name a row; others get the tables and counts (Keys).
type CallReport struct {
	Op          string   `json:"op"`
	Table       string   `json:"table"`
	Rows        []string `json:"rows,omitempty"`
	Keys        int      `json:"keys,omitempty"` // rows a Get or Batch asked for`
	StartRow    *string  `json:"startRow,omitempty"`
	StopRow     *string  `json:"stopRow,omitempty"`
	Reversed    bool     `json:"reversed,omitempty"`
	RowsRead    int      `json:"rowsRead"`
	CellsRead   int      `json:"cellsRead"`
	BytesRead   int      `json:"bytesRead"`
	Round       int      `json:"round,omitempty"`
	StartMicros int64    `json:"startMicros"`
	Micros      int64    `json:"micros"`
	Error       string   `json:"error,omitempty"`
}

// Report builds the explain output, with the row keys and the store's
// errors when withKeys (the caller is an admin).
func (r *Request) Report(withKeys bool) Report {
	var rep Report
	var t0 time.Time
	for i, wave := range r.Waves() {
		if i == 0 && len(wave) > 0 {
			t0 = wave[0].Start
		}
		wr := WaveReport{Wave: i + 1}
		for _, c := range wave {
			cr := CallReport{Op: c.Op, Table: c.Table, RowsRead: c.RowsRead, CellsRead: c.CellsRead, BytesRead: c.BytesRead, Reversed: c.Reversed,
				Micros: c.Duration.Microseconds(), StartMicros: c.Start.Sub(t0).Microseconds(), Round: c.Round}
			cr.Keys = len(c.Rows)
			switch {
			case !withKeys:
				if c.Err != nil {
					cr.Error = "failed"
				}
			default:
				for _, row := range c.Rows {
					cr.Rows = append(cr.Rows, escape(row))
				}
				if c.Op == "Scan" {
					start, stop := escape(c.StartRow), escape(c.StopRow)
					cr.StartRow, cr.StopRow = &start, &stop
				}
				if c.Err != nil {
					cr.Error = c.Err.Error()
				}
			}
			wr.Calls = append(wr.Calls, cr)
			rep.Calls++
		}
		rep.Waves = append(rep.Waves, wr)
	}
	return rep
}

// escape prints a row key as text, bytes outside printable ASCII as \xNN.
func escape(b []byte) string {
	q := strconv.QuoteToASCII(string(b))
	return q[1 : len(q)-1]
}

type ctxKey struct{}

// With returns ctx carrying r, both for From and as the store's Tracer.
func With(ctx context.Context, r *Request) context.Context {
	return store.WithTracer(context.WithValue(ctx, ctxKey{}, r), r)
}

// From returns the request record in ctx, or nil.
func From(ctx context.Context) *Request {
	r, _ := ctx.Value(ctxKey{}).(*Request)
	return r
}
