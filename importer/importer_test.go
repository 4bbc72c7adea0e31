package importer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/store"
	"github.com/hbgraph/hbgraph/store/keys"
)

func newStore(t testing.TB) *store.Store {
	t.Helper()
	st, _ := memstore.New(t)
	return st
}

func write(t testing.TB, dir, name string, lines ...string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestImportReportsBadLinesAndSkipsOnRerun(t *testing.T) {
	// Batches of 1 and 2 lines split the files across workers and put a
	// repeated line in the same batch as its first occurrence or not.
	for _, size := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("batch size %d", size), func(t *testing.T) { testImport(t, size) })
	}
}

func testImport(t *testing.T, batchSize int) {
	ctx := context.Background()
	st := newStore(t)
	dir := t.TempDir()
	files := Files{
		Nodes: write(t, dir, "nodes.jsonl",
			`{"id":"n1","owner":"alice","properties":{"name":"A","big":9007199254740993},"created_at":1000,"updated_at":2000}`,
			`{"id":"n2","created_at":1000}`,
			`not json`,
			``,
			`{"id":"","created_at":5}`,
			`{"id":"n3"}`),
		Relationships: write(t, dir, "rels.jsonl",
			`{"start_node_id":"n1","type":"follow","end_node_id":"n2","properties":{"w":1},"created_at":3000,"updated_at":3500}`,
			`{"start_node_id":"n1","type":"follow","end_node_id":"ghost","created_at":3000}`,
			`{"start_node_id":"n1","type":`,
			`{"start_node_id":"n1","type":"follow","end_node_id":"n2","properties":{"w":2},"created_at":3000,"updated_at":3500}`,
			`{"start_node_id":"n2","type":"follow","end_node_id":"n1","created_at":3000,"updated_at":2000}`),
		Articles: write(t, dir, "articles.jsonl",
			`{"id":7,"author_id":"n1","title":"Hi","body":"hello hello world","category":"tech","posted_at":4000}`,
			`{"id":8,"author_id":"n1","title":"","body":"x","category":"tech","posted_at":4001}`,
			`{"id":7,"author_id":"n1","title":"Hi","body":"hello hello world","category":"tech","posted_at":4000}`,
			`{"id":9,"author_id":"ghost","title":"Boo","body":"x","category":"tech","posted_at":4002}`,
			`{"id":`,
			`{"id":12,"author_id":"n2","title":"Hello","body":"hello","category":"life","posted_at":4003}`),
	}
	results, err := Run(ctx, st, files, Options{Workers: 3, Log: zerolog.Nop(), BatchSize: batchSize})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range results {
		lines := []string{}
		for _, e := range r.Errors {
			lines = append(lines, fmt.Sprint(e.Line))
		}
		got[r.Kind] = fmt.Sprintf("%d/%d/%d/%d %s", r.Lines, r.Imported, r.Skipped, r.Failed, strings.Join(sorted(lines), ","))
	}
	want := map[string]string{
		"nodes":         "5/2/0/3 3,5,6", // line 4 is blank and not counted
		"relationships": "5/1/1/3 2,3,5", // line 4 repeats line 1
		"articles":      "6/2/1/3 2,4,5", // line 3 repeats line 1
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: lines/imported/skipped/failed = %s, want %s", k, got[k], w)
		}
	}
	n := memstore.Node(t, st, "n1")
	if n == nil {
		t.Fatal("n1 was not imported")
	}
	big, err := n.Properties.Get("big")
	if err != nil || n.Created.UnixMilli() != 1000 || fmt.Sprint(big) != "9007199254740993" || n.Owner != "alice" {
		t.Fatalf("n1: %+v, %v", n, err)
	}
	if n2 := memstore.Node(t, st, "n2"); n2 == nil || n2.Owner != "" {
		t.Fatalf("n2, imported without an owner: %+v", n2)
	}
	page, err := st.Adjacent(ctx, "n2", "follow", store.Incoming, store.PageRequest{Size: 5})
	if err != nil || len(page.Relationships) != 1 || page.Relationships[0].Updated.UnixMilli() != 3500 {
		t.Fatalf("incoming follows of n2: %+v, %v", page, err)
	}
	checkDegrees(t, st, map[store.DegreeKey]int64{{Node: "n1", Dir: store.Outgoing, Type: "follow"}: 1,
		{Node: "n2", Dir: store.Incoming, Type: "follow"}: 1, {Node: "n2", Dir: store.Outgoing, Type: "follow"}: 0})
	for author, want := range map[string]int64{"n1": 2, "n2": 2} {
		words, err := st.TopWords(ctx, author, 1)
		if err != nil || len(words) != 1 || words[0].Word != "hello" || words[0].Count != want {
			t.Fatalf("word counts of %s: %v, %v", author, words, err)
		}
	}
	for author, imported := range map[string]uint64{"n1": 7, "n2": 12} {
		posted, err := st.PostArticle(ctx, author, "Live", "x", "tech")
		if err != nil {
			t.Fatal(err)
		}
		if k, _ := keys.ParseArticleID(posted.ID); k.Seq <= imported {
			t.Fatalf("a live post of %s after importing id %d got seq %d", author, imported, k.Seq)
		}
	}

	again, err := Run(ctx, st, files, Options{Log: zerolog.Nop(), BatchSize: batchSize})
	if err != nil {
		t.Fatal(err)
	}
	if again[0].Skipped != 2 || again[0].Imported != 0 || again[1].Skipped != 2 || again[1].Imported != 0 ||
		again[2].Skipped != 3 || again[2].Imported != 0 {
		t.Fatalf("rerun: %+v", again)
	}
	checkDegrees(t, st, map[store.DegreeKey]int64{{Node: "n1", Dir: store.Outgoing, Type: "follow"}: 1,
		{Node: "n2", Dir: store.Incoming, Type: "follow"}: 1})
}

func checkDegrees(t *testing.T, st *store.Store, want map[store.DegreeKey]int64) {
	t.Helper()
	ks := slices.Collect(maps.Keys(want))
	gets := make([]store.Get, len(ks))
	for i, k := range ks {
		g, err := k.Get()
		if err != nil {
			t.Fatal(err)
		}
		gets[i] = g
	}
	rows, err := st.Read(context.Background(), gets)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range ks {
		if got, err := rows[i].Degree(); err != nil || got != want[k] {
			t.Errorf("degree %+v = %d (%v), want %d", k, got, err, want[k])
		}
	}
}

// relationshipFiles writes nodes n0 to n<n> and n relationships, from
// n<i> to n<end(i)>.
func relationshipFiles(t *testing.T, n int, end func(i int) int) Files {
	t.Helper()
	dir := t.TempDir()
	nodes := make([]string, n+1)
	rels := make([]string, n)
	for i := range nodes {
		nodes[i] = fmt.Sprintf(`{"id":"n%d","created_at":1000}`, i)
	}
	for i := range rels {
		rels[i] = fmt.Sprintf(`{"start_node_id":"n%d","type":"next","end_node_id":"n%d","created_at":2000}`, i, end(i))
	}
	return Files{Nodes: write(t, dir, "nodes.jsonl", nodes...), Relationships: write(t, dir, "rels.jsonl", rels...)}
}

// interruptingClient cancels an import's context at the SendBatch of Gets
// after the first after ones.
type interruptingClient struct {
	gohbase.Client
	after  int
	cancel context.CancelFunc
	mu     sync.Mutex
	gets   int
}

func (c *interruptingClient) SendBatch(ctx context.Context, batch []hrpc.Call) ([]hrpc.RPCResult, bool) {
	if _, ok := batch[0].(*hrpc.Get); ok {
		c.mu.Lock()
		if c.gets++; c.gets > c.after {
			c.cancel()
		}
		c.mu.Unlock()
	}
	return c.Client.SendBatch(ctx, batch)
}

// An interrupted import (Ctrl-C) still writes the degree counts of the
// relationships it reported imported, so none is left to repair.
func TestInterruptedImportCountsWhatItImported(t *testing.T) {
	const n = 200
	files := relationshipFiles(t, n, func(i int) int { return (i*7 + 1) % n })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Each batch of 10 nodes reads its rows back with a batch of Gets;
	// then each batch of relationships checks its ends with one.
	nodeBatches := (n + 1 + 9) / 10
	ic := &interruptingClient{Client: memstore.Engine(t), after: nodeBatches + 2, cancel: cancel}
	st, err := store.New(ic, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	results, err := Run(ctx, st, files, Options{Workers: 1, BatchSize: 10, Log: zerolog.Nop()})
	if !errors.Is(err, context.Canceled) || len(results) != 2 {
		t.Fatalf("Run: %+v, %v; want it interrupted in the relationships", results, err)
	}
	if r := results[1]; r.Imported == 0 || r.Imported == n {
		t.Fatalf("relationships: %d of %d imported; want the interrupt in the midst of them", r.Imported, n)
	}
	report, err := st.Repair(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for fix, count := range report {
		if strings.Contains(fix, "degree") {
			t.Errorf("repair after the interrupt: %s %d", fix, count)
		}
	}
}

func sorted(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if len(s[j]) < len(s[i]) || (len(s[j]) == len(s[i]) && s[j] < s[i]) {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

// A batch ends at BatchSize lines or once it holds maxBatchBytes of lines,
// whichever comes first, and keeps the lines' numbers.
func TestBatchesEndAtSizeOrBytes(t *testing.T) {
	big := `"` + strings.Repeat("x", maxBatchBytes*2/5) + `"` // three make a batch
	lines := []string{big, big, big, "1", "2", "3", "4", "5", big, "6"}
	path := write(t, t.TempDir(), "lines.jsonl", lines...)
	var mu sync.Mutex
	var got []string
	record := func(_ context.Context, batch [][]byte) []outcome {
		mu.Lock()
		defer mu.Unlock()
		var b strings.Builder
		for _, l := range batch {
			if len(l) > 1 {
				l = []byte("big")
			}
			fmt.Fprintf(&b, "%s ", l)
		}
		got = append(got, b.String())
		return make([]outcome, len(batch))
	}
	r, err := importFile(context.Background(), "lines", path, record, 4, nil, Options{Workers: 1, Log: zerolog.Nop(),
		LogEvery: time.Hour})
	if err != nil || r.Lines != int64(len(lines)) {
		t.Fatalf("%+v, %v", r, err)
	}
	want := []string{"big big big ", "1 2 3 4 ", "5 big 6 "}
	if !slices.Equal(got, want) {
		t.Fatalf("batches %q, want %q", got, want)
	}
}
