package plan

import (
	"context"
	"runtime/debug"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/explain"
	"github.com/hbgraph/hbgraph/loaders"
	"github.com/hbgraph/hbgraph/store"
)

// Options configure Wrap.
type Options struct {
	// Store is what the plan reads; the resolvers' store.
	Store *store.Store
	// Loaders sets the batch size and scan concurrency of the plan's reads,
	// as for the dataloaders (Wait is not used).
	Loaders loaders.Config
	// Log receives one line per panic in a plan (a bug: the operation is
	// then run again by gqlgen) and one per compiled fallback reason.
	Log zerolog.Logger
	// Registerer, when set, gets hbgraph_plan_total{executor, reason}:
	// operations run by the plan or by gqlgen, and why not by the plan.
	Registerer prometheus.Registerer

	// hooks are the tests' (hooks.go); nil in production.
	hooks *hooks
}

// Schema is gqlgen's executable schema with a planned executor in front:
// Exec runs the operation's plan when it has one, else gqlgen's executor.
// Schema() and Complexity() are gqlgen's. Safe for concurrent use.
type Schema struct {
	graphql.ExecutableSchema
	opts  Options
	impl  map[string][]string // the types, interfaces and unions each object satisfies
	plans cache
	total *prometheus.CounterVec

	// For tests: operations run by each executor; the waves the latest
	// plan run made and could have made.
	planned, fellBack     atomic.Int64
	lastWaves, lastBudget atomic.Int64
}

// Wrap returns es with the planned executor in front of it.
func Wrap(es graphql.ExecutableSchema, opts Options) *Schema {
	s := &Schema{ExecutableSchema: es, opts: opts, impl: implementors(es)}
	s.plans.hooks = opts.hooks
	if opts.Registerer != nil {
		s.total = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hbgraph_plan_total",
			Help: "GraphQL operations executed by the plan or by gqlgen, and why not by the plan.",
		}, []string{"executor", "reason"})
		opts.Registerer.MustRegister(s.total)
	}
	return s
}

// implementors lists, for each object type, the names a fragment's type
// condition may use to select it: its own, its interfaces', its unions'
// (as gqlgen's generated xImplementors do).
func implementors(es graphql.ExecutableSchema) map[string][]string {
	schema := es.Schema()
	out := map[string][]string{}
	for name, def := range schema.Types {
		if def.Kind != ast.Object {
			continue
		}
		out[name] = append([]string{name}, def.Interfaces...)
	}
	for name, def := range schema.Types {
		if def.Kind != ast.Union {
			continue
		}
		for _, t := range def.Types {
			out[t] = append(out[t], name)
		}
	}
	return out
}

// Exec implements graphql.ExecutableSchema.
func (s *Schema) Exec(ctx context.Context) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	v := s.plans.get(oc, s.compile)
	if v.plan == nil {
		s.count(v, "gqlgen", v.reason)
		return s.ExecutableSchema.Exec(ctx)
	}
	args, err := v.plan.bind(oc)
	if err != nil { // gqlgen reports an argument that does not convert
		s.count(v, "gqlgen", "argument")
		return s.ExecutableSchema.Exec(ctx)
	}
	s.count(v, "plan", "")
	done := false
	return func(ctx context.Context) *graphql.Response {
		if done {
			return nil // one response: no @defer in a plan
		}
		done = true
		resp, errs, panicked := s.run(ctx, oc, v.plan, args)
		if panicked != nil {
			id := ""
			if r := explain.From(ctx); r != nil {
				id = r.ID
			}
			s.opts.Log.Error().Str("request_id", id).Interface("panic", panicked).Bytes("stack", debug.Stack()).
				Msg("panic in plan: gqlgen runs the operation")
			s.fellBack.Add(1)
			if s.total != nil {
				s.total.WithLabelValues("gqlgen", "panic").Inc()
			}
			// Queries do not write: running one again is safe.
			return s.ExecutableSchema.Exec(ctx)(ctx)
		}
		for _, e := range errs {
			graphql.AddError(ctx, e) // through the error presenter, as gqlgen's
		}
		return resp
	}
}

func (s *Schema) count(v *variant, executor, reason string) {
	if executor == "plan" {
		s.planned.Add(1)
	} else {
		s.fellBack.Add(1)
	}
	if s.total == nil {
		return
	}
	if reason == "" && v.counter != nil {
		v.counter.Inc()
		return
	}
	s.total.WithLabelValues(executor, reason).Inc()
}

// compile compiles oc's operation for the variables it has now, and says
// why not when it cannot.
func (s *Schema) compile(oc *graphql.OperationContext) *variant {
	p, reason := compile(oc, s.impl)
	if h := s.opts.hooks; h != nil && h.compiled != nil && p != nil {
		h.compiled(p)
	}
	v := &variant{plan: p, reason: reason}
	if p != nil && s.total != nil {
		v.counter = s.total.WithLabelValues("plan", "")
	}
	if p == nil {
		s.opts.Log.Debug().Str("operation", oc.OperationName).Str("reason", reason).Msg("gqlgen executes the operation")
	}
	return v
}

// maxSizeHint caps the buffer a plan's response starts with: one huge
// response should not make every later one allocate as much.
const maxSizeHint = 1 << 20

// run executes p, recovering a panic (a bug in the plan, reported as
// panicked: nothing has been written or reported yet).
func (s *Schema) run(ctx context.Context, oc *graphql.OperationContext, p *Plan, args []argVals) (resp *graphql.Response, errs []error, panicked any) {
	defer func() {
		if r := recover(); r != nil {
			resp, errs, panicked = nil, nil, r
		}
	}()
	r := runner{ctx: ctx, p: p, args: args, f: loaders.NewFetcher(s.opts.Store, s.opts.Loaders)}
	r.fetch()
	s.lastWaves.Store(int64(r.round))
	s.lastBudget.Store(int64(p.Waves))
	w := writer{ctx: ctx, caller: auth.From(ctx), args: args, buf: make([]byte, 0, min(p.sizeHint.Load(), maxSizeHint)+64)}
	h := s.opts.hooks
	if h != nil && h.fetched != nil {
		h.fetched(&r)
	}
	if h != nil && h.writing != nil {
		h.writing(&w)
	}
	data := w.root(p.Root, r.roots)
	if h != nil && h.written != nil {
		data, w.errs = h.written(data, w.errs)
	}
	if w.refused != nil { // the transport answers with the refusal alone
		return &graphql.Response{}, []error{w.refused}, nil
	}
	if n := int64(len(data)); n > p.sizeHint.Load() {
		p.sizeHint.Store(n)
	}
	return &graphql.Response{Data: data}, w.errs, nil
}
