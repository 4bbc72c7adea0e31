package store

// The fault matrix: every write the store offers, with a fault (see
// store/hbasefault) at every RPC it makes, in every mode, and the caller
// retrying once after UNAVAILABLE. A case holds when
//
//   - every answer is true: success means applied exactly once, a definite
//     error (NOT_FOUND, ALREADY_EXISTS, CONFLICT, an import's "skipped", ...)
//     means not applied, UNAVAILABLE means either;
//   - after the retry, the store needs no repair (Repair finds what it found
//     after the same write without a fault: nothing) and no relationship
//     outlives an end, before or after that Repair.
//
// Many cases fail today (issue 23). The test is a ratchet: the cases known
// to fail are listed in testdata/faultmatrix.golden with their reason; a
// case that fails and is not listed fails the test, and so does a listed
// case that now holds (take it off the list). After a fix,
//
//	go test ./store -run TestFaultMatrix -update
//
// rewrites the list.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/store/hbasefault"
	"github.com/hbgraph/hbgraph/store/keys"
)

var updateFaultMatrix = flag.Bool("update", false, "rewrite testdata/faultmatrix.golden with the cases that fail")

const faultMatrixGolden = "testdata/faultmatrix.golden"

// matrixFixture is what every case starts from: nodes a, b, c, d,
// relationships a-knows->b and b-likes->c, and article a1 by a.
type matrixFixture struct {
	a1 string // article id
}

// Times of the imported rows: before the fixture's clock, after nothing.
var matrixImportTime = time.UnixMilli(testClockStart - 10_000)

func setUpMatrix(t *testing.T, s *Store) matrixFixture {
	t.Helper()
	for _, id := range []string{"a", "b", "c", "d"} {
		mustNode(t, s, id, Properties{"k": 1})
	}
	mustRel(t, s, "a", "knows", "b", Properties{"w": 1})
	mustRel(t, s, "b", "likes", "c", Properties{"w": 1})
	a1, err := s.PostArticle(bg, "a", "t1", "x y", "cat1")
	if err != nil {
		t.Fatal(err)
	}
	return matrixFixture{a1: a1.ID}
}

// Applied states of one item of a write, as observed in the store.
const (
	notApplied    = 0
	appliedOnce   = 1
	appliedTwice  = 2  // or more: a duplicate
	partlyApplied = -1 // some of it: only UNAVAILABLE may leave that
)

// errSkipped is an import's "skipped" (the row was there already): a
// definite answer that this call did not apply the item.
var errSkipped = errors.New("skipped")

// matrixWrite is one write of the matrix: run makes it and answers per
// item (one item unless it is a batch), observe says how far each item
// is applied. then, if set, is a later write without faults (another
// client's), made after the answers are judged and before the store is
// checked.
type matrixWrite struct {
	name    string
	run     func(ctx context.Context, s *Store, f matrixFixture) []error
	observe func(t *testing.T, s *Store, f matrixFixture) []int
	then    func(s *Store) error
}

func one(err error) []error { return []error{err} }

func outcomes(outs []ImportOutcome, err error, n int) []error {
	answers := make([]error, n)
	for i := range answers {
		switch {
		case i >= len(outs):
			answers[i] = err
			if err == nil {
				answers[i] = errors.New("no outcome")
			}
		case outs[i].Err != nil:
			answers[i] = outs[i].Err
		case !outs[i].Created:
			answers[i] = errSkipped
		}
	}
	return answers
}

func boolState(applied bool) int {
	if applied {
		return appliedOnce
	}
	return notApplied
}

func nodeExists(t *testing.T, s *Store, id string) bool {
	t.Helper()
	_, err := s.getNode(bg, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func relationshipExists(t *testing.T, s *Store, k RelationshipKey) bool {
	t.Helper()
	_, err := s.GetRelationship(bg, k)
	if err != nil && !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func propertyIs(t *testing.T, p PropertySet, key string, want any) bool {
	t.Helper()
	return fmt.Sprint(propsOf(t, p)[key]) == fmt.Sprint(want)
}

func articleExists(t *testing.T, s *Store, id string) (Article, bool) {
	t.Helper()
	a, err := s.getArticle(bg, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	return a, err == nil
}

// timelineTitles counts the author's timeline rows by title.
func timelineTitles(t *testing.T, s *Store, author string) map[string]int {
	t.Helper()
	out := map[string]int{}
	err := s.scanAll(bg, scanRange{table: keys.TableArticles, family: keys.FamilyArticles}, func(rw row) (bool, error) {
		k, err := keys.DecodeTimeline(rw.key)
		if err != nil || k.Author != author {
			return true, nil
		}
		a, ok, err := decodeArticleCells(rw.key, rw.cells)
		if err != nil || !ok {
			return false, fmt.Errorf("timeline row %x: %v", rw.key, err)
		}
		out[a.title]++
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	rel1         = RelationshipKey{"a", "knows", "b"}
	rel2         = RelationshipKey{"b", "likes", "c"}
	relNew       = RelationshipKey{"a", "likes", "c"}
	importedRels = []RelationshipImport{
		{Key: RelationshipKey{"c", "knows", "a"}, Properties: Properties{"i": 1}, Created: matrixImportTime, Updated: matrixImportTime},
		{Key: RelationshipKey{"a", "knows", "c"}, Properties: Properties{"i": 2}, Created: matrixImportTime, Updated: matrixImportTime},
	}
	importedArticles = []ArticleImport{
		{Author: "a", Seq: 100, Title: "i1", Body: "u v", Category: "cat1", Posted: matrixImportTime},
		{Author: "c", Seq: 7, Title: "i2", Body: "u w", Category: "cat3", Posted: matrixImportTime},
	}
)

func matrixWrites() []matrixWrite {
	return []matrixWrite{{
		name: "CreateNode",
		run: func(ctx context.Context, s *Store, _ matrixFixture) []error {
			_, err := s.CreateNode(ctx, "n", "owner", Properties{"k": 1})
			return one(err)
		},
		observe: func(t *testing.T, s *Store, _ matrixFixture) []int {
			return []int{boolState(nodeExists(t, s, "n"))}
		},
	}, {
		name: "UpdateNodeProperties",
		run: func(ctx context.Context, s *Store, _ matrixFixture) []error {
			_, err := s.UpdateNodeProperties(ctx, "a", Properties{"k": 2}, nil)
			return one(err)
		},
		observe: func(t *testing.T, s *Store, _ matrixFixture) []int {
			n, err := s.getNode(bg, "a")
			if err != nil {
				t.Fatal(err)
			}
			return []int{boolState(propertyIs(t, n.Properties, "k", 2))}
		},
	}, {
		name: "DeleteNode",
		run: func(ctx context.Context, s *Store, _ matrixFixture) []error {
			return one(s.DeleteNode(ctx, "d", false))
		},
		observe: func(t *testing.T, s *Store, _ matrixFixture) []int {
			return []int{boolState(!nodeExists(t, s, "d"))}
		},
	}, {
		name: "DeleteNodeDetach",
		run: func(ctx context.Context, s *Store, _ matrixFixture) []error {
			return one(s.DeleteNode(ctx, "b", true))
		},
		observe: func(t *testing.T, s *Store, _ matrixFixture) []int {
			node, r1, r2 := nodeExists(t, s, "b"), relationshipExists(t, s, rel1), relationshipExists(t, s, rel2)
			switch {
			case node && r1 && r2:
				return []int{notApplied}
			case !node && !r1 && !r2:
				return []int{appliedOnce}
			}
			return []int{partlyApplied}
		},
	}, {
		name: "CreateRelationship",
		run: func(ctx context.Context, s *Store, _ matrixFixture) []error {
			_, err := s.CreateRelationship(ctx, relNew, Properties{"w": 2})
			return one(err)
		},
		observe: func(t *testing.T, s *Store, _ matrixFixture) []int {
			return []int{boolState(relationshipExists(t, s, relNew))}
		},
	}, {
		// A relationship must not outlive its end, whatever became of
		// its create.
		name: "CreateRelationshipThenDetachEnd",
		run: func(ctx context.Context, s *Store, _ matrixFixture) []error {
			_, err := s.CreateRelationship(ctx, relNew, Properties{"w": 2})
			return one(err)
		},
		observe: func(t *testing.T, s *Store, _ matrixFixture) []int {
			return []int{boolState(relationshipExists(t, s, relNew))}
		},
		then: func(s *Store) error { return s.DeleteNode(bg, relNew.End, true) },
	}, {
		name: "UpdateRelationshipProperties",
		run: func(ctx context.Context, s *Store, _ matrixFixture) []error {
			_, err := s.UpdateRelationshipProperties(ctx, rel1, Properties{"w": 3}, nil)
			return one(err)
		},
		observe: func(t *testing.T, s *Store, _ matrixFixture) []int {
			r, err := s.GetRelationship(bg, rel1)
			if err != nil {
				t.Fatal(err)
			}
			return []int{boolState(propertyIs(t, r.Properties, "w", 3))}
		},
	}, {
		name: "DeleteRelationship",
		run: func(ctx context.Context, s *Store, _ matrixFixture) []error {
			return one(s.DeleteRelationship(ctx, rel1))
		},
		observe: func(t *testing.T, s *Store, _ matrixFixture) []int {
			return []int{boolState(!relationshipExists(t, s, rel1))}
		},
	}, {
		name: "PostArticle",
		run: func(ctx context.Context, s *Store, _ matrixFixture) []error {
			_, err := s.PostArticle(ctx, "a", "new", "p q", "cat2")
			return one(err)
		},
		observe: func(t *testing.T, s *Store, _ matrixFixture) []int {
			return []int{min(timelineTitles(t, s, "a")["new"], appliedTwice)}
		},
	}, {
		name: "UpdateArticle",
		run: func(ctx context.Context, s *Store, f matrixFixture) []error {
			body, category := "x z", "cat2"
			_, err := s.UpdateArticle(ctx, f.a1, nil, &body, &category)
			return one(err)
		},
		observe: func(t *testing.T, s *Store, f matrixFixture) []int {
			a, ok := articleExists(t, s, f.a1)
			if !ok {
				t.Fatal("article a1 is gone")
			}
			return []int{boolState(a.Body == "x z" && a.Category == "cat2")}
		},
	}, {
		name: "DeleteArticle",
		run: func(ctx context.Context, s *Store, f matrixFixture) []error {
			return one(s.DeleteArticle(ctx, f.a1))
		},
		observe: func(t *testing.T, s *Store, f matrixFixture) []int {
			_, ok := articleExists(t, s, f.a1)
			return []int{boolState(!ok)}
		},
	}, {
		name: "ImportNode",
		run: func(ctx context.Context, s *Store, _ matrixFixture) []error {
			created, err := s.ImportNode(ctx, "m", "", Properties{"k": 1}, matrixImportTime, matrixImportTime)
			return outcomes([]ImportOutcome{{Created: created, Err: err}}, nil, 1)
		},
		observe: func(t *testing.T, s *Store, _ matrixFixture) []int {
			return []int{boolState(nodeExists(t, s, "m"))}
		},
	}, {
		name: "ImportRelationships",
		run: func(ctx context.Context, s *Store, _ matrixFixture) []error {
			outs, err := s.ImportRelationships(ctx, importedRels)
			return outcomes(outs, err, len(importedRels))
		},
		observe: func(t *testing.T, s *Store, _ matrixFixture) []int {
			var states []int
			for _, r := range importedRels {
				states = append(states, boolState(relationshipExists(t, s, r.Key)))
			}
			return states
		},
	}, {
		name: "ImportArticles",
		run: func(ctx context.Context, s *Store, _ matrixFixture) []error {
			// As the importer does: the batch, then the authors' seq
			// advanced past the imported ones.
			outs, err := s.ImportArticles(ctx, importedArticles)
			answers := outcomes(outs, err, len(importedArticles))
			for _, a := range importedArticles {
				if err := s.AdvanceArticleSeq(ctx, a.Author, a.Seq); err != nil {
					for i := range answers {
						if answers[i] == nil {
							answers[i] = err
						}
					}
				}
			}
			return answers
		},
		observe: func(t *testing.T, s *Store, _ matrixFixture) []int {
			var states []int
			for _, a := range importedArticles {
				id, err := keys.Article{Author: a.Author, Posted: a.Posted.UnixMilli(), Seq: a.Seq}.ID()
				if err != nil {
					t.Fatal(err)
				}
				_, ok := articleExists(t, s, id)
				states = append(states, boolState(ok))
			}
			return states
		},
	}}
}

// rpcPosition is one call a write makes: the n-th (from 1) call of kind
// to a row of role (a key layout's name; a scan's table).
type rpcPosition struct {
	kind hbasefault.Kind
	role string
	n    int
}

func (p rpcPosition) String() string { return fmt.Sprintf("%s#%d@%s", p.kind, p.n, p.role) }

// rowRole names the key layout of a row, for case names that say what
// was being written.
func rowRole(kind hbasefault.Kind, table string, row []byte) string {
	if kind == hbasefault.Scan {
		return table
	}
	switch table {
	case keys.TableGraph:
		// A node and a degree row by their node: a write that overlaps
		// its calls (Options.OverlapCalls) sends those of both ends at
		// once, and a position must name the same call in every run.
		if id, err := keys.DecodeNode(row); err == nil {
			return "node " + id
		}
		if _, err := keys.DecodeRelationship(row); err == nil {
			return "relationship"
		}
		if _, err := keys.DecodeAdjacency(row); err == nil {
			return "adjacency"
		}
		if d, err := keys.DecodeDegree(row); err == nil {
			return fmt.Sprintf("degree %s %v", d.Node, d.Dir)
		}
	case keys.TableArticles:
		if _, err := keys.DecodeTimeline(row); err == nil {
			return "timeline"
		}
		if _, err := keys.DecodeCategory(row); err == nil {
			return "category"
		}
		if _, err := keys.DecodeCounters(row); err == nil {
			return "counters"
		}
		if string(row) == string(keys.ArticleLayoutRow()) {
			return "layout"
		}
	case keys.TableWordCounts:
		return "wordcounts"
	}
	return table
}

// positions numbers the calls of a run by kind and role.
func positions(calls []hbasefault.Call) []rpcPosition {
	seen := map[[2]string]int{}
	out := make([]rpcPosition, len(calls))
	for i, c := range calls {
		role := rowRole(c.Kind, c.Table, c.Row)
		key := [2]string{string(c.Kind), role}
		seen[key]++
		out[i] = rpcPosition{kind: c.Kind, role: role, n: seen[key]}
	}
	return out
}

// openMatrixStore is a fresh store over the fault injector, with the
// fixture written, and the injector recording from then on.
func openMatrixStore(t *testing.T) (*Store, *hbasefault.Client, matrixFixture) {
	t.Helper()
	clk := newFakeClock()
	clk.step = 1 // the clock waits of deletes and rebuilds do not stall
	fc := hbasefault.New(openTestEngine(t, clk))
	// As on a cluster, whose faults these are: a write's independent
	// calls at once.
	s, err := New(fc, Options{Clock: clk.Now, OverlapCalls: true})
	if err != nil {
		t.Fatal(err)
	}
	f := setUpMatrix(t, s)
	fc.Record(true)
	return s, fc, f
}

// answerName is an answer as a client would see its code.
func answerName(err error) string {
	switch {
	case err == nil:
		return "success"
	case errors.Is(err, errSkipped):
		return "skipped"
	case errors.Is(err, ErrUnavailable):
		return "UNAVAILABLE"
	case errors.Is(err, ErrNotFound):
		return "NOT_FOUND"
	case errors.Is(err, ErrAlreadyExists):
		return "ALREADY_EXISTS"
	case errors.Is(err, ErrConflict):
		return "CONFLICT"
	case errors.Is(err, ErrInvalidInput):
		return "INVALID_INPUT"
	}
	return "INTERNAL"
}

var stateNames = map[int]string{notApplied: "not applied", appliedOnce: "applied once",
	appliedTwice: "applied twice", partlyApplied: "partly applied"}

// judgeAnswer says what is wrong with answering err for an item in state
// ("" if nothing).
func judgeAnswer(err error, state int) string {
	name := answerName(err)
	switch {
	case state == appliedTwice:
		return fmt.Sprintf("%s, applied twice", name)
	case errors.Is(err, ErrUnavailable):
		return ""
	case err == nil && state != appliedOnce:
		return fmt.Sprintf("success, %s", stateNames[state])
	case err != nil && state != notApplied:
		return fmt.Sprintf("%s for its own write (%s)", name, stateNames[state])
	}
	return ""
}

// orphans lists the relationships and adjacency rows whose ends are not
// nodes.
func orphans(t *testing.T, s *Store) []string {
	t.Helper()
	nodes := map[string]bool{}
	var rels []keys.Relationship
	var adjacency []keys.Adjacency
	err := s.scanAll(bg, scanRange{table: keys.TableGraph, family: keys.FamilyGraph}, func(rw row) (bool, error) {
		if _, live, _ := decodeEntity(rw.key, rw.cells); !live && rw.cells[keys.QualCreated] != nil {
			return true, nil // a deleted row's residue
		}
		if id, err := keys.DecodeNode(rw.key); err == nil {
			nodes[id] = true
		} else if r, err := keys.DecodeRelationship(rw.key); err == nil {
			if rw.cells[keys.QualCreated] != nil {
				rels = append(rels, r)
			}
		} else if a, err := keys.DecodeAdjacency(rw.key); err == nil {
			adjacency = append(adjacency, a)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rels {
		for _, end := range []string{r.Start, r.End} {
			if !nodes[end] {
				out = append(out, fmt.Sprintf("relationship %s-%s->%s outlives node %s", r.Start, r.Type, r.End, end))
			}
		}
	}
	for _, a := range adjacency {
		if !nodes[a.Node] || !nodes[a.Other] {
			out = append(out, fmt.Sprintf("index row %s %s %s lists a missing node", a.Node, a.Type, a.Other))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// runMatrixCase runs w with a fault at pos in mode, retrying once after
// UNAVAILABLE, and returns what went wrong ("" if nothing). baseline is
// Repair's report after w without a fault.
func runMatrixCase(t *testing.T, w matrixWrite, pos rpcPosition, mode hbasefault.Mode, baseline string) string {
	s, fc, f := openMatrixStore(t)
	fc.Add(hbasefault.Rule{Kind: pos.kind, Nth: pos.n, Mode: mode,
		Match: func(table string, row []byte) bool { return rowRole(pos.kind, table, row) == pos.role }})
	// A retry is the same call made again: with the same context, whose
	// op (what a mutation derives from its idempotency key) lets the
	// retry recognise the first attempt's effect.
	ctx := WithOp(bg, DeriveOpID("fault matrix", w.name))
	first := w.run(ctx, s, f)
	if !slices.ContainsFunc(fc.Calls(), func(c hbasefault.Call) bool { return c.Mode != hbasefault.Pass }) {
		t.Fatalf("the fault at %s never fired", pos)
	}
	fc.Clear()
	final := first
	if slices.ContainsFunc(first, func(err error) bool { return errors.Is(err, ErrUnavailable) }) {
		retry := w.run(ctx, s, f)
		final = slices.Clone(first)
		for i, err := range first {
			if errors.Is(err, ErrUnavailable) {
				final[i] = retry[i]
			}
		}
	}
	fc.Record(false)

	var wrong []string
	for i, state := range w.observe(t, s, f) {
		if msg := judgeAnswer(final[i], state); msg != "" {
			if errors.Is(first[i], ErrUnavailable) {
				msg = "UNAVAILABLE, then on the retry " + msg
			}
			if len(final) > 1 {
				msg = fmt.Sprintf("item %d: %s", i+1, msg)
			}
			wrong = append(wrong, msg)
		}
	}
	if w.then != nil {
		if err := w.then(s); err != nil {
			wrong = append(wrong, fmt.Sprintf("then: %s: %v", answerName(err), err))
		}
	}
	wrong = append(wrong, orphans(t, s)...)
	report, err := s.Repair(bg)
	if err != nil {
		wrong = append(wrong, fmt.Sprintf("repair failed: %v", err))
	} else if got := reportLine(report); got != baseline {
		wrong = append(wrong, "repair fixed "+got)
	}
	for _, o := range orphans(t, s) {
		wrong = append(wrong, "after repair: "+o)
	}
	return strings.Join(slices.Compact(wrong), "; ")
}

// reportLine is a Repair report on one line.
func reportLine(r RepairReport) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r)) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, r[k]))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

func TestFaultMatrix(t *testing.T) {
	known := map[string]string{}
	if !*updateFaultMatrix {
		known = readFaultMatrixGolden(t)
	}
	failing := map[string]string{}
	ran := map[string]bool{} // -run may select some cases only
	total := 0
	for _, w := range matrixWrites() {
		// A run without faults: the calls the write makes, and what Repair
		// finds after it (nothing).
		s, fc, f := openMatrixStore(t)
		for i, err := range w.run(bg, s, f) {
			if err != nil {
				t.Fatalf("%s without faults, item %d: %v", w.name, i+1, err)
			}
		}
		calls := fc.Calls()
		fc.Record(false)
		for i, state := range w.observe(t, s, f) {
			if state != appliedOnce {
				t.Fatalf("%s without faults, item %d: %s", w.name, i+1, stateNames[state])
			}
		}
		if w.then != nil {
			if err := w.then(s); err != nil {
				t.Fatalf("%s without faults, then: %v", w.name, err)
			}
		}
		report, err := s.Repair(bg)
		if err != nil {
			t.Fatal(err)
		}
		baseline := reportLine(report)
		if baseline != "nothing" {
			t.Logf("%s without faults: repair fixes %s", w.name, baseline)
		}
		for _, pos := range positions(calls) {
			modes := hbasefault.Modes
			if pos.kind.IsRead() {
				modes = []hbasefault.Mode{hbasefault.FailBefore} // the others are the same for a read
			}
			for _, mode := range modes {
				name := fmt.Sprintf("%s/%s/%s", w.name, pos, mode)
				total++
				t.Run(name, func(t *testing.T) {
					ran[name] = true
					msg := runMatrixCase(t, w, pos, mode, baseline)
					if msg != "" {
						failing[name] = msg
					}
					_, listed := known[name]
					switch {
					case *updateFaultMatrix:
					case msg != "" && !listed:
						t.Errorf("fails and is not in %s: %s", faultMatrixGolden, msg)
					case msg == "" && listed:
						t.Errorf("holds now: take it off %s (go test ./store -run TestFaultMatrix -update)", faultMatrixGolden)
					}
				})
			}
		}
	}
	t.Logf("%d of the %d cases run fail (the matrix has %d)", len(failing), len(ran), total)
	if *updateFaultMatrix {
		if len(ran) != total {
			t.Fatalf("-update needs every case; %d of %d ran", len(ran), total)
		}
		writeFaultMatrixGolden(t, failing, total)
		return
	}
	if len(ran) == total {
		for _, name := range slices.Sorted(maps.Keys(known)) {
			if !ran[name] {
				t.Errorf("%s is listed in %s but is no case of the matrix (-update)", name, faultMatrixGolden)
			}
		}
	}
}

func readFaultMatrixGolden(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(faultMatrixGolden)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	known := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, "\t")
		known[name] = reason
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return known
}

func writeFaultMatrixGolden(t *testing.T, failing map[string]string, total int) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# The cases of TestFaultMatrix (faultmatrix_test.go) known to fail: %d of %d.\n", len(failing), total)
	b.WriteString("# One per line: the case (write/RPC#n@row/fault), a tab, what went wrong.\n")
	b.WriteString("# Rewrite with: go test ./store -run TestFaultMatrix -update\n")
	for _, name := range slices.Sorted(maps.Keys(failing)) {
		fmt.Fprintf(&b, "%s\t%s\n", name, failing[name])
	}
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(faultMatrixGolden, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
