package store

// rpcTrace is a gohbase.Client for the replica simulation's -sim.rpcs: it
// sits between the fault injector and the engine, so it sees every call the
// engine applies (a re-send twice, a call failed before applying never),
// and keeps each with its op, request and answer, to be written out when a
// seed fails. A concurrent run's failures do not come back with their
// seed; the trace is how one is read.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

type rpcTrace struct {
	inner gohbase.Client
	*rpcLog
	// faults: this one sits above the fault injector, and keeps only the
	// calls answered with an error (the injected faults, with their mode).
	faults bool
}

// rpcLog is what the traces above and below the injector keep, in one
// sequence.
type rpcLog struct {
	seq   atomic.Int64
	mu    sync.Mutex
	lines []string
}

var _ gohbase.Client = (*rpcTrace)(nil)

func (t *rpcTrace) add(start int64, call hrpc.Call, answer string) {
	if t.faults && !strings.Contains(answer, "hbasefault") {
		return
	}
	end := t.seq.Add(1)
	op := "-"
	if o, ok := OpFrom(call.Context()); ok {
		op = o.String()[:8]
	}
	req := requestOf(call)
	where := ""
	if t.faults {
		where = "FAULT "
	}
	line := fmt.Sprintf("[%d,%d] %sop %s %s %s %q\n    req %s\n    ans %s", start, end, where, op, call.Description(),
		call.Table(), call.Key(), req, answer)
	t.mu.Lock()
	t.lines = append(t.lines, line)
	t.mu.Unlock()
}

func (t *rpcTrace) write(w io.Writer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, l := range t.lines {
		fmt.Fprintln(w, l)
	}
}

// requestOf is the call's request, or "?" for one no region was found for
// (a call failed before it reached the engine has none: ToProto panics).
func requestOf(call hrpc.Call) (req string) {
	defer func() {
		if recover() != nil {
			req = "?"
		}
	}()
	return compactProto(call.ToProto())
}

func compactProto(m proto.Message) string {
	s := prototext.MarshalOptions{}.Format(m)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return s
}

func describeCells(r *hrpc.Result) string {
	if r == nil {
		return "nil"
	}
	var b strings.Builder
	for _, hc := range r.Cells {
		c := (*pb.Cell)(hc)
		v := c.Value
		if len(v) > 24 {
			v = v[:24]
		}
		fmt.Fprintf(&b, " %q/%s:%q@%d", c.Row, c.Family, c.Qualifier, c.GetTimestamp())
		if c.GetCellType() != pb.CellType_PUT {
			fmt.Fprintf(&b, "(%s)", c.GetCellType())
		} else {
			fmt.Fprintf(&b, "=%q", v)
		}
	}
	return fmt.Sprintf("%d cells%s", len(r.Cells), b.String())
}

func (t *rpcTrace) result(call hrpc.Call, f func() (*hrpc.Result, error)) (*hrpc.Result, error) {
	start := t.seq.Add(1)
	r, err := f()
	t.add(start, call, fmt.Sprintf("err=%v %s", err, describeCells(r)))
	return r, err
}

func (t *rpcTrace) Get(g *hrpc.Get) (*hrpc.Result, error) {
	return t.result(g, func() (*hrpc.Result, error) { return t.inner.Get(g) })
}
func (t *rpcTrace) Put(p *hrpc.Mutate) (*hrpc.Result, error) {
	return t.result(p, func() (*hrpc.Result, error) { return t.inner.Put(p) })
}
func (t *rpcTrace) Delete(d *hrpc.Mutate) (*hrpc.Result, error) {
	return t.result(d, func() (*hrpc.Result, error) { return t.inner.Delete(d) })
}
func (t *rpcTrace) Append(a *hrpc.Mutate) (*hrpc.Result, error) {
	return t.result(a, func() (*hrpc.Result, error) { return t.inner.Append(a) })
}

func (t *rpcTrace) Increment(i *hrpc.Mutate) (int64, error) {
	start := t.seq.Add(1)
	n, err := t.inner.Increment(i)
	t.add(start, i, fmt.Sprintf("err=%v n=%d", err, n))
	return n, err
}

func (t *rpcTrace) CheckAndPut(p *hrpc.Mutate, family, qualifier string, expected []byte) (bool, error) {
	start := t.seq.Add(1)
	ok, err := t.inner.CheckAndPut(p, family, qualifier, expected)
	t.add(start, p, fmt.Sprintf("err=%v ok=%v (if %s:%s=%q)", err, ok, family, qualifier, expected))
	return ok, err
}

func (t *rpcTrace) CheckAndPutWithCompareType(p *hrpc.Mutate, family, qualifier string, expected []byte, ct pb.CompareType) (bool, error) {
	start := t.seq.Add(1)
	ok, err := t.inner.CheckAndPutWithCompareType(p, family, qualifier, expected, ct)
	t.add(start, p, fmt.Sprintf("err=%v ok=%v (if %s:%s %s %q)", err, ok, family, qualifier, ct, expected))
	return ok, err
}

func (t *rpcTrace) CheckAndMutate(cam *hrpc.CheckAndMutate) (bool, error) {
	start := t.seq.Add(1)
	ok, err := t.inner.CheckAndMutate(cam)
	t.add(start, cam, fmt.Sprintf("err=%v ok=%v", err, ok))
	return ok, err
}

func (t *rpcTrace) SendRPC(call hrpc.Call) (proto.Message, error) {
	start := t.seq.Add(1)
	m, err := t.inner.(gohbase.RPCClient).SendRPC(call)
	ans := "nil"
	if m != nil {
		ans = compactProto(m)
	}
	t.add(start, call, fmt.Sprintf("err=%v %s", err, ans))
	return m, err
}

func (t *rpcTrace) SendBatch(ctx context.Context, batch []hrpc.Call) ([]hrpc.RPCResult, bool) {
	start := t.seq.Add(1)
	res, ok := t.inner.SendBatch(ctx, batch)
	for i, call := range batch {
		ans := "no result"
		if i < len(res) {
			ans = fmt.Sprintf("err=%v", res[i].Error)
			if r, isResult := res[i].Msg.(*pb.GetResponse); isResult && r != nil {
				ans += " " + describeCells(hrpc.ToLocalResult(r.Result))
			} else if res[i].Msg != nil {
				ans += " " + compactProto(res[i].Msg)
			}
		}
		t.add(start, call, "batch: "+ans)
	}
	return res, ok
}

func (t *rpcTrace) Scan(s *hrpc.Scan) hrpc.Scanner {
	return &tracedScanner{t: t, s: s, start: t.seq.Add(1), inner: t.inner.Scan(s)}
}

func (t *rpcTrace) ScanV2(s *hrpc.Scan) hrpc.ScannerV2 { return t.inner.ScanV2(s) }

func (t *rpcTrace) CacheRegions(table []byte) error { return t.inner.CacheRegions(table) }
func (t *rpcTrace) Close()                          { t.inner.Close() }

type tracedScanner struct {
	t     *rpcTrace
	s     *hrpc.Scan
	start int64
	inner hrpc.Scanner
	rows  []string
	err   error
}

func (s *tracedScanner) Next() (*hrpc.Result, error) {
	r, err := s.inner.Next()
	switch {
	case err == nil:
		s.rows = append(s.rows, describeCells(r))
	case err != io.EOF && s.err == nil:
		s.err = err
	}
	return r, err
}

func (s *tracedScanner) Close() error {
	err := s.inner.Close()
	s.t.add(s.start, s.s, fmt.Sprintf("err=%v %d rows:\n      %s", s.err, len(s.rows), strings.Join(s.rows, "\n      ")))
	return err
}

func (s *tracedScanner) GetScanMetrics() map[string]int64 { return s.inner.GetScanMetrics() }

// writeTrace writes the seed's operations, by op, and then every RPC.
func (sim *simulation) writeTrace(t *rpcTrace) {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("hbgraph-sim-%d-rpcs.txt", sim.seed))
	f, err := os.Create(path)
	if err != nil {
		sim.t.Errorf("rpc trace: %v", err)
		return
	}
	defer f.Close()
	for _, o := range sim.ops {
		fmt.Fprintf(f, "op %s [%d, %d] client %d replica %d: %s -> %s (%d attempts) %s\n", o.op.String()[:8],
			o.call, o.ret, o.client, o.replica, o.describe(), answerName(o.err), o.attempts, o.article)
	}
	fmt.Fprintln(f)
	t.write(f)
	sim.t.Logf("seed %d: every RPC in %s", sim.seed, path)
}
