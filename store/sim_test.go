package store

// The replica simulation (issue 23): three gateway replicas, each its own
// Store with its own clock (0, +skew, -skew; a gateway keeps no other state
// across requests: its loaders batch one operation's reads), over one embedded engine
// behind the fault injector (store/hbasefault), run a seeded random
// workload of every write and read from several goroutines each, over a
// key space small enough that operations collide. Every write carries an
// OpID (WithOp), and a caller that gets UNAVAILABLE retries it with the
// same op, as a client with an Idempotency-Key would, on any replica.
// Then the faults stop, the writes still unanswered are retried once more
// (the settle), and the test checks that
//
//   - every history of a node, of a relationship (with its two end
//     nodes) and of an article is linearizable (porcupine; UNAVAILABLE is
//     an outcome left open: applied or not, at any time after the call;
//     see linStep, and simNodeDeleteHelps for the one leniency);
//   - every acknowledged article is there exactly once, an article whose
//     post failed definitely is not, and none is there twice;
//   - the invariants hold: a degree equals its index rows, every
//     relationship has both index rows and both ends, article counts and
//     word counts equal a recount of the articles, no node that does not
//     exist has relationships or articles;
//   - Repair finds nothing (simAllowedRepairs lists what it may).
//
// Each worker's operations and the fault plan follow from the seed; with
// -sim.serial (one operation at a time, the workers' turns drawn from the
// seed) the run is the same every time up to the wall clock's part in
// timestamps; concurrent runs interleave as the scheduler does, so a seed
// reproduces their workload and faults, and their failures usually. A
// failure prints its seed and flags; -seed N runs that one, -sim.seeds K
// the K seeds from N on. make soak runs many seeds, longer. A concurrent
// failure rarely comes back with its seed: -sim.rpcs writes every RPC the
// engine answered, with its op, request and answer, beside the failing
// history (simrpcs_test.go), which is how the last races were read.
//
// The defaults are the serial run make test's unit runs: seeds 1-20, one
// operation at a time (-sim.serial), every fault (-sim.faults=all). The
// concurrent one, -sim.serial=false (make sim-concurrent over the same
// seeds, make sim-soak over 2,000), failed on none of 20,000 seeds after
// the five races -sim.rpcs found, and runs in make test too (make
// sim-concurrent). In it two of the three replicas overlap their writes'
// independent calls (Options.OverlapCalls); after the four races that
// found (README, "Tests and benchmarks"), 2 of 40,000 seeds failed, on
// degree counts a deletion cut short left (seeds 887016, 892694; fixed
// since: TestRelationshipDeletionCutShortIsFinishedByAnEndsDetach), and
// after that fix 1 of 36,224 (seed 936223, not traced). A
// failure of a history prints where the longest linearization the checker
// found stops, and the operations it could not place next.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/rs/zerolog"
	"github.com/tsuna/gohbase"

	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/hbasefault"
	"github.com/hbgraph/hbgraph/store/keys"
	"github.com/hbgraph/hbgraph/store/pagescan"
)

var (
	simSeed    = flag.Uint64("seed", 1, "replica simulation: the first seed to run (0: one from the clock, printed); make test runs seeds 1-20, make soak SOAK_SEEDS from SOAK_SEED")
	simSeeds   = flag.Int("sim.seeds", 20, "replica simulation: how many seeds to run, from -seed on")
	simOps     = flag.Int("sim.ops", 360, "replica simulation: operations per seed, over all replicas")
	simFaults  = flag.String("sim.faults", "all", "replica simulation: none, all, or a comma list of fail-before, fail-after, apply-twice")
	simRate    = flag.Float64("sim.rate", 0.02, "replica simulation: the share of RPCs faulted")
	simSkew    = flag.Duration("sim.skew", 5*time.Second, "replica simulation: the clock offset of replicas 1 (+) and 2 (-)")
	simWorkers = flag.Int("sim.workers", 3, "replica simulation: goroutines per replica")
	simSerial  = flag.Bool("sim.serial", true, "replica simulation: one operation at a time, the workers taking turns drawn from the seed (the same run every time); false: each worker in its own goroutine")
	simTrace   = flag.Bool("sim.trace", false, "replica simulation: log every operation as it is answered")
	simTx      = flag.Bool("sim.tx", true, "replica simulation: replica 0 runs each write it can in one transaction of the engine, as the embedded engine's gateway does")
	simRPCs    = flag.Bool("sim.rpcs", false, "replica simulation: keep every RPC the engine answers, with its op, and write them to a file beside a failing history's")
	simWithout = flag.String("sim.without", "", "replica simulation: a comma list of operations the workload leaves out (e.g. deleteNode)")
)

// The key space: small, so that operations collide.
var (
	simNodes    = []string{"n0", "n1", "n2", "n3"}
	simRelTypes = []string{"knows", "likes"}
	// Authors: a0 and a1 exist throughout (created before the workload,
	// never deleted); n0 and n1 are graph nodes the workload deletes.
	simAuthors    = []string{"a0", "a1", "n0", "n1"}
	simStable     = map[string]bool{"a0": true, "a1": true}
	simCategories = []string{"c0", "c1"}
	simWords      = []string{"red", "green", "blue", "cyan", "gold", "gray"}
)

// simAllowedRepairs are the fixes Repair may report after the settle
// without failing the simulation: the counters a node's deletion leaves at
// zero rather than hide a concurrent writer's Increment under a delete
// marker (DeleteNode, deleteDegreeRows). checkInvariants has already found
// every counter and word count equal to a recount, so what these delete
// counts nothing. (A write left UNAVAILABLE and never retried may leave
// work for Repair; the settle retries every one.)
var simAllowedRepairs = map[string]bool{
	fixCountersOfGoneNodeDelete:     true,
	"orphan degree counter deleted": true,
	fixWordCountDeleted:             true,
}

// simRetries is how many times a caller makes a write that keeps
// answering UNAVAILABLE during the workload, the first time included.
const simRetries = 3

type simKind string

const (
	simCreateNode    simKind = "createNode"
	simUpdateNode    simKind = "updateNode"
	simDeleteNode    simKind = "deleteNode"
	simReadNode      simKind = "readNode"
	simCreateRel     simKind = "createRelationship"
	simUpdateRel     simKind = "updateRelationship"
	simDeleteRel     simKind = "deleteRelationship"
	simReadRel       simKind = "readRelationship"
	simAdjacent      simKind = "adjacent"
	simPostArticle   simKind = "postArticle"
	simUpdateArticle simKind = "updateArticle"
	simDeleteArticle simKind = "deleteArticle"
	simReadArticle   simKind = "readArticle"
	simArticlesPage  simKind = "articles"
	simTopWords      simKind = "topWords"
)

// simMix is the workload's mix: each kind with its weight.
var simMix = []simWeight{
	{simCreateNode, 10}, {simUpdateNode, 7}, {simDeleteNode, 7}, {simReadNode, 7},
	{simCreateRel, 12}, {simUpdateRel, 6}, {simDeleteRel, 6}, {simReadRel, 6}, {simAdjacent, 6},
	{simPostArticle, 10}, {simUpdateArticle, 5}, {simDeleteArticle, 4}, {simReadArticle, 4},
	{simArticlesPage, 4}, {simTopWords, 3},
}

type simWeight struct {
	kind   simKind
	weight int
}

func (k simKind) isWrite() bool {
	switch k {
	case simReadNode, simReadRel, simAdjacent, simReadArticle, simArticlesPage, simTopWords:
		return false
	}
	return true
}

// simOp is one operation of the workload, as its caller saw it: called at
// tick call, answered at tick ret (after its retries) with err.
type simOp struct {
	client  int
	kind    simKind
	replica int // the replica of the last attempt
	op      OpID

	node     string
	detach   bool
	rel      RelationshipKey
	dir      Direction
	author   string
	article  string // an article's id: given, or the one a post returned
	title    string
	body     string
	category string
	val      int64 // the value a write writes

	call, ret int64
	attempts  int
	settled   bool // answered by the settle's retry
	err       error

	found   bool // reads
	readVal int64
	// answered is the value an update's answer holds (see
	// simUpdateAnswersNow).
	answered int64
}

type simulation struct {
	t        *testing.T
	seed     uint64
	fc       *hbasefault.Client
	replicas []*Store
	tick     atomic.Int64
	without  map[simKind]bool

	mu       sync.Mutex
	ops      []*simOp
	pool     []string // ids of articles posted with success, for updates and deletes
	failures []string
}

func (sim *simulation) fail(format string, args ...any) {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	sim.failures = append(sim.failures, fmt.Sprintf(format, args...))
}

// simWithoutKinds parses -sim.without.
func simWithoutKinds(t *testing.T) map[simKind]bool {
	out := map[simKind]bool{}
	if *simWithout == "" {
		return out
	}
	for name := range strings.SplitSeq(*simWithout, ",") {
		if !slices.ContainsFunc(simMix, func(m simWeight) bool { return string(m.kind) == name }) {
			t.Fatalf("-sim.without: %q is no operation of the workload", name)
		}
		out[simKind(name)] = true
	}
	if len(out) == len(simMix) {
		t.Fatal("-sim.without leaves no operation")
	}
	return out
}

func simModes(t *testing.T) []hbasefault.Mode {
	switch *simFaults {
	case "none", "":
		return nil
	case "all":
		return hbasefault.Modes
	}
	var modes []hbasefault.Mode
	for name := range strings.SplitSeq(*simFaults, ",") {
		i := slices.IndexFunc(hbasefault.Modes, func(m hbasefault.Mode) bool { return m.String() == name })
		if i < 0 {
			t.Fatalf("-sim.faults: %q is none of none, all, fail-before, fail-after, apply-twice", name)
		}
		modes = append(modes, hbasefault.Modes[i])
	}
	return modes
}

func TestReplicaSimulation(t *testing.T) {
	seed := *simSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())%1_000_000_000 + 1
	}
	modes := simModes(t)
	if *simSeeds <= 1 {
		runSimulation(t, seed, modes)
		return
	}
	for i := range *simSeeds {
		s := seed + uint64(i)
		t.Run(fmt.Sprintf("seed=%d", s), func(t *testing.T) { runSimulation(t, s, modes) })
	}
}

// simReproduce is the command that runs seed again with this run's flags.
func simReproduce(seed uint64) string {
	return fmt.Sprintf("go test ./store -run 'TestReplicaSimulation$' -seed %d -sim.faults=%s -sim.serial=%v -sim.ops=%d -sim.rate=%g -sim.skew=%s -sim.workers=%d -sim.without=%s",
		seed, *simFaults, *simSerial, *simOps, *simRate, *simSkew, *simWorkers, *simWithout)
}

func runSimulation(t *testing.T, seed uint64, modes []hbasefault.Mode) {
	t.Logf("seed %d: %s", seed, simReproduce(seed))
	// One clock, the engine's (the region servers'), that every reading
	// moves on by two milliseconds: timestamps, and so article ids, index
	// rows and the fault plan's choices, are the same in every serial run
	// of a seed, and a wait for the clock to pass a timestamp (which polls
	// it every millisecond of the wall clock, and gives up after the wait
	// it expected and a second) ends sooner than on the wall clock. The
	// replicas read it with their offsets.
	clk := newFakeClock()
	clk.step = 2
	db, err := embedded.Open(embedded.Options{Tables: keys.Tables(), Logger: zerolog.Nop(), Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	var engine gohbase.Client = db
	var trace *rpcTrace
	if *simRPCs {
		trace = &rpcTrace{inner: db, rpcLog: &rpcLog{}}
		engine = trace
	}
	fc := hbasefault.New(engine)
	var client gohbase.Client = fc
	if trace != nil {
		client = &rpcTrace{inner: fc, rpcLog: trace.rpcLog, faults: true}
	}
	sim := &simulation{t: t, seed: seed, fc: fc, without: simWithoutKinds(t)}
	for i, offset := range []time.Duration{0, *simSkew, -*simSkew} {
		// Concurrent runs: the replicas ahead and behind overlap their
		// writes' independent calls, as a cluster's gateways do; the first
		// makes them one after the other, as over the embedded engine.
		// (Serial runs keep every call in turn, to stay the same run.)
		overlap := !*simSerial && i > 0
		replicaClient := client
		if i == 0 && *simTx {
			// As the embedded engine's gateway runs: each write one
			// transaction of the engine (its calls through the injector).
			replicaClient = simTxClient{client.(simRPCClient), db}
		}
		s, err := New(replicaClient, Options{Clock: func() time.Time { return clk.Now().Add(offset) }, OverlapCalls: overlap})
		if err != nil {
			t.Fatal(err)
		}
		sim.replicas = append(sim.replicas, s)
	}
	for a := range simStable {
		if _, err := sim.replicas[0].CreateNode(bg, a, "sim", Properties{"v": "0"}); err != nil {
			t.Fatal(err)
		}
	}
	if len(modes) > 0 {
		fc.SetRandom(&hbasefault.Random{Seed: seed, Rate: *simRate, Modes: modes})
	}

	workers := make([]*simWorker, len(sim.replicas)*max(1, *simWorkers))
	perWorker := (*simOps + len(workers) - 1) / len(workers)
	for w := range workers {
		workers[w] = sim.newWorker(w, w%len(sim.replicas), perWorker)
	}
	if *simSerial {
		// One operation at a time, the workers' turns drawn from the seed.
		rng := rand.New(rand.NewPCG(seed, math.MaxUint64))
		for len(workers) > 0 {
			i := rng.IntN(len(workers))
			if !workers[i].step() {
				workers = slices.Delete(workers, i, i+1)
			}
		}
	} else {
		var wg sync.WaitGroup
		for _, w := range workers {
			wg.Go(func() {
				for w.step() {
				}
			})
		}
		wg.Wait()
	}

	fc.Clear()
	sim.settle()
	sim.finalReads()

	sim.checkLinearizable()
	sim.checkUpdateAnswers()
	sim.checkArticlesOnce()
	sim.checkInvariants("after the settle")
	report, err := sim.replicas[0].Repair(bg)
	if err != nil {
		sim.fail("repair: %v", err)
	}
	for kind, n := range report {
		if !simAllowedRepairs[kind] {
			sim.fail("repair fixed %s: %d", kind, n)
		}
	}
	for _, o := range orphans(t, sim.replicas[0]) {
		sim.fail("after repair: %s", o)
	}

	var unknown, faulted int
	for _, o := range sim.ops {
		if errors.Is(o.err, ErrUnavailable) {
			unknown++
		}
		if o.attempts > 1 || o.settled {
			faulted++
		}
	}
	t.Logf("%d operations and final reads, %d retried, %d left UNAVAILABLE", len(sim.ops), faulted, unknown)
	if len(sim.failures) > 0 {
		slices.Sort(sim.failures)
		fs := slices.Compact(sim.failures)
		const show = 40
		for _, f := range fs[:min(len(fs), show)] {
			t.Errorf("seed %d: %s", seed, f)
		}
		if len(fs) > show {
			t.Errorf("seed %d: and %d more", seed, len(fs)-show)
		}
		t.Errorf("seed %d failed; reproduce with: %s", seed, simReproduce(seed))
		if trace != nil {
			sim.writeTrace(trace)
		}
	}
}

// simWorker is one client of the workload: its operations, on replica
// replica first, come from its own random stream.
type simWorker struct {
	sim     *simulation
	id      int
	replica int
	rng     *rand.Rand
	mix     []simWeight
	total   int // of the weights
	i, n    int // operations made, to make
}

func (sim *simulation) newWorker(w, r, n int) *simWorker {
	mix := slices.DeleteFunc(slices.Clone(simMix), func(m simWeight) bool { return sim.without[m.kind] })
	total := 0
	for _, m := range mix {
		total += m.weight
	}
	return &simWorker{sim: sim, id: w, replica: r, rng: rand.New(rand.NewPCG(sim.seed, uint64(w))),
		mix: mix, total: total, n: n}
}

// step makes the worker's next operation; false when it has made them all.
func (w *simWorker) step() bool {
	for w.i < w.n {
		i := w.i
		w.i++
		pick := w.rng.IntN(w.total)
		var kind simKind
		for _, m := range w.mix {
			if pick < m.weight {
				kind = m.kind
				break
			}
			pick -= m.weight
		}
		o := &simOp{client: w.id, kind: kind, replica: w.replica,
			op:  DeriveOpID("sim", strconv.FormatUint(w.sim.seed, 10), strconv.Itoa(w.id), strconv.Itoa(i)),
			val: int64(w.id)*1_000_000 + int64(i) + 1}
		if w.sim.choose(o, w.rng) {
			w.sim.exec(o, w.rng)
			return true
		}
	}
	return false
}

func pickOf[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// choose fills in o's arguments; false when there is nothing to do it to
// (no article posted yet).
func (sim *simulation) choose(o *simOp, rng *rand.Rand) bool {
	o.node = pickOf(rng, simNodes)
	o.detach = rng.IntN(2) == 0
	end := pickOf(rng, simNodes)
	for end == o.node {
		end = pickOf(rng, simNodes)
	}
	o.rel = RelationshipKey{Start: o.node, Type: pickOf(rng, simRelTypes), End: end}
	o.dir = pickOf(rng, []Direction{keys.Outgoing, keys.Incoming})
	o.author = pickOf(rng, simAuthors)
	o.category = pickOf(rng, simCategories)
	words := make([]string, 1+rng.IntN(4))
	for i := range words {
		words[i] = pickOf(rng, simWords)
	}
	o.title = fmt.Sprintf("t%d", o.val)
	o.body = fmt.Sprintf("%s k%d", strings.Join(words, " "), o.val)
	switch o.kind {
	case simUpdateArticle, simDeleteArticle, simReadArticle:
		sim.mu.Lock()
		defer sim.mu.Unlock()
		if len(sim.pool) == 0 {
			return false
		}
		o.article = pickOf(rng, sim.pool)
	}
	return true
}

// exec runs o, retrying after UNAVAILABLE with the same op, on a replica
// picked at random, and records it.
func (sim *simulation) exec(o *simOp, rng *rand.Rand) {
	ctx := WithOp(context.Background(), o.op)
	o.call = sim.tick.Add(1)
	for {
		o.attempts++
		o.err = sim.apply(ctx, sim.replicas[o.replica], o)
		if !errors.Is(o.err, ErrUnavailable) || o.attempts >= simRetries {
			break
		}
		o.replica = rng.IntN(len(sim.replicas))
	}
	o.ret = sim.tick.Add(1)
	sim.record(o)
	if *simTrace {
		sim.t.Logf("[%d, %d] client %d, replica %d: %s: %s after %d attempts (%v) %s", o.call, o.ret, o.client, o.replica,
			o.describe(), answerName(o.err), o.attempts, o.err, o.article)
	}
}

func (sim *simulation) record(o *simOp) {
	switch answerName(o.err) {
	case "success", "UNAVAILABLE", "NOT_FOUND", "ALREADY_EXISTS", "CONFLICT":
	default:
		sim.fail("%s: answered %s: %v", o.describe(), answerName(o.err), o.err)
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	sim.ops = append(sim.ops, o)
	if o.kind == simPostArticle && o.err == nil {
		sim.pool = append(sim.pool, o.article)
	}
}

func (o *simOp) describe() string {
	switch o.kind {
	case simCreateNode, simUpdateNode, simReadNode:
		return fmt.Sprintf("%s %s v=%d", o.kind, o.node, o.val)
	case simDeleteNode:
		return fmt.Sprintf("%s %s detach=%v", o.kind, o.node, o.detach)
	case simCreateRel, simUpdateRel, simDeleteRel, simReadRel:
		return fmt.Sprintf("%s %s-%s->%s v=%d", o.kind, o.rel.Start, o.rel.Type, o.rel.End, o.val)
	case simAdjacent:
		return fmt.Sprintf("%s %s %v %s", o.kind, o.node, o.dir, o.rel.Type)
	case simPostArticle:
		return fmt.Sprintf("%s by %s %q", o.kind, o.author, o.title)
	case simArticlesPage, simTopWords:
		return fmt.Sprintf("%s of %s", o.kind, o.author)
	}
	return fmt.Sprintf("%s %s", o.kind, o.article)
}

func simVal(p PropertySet) int64 {
	v, err := p.Get("v")
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// bodyVal is the value an article body carries (its last word, k<val>).
func bodyVal(body string) int64 {
	i := strings.LastIndex(body, " k")
	if i < 0 {
		return -1
	}
	n, err := strconv.ParseInt(body[i+2:], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// apply makes one attempt of o on s.
func (sim *simulation) apply(ctx context.Context, s *Store, o *simOp) error {
	v := Properties{"v": strconv.FormatInt(o.val, 10)}
	switch o.kind {
	case simCreateNode:
		_, err := s.CreateNode(ctx, o.node, "sim", v)
		return err
	case simUpdateNode:
		n, err := s.UpdateNodeProperties(ctx, o.node, v, nil)
		if err == nil {
			o.answered = simVal(n.Properties)
		}
		return err
	case simDeleteNode:
		return s.DeleteNode(ctx, o.node, o.detach)
	case simReadNode:
		g, err := NodeGet(o.node)
		if err != nil {
			return err
		}
		rows, err := s.Read(ctx, []Get{g})
		if err != nil {
			return err
		}
		n, err := rows[0].Node(o.node)
		if err != nil {
			return err
		}
		o.found = n != nil
		if o.found {
			o.readVal = simVal(n.Properties)
		}
		return nil
	case simCreateRel:
		_, err := s.CreateRelationship(ctx, o.rel, v)
		return err
	case simUpdateRel:
		r, err := s.UpdateRelationshipProperties(ctx, o.rel, v, nil)
		if err == nil {
			o.answered = simVal(r.Properties)
		}
		return err
	case simDeleteRel:
		return s.DeleteRelationship(ctx, o.rel)
	case simReadRel:
		r, err := s.GetRelationship(ctx, o.rel)
		if errors.Is(err, ErrNotFound) {
			o.found = false
			return nil
		}
		if err != nil {
			return err
		}
		o.found, o.readVal = true, simVal(r.Properties)
		return nil
	case simAdjacent:
		page, err := s.Adjacent(ctx, o.node, o.rel.Type, o.dir, PageRequest{Size: 3})
		if err != nil {
			return err
		}
		for _, r := range page.Relationships {
			near := r.Start
			if o.dir == keys.Incoming {
				near = r.End
			}
			if near != o.node || r.Type != o.rel.Type {
				sim.fail("%s listed %s-%s->%s", o.describe(), r.Start, r.Type, r.End)
			}
		}
		return nil
	case simPostArticle:
		a, err := s.PostArticle(ctx, o.author, o.title, o.body, o.category)
		if err == nil {
			o.article = a.ID
		}
		return err
	case simUpdateArticle:
		_, err := s.UpdateArticle(ctx, o.article, nil, &o.body, &o.category)
		return err
	case simDeleteArticle:
		return s.DeleteArticle(ctx, o.article)
	case simReadArticle:
		arts, errs := s.GetArticles(ctx, []string{o.article})
		if errors.Is(errs[0], ErrNotFound) {
			o.found = false
			return nil
		}
		if errs[0] != nil {
			return errs[0]
		}
		o.found, o.readVal = true, bodyVal(arts[0].Body)
		return nil
	case simArticlesPage:
		q := ArticleQuery{}
		if o.detach {
			q.Category = o.category
		}
		_, err := s.Articles(ctx, o.author, q, PageRequest{Size: 5})
		return err
	case simTopWords:
		_, err := s.TopWords(ctx, o.author, 5)
		return err
	}
	panic("unknown kind " + o.kind)
}

// settle retries, without faults, every write still answered
// UNAVAILABLE, with its op: the client that keeps retrying.
func (sim *simulation) settle() {
	for _, o := range sim.ops {
		if !o.kind.isWrite() || !errors.Is(o.err, ErrUnavailable) {
			continue
		}
		ctx := WithOp(context.Background(), o.op)
		for range simRetries {
			o.attempts++
			o.err = sim.apply(ctx, sim.replicas[0], o)
			if !errors.Is(o.err, ErrUnavailable) {
				break
			}
		}
		o.settled = true
		o.ret = sim.tick.Add(1)
		if o.kind == simPostArticle && o.err == nil {
			sim.pool = append(sim.pool, o.article)
		}
		if !errors.Is(o.err, ErrUnavailable) {
			switch answerName(o.err) {
			case "success", "NOT_FOUND", "ALREADY_EXISTS", "CONFLICT":
			default:
				sim.fail("%s: on the settle's retry answered %s: %v", o.describe(), answerName(o.err), o.err)
			}
		}
	}
}

// finalReads reads every node, relationship and posted article once more,
// into the histories: what the store ends with must be explained too.
func (sim *simulation) finalReads() {
	client := 1000
	read := func(o *simOp) {
		o.client, o.replica = client, 0
		o.call = sim.tick.Add(1)
		o.attempts = 1
		o.err = sim.apply(bg, sim.replicas[0], o)
		o.ret = sim.tick.Add(1)
		sim.record(o)
	}
	for _, n := range simNodes {
		read(&simOp{kind: simReadNode, node: n})
		for _, m := range simNodes {
			for _, typ := range simRelTypes {
				if m != n {
					read(&simOp{kind: simReadRel, rel: RelationshipKey{n, typ, m}})
				}
			}
		}
	}
	for _, id := range slices.Clone(sim.pool) {
		read(&simOp{kind: simReadArticle, article: id})
	}
}

// Linearizability. The model of one key is a register that exists or not
// (linState.exists, with the value linState.val); a relationship's model
// has its two end nodes besides (linState.ends), since a node's deletion
// takes its relationships with it, and a relationship needs both ends.

type linInput struct {
	target int // 0: the key; 1, 2: a relationship's start and end node
	kind   string
	detach bool
	val    int64
	// retriedArticleUpdate: an article's update answered NOT_FOUND after
	// UNAVAILABLE (see simRetriedUpdateGone).
	retriedArticleUpdate bool
	// existsOfUndone: a relationship's create answered ALREADY_EXISTS
	// while another create of the key that answered NOT_FOUND or
	// UNAVAILABLE ran (see simExistsOfUndone).
	existsOfUndone bool
}

type linOutput struct {
	code  string // answerName: success, NOT_FOUND, ALREADY_EXISTS, CONFLICT, UNAVAILABLE
	found bool   // reads
	val   int64
	// tries is how many times the caller made the call (after
	// UNAVAILABLE), for the failure's description only.
	tries int
}

type linState struct {
	ends   [2]bool
	exists bool
	val    int64
}

// linStep is the model's step: the states st may go to by in answered
// out, none if it cannot be so answered in st. UNAVAILABLE is applied or
// not.
func linStep(st linState, in linInput, out linOutput, withEnds bool) []linState {
	unknown := out.code == "UNAVAILABLE"
	next := st
	var may bool // in applies in st
	var refused bool
	switch {
	case in.target == 0 && in.kind == "read":
		if out.found {
			return when(st.exists && st.val == out.val, st)
		}
		return when(!st.exists, st)
	case in.target == 0 && in.kind == "create":
		if in.existsOfUndone && out.code == "ALREADY_EXISTS" {
			return []linState{st} // simExistsOfUndone
		}
		may = !st.exists && (!withEnds || st.ends[0] && st.ends[1])
		next.exists, next.val = true, in.val
		switch out.code {
		case "ALREADY_EXISTS":
			refused = st.exists
		case "NOT_FOUND":
			refused = withEnds && !(st.ends[0] && st.ends[1])
		}
	case in.target == 0 && in.kind == "update":
		may, next.val = st.exists, in.val
		refused = out.code == "NOT_FOUND" && !st.exists
		if in.retriedArticleUpdate && st.exists {
			return []linState{next} // simRetriedUpdateGone
		}
	case in.target == 0 && in.kind == "delete":
		may, next.exists, next.val = st.exists, false, 0
		refused = out.code == "NOT_FOUND" && !st.exists
		if simNodeDeleteHelps && !withEnds && out.code == "success" && !st.exists {
			return []linState{st} // a node's deletion finished for another (simNodeDeleteHelps)
		}
	case in.kind == "read":
		return when(out.found == st.ends[in.target-1], st)
	case in.kind == "create":
		may = !st.ends[in.target-1]
		next.ends[in.target-1] = true
		refused = out.code == "ALREADY_EXISTS" && st.ends[in.target-1]
	case in.kind == "update":
		if unknown || out.code == "CONFLICT" {
			return []linState{st}
		}
		return when((out.code == "success") == st.ends[in.target-1], st)
	case in.kind == "delete":
		may = st.ends[in.target-1] && (in.detach || !st.exists)
		next.ends[in.target-1] = false
		if in.detach {
			next.exists, next.val = false, 0
		}
		refused = out.code == "NOT_FOUND" && !st.ends[in.target-1]
		if simNodeDeleteHelps && out.code == "success" && !st.ends[in.target-1] {
			return []linState{st} // simNodeDeleteHelps
		}
	}
	switch {
	case unknown && may:
		return []linState{next, st}
	case unknown, out.code == "CONFLICT":
		return []linState{st}
	case out.code == "success":
		return when(may, next)
	}
	return when(refused, st)
}

// simRetriedUpdateGone: an article's update whose attempt answered
// UNAVAILABLE may have applied; if the article is deleted before the
// caller's retry, the retry finds no row (a deletion keeps nothing of the
// row, so nothing says which updates it had) and answers NOT_FOUND. So
// such an answer is either a NOT_FOUND (the article absent) or the
// update applied, within the call, by the attempt before: what the model
// does not allow is that it applied outside the call, or that it is lost
// (applied, answered success, never seen). The store's limitation: the
// retry cannot tell the client its update applied before the deletion.
const simRetriedUpdateGone = true

// simExistsOfUndone: a relationship's create writes its row, then reads
// its ends again and takes the row back (NOT_FOUND) if an end's deletion
// came first (CreateRelationship's recheck). Another create of the key
// that reads the row in between answers ALREADY_EXISTS, though the
// relationship never existed: its reads of the ends and of the row are
// not one atomic read, so it cannot tell the row from one the deletion
// will take with the end. So ALREADY_EXISTS from a create that ran while
// a create of the same key answered NOT_FOUND (or UNAVAILABLE) says
// nothing about the relationship; nothing was written, and a retry finds
// the key free or the end gone. The README's guarantees say so.
const simExistsOfUndone = true

// simNodeDeleteHelps: DeleteNode that finds a node's deletion in
// progress (marked, so reading as gone) finishes it and answers success:
// so the model lets a node's deletion succeed when the node is already
// gone. Every other write of a key that is not there answers NOT_FOUND.
const simNodeDeleteHelps = true

// simUpdateAnswersNow: an update that finds its op among the row's recent
// updates' (its compare-and-set was re-sent, or the caller retried after
// UNAVAILABLE) answers the entity as it is now, with the updates made
// since its own: the row keeps which updates applied, not what each left.
// So an update's answer holds its own value, or that of a create or update
// of the same key called before the answer.
const simUpdateAnswersNow = true

// checkUpdateAnswers checks the value each update answered with success
// (see simUpdateAnswersNow).
func (sim *simulation) checkUpdateAnswers() {
	key := func(o *simOp) string {
		if o.kind == simUpdateRel || o.kind == simCreateRel {
			return relName(o.rel)
		}
		return "node " + o.node
	}
	called := map[string]map[int64]int64{} // key -> value written -> call
	for _, o := range sim.ops {
		switch o.kind {
		case simCreateNode, simUpdateNode, simCreateRel, simUpdateRel:
			if called[key(o)] == nil {
				called[key(o)] = map[int64]int64{}
			}
			called[key(o)][o.val] = o.call
		}
	}
	for _, o := range sim.ops {
		if (o.kind != simUpdateNode && o.kind != simUpdateRel) || o.err != nil || o.answered == o.val {
			continue
		}
		if call, ok := called[key(o)][o.answered]; simUpdateAnswersNow && ok && call < o.ret {
			continue
		}
		sim.fail("%s answered v=%d", o.describe(), o.answered)
	}
}

func when(ok bool, st linState) []linState {
	if ok {
		return []linState{st}
	}
	return nil
}

func linModel(withEnds bool) porcupine.Model {
	m := &porcupine.NondeterministicModel{
		Init: func() []any { return []any{linState{}} },
		Step: func(s, in, out any) []any {
			var states []any
			for _, st := range linStep(s.(linState), in.(linInput), out.(linOutput), withEnds) {
				states = append(states, st)
			}
			return states
		},
		DescribeOperation: func(in, out any) string {
			i, o := in.(linInput), out.(linOutput)
			who := [...]string{"", "start ", "end "}[i.target]
			if i.kind == "read" {
				if o.found {
					return fmt.Sprintf("%sread -> v=%d", who, o.val)
				}
				return fmt.Sprintf("%sread -> none", who)
			}
			tries := ""
			if o.tries > 1 {
				tries = fmt.Sprintf(" (made %d times)", o.tries)
			}
			return fmt.Sprintf("%s%s(v=%d detach=%v) -> %s%s", who, i.kind, i.val, i.detach, o.code, tries)
		},
		DescribeState: func(s any) string {
			st := s.(linState)
			return fmt.Sprintf("ends=%v exists=%v v=%d", st.ends, st.exists, st.val)
		},
	}
	return m.ToModel()
}

// linOp is o as an operation on target of a history; ok is false for what
// tells nothing (a read that failed, an answer outside the model).
func linOp(o *simOp, target int) (porcupine.Operation, bool) {
	in := linInput{target: target, detach: o.detach, val: o.val,
		retriedArticleUpdate: simRetriedUpdateGone && o.kind == simUpdateArticle && o.attempts > 1 && errors.Is(o.err, ErrNotFound)}
	switch o.kind {
	case simCreateNode, simCreateRel, simPostArticle:
		in.kind = "create"
	case simUpdateNode, simUpdateRel, simUpdateArticle:
		in.kind = "update"
	case simDeleteNode, simDeleteRel, simDeleteArticle:
		in.kind = "delete"
	case simReadNode, simReadRel, simReadArticle:
		in.kind = "read"
		if o.err != nil {
			return porcupine.Operation{}, false
		}
	default:
		return porcupine.Operation{}, false
	}
	out := linOutput{code: answerName(o.err), found: o.found, val: o.readVal, tries: o.attempts}
	ret := o.ret
	switch out.code {
	case "UNAVAILABLE":
		ret = math.MaxInt64 // applied or not, at any time after the call
	case "success", "NOT_FOUND", "ALREADY_EXISTS", "CONFLICT":
	default:
		return porcupine.Operation{}, false
	}
	return porcupine.Operation{ClientId: o.client, Input: in, Output: out, Call: o.call, Return: ret}, true
}

func (sim *simulation) checkLinearizable() {
	histories := map[string][]porcupine.Operation{}
	withEnds := map[string]bool{}
	relKeys := map[string]RelationshipKey{}
	for _, a := range simNodes {
		for _, b := range simNodes {
			for _, typ := range simRelTypes {
				if a != b {
					relKeys[relName(RelationshipKey{a, typ, b})] = RelationshipKey{a, typ, b}
				}
			}
		}
	}
	// simExistsOfUndone: the relationship creates answered ALREADY_EXISTS
	// while a create of the same key answered NOT_FOUND or UNAVAILABLE.
	existsOfUndone := map[*simOp]bool{}
	if simExistsOfUndone {
		for _, o := range sim.ops {
			if o.kind != simCreateRel || !errors.Is(o.err, ErrAlreadyExists) {
				continue
			}
			for _, u := range sim.ops {
				if u.kind == simCreateRel && u.rel == o.rel && (errors.Is(u.err, ErrNotFound) || errors.Is(u.err, ErrUnavailable)) &&
					u.call < o.ret && o.call < u.ret {
					existsOfUndone[o] = true
					break
				}
			}
		}
	}
	add := func(key string, o *simOp, target int) {
		if op, ok := linOp(o, target); ok {
			if existsOfUndone[o] {
				in := op.Input.(linInput)
				in.existsOfUndone = existsOfUndone[o]
				op.Input = in
			}
			histories[key] = append(histories[key], op)
		}
	}
	articleAuthor := map[string]string{}
	for _, o := range sim.ops {
		if o.kind == simPostArticle && o.err == nil {
			articleAuthor[o.article] = o.author
		}
	}
	for _, o := range sim.ops {
		switch o.kind {
		case simCreateNode, simUpdateNode, simDeleteNode, simReadNode:
			add("node "+o.node, o, 0)
			for _, n := range simNodes {
				for _, typ := range simRelTypes {
					if n == o.node {
						continue
					}
					add(relName(RelationshipKey{o.node, typ, n}), o, 1)
					add(relName(RelationshipKey{n, typ, o.node}), o, 2)
				}
			}
		case simCreateRel, simUpdateRel, simDeleteRel, simReadRel:
			add(relName(o.rel), o, 0)
			withEnds[relName(o.rel)] = true
		case simPostArticle, simUpdateArticle, simDeleteArticle, simReadArticle:
			// A post whose id is unknown is checked by checkArticlesOnce;
			// articles of a node the workload deletes may go with it.
			if author, ok := articleAuthor[o.article]; ok && simStable[author] {
				add("article "+o.article, o, 0)
			}
		}
	}
	// Sorted, the nodes come before the relationships: a relationship's
	// history holds its ends' operations, so one whose end's own history
	// failed is left out (it would fail for the same reason).
	illegalNodes := map[string]bool{}
	var skipped []string
	for _, key := range slices.Sorted(maps.Keys(histories)) {
		h := histories[key]
		rel, isRel := relKeys[key]
		if isRel && !withEnds[key] {
			continue // only its ends' operations
		}
		if isRel && (illegalNodes[rel.Start] || illegalNodes[rel.End]) {
			skipped = append(skipped, key)
			continue
		}
		model := linModel(isRel)
		res, info := porcupine.CheckOperationsVerbose(model, h, 20*time.Second)
		switch res {
		case porcupine.Unknown:
			sim.t.Logf("linearizability of %s: the checker timed out (%d operations)", key, len(h))
		case porcupine.Illegal:
			path := filepath.Join(os.TempDir(), fmt.Sprintf("hbgraph-sim-%d-%s.html", sim.seed, strings.ReplaceAll(key, " ", "-")))
			if err := porcupine.VisualizePath(model, info, path); err != nil {
				path = err.Error()
			}
			sim.fail("%s: history not linearizable (%d operations; %s):\n%s%s", key, len(h), path, describeHistory(model, h), describeStuck(model, h, info))
			if id, ok := strings.CutPrefix(key, "node "); ok {
				illegalNodes[id] = true
			}
		}
	}
	if len(skipped) > 0 {
		sim.t.Logf("not checked, since an end's history is not linearizable: %s", strings.Join(skipped, ", "))
	}
}

func relName(k RelationshipKey) string {
	return fmt.Sprintf("relationship %s-%s->%s", k.Start, k.Type, k.End)
}

func describeHistory(m porcupine.Model, h []porcupine.Operation) string {
	h = slices.Clone(h)
	slices.SortFunc(h, func(a, b porcupine.Operation) int { return int(a.Call - b.Call) })
	var b strings.Builder
	for i, op := range h {
		if i == 60 {
			fmt.Fprintf(&b, "\t... %d more\n", len(h)-i)
			break
		}
		ret := strconv.FormatInt(op.Return, 10)
		if op.Return == math.MaxInt64 {
			ret = "open"
		}
		fmt.Fprintf(&b, "\t[%d, %s] client %d: %s\n", op.Call, ret, op.ClientId, m.DescribeOperation(op.Input, op.Output))
	}
	return b.String()
}

// describeStuck describes where the longest partial linearization the
// checker found ends: its last operations, with the state after each, and
// the operation that must come next (the first to return of those left),
// which no state allows.
func describeStuck(m porcupine.Model, h []porcupine.Operation, info porcupine.LinearizationInfo) string {
	var longest []porcupine.Operation
	for _, part := range info.PartialLinearizationsOperations() {
		for _, lin := range part {
			if len(lin) > len(longest) {
				longest = lin
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\tthe longest linearization (%d operations) ends:\n", len(longest))
	states := []any{m.Init()}
	for i, op := range longest {
		var next []any
		for _, st := range states {
			if ok, to := m.Step(st, op.Input, op.Output); ok {
				next = append(next, to)
			}
		}
		states = next
		if i >= len(longest)-8 {
			var ds []string
			for _, st := range states {
				ds = append(ds, m.DescribeState(st))
			}
			fmt.Fprintf(&b, "\t\t[%d] client %d: %s => %s\n", op.Call, op.ClientId, m.DescribeOperation(op.Input, op.Output), strings.Join(ds, " | "))
		}
	}
	placed := map[[2]int64]bool{}
	for _, op := range longest {
		placed[[2]int64{int64(op.ClientId), op.Call}] = true
	}
	var left []porcupine.Operation
	for _, op := range h {
		if !placed[[2]int64{int64(op.ClientId), op.Call}] {
			left = append(left, op)
		}
	}
	slices.SortFunc(left, func(a, b porcupine.Operation) int { return int(a.Return - b.Return) })
	for i, op := range left[:min(3, len(left))] {
		what := "next to return"
		if i > 0 {
			what = "then"
		}
		fmt.Fprintf(&b, "\t%s, not placed: [%d] client %d: %s\n", what, op.Call, op.ClientId, m.DescribeOperation(op.Input, op.Output))
	}
	return b.String()
}

// simPages reads every page of a connection.
func simPages[P any](fetch func(PageRequest) (P, []string, bool, error)) ([]P, error) {
	var out []P
	req := PageRequest{Size: MaxPageSize}
	for {
		p, cursors, more, err := fetch(req)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
		if !more || len(cursors) == 0 {
			return out, nil
		}
		req.Cursor = cursors[len(cursors)-1]
	}
}

func (sim *simulation) allArticles(author, category string) ([]Article, error) {
	s := sim.replicas[0]
	pages, err := simPages(func(req PageRequest) ([]Article, []string, bool, error) {
		p, err := s.Articles(bg, author, ArticleQuery{Category: category}, req)
		if err != nil {
			return nil, nil, false, err
		}
		return p.Articles, p.Cursors.All(), p.HasNext, nil
	})
	return slices.Concat(pages...), err
}

// checkArticlesOnce: every article posted with success and not deleted is
// there once, one whose post failed definitely is not, and none twice.
func (sim *simulation) checkArticlesOnce() {
	titles := map[string]map[string]int{}
	for _, a := range simAuthors {
		arts, err := sim.allArticles(a, "")
		if err != nil {
			sim.fail("articles of %s: %v", a, err)
			continue
		}
		titles[a] = map[string]int{}
		for _, art := range arts {
			titles[a][art.Title]++
		}
	}
	// Articles whose deletion may have applied: a deletion answered
	// NOT_FOUND after an UNAVAILABLE may be its own (the history of the
	// article says whether it was).
	deleted := map[string]bool{}
	for _, o := range sim.ops {
		if o.kind == simDeleteArticle && (o.err == nil || errors.Is(o.err, ErrUnavailable) || o.attempts > 1) {
			deleted[o.article] = true
		}
	}
	for _, o := range sim.ops {
		if o.kind != simPostArticle {
			continue
		}
		n := titles[o.author][o.title]
		switch {
		case n > 1:
			sim.fail("%s: answered %s, and the article is there %d times", o.describe(), answerName(o.err), n)
		case !simStable[o.author], deleted[o.article]:
		case o.err == nil && n != 1:
			sim.fail("%s: answered success, and the article is not there", o.describe())
		case o.err != nil && !errors.Is(o.err, ErrUnavailable) && n != 0:
			sim.fail("%s: answered %s, and the article is there", o.describe(), answerName(o.err))
		}
	}
}

// checkInvariants checks the rows that multi-row writes keep in step,
// through the store's reads.
func (sim *simulation) checkInvariants(when string) {
	s := sim.replicas[0]
	failf := func(format string, args ...any) { sim.fail(when+": "+format, args...) }
	nodes := map[string]bool{}
	all := slices.Concat(simNodes, slices.Sorted(maps.Keys(simStable)))
	for _, id := range all {
		g, _ := NodeGet(id)
		rows, err := s.Read(bg, []Get{g})
		if err != nil {
			failf("read node %s: %v", id, err)
			return
		}
		n, err := rows[0].Node(id)
		if err != nil {
			failf("node %s: %v", id, err)
		}
		nodes[id] = n != nil
	}

	// Degrees and index rows.
	listed := map[RelationshipKey]map[Direction]int{}
	for _, id := range all {
		for _, typ := range simRelTypes {
			for _, dir := range []Direction{keys.Outgoing, keys.Incoming} {
				// The index rows as they are (AdjacentIndex: Adjacent
				// leaves out those whose end is gone).
				pages, err := simPages(func(req PageRequest) ([]Relationship, []string, bool, error) {
					p, err := s.AdjacentIndex(bg, id, typ, dir, req)
					return p.Relationships, p.Cursors.All(), p.HasNext, err
				})
				if err != nil {
					failf("adjacent %s %v %s: %v", id, dir, typ, err)
					continue
				}
				rels := slices.Concat(pages...)
				deg, err := s.Degrees(bg, []DegreeKey{{Node: id, Dir: dir, Type: typ}})
				if err != nil {
					failf("degree %s %v %s: %v", id, dir, typ, err)
					continue
				}
				if deg[0] != int64(len(rels)) {
					failf("degree of %s %v %s is %d, with %d index rows", id, dir, typ, deg[0], len(rels))
				}
				if !nodes[id] && len(rels) > 0 {
					failf("node %s does not exist and lists %d %v %s relationships", id, len(rels), dir, typ)
				}
				for _, r := range rels {
					k := RelationshipKey{r.Start, r.Type, r.End}
					if listed[k] == nil {
						listed[k] = map[Direction]int{}
					}
					listed[k][dir]++
				}
			}
		}
	}
	for k, dirs := range listed {
		if _, err := s.GetRelationship(bg, k); err != nil {
			failf("%s is listed (%d outgoing, %d incoming) and reads %s", relName(k), dirs[keys.Outgoing], dirs[keys.Incoming], answerName(err))
		}
	}
	for _, a := range simNodes {
		for _, b := range simNodes {
			for _, typ := range simRelTypes {
				k := RelationshipKey{a, typ, b}
				if a == b {
					continue
				}
				_, err := s.GetRelationship(bg, k)
				if errors.Is(err, ErrNotFound) {
					continue
				}
				if err != nil {
					failf("read %s: %v", relName(k), err)
					continue
				}
				if !nodes[a] || !nodes[b] {
					failf("%s exists and an end does not", relName(k))
				}
				if out, in := listed[k][keys.Outgoing], listed[k][keys.Incoming]; out != 1 || in != 1 {
					failf("%s exists with %d outgoing and %d incoming index rows", relName(k), out, in)
				}
			}
		}
	}
	for _, o := range orphans(sim.t, s) {
		failf("%s", o)
	}

	// Articles: the category index, the counters and the word counts agree
	// with the timeline.
	for _, author := range all {
		arts, err := sim.allArticles(author, "")
		if err != nil {
			failf("articles of %s: %v", author, err)
			continue
		}
		if !nodes[author] && len(arts) > 0 {
			failf("node %s does not exist and has %d articles", author, len(arts))
		}
		byID := map[string]Article{}
		for _, a := range arts {
			if _, dup := byID[a.ID]; dup {
				failf("article %s of %s is listed twice", a.ID, author)
			}
			byID[a.ID] = a
		}
		counts, err := s.ArticleCounts(bg, []string{author}, "")
		if err != nil {
			failf("article count of %s: %v", author, err)
		} else if counts[0] != int64(len(arts)) {
			failf("article count of %s is %d, with %d articles", author, counts[0], len(arts))
		}
		for _, c := range simCategories {
			in, err := sim.allArticles(author, c)
			if err != nil {
				failf("articles of %s in %s: %v", author, c, err)
				continue
			}
			want := 0
			for _, a := range arts {
				if a.Category == c {
					want++
				}
			}
			for _, a := range in {
				if t, ok := byID[a.ID]; !ok || t.Category != c {
					failf("article %s of %s is in category %s, and its timeline row says %q", a.ID, author, c, t.Category)
				}
			}
			if len(in) != want {
				failf("category %s of %s lists %d articles, the timeline %d", c, author, len(in), want)
			}
			counts, err := s.ArticleCounts(bg, []string{author}, c)
			if err != nil {
				failf("article count of %s in %s: %v", author, c, err)
			} else if counts[0] != int64(want) {
				failf("article count of %s in %s is %d, with %d articles", author, c, counts[0], want)
			}
		}
		want := map[string]int64{}
		for _, a := range arts {
			countWords(want, a.Title)
			countWords(want, a.Body)
		}
		got, err := s.readWordCounts(bg, keys.WordCounts(author))
		if err != nil {
			failf("word counts of %s: %v", author, err)
			continue
		}
		maps.DeleteFunc(got, func(_ string, n int64) bool { return n == 0 })
		if !maps.Equal(got, want) {
			failf("word counts of %s are %s; a recount gives %s", author, wordCountLine(got), wordCountLine(want))
		}
		top, err := s.TopWords(bg, author, MaxTopWords)
		if err != nil {
			failf("top words of %s: %v", author, err)
		} else if wantTop := rankCounts(want, MaxTopWords); !slices.Equal(top, wantTop) {
			failf("top words of %s are %v; a recount gives %v", author, top, wantTop)
		}
	}
}

func wordCountLine(m map[string]int64) string {
	var parts []string
	for _, w := range slices.Sorted(maps.Keys(m)) {
		if !strings.HasPrefix(w, "k") || len(parts) < 12 {
			parts = append(parts, fmt.Sprintf("%s=%d", w, m[w]))
		}
	}
	return fmt.Sprintf("{%s} (%d words)", strings.Join(parts, " "), len(m))
}

// simRPCClient is the fault injector, or the trace above it.
type simRPCClient interface {
	gohbase.Client
	rpcSender
}

// simTxClient is a replica's client with the engine's transactions: their
// calls go through the injector, and the engine applies them at commit.
type simTxClient struct {
	simRPCClient
	db *embedded.Client
}

func (c simTxClient) BeginTx(ctx context.Context) (context.Context, pagescan.Tx) {
	return c.db.BeginTx(ctx)
}
