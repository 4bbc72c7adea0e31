package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/explain"
	"github.com/hbgraph/hbgraph/graph/codes"
	"github.com/hbgraph/hbgraph/graph/errcode"
	"github.com/hbgraph/hbgraph/graph/generated"
	"github.com/hbgraph/hbgraph/graph/jsonpost"
	"github.com/hbgraph/hbgraph/graph/resolvers"
	"github.com/hbgraph/hbgraph/loaders"
	"github.com/hbgraph/hbgraph/store"
	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/keys"
)

// The differential test: the same operations through gqlgen's executor and
// through the plan, behind the same handler stack over the same store,
// must get the same answers: HTTP status, data byte for byte, errors byte
// for byte (as a multiset when there are several: gqlgen reports them
// from concurrent goroutines), and the same distinct store calls in no
// more waves.

// errFlaky is the fault the fixture's store injects.
var errFlaky = errors.New("injected: region server unreachable")

// flakyClient fails every batch of Gets that reads a row containing
// "flaky": deterministic per key, so both executors see the same failures
// whatever their call order.
type flakyClient struct{ gohbase.Client }

func (c flakyClient) SendBatch(ctx context.Context, batch []hrpc.Call) ([]hrpc.RPCResult, bool) {
	for _, call := range batch {
		if bytes.Contains(call.Key(), []byte("flaky")) {
			res := make([]hrpc.RPCResult, len(batch))
			for i := range res {
				res[i].Error = errFlaky
			}
			return res, false
		}
	}
	return c.Client.SendBatch(ctx, batch)
}

// Fixture node ids: escaping in ids and properties, a long id, a node
// whose reads fail, a node whose row is corrupt.
var (
	fixtureIDs = []string{"n1", "n2", "n3", "n4", "n5", "n6", `q"uote`, `back\slash`, "new\nline", "ctl\u0001\u001f",
		"<tag>&", "ünïcødé ☃", strings.Repeat("L", store.MaxIDBytes), "flaky1", "corrupt1"}
	missingIDs = []string{"nope", "n99", "N1"}
	invalidIDs = []string{"", strings.Repeat("x", store.MaxIDBytes+1)}
)

var fixtureProps = []store.Properties{
	{"name": "Ada", "age": 36, "score": 1.5, "ok": true, "none": nil, "tags": []any{"a", 1, false}},
	{},
	nil,
	{"q": "a\"b\\c\nd\u0001e", "u": "ünï ☃ <&>", "e": ""},
	{"big": 12345678901234, "neg": -0.25, "exp": 1e300},
}

// What the fixture holds, for the generator.
var (
	fixtureRels     []store.RelationshipKey
	fixtureArticles []string
	fixtureCursors  []string
)

var (
	fixtureOnce  sync.Once
	fixtureStore *store.Store
	fixtureErr   error
)

// fixture is the store every differential test reads (never writes).
func fixture(t testing.TB) *store.Store {
	t.Helper()
	fixtureOnce.Do(func() { fixtureStore, fixtureErr = buildFixture() })
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return fixtureStore
}

func buildFixture() (*store.Store, error) {
	hc, err := embedded.Open(embedded.Options{Tables: keys.Tables(), Logger: zerolog.Nop()})
	if err != nil {
		return nil, err
	}
	// Never closed: shared by the package's tests, gone with the process.
	now := time.UnixMilli(1743022721824)
	clock := func() time.Time { now = now.Add(time.Millisecond); return now }
	st, err := store.New(flakyClient{hc}, store.Options{Clock: clock, Feed: store.FeedOptions{Types: []string{"follows"}}})
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	for i, id := range append(slices.Clone(fixtureIDs), "gone1") {
		// Owned by alice, by bob, or by nobody: Node.owner shows to whom
		// it may.
		owner := []string{"alice", "bob", ""}[i%3]
		if _, err := st.CreateNode(ctx, id, owner, fixtureProps[i%len(fixtureProps)]); err != nil {
			return nil, fmt.Errorf("node %q: %w", id, err)
		}
	}
	// n1 follows everyone but flaky1 (whose reads fail: a failed read fails
	// its whole batch, and which keys share gqlgen's batches depends on
	// its scheduler's timing); n2 follows n1 and n3; n3 follows corrupt1
	// and gone1, which will not be readable and gone; n4 likes n1.
	rels := []store.RelationshipKey{{Start: "n2", Type: "follows", End: "n1"}, {Start: "n2", Type: "follows", End: "n3"},
		{Start: "n3", Type: "follows", End: "corrupt1"}, {Start: "n3", Type: "follows", End: "gone1"}, {Start: "n4", Type: "likes", End: "n1"}}
	for _, id := range fixtureIDs[1:] {
		if id != "flaky1" {
			rels = append(rels, store.RelationshipKey{Start: "n1", Type: "follows", End: id})
		}
	}
	for i, k := range rels {
		if _, err := st.CreateRelationship(ctx, k, fixtureProps[i%len(fixtureProps)]); err != nil {
			return nil, fmt.Errorf("relationship %v: %w", k, err)
		}
		fixtureRels = append(fixtureRels, k)
	}
	// Articles in two categories, some authors with none; gone1's will
	// have no author.
	for i, id := range append(slices.Clone(fixtureIDs[:8]), "gone1") {
		for a := range 1 + i%4 {
			art, err := st.PostArticle(ctx, id, fmt.Sprintf("title %d \"%d\" of %s", a, i, id), "body\n\u0001", []string{"tech", "life"}[a%2])
			if err != nil {
				return nil, err
			}
			fixtureArticles = append(fixtureArticles, art.ID)
		}
	}
	// Cursors of some connections, to page from.
	for _, k := range []struct{ id, typ string }{{"n1", "follows"}, {"n2", "follows"}} {
		page, err := st.Adjacent(ctx, k.id, k.typ, store.Outgoing, store.PageRequest{Size: 3})
		if err != nil {
			return nil, err
		}
		fixtureCursors = append(fixtureCursors, page.Cursors.All()...)
	}
	for _, id := range []string{"n3", "n4"} {
		page, err := st.Articles(ctx, id, store.ArticleQuery{}, store.PageRequest{Size: 2})
		if err != nil {
			return nil, err
		}
		fixtureCursors = append(fixtureCursors, page.Cursors.All()...)
	}
	for _, id := range []string{"n1", "n2"} {
		page, err := st.Feed(ctx, id, "follows", store.PageRequest{Size: 2})
		if err != nil {
			return nil, err
		}
		fixtureCursors = append(fixtureCursors, page.Cursors.All()...)
	}
	// corrupt1's created cell is not a timestamp; gone1's row is deleted
	// (its relationship and articles stay).
	put, err := hrpc.NewPutStr(ctx, keys.TableGraph, string(keys.Node("corrupt1")), map[string]map[string][]byte{
		keys.Tables()[keys.TableGraph][0]: {"c": []byte("bad")}})
	if err != nil {
		return nil, err
	}
	if _, err := hc.Put(put); err != nil {
		return nil, err
	}
	del, err := hrpc.NewDelStr(ctx, keys.TableGraph, string(keys.Node("gone1")), nil)
	if err != nil {
		return nil, err
	}
	if _, err := hc.Delete(del); err != nil {
		return nil, err
	}
	return st, nil
}

// testLoaders is the loader configuration of both stacks.
var testLoaders = loaders.Config{Wait: 10 * time.Millisecond, BatchSize: 1000, ScanConcurrency: 1}

// stack is the gateway's handler stack, as newGateway builds it, around
// es: the POST transport, a query cache, introspection, explain, the
// loaders and their scheduler, the error presenter and recover func. Every
// request gets the request id "req", so INTERNAL messages match.
func stack(st *store.Store, es graphql.ExecutableSchema) http.Handler {
	gql := handler.New(es)
	gql.AddTransport(jsonpost.Transport{})
	gql.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	gql.Use(extension.Introspection{})
	gql.Use(explain.Extension{RowKeys: func(context.Context) bool { return true }}) // compared for every caller
	gql.SetErrorPresenter(presentError)
	gql.SetRecoverFunc(func(ctx context.Context, v any) error { return errors.New("panic in resolver") })
	h := loaders.Middleware(st, testLoaders, gql)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := auth.With(r.Context(), testCallers[r.Header.Get("X-Test-Caller")])
		ctx, cancel := context.WithTimeout(explain.With(ctx, explain.NewRequest("req")), 10*time.Second)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// testCallers are who the differential test asks as: anonymous, the owner
// of a third of the nodes, and an admin.
var testCallers = map[string]auth.Principal{
	"anonymous": {},
	"alice":     {Subject: "alice", Scopes: []string{"read"}},
	"admin":     {Subject: "root", Scopes: []string{auth.DefaultAdminScope}, Admin: true},
}

// callerOf picks the caller of query, the same for both executors.
func callerOf(query string) string {
	h := fnv.New32a()
	h.Write([]byte(query))
	return []string{"anonymous", "alice", "admin"}[h.Sum32()%3]
}

// presentError is server.go's error presenter without its messages and
// log: codes by the server's policy (graph/errcode), the request id in
// place of an internal error's message.
func presentError(ctx context.Context, err error) *gqlerror.Error {
	gerr := graphql.DefaultErrorPresenter(ctx, err)
	code, given := errcode.Of(err, gerr)
	if given {
		return gerr
	}
	if code == codes.Internal {
		id := ""
		if r := explain.From(ctx); r != nil {
			id = r.ID
		}
		gerr.Message = "internal error (request id " + id + ")"
	}
	if gerr.Extensions == nil {
		gerr.Extensions = map[string]any{}
	}
	gerr.Extensions["code"] = code
	return gerr
}

// differ runs operations through both executors.
type differ struct {
	gqlgen, plan http.Handler
	schema       *Schema
}

func newDiffer(t testing.TB) *differ { return newDifferWith(t, nil) }

// newDifferWith is newDiffer with the plan's test hooks h.
func newDifferWith(t testing.TB, h *hooks) *differ {
	st := fixture(t)
	newES := func() graphql.ExecutableSchema {
		return generated.NewExecutableSchema(generated.Config{Resolvers: &resolvers.Resolver{Store: st}})
	}
	s := Wrap(newES(), Options{Store: st, Loaders: testLoaders, hooks: h})
	return &differ{gqlgen: stack(st, newES()), plan: stack(st, s), schema: s}
}

type answer struct {
	status int
	ctype  string
	body   []byte
	Data   json.RawMessage   `json:"data"`
	Errors []json.RawMessage `json:"errors"`
	Ext    struct {
		Explain explain.Report `json:"explain"`
	} `json:"extensions"`
}

func ask(h http.Handler, body []byte, caller string) (answer, error) {
	r := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Test-Caller", caller)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	a := answer{status: w.Code, ctype: w.Header().Get("Content-Type"), body: w.Body.Bytes()}
	dec := json.NewDecoder(bytes.NewReader(a.body))
	dec.UseNumber()
	return a, dec.Decode(&a)
}

// calls are the distinct store calls of an explain report, without their
// timing or round.
func calls(r explain.Report) []string {
	var out []string
	for _, w := range r.Waves {
		for _, c := range w.Calls {
			switch c.Op {
			case "Scan":
				// The rows a scan read tell whether it looked one row ahead.
				out = append(out, fmt.Sprintf("Scan %s %s..%s rev=%v read=%d", c.Table, *c.StartRow, *c.StopRow, c.Reversed, c.RowsRead))
			default:
				for _, row := range c.Rows {
					out = append(out, fmt.Sprintf("Get %s %s", c.Table, row))
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// compare runs one request through both executors: "" when they agree,
// else what differs.
func (d *differ) compare(query string, vars map[string]any, opName string) string {
	req := map[string]any{"query": query, "variables": vars, "extensions": map[string]any{"explain": true}}
	if opName != "" {
		req["operationName"] = opName
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err.Error()
	}
	caller := callerOf(query)
	want, errW := ask(d.gqlgen, body, caller)
	before, fellBefore := d.schema.planned.Load(), d.schema.fellBack.Load()
	got, errG := ask(d.plan, body, caller)
	// A plan that panicked fell back to gqlgen: its calls and waves are
	// the plan's unfinished ones and gqlgen's.
	planned := d.schema.planned.Load() > before && d.schema.fellBack.Load() == fellBefore
	var diffs []string
	switch {
	case errW != nil || errG != nil:
		diffs = append(diffs, fmt.Sprintf("undecodable: %v / %v", errW, errG))
	case want.status != got.status || want.ctype != got.ctype:
		diffs = append(diffs, fmt.Sprintf("status %d %s, plan %d %s", want.status, want.ctype, got.status, got.ctype))
	}
	if !bytes.Equal(want.Data, got.Data) {
		diffs = append(diffs, "data differs")
	}
	we, ge := rawStrings(want.Errors), rawStrings(got.Errors)
	if len(we) > 1 {
		slices.Sort(we)
		slices.Sort(ge)
	}
	if !slices.Equal(we, ge) {
		diffs = append(diffs, "errors differ")
	}
	// Store calls are compared when the plan ran. Both read the pages,
	// counters and word counts of a node in the wave of its row, before
	// knowing whether it exists, and gqlgen's explain lists those reads only
	// if they end before its response does; a relationship or article row a
	// page scan read is cached (primed), and whether gqlgen's Get of it
	// comes before or after the scan is a matter of timing. So: the same
	// node rows, and every call gqlgen made the plan made. A page's far
	// ends are read in the wave of its scan, to check them (store's
	// CheckEnds): when a row of the wave fails the response, gqlgen stops
	// before the scans the plan has already made, and the plan has read
	// their far ends too.
	if wc, gc := calls(want.Ext.Explain), calls(got.Ext.Explain); planned && !sameCalls(wc, gc, len(we) > 0) {
		diffs = append(diffs, fmt.Sprintf("store calls differ:\ngqlgen %q\nplan   %q", wc, gc))
	}
	// Waves: one per level of nodes at most (depth + 1), each one round
	// of calls in explain, and at most one end check after each.
	if waves, budget := d.schema.lastWaves.Load(), d.schema.lastBudget.Load(); planned {
		rounds, checks := explainRounds(got.Ext.Explain)
		if waves > budget || rounds > waves || checks > waves {
			diffs = append(diffs, fmt.Sprintf("plan made %d waves (explain: %d, and %d end checks), at most %d", waves, rounds, checks, budget))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	vj, _ := json.Marshal(vars)
	return fmt.Sprintf("%s\noperation %q as %s\n%s\nvariables %s\ngqlgen: %s\nplan:   %s",
		strings.Join(diffs, "\n"), opName, caller, query, vj, want.body, got.body)
}

// explainRounds counts r's waves: those with a call of a dispatch round,
// and those only of end checks (a negative round, store.Call.Round).
func explainRounds(r explain.Report) (rounds, endChecks int64) {
	for _, w := range r.Waves {
		if slices.ContainsFunc(w.Calls, func(c explain.CallReport) bool { return c.Round >= 0 }) {
			rounds++
		} else {
			endChecks++
		}
	}
	return rounds, endChecks
}

// sameCalls: the same node rows (with failed, the plan's may be more),
// and the plan made every call gqlgen made.
func sameCalls(gqlgen, plan []string, failed bool) bool {
	entities := func(cs []string) []string {
		var out []string
		for _, c := range cs {
			if nodeRow(c) {
				out = append(out, c)
			}
		}
		return out
	}
	if !failed && !slices.Equal(entities(gqlgen), entities(plan)) {
		return false
	}
	for _, c := range gqlgen {
		if _, found := slices.BinarySearch(plan, c); !found {
			return false
		}
	}
	return true
}

// nodeRow tells a read of a node's row from the others, by the row's
// layout: graph rows are H(id) then a tag, 0x00 for a node.
func nodeRow(call string) bool {
	op, rest, _ := strings.Cut(call, " ")
	table, row, _ := strings.Cut(rest, " ")
	raw, err := strconv.Unquote(`"` + row + `"`)
	return op == "Get" && table == keys.TableGraph && err == nil && len(raw) > 4 && raw[4] == 0x00
}

func rawStrings(rs []json.RawMessage) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}

// corpus are fixed operations, run every time: the benchmark's queries,
// GraphiQL's example and hand-written edge cases.
func corpus(t *testing.T) []struct {
	name, query string
	vars        map[string]any
} {
	type c = struct {
		name, query string
		vars        map[string]any
	}
	var out []c
	for _, q := range []string{"q1", "q2", "q3", "q4"} {
		b, err := os.ReadFile("../../bench/queries/" + q + ".graphql")
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"n1", "nope", "", "flaky1", "corrupt1", `q"uote`} {
			out = append(out, c{q + " " + id, string(b), map[string]any{"id": id, "category": "tech"}})
		}
	}
	if b, err := os.ReadFile("../../graphiql/example.graphql"); err == nil {
		out = append(out, c{"graphiql example", string(b), map[string]any{"id": "n1"}})
	}
	out = append(out, []c{
		{"typename only", `{ __typename }`, nil},
		{"node literal", `{ node(id: "n1") { id properties createdAt updatedAt __typename } }`, nil},
		{"node escapes", `query($id: ID!) { node(id: $id) { id properties } }`, map[string]any{"id": "ctl\u0001\u001f"}},
		{"node number id", `{ node(id: 7) { id } }`, nil},
		{"node absent", `{ node(id: "nope") { id } }`, nil},
		{"node invalid", `{ a: node(id: "") { id } b: node(id: "n1") { id } }`, nil},
		{"node corrupt", `{ node(id: "corrupt1") { id } }`, nil},
		{"node flaky", `{ x: node(id: "flaky1") { id } }`, nil},
		{"nodes flaky", `{ nodes(ids: ["n1", "flaky1"]) { id } }`, nil},
		{"nodes", `{ nodes(ids: ["n1", "nope", "n1", "<tag>&"]) { id __typename } }`, nil},
		{"nodes empty", `{ nodes(ids: []) { id } }`, nil},
		{"nodes single value", `query($i: ID!) { nodes(ids: $i) { id } }`, map[string]any{"i": "n2"}},
		{"nodes invalid", `{ nodes(ids: ["n1", ""]) { id } __typename }`, nil},
		{"nodes corrupt", `{ nodes(ids: ["n1", "corrupt1"]) { id } node(id: "n2") { id } }`, nil},
		{"nodes corrupt, nothing read below", `{ nodes(ids: ["n2", "corrupt1"]) { relationships(type: "follows", direction: OUTGOING) { edges { neighbor { id } } } } }`, nil},
		{"nodes too many", `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": slices.Repeat([]any{"n1"}, 101)}},
		{"fragments", `query { node(id: "n1") { ...A ... on Node { createdAt } ... on _Entity { ... on Node { id } } } } fragment A on Node { id properties }`, nil},
		{"skip include", `query($s: Boolean!) { node(id: "n1") { id @skip(if: $s) properties @include(if: $s) } }`, map[string]any{"s": true}},
		{"skip include false", `query($s: Boolean!) { node(id: "n1") { id @skip(if: $s) properties @include(if: $s) } }`, map[string]any{"s": false}},
		{"two operations", `query A { node(id: "n1") { id } } query B { __typename }`, nil},
		{"introspection", `{ __schema { queryType { name } } __type(name: "Node") { name } }`, nil},
		{"service", `{ _service { sdl } }`, nil},
		{"entities", `query($r: [_Any!]!) { _entities(representations: $r) { ... on Node { id } } }`, map[string]any{"r": []any{map[string]any{"__typename": "Node", "id": "n1"}}}},
		{"entities of every kind", `query($r: [_Any!]!) { _entities(representations: $r) { __typename ... on Node { id relationships(type: "follows", direction: OUTGOING, first: 2) { totalCount edges { neighbor { id } } } } ... on Relationship { id startNode { id } endNode { id } } ... on Article { title author { id } } } }`,
			map[string]any{"r": []any{map[string]any{"__typename": "Node", "id": "n1"}, map[string]any{"__typename": "Node", "id": "nope"}, map[string]any{"__typename": "Node", "id": ""},
				map[string]any{"__typename": "Node", "id": "corrupt1"}, map[string]any{"__typename": "Relationship", "id": store.RelationshipKey{Start: "n3", Type: "follows", End: "gone1"}.ID()},
				map[string]any{"__typename": "Relationship", "id": "garbage"}, map[string]any{"__typename": "Article", "id": "nope"}}}},
		{"entities refused", `query($r: [_Any!]!) { _entities(representations: $r) { ... on Node { id } } }`, map[string]any{"r": []any{map[string]any{"__typename": "Nope", "id": "n1"}, map[string]any{"id": "n2"}}}},
		{"validation error", `{ node(id: "n1") { nope } }`, nil},
		{"variable missing", `query($id: ID!) { node(id: $id) { id } }`, nil},
	}...)
	return out
}

func TestDiffCorpus(t *testing.T) {
	d := newDiffer(t)
	for _, c := range corpus(t) {
		opName := ""
		if c.name == "two operations" {
			opName = "A"
		}
		if diff := d.compare(c.query, c.vars, opName); diff != "" {
			t.Errorf("%s: %s", c.name, diff)
		}
	}
	t.Logf("%d planned, %d by gqlgen", d.schema.planned.Load(), d.schema.fellBack.Load())
	if d.schema.planned.Load() == 0 {
		t.Errorf("the plan ran none of the corpus")
	}
}

// generatedOps is how many generated operations TestDiffGenerated runs.
func generatedOps() int {
	if testing.Short() {
		return 500
	}
	return 5000
}

func TestDiffGenerated(t *testing.T) {
	d := newDiffer(t)
	n := generatedOps()
	for seed := range uint64(n) {
		op := generate(seed)
		if diff := d.compareOp(op); diff != "" {
			t.Fatalf("seed %d: %s", seed, diff)
		}
	}
	planned, fell := d.schema.planned.Load(), d.schema.fellBack.Load()
	t.Logf("%d operations: %d planned, %d by gqlgen", n, planned, fell)
	// Most generated operations validate and stay within what the plan
	// covers: a generator drifting off it would test nothing.
	if planned < int64(n)/2 {
		t.Errorf("only %d of %d generated operations ran through the plan", planned, n)
	}
}

// FuzzPlanDiff searches further seeds: go test -fuzz PlanDiff ./graph/plan
func FuzzPlanDiff(f *testing.F) {
	f.Add(uint64(1))
	f.Fuzz(func(t *testing.T, seed uint64) {
		d := fuzzDiffer(t)
		op := generate(seed)
		if diff := d.compareOp(op); diff != "" {
			t.Fatalf("seed %d: %s", seed, diff)
		}
	})
}

var (
	fuzzOnce sync.Once
	fuzzD    *differ
)

func fuzzDiffer(t testing.TB) *differ {
	fuzzOnce.Do(func() { fuzzD = newDiffer(t) })
	return fuzzD
}

// TestDiffCatches: each deliberately broken rule of the plan makes the
// differential test fail within its default budget of generated
// operations: the test can fail.
func TestDiffCatches(t *testing.T) {
	for _, rule := range slices.Sorted(maps.Keys(brokenRules)) {
		t.Run(rule, func(t *testing.T) {
			d := newDifferWith(t, brokenRules[rule]()) // plans compiled afresh, with the rule broken
			for seed := range uint64(generatedOps()) {
				op := generate(seed)
				if d.compareOp(op) != "" {
					t.Logf("caught by seed %d", seed)
					return
				}
			}
			t.Errorf("no generated operation tells the plan with %q broken from gqlgen", rule)
		})
	}
}

// TestPanicFallsBack: a panic in a plan (a bug) is logged and counted, and
// gqlgen answers the operation instead, as it would have.
func TestPanicFallsBack(t *testing.T) {
	st := fixture(t)
	reg := prometheus.NewRegistry()
	var logged bytes.Buffer
	h := &hooks{writing: func(*writer) { panic("plan: broken for a test") }}
	s := Wrap(generated.NewExecutableSchema(generated.Config{Resolvers: &resolvers.Resolver{Store: st}}),
		Options{Store: st, Loaders: testLoaders, Log: zerolog.New(&logged), Registerer: reg, hooks: h})
	d := &differ{gqlgen: stack(st, generated.NewExecutableSchema(generated.Config{Resolvers: &resolvers.Resolver{Store: st}})), plan: stack(st, s), schema: s}
	q := `{ node(id: "n1") { id relationships(type: "follows", direction: OUTGOING, first: 2) { edges { neighbor { id } } } } }`
	if diff := d.compare(q, nil, ""); diff != "" {
		t.Fatal(diff)
	}
	if !strings.Contains(logged.String(), "panic in plan") {
		t.Errorf("log: %s", logged.String())
	}
	h.writing = nil
	d.compare(`mutation { deleteNode(id: "nope") }`, nil, "")
	d.compare(q, nil, "")
	want := map[string]float64{"gqlgen/panic": 1, "gqlgen/mutation": 1, "plan/": 2}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			got[labels["executor"]+"/"+labels["reason"]] = m.GetCounter().GetValue()
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("hbgraph_plan_total %v, want %v", got, want)
	}
}
