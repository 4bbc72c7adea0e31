package loaders

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"go.uber.org/goleak"

	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/store"
)

var errInjected = errors.New("injected fault")

// faultyClient fails every Get of a SendBatch whose row contains fail.
type faultyClient struct {
	gohbase.Client
	fail []byte
}

func (c faultyClient) SendBatch(ctx context.Context, batch []hrpc.Call) ([]hrpc.RPCResult, bool) {
	for _, call := range batch {
		if len(c.fail) > 0 && bytes.Contains(call.Key(), c.fail) {
			res := make([]hrpc.RPCResult, len(batch))
			for i := range res {
				res[i].Error = errInjected
			}
			return res, false
		}
	}
	return c.Client.SendBatch(ctx, batch)
}

// fetchGraph is a store where n1 follows n2..n4, n2 and n3 wrote two
// articles each, and reads of n5's row fail.
func fetchGraph(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.New(faultyClient{Client: memstore.Engine(t), fail: []byte("n5")}, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("n%d", i)
		if _, err := st.CreateNode(ctx, id, "", store.Properties{"i": i}); err != nil {
			t.Fatal(err)
		}
		if i > 1 {
			if _, err := st.CreateRelationship(ctx, store.RelationshipKey{Start: "n1", Type: "follows", End: id}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if i == 2 || i == 3 {
			for a := range 2 {
				if _, err := st.PostArticle(ctx, id, fmt.Sprintf("post %d", a), "body", "tech"); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return st
}

// fkey is one key of a wave in the table below: a node row ("n2"), a
// relationship row ("rel n1 n2"), a page of relationships ("adj n1") or
// of articles ("art n2"); a "!" suffix makes the page's cursor forged.
type fkey string

func (k fkey) add(t *testing.T, w *Wave) int {
	f := strings.Fields(strings.TrimSuffix(string(k), "!"))
	page := store.PageRequest{Size: 10}
	if strings.HasSuffix(string(k), "!") {
		page.Cursor = "forged"
	}
	switch {
	case len(f) == 1:
		g, err := store.NodeGet(f[0])
		if err != nil {
			t.Fatal(err)
		}
		return w.Get(g)
	case f[0] == "rel":
		g, start, end, err := store.RelationshipKey{Start: f[1], Type: "follows", End: f[2]}.Gets()
		if err != nil {
			t.Fatal(err)
		}
		i := w.Get(g)
		w.Get(start)
		w.Get(end)
		return i
	case f[0] == "adj":
		return w.Adjacency(AdjacencyKey{Node: f[1], Type: "follows", Dir: store.Outgoing, Page: page})
	case f[0] == "art":
		return w.Articles(ArticlesKey{Author: f[1], Page: page})
	}
	t.Fatalf("bad key %q", k)
	return 0
}

// answer describes what the wave holds for k: "node n2", "none", "rel",
// "3 rels", "2 articles", or "error: ..." with the error's text.
func (k fkey) answer(w *Wave, i int) string {
	f := strings.Fields(string(k))
	var err error
	var got string
	switch {
	case len(f) == 1:
		var row store.Row
		if row, err = w.Row(i); err == nil {
			var n *store.Node
			if n, err = row.Node(f[0]); n != nil {
				got = "node " + n.ID
			} else {
				got = "none"
			}
		}
	case f[0] == "rel":
		var row store.Row
		if row, err = w.Row(i); err == nil {
			var r *store.Relationship
			k := store.RelationshipKey{Start: f[1], Type: "follows", End: f[2]}
			_, start, end, _ := k.Gets()
			var ends [2]store.Row
			for j, g := range []store.Get{start, end} {
				if ends[j], err = w.Row(w.Get(g)); err != nil {
					break
				}
			}
			if err != nil {
				break
			}
			if r, err = row.Relationship(k, ends[0], ends[1]); r != nil {
				got = "rel"
			}
		}
	case f[0] == "adj":
		var p store.RelationshipPage
		p, err = w.AdjacencyPage(i)
		got = fmt.Sprintf("%d rels", len(p.Relationships))
	case f[0] == "art":
		var p store.ArticlePage
		p, err = w.ArticlePage(i)
		got = fmt.Sprintf("%d articles", len(p.Articles))
	}
	if err != nil {
		return "error: " + err.Error()
	}
	return got
}

// TestFetcher: keys in, store calls (with their rounds) and answers out.
func TestFetcher(t *testing.T) {
	st := fetchGraph(t)
	// The store's own goroutines run until the test's cleanup closes it.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, c := range []struct {
		name  string
		cfg   Config
		waves [][]fkey
		calls []string   // "round op table rows"
		want  [][]string // per wave, per key: its answer (a prefix of it for errors)
	}{{
		name:  "a wave's rows are one batch, each row once",
		cfg:   Config{BatchSize: 1000, ScanConcurrency: 1},
		waves: [][]fkey{{"n1", "n2", "n1", "n9"}},
		calls: []string{"1 Batch graph 3"},
		want:  [][]string{{"node n1", "node n2", "node n1", "none"}},
	}, {
		name:  "batch size 1: one Get per call",
		cfg:   Config{BatchSize: 1, ScanConcurrency: 1},
		waves: [][]fkey{{"n1", "n2", "n3"}},
		calls: []string{"1 Batch graph 1", "1 Batch graph 1", "1 Batch graph 1"},
		want:  [][]string{{"node n1", "node n2", "node n3"}},
	}, {
		name:  "batches of at most BatchSize rows",
		cfg:   Config{BatchSize: 2, ScanConcurrency: 1},
		waves: [][]fkey{{"n1", "n2", "n3", "n4", "n9"}},
		calls: []string{"1 Batch graph 2", "1 Batch graph 2", "1 Batch graph 1"},
		want:  [][]string{{"node n1", "node n2", "node n3", "node n4", "none"}},
	}, {
		name:  "a row read in one wave is not read again in the next",
		cfg:   Config{BatchSize: 1000, ScanConcurrency: 1},
		waves: [][]fkey{{"n1", "n2"}, {"n2", "n3"}},
		calls: []string{"1 Batch graph 2", "2 Batch graph 1"},
		want:  [][]string{{"node n1", "node n2"}, {"node n2", "node n3"}},
	}, {
		// The page's far ends (n2, n3, n4) are read after it, as its wave's
		// end check (round -1), and the next wave finds them: only the
		// relationship row is read.
		name:  "pages and rows of one wave share its round; pages prime no rows but their ends",
		cfg:   Config{BatchSize: 1000, ScanConcurrency: 1},
		waves: [][]fkey{{"n1", "adj n1", "art n2", "adj n1"}, {"rel n1 n2", "n2", "art n3", "art n2"}},
		calls: []string{"1 Batch graph 1", "1 Scan graph", "-1 Batch graph 3", "1 Scan articles", "2 Batch graph 1", "2 Scan articles"},
		want:  [][]string{{"node n1", "3 rels", "2 articles", "3 rels"}, {"rel", "node n2", "2 articles", "2 articles"}},
	}, {
		name:  "concurrent scans answer each key",
		cfg:   Config{BatchSize: 1000, ScanConcurrency: 4},
		waves: [][]fkey{{"adj n1", "art n2", "art n3", "n1", "adj n2"}},
		calls: []string{"1 Batch graph 1", "1 Scan articles", "1 Scan articles", "1 Scan graph", "1 Scan graph", "-1 Batch graph 3"},
		want:  [][]string{{"3 rels", "2 articles", "2 articles", "node n1", "0 rels"}},
	}, {
		name:  "a failing call fails exactly its keys",
		cfg:   Config{BatchSize: 1, ScanConcurrency: 1},
		waves: [][]fkey{{"n1", "n5", "n2", "adj n1!", "adj n2"}, {"n5"}},
		calls: []string{"1 Batch graph 1", "1 Batch graph 1", "1 Batch graph 1", "1 Scan graph"},
		want:  [][]string{{"node n1", "error: batch get graph: injected fault", "node n2", "error: store: invalid input", "0 rels"}, {"error: batch get graph: injected fault"}},
	}} {
		t.Run(c.name, func(t *testing.T) {
			var log callLog
			f := NewFetcher(st, c.cfg)
			ctx := store.WithTracer(t.Context(), &log)
			var w Wave
			for round, keys := range c.waves {
				w.Reset()
				idx := make([]int, len(keys))
				for i, k := range keys {
					idx[i] = k.add(t, &w)
				}
				f.Run(ctx, round+1, &w)
				for i, k := range keys {
					if got := k.answer(&w, idx[i]); !strings.HasPrefix(got, c.want[round][i]) {
						t.Errorf("wave %d, %s: %s, want %s", round+1, k, got, c.want[round][i])
					}
				}
				f.Remember(&w)
			}
			var calls []string
			for _, call := range log.calls {
				s := fmt.Sprintf("%d %s %s", call.Round, call.Op, call.Table)
				if call.Op != "Scan" {
					s += fmt.Sprintf(" %d", len(call.Rows))
				}
				calls = append(calls, s)
			}
			slices.Sort(calls) // concurrent scans report in any order
			want := slices.Sorted(slices.Values(c.calls))
			if !slices.Equal(calls, want) {
				t.Errorf("calls\n%q\nwant\n%q", calls, want)
			}
		})
	}
}

// TestFetcherCancelled: a wave run with a cancelled context fails every
// key it had to read with the context's error, and leaves no goroutine.
func TestFetcherCancelled(t *testing.T) {
	st := fetchGraph(t)
	// The store's own goroutines run until the test's cleanup closes it.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	f := NewFetcher(st, Config{BatchSize: 2, ScanConcurrency: 4})
	var w Wave
	keys := []fkey{"n1", "n2", "n3", "adj n1", "art n2", "art n3"}
	for _, k := range keys {
		k.add(t, &w)
	}
	f.Run(ctx, 1, &w)
	for i, k := range keys {
		var err error
		switch {
		case i < 3:
			_, err = w.Row(i)
		case i == 3:
			_, err = w.AdjacencyPage(0)
		default:
			_, err = w.ArticlePage(i - 4)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want %v", k, err, context.Canceled)
		}
	}
}

// TestFetcherRemembers: a key read in one wave is read again in the next
// unless the wave was remembered.
func TestFetcherRemembers(t *testing.T) {
	st := fetchGraph(t)
	for _, remember := range []bool{false, true} {
		var log callLog
		ctx := store.WithTracer(t.Context(), &log)
		f := NewFetcher(st, Config{BatchSize: 10, ScanConcurrency: 1})
		var w Wave
		for round := 1; round <= 2; round++ {
			w.Reset()
			fkey("n2").add(t, &w)
			fkey("art n2").add(t, &w)
			f.Run(ctx, round, &w)
			if remember {
				f.Remember(&w)
			}
		}
		want := 4 // a batch and a scan in each wave
		if remember {
			want = 2
		}
		if len(log.calls) != want {
			t.Errorf("remember=%v: %d store calls, want %d", remember, len(log.calls), want)
		}
	}
}
