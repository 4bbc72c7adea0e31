// Package limits bounds what one GraphQL document can cost before gqlgen
// spends anything on it, as a gqlgen handler extension (issue 13).
//
// A request goes through three checks, each linear in what it reads:
//
//  1. Before parsing (MutateOperationParameters), on a query cache miss
//     only: one pass of gqlparser's lexer over the document counts its
//     tokens, the nesting of its brackets, its fields (with every fragment
//     spread counted as the fields it brings, each fragment priced once),
//     aliases, repeated selections and fragments, and checks that every
//     number literal fits the type gqlparser converts it to. gqlgen's
//     parser and validator are then run only on documents within these
//     bounds: the parser recurses and allocates per nesting level, and
//     validation (OverlappingFieldsCanBeMerged, MaxIntrospectionDepth)
//     is quadratic in repeated selections and exponential in fragments
//     that spread others more than once. The variables are checked on
//     every request: numbers that do not fit a float64, invalid UTF-8.
//  2. After validation (MutateOperationContext): enum variables against
//     their values exactly (gqlparser ignores case, gqlgen's unmarshalling
//     does not), page sizes against the ranges the resolvers accept, then
//     depth, then complexity, each a walk of the operation that visits
//     every fragment once.
//  3. On the response (InterceptResponse): at most Config.Errors errors,
//     the rest counted in one last error.
//
// Every refusal is codes.BadUserInput: the client has to change the
// request. A document gqlgen cannot lex or parse is left to gqlgen, which
// reports it as codes.ParseFailed; the scan stops at the first token the
// lexer refuses, and everything before it was within the bounds.
//
// An Extension is safe for concurrent use once installed.
package limits

import (
	"context"
	"errors"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/graph/codes"
)

// Config holds the bounds. Each must be at least 1.
type Config struct {
	// Tokens is the most lexical tokens (names, punctuators, values,
	// comments) a document may hold; give gqlgen's parser the same limit
	// (handler.Server.SetParserTokenLimit).
	Tokens int
	// Nesting is the deepest a document may nest braces, brackets and
	// parentheses, selection sets and values alike; more than Depth.
	Nesting int
	// Fields is the most selections (fields, fragment spreads, inline
	// fragments) a document may make, counting each fragment spread as the
	// selections of its fragment, recursively, and each fragment definition
	// once more for itself.
	Fields int
	// Aliases is the most aliased fields in a document.
	Aliases int
	// Repeats is the most selections in a document whose response name
	// (or fragment spread) already appears in the same selection set,
	// inline fragments included.
	Repeats int
	// Fragments is the most fragment definitions in a document: validation
	// compares the fragments spread in one selection set pairwise.
	Fragments int
	// Variables is the most variable definitions in a document: validation
	// compares each with every other and with its uses.
	Variables int
	// Depth is the deepest an operation may nest fields (__schema and
	// __type do not count: introspection reads the schema, not the store).
	Depth int
	// Complexity is the highest complexity an operation may have, as
	// gqlgen's complexity package computes it with the schema's
	// ComplexityRoot (Pricing).
	Complexity int
	// Errors is the most errors in one response.
	Errors int
}

// DefaultConfig is what every legitimate query passes with room to spare:
// GraphiQL's introspection query (testdata/introspection.graphql) has 183
// tokens, nests 10 deep and makes 299 selections with its fragments
// spread; bench/queries/q3 has 61 tokens, nests 8 deep, 13 selections.
// Depth and Complexity are server.go's flags' defaults. At these bounds
// the costliest documents found validate in milliseconds (bench_test.go).
var DefaultConfig = Config{
	Tokens:     15000,
	Nesting:    64,
	Fields:     1000,
	Aliases:    100,
	Repeats:    20,
	Fragments:  32,
	Variables:  100,
	Depth:      12,
	Complexity: 10000,
	Errors:     100,
}

// Extension enforces a Config. Install it with handler.Server.Use after
// extension.AutomaticPersistedQuery (which fills in the query of a
// persisted hash) and before anything that reads complexity.
type Extension struct {
	cfg   Config
	cache graphql.Cache[*ast.QueryDocument]
	es    graphql.ExecutableSchema
}

var (
	_ graphql.HandlerExtension          = (*Extension)(nil)
	_ graphql.OperationParameterMutator = (*Extension)(nil)
	_ graphql.OperationContextMutator   = (*Extension)(nil)
	_ graphql.ResponseInterceptor       = (*Extension)(nil)
)

// New returns an Extension enforcing cfg. cache is the query cache given
// to handler.Server.SetQueryCache: a document found there passed the scan
// when it was added, so it is not scanned again. With a nil cache every
// document is scanned.
func New(cfg Config, cache graphql.Cache[*ast.QueryDocument]) *Extension {
	return &Extension{cfg: cfg, cache: cache}
}

// ExtensionName is the name gqlgen reports the extension by.
func (*Extension) ExtensionName() string { return "Limits" }

// Validate checks the configuration and keeps the schema, whose
// Complexity prices the fields.
func (e *Extension) Validate(es graphql.ExecutableSchema) error {
	c := e.cfg
	for _, v := range []struct {
		name string
		n    int
	}{
		{"tokens", c.Tokens}, {"nesting", c.Nesting}, {"fields", c.Fields}, {"aliases", c.Aliases},
		{"repeats", c.Repeats}, {"fragments", c.Fragments}, {"variables", c.Variables}, {"depth", c.Depth},
		{"complexity", c.Complexity}, {"errors", c.Errors},
	} {
		if v.n < 1 {
			return fmt.Errorf("limits: %s must be at least 1, got %d", v.name, v.n)
		}
	}
	if c.Nesting <= c.Depth {
		// A query Depth fields deep nests Depth+1 braces, more with
		// arguments: the nesting bound would refuse it first.
		return fmt.Errorf("limits: nesting (%d) must be more than depth (%d)", c.Nesting, c.Depth)
	}
	if es == nil {
		return errors.New("limits: no executable schema")
	}
	e.es = es
	return nil
}

// MutateOperationParameters checks the variables, then the document unless
// the query cache holds it. It runs before gqlgen parses the document.
func (e *Extension) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if err := checkVariables(p.Variables); err != nil {
		return err
	}
	if p.Query == "" {
		return nil // gqlgen answers that; a persisted query's text comes from the APQ extension first
	}
	if e.cache != nil {
		if _, ok := e.cache.Get(ctx, p.Query); ok {
			return nil
		}
	}
	_, err := Scan(p.Query, e.cfg)
	return err
}

// MutateOperationContext checks the enum values of the variables, then
// the page sizes, depth and complexity of the operation to run, in that
// order, and records its complexity where extension.GetComplexityStats
// finds it.
func (e *Extension) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) (gerr *gqlerror.Error) {
	if oc.Operation == nil {
		return nil
	}
	defer func() {
		// ast.Field.ArgumentMap panics on a literal that does not convert;
		// Scan refuses those, but a document could reach the cache another
		// way.
		if v := recover(); v != nil {
			gerr = refusef(nil, "an argument's value does not convert: %v", v)
		}
	}()
	if err := checkEnums(e.es.Schema(), oc.Operation.VariableDefinitions, oc.Variables); err != nil {
		return err
	}
	w := newWalker(e.es, oc.Variables)
	if err := w.arguments(oc.Operation.SelectionSet); err != nil {
		return err
	}
	if d := w.depth(oc.Operation.SelectionSet); d > e.cfg.Depth {
		return refusef(oc.Operation.Position, "operation is %d fields deep; the limit is %d", d, e.cfg.Depth)
	}
	c := w.complexity(ctx, oc.Operation.SelectionSet)
	oc.Stats.SetExtension(complexityStatsKey, &extension.ComplexityStats{Complexity: c, ComplexityLimit: e.cfg.Complexity})
	if c > e.cfg.Complexity {
		return refusef(oc.Operation.Position, "operation has complexity %d; the limit is %d", c, e.cfg.Complexity)
	}
	return nil
}

// complexityStatsKey is where gqlgen's ComplexityLimit keeps its figures
// (unexported there), so that extension.GetComplexityStats reads ours.
const complexityStatsKey = "ComplexityLimit"

// InterceptResponse keeps at most Config.Errors errors in a response.
func (e *Extension) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp != nil {
		resp.Errors = TrimErrors(resp.Errors, e.cfg.Errors)
	}
	return resp
}

// TrimErrors returns list if it holds at most n errors, or its first n-1
// followed by one error saying how many were left out, with their code
// when they share one and codes.BadUserInput otherwise. n below 1 counts
// as 1.
func TrimErrors(list gqlerror.List, n int) gqlerror.List {
	n = max(n, 1)
	if len(list) <= n {
		return list
	}
	kept, omitted := list[:n-1:n-1], list[n-1:]
	code := codeOf(omitted[0])
	for _, e := range omitted[1:] {
		if codeOf(e) != code {
			code = codes.BadUserInput
			break
		}
	}
	if code == "" {
		code = codes.BadUserInput
	}
	last := gqlerror.Errorf("%d more errors omitted (at most %d are reported)", len(omitted), n-1)
	last.Extensions = map[string]any{"code": code}
	return append(kept, last)
}

func codeOf(e *gqlerror.Error) string {
	if e == nil {
		return ""
	}
	c, _ := e.Extensions["code"].(string)
	return c
}

// refusef is a BAD_USER_INPUT error at pos (which may be nil).
func refusef(pos *ast.Position, format string, args ...any) *gqlerror.Error {
	err := gqlerror.ErrorPosf(pos, format, args...)
	err.Extensions = map[string]any{"code": codes.BadUserInput}
	return err
}
