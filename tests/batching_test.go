package tests

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// explainReport is the explain extension's output (explain/explain.go).
type explainReport struct {
	Calls int `json:"calls"`
	Waves []struct {
		Wave  int           `json:"wave"`
		Calls []explainCall `json:"calls"`
	} `json:"waves"`
}

type explainCall struct {
	Op       string   `json:"op"`
	Table    string   `json:"table"`
	Rows     []string `json:"rows"`
	StartRow *string  `json:"startRow"`
	StopRow  *string  `json:"stopRow"`
	RowsRead int      `json:"rowsRead"`
	Error    string   `json:"error"`
}

// explained posts a request with "extensions": {"explain": true} and
// returns the response and its explain report.
func (s *server) explained(t testing.TB, query string, vars map[string]any) (*gqlResponse, explainReport) {
	t.Helper()
	r := s.post(t, gqlRequest{Query: query, Variables: vars, Extensions: map[string]any{"explain": true}})
	var ext struct {
		Explain *explainReport `json:"explain"`
	}
	if isNull(r.Extensions) || json.Unmarshal(r.Extensions, &ext) != nil || ext.Explain == nil {
		t.Fatalf("no explain report in the response's extensions: %.500s", r.Body)
	}
	return r, *ext.Explain
}

// String lists the waves compactly: "1: Batch graph 10 rows, Scan articles; 2: ...".
func (e explainReport) String() string {
	var waves []string
	for _, w := range e.Waves {
		var calls []string
		for _, c := range w.Calls {
			desc := c.Op + " " + c.Table
			if c.Op != "Scan" {
				desc += fmt.Sprintf(" %d rows", len(c.Rows))
			}
			desc += fmt.Sprintf(" (%d read)", c.RowsRead)
			calls = append(calls, desc)
		}
		waves = append(waves, fmt.Sprintf("%d: %s", w.Wave, strings.Join(calls, ", ")))
	}
	return strings.Join(waves, "; ")
}

// unescapeRow reverses the report's row escaping (strconv.QuoteToASCII
// without the quotes).
func unescapeRow(t testing.TB, s string) []byte {
	t.Helper()
	u, err := strconv.Unquote(`"` + s + `"`)
	if err != nil {
		t.Fatalf("row %q: %v", s, err)
	}
	return []byte(u)
}

// nodeRowID returns the id of a graph-table node row, H(id) 0x00 str(id),
// where str escapes 0x00 as 0x00 0xFF and ends with 0x00 0x01 (the ids here
// have no 0x00 bytes).
func nodeRowID(row []byte) (string, bool) {
	if len(row) < 7 || row[4] != 0x00 || !strings.HasSuffix(string(row), "\x00\x01") {
		return "", false
	}
	return string(row[5 : len(row)-2]), true
}

// fanOut is one run of the 2-hop query, summed up.
type fanOut struct {
	waves, calls, reads, scans, gets int
	report                           explainReport
}

const twoHop = `query($id: ID!, $n: Int!) { node(id: $id) {
	relationships(type: "follows", direction: OUTGOING, first: $n) { totalCount edges { neighbor {
		id properties articles(first: 3) { totalCount edges { node { id title postedAt } } } } } } } }`

// TestBatchingBudget runs a 2-hop query (followees, then their newest
// articles) over 10 and 50 followees with explain on: the number of round
// trip waves must follow the query's depth, not its fan-out, every time.
func TestBatchingBudget(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	const followees, articlesEach = 50, 4
	var fields []string
	for i := range followees {
		id := fmt.Sprintf("f%02d", i)
		fields = append(fields, fmt.Sprintf(`createNode(id: %q, properties: {i: %d}) { id }`, id, i))
		for j := range articlesEach {
			fields = append(fields, fmt.Sprintf(`postArticle(authorId: %q, title: "post %d of %s", body: "words words and more words %d", category: "c%d") { id }`,
				id, j, id, i*j, j%2))
		}
	}
	fields = append(fields, `createNode(id: "me") { id }`, `createNode(id: "me50") { id }`)
	for i := range followees {
		if i < 10 {
			fields = append(fields, fmt.Sprintf(`createRelationship(startNodeId: "me", type: "follows", endNodeId: "f%02d") { id }`, i))
		}
		fields = append(fields, fmt.Sprintf(`createRelationship(startNodeId: "me50", type: "follows", endNodeId: "f%02d") { id }`, i))
	}
	s.bulk(t, fields)

	// run runs the query for me (n = 10) or me50 (n = 50) and checks the
	// answer and the batching of this one run.
	run := func(t *testing.T, n int) fanOut {
		t.Helper()
		me := "me"
		if n == 50 {
			me = "me50"
		}
		r, rep := s.explained(t, twoHop, map[string]any{"id": me, "n": n})
		var data struct {
			Node struct {
				Relationships struct {
					TotalCount int
					Edges      []struct {
						Neighbor struct {
							ID       string
							Articles articleConn
						}
					}
				}
			}
		}
		r.ok(t, &data)
		rels := data.Node.Relationships
		want := map[string]bool{}
		for i := range n {
			want[fmt.Sprintf("f%02d", i)] = true
		}
		if rels.TotalCount != n || len(rels.Edges) != n {
			t.Errorf("%s follows %d (%d edges), want %d", me, rels.TotalCount, len(rels.Edges), n)
		}
		for _, e := range rels.Edges {
			if !want[e.Neighbor.ID] || e.Neighbor.Articles.TotalCount != articlesEach || len(e.Neighbor.Articles.Edges) != 3 {
				t.Errorf("neighbor %s: %d articles, %d edges; want a followee with %d and 3",
					e.Neighbor.ID, e.Neighbor.Articles.TotalCount, len(e.Neighbor.Articles.Edges), articlesEach)
			}
		}

		f := fanOut{waves: len(rep.Waves), report: rep}
		var problems []string
		problem := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
		nodeBatches := 0
		for _, w := range rep.Waves {
			batches := map[string]int{} // table -> Batch calls in this wave
			articleScans := 0
			for _, c := range w.Calls {
				f.calls++
				f.reads += c.RowsRead
				if c.Error != "" {
					problem("wave %d: %s %s failed: %s", w.Wave, c.Op, c.Table, c.Error)
				}
				switch c.Op {
				case "Scan":
					f.scans++
					if c.Table == "articles" {
						articleScans++
					}
				case "Batch", "Get":
					f.gets++
					if c.Op == "Get" {
						problem("wave %d: a Get of %s outside a Batch", w.Wave, c.Table)
					}
					batches[c.Table]++
					var ids []string
					for _, row := range c.Rows {
						if id, ok := nodeRowID(unescapeRow(t, row)); ok && c.Table == "graph" {
							ids = append(ids, id)
						}
					}
					if len(ids) == n {
						nodeBatches++
						slices.Sort(ids)
						ids = slices.Compact(ids)
						if len(ids) != n || len(c.Rows) != n || c.RowsRead != n || slices.ContainsFunc(ids, func(id string) bool { return !want[id] }) {
							problem("wave %d: the neighbors' Batch reads %d rows (%d found) of %q; want the %d followees", w.Wave, len(c.Rows), c.RowsRead, ids, n)
						}
					}
				default:
					problem("wave %d: a %s of %s in a read-only query", w.Wave, c.Op, c.Table)
				}
			}
			for table, k := range batches {
				// A wave that scans relationship pages reads their far
				// ends after the scans, in one more Batch (store's
				// CheckEnds: a relationship is listed only while both its
				// ends exist); the next wave finds them.
				if table == "graph" && graphScans(w.Calls) > 0 {
					k--
				}
				if k > 1 {
					problem("wave %d: %d Batch calls to %s (want every Get of a wave to a table in one Batch)", w.Wave, k, table)
				}
			}
			if articleScans != 0 && articleScans != n {
				problem("wave %d: %d of the %d article page scans (want all in one wave)", w.Wave, articleScans, n)
			}
		}
		if f.calls != rep.Calls {
			problem("explain counts %d calls but lists %d", rep.Calls, f.calls)
		}
		if nodeBatches != 1 {
			problem("%d Batch calls read the %d neighbors' node rows (want exactly 1)", nodeBatches, n)
		}
		// node; its connection page and counter; the neighbors; their
		// article pages and counters.
		if f.waves > 4 {
			problem("%d waves (want at most 4)", f.waves)
		}
		if len(problems) > 0 {
			const most = 8
			if len(problems) > most {
				problems = append(problems[:most], fmt.Sprintf("... and %d more", len(problems)-most))
			}
			t.Errorf("%d followees: batching broken:\n  %s\nwaves: %v", n, strings.Join(problems, "\n  "), rep)
		}
		return f
	}

	const repeats = 5
	var ten, fifty []fanOut
	for i := range repeats {
		t.Run(fmt.Sprintf("run %d", i), func(t *testing.T) {
			ten = append(ten, run(t, 10))
			fifty = append(fifty, run(t, 50))
		})
	}

	// Across the runs:
	if len(ten) != repeats || len(fifty) != repeats {
		t.Fatalf("only %d and %d runs completed", len(ten), len(fifty))
	}
	for i := range repeats {
		a, b := ten[i], fifty[i]
		if a.waves != ten[0].waves || b.waves != ten[0].waves {
			t.Errorf("run %d: %d waves for 10 followees, %d for 50; want the same number every time (run 0 had %d)\n10: %v\n50: %v",
				i, a.waves, b.waves, ten[0].waves, a.report, b.report)
		}
		if b.reads <= a.reads {
			t.Errorf("run %d: %d rows read for 50 followees, %d for 10; want more for 50", i, b.reads, a.reads)
		}
		// Gets are batched: their number does not grow with fan-out.
		// Scans cannot be batched (one per connection page) but run
		// concurrently: one for me's page and one per neighbor.
		if a.gets != b.gets {
			t.Errorf("run %d: %d Get/Batch calls for 10 followees, %d for 50; want the same\n10: %v\n50: %v", i, a.gets, b.gets, a.report, b.report)
		}
		if a.scans != 1+10 || b.scans != 1+50 {
			t.Errorf("run %d: %d and %d scans, want 11 and 51 (one page per connection)", i, a.scans, b.scans)
		}
		if b.calls-b.scans != a.calls-a.scans {
			t.Errorf("run %d: %d calls besides scans for 10 followees, %d for 50; want the same", i, a.calls-a.scans, b.calls-b.scans)
		}
	}
}

// graphScans counts the scans of relationship pages among calls.
func graphScans(calls []explainCall) int {
	n := 0
	for _, c := range calls {
		if c.Op == "Scan" && c.Table == "graph" {
			n++
		}
	}
	return n
}

// TestNodesLoadPagesWithRows checks that nodes(ids) starts each node's
// selected pages with the rows, as node(id) does: one wave, not two.
func TestNodesLoadPagesWithRows(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	var fields []string
	for i := range 5 {
		id := fmt.Sprintf("w%d", i)
		fields = append(fields, fmt.Sprintf(`createNode(id: %q) { id }`, id),
			fmt.Sprintf(`postArticle(authorId: %q, title: "t", body: "b", category: "c") { id }`, id))
	}
	s.bulk(t, fields)
	const q = `{ nodes(ids: ["w0", "w1", "w2", "w3", "w4"]) { id articles(first: 3) { edges { node { id } } } } }`
	for run := range 20 {
		r, rep := s.explained(t, q, nil)
		var data struct {
			Nodes []struct {
				ID       string
				Articles articleConn
			}
		}
		r.ok(t, &data)
		if len(data.Nodes) != 5 || len(data.Nodes[4].Articles.Edges) != 1 {
			t.Fatalf("run %d: %+v", run, data)
		}
		if len(rep.Waves) != 1 || rep.Calls != 6 {
			t.Fatalf("run %d: %d calls in %d waves, want 6 in 1 (a Batch and 5 scans): %v", run, rep.Calls, len(rep.Waves), rep)
		}
	}
}
