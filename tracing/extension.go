package tracing

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// Extension is the gqlgen handler extension that wraps each operation's
// execution in its span. Install it only when tracing is on.
type Extension struct {
	// Executor is the one configured: "plan" (PlanRan overrides it to
	// say the plan did run) or "gqlgen".
	Executor string
	// Complexity is the operation's complexity, as the load shedder
	// charges it.
	Complexity func(context.Context, *graphql.OperationContext) int
}

var (
	_ graphql.HandlerExtension    = Extension{}
	_ graphql.ResponseInterceptor = Extension{}
)

func (Extension) ExtensionName() string { return "Tracing" }

func (Extension) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptResponse wraps the execution: gqlgen's executor, and the
// plan's, run inside the response handler, with its context.
func (e Extension) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if !recording(ctx) || !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil {
		return next(ctx)
	}
	name := oc.OperationName
	if name == "" {
		name = oc.Operation.Name
	}
	complexity := 0
	if e.Complexity != nil {
		complexity = e.Complexity(ctx, oc)
	}
	executor := e.Executor
	if executor == "plan" {
		executor = "gqlgen" // until the plan says it ran
	}
	ctx, op := StartOperation(ctx, string(oc.Operation.Operation), name, executor, complexity)
	resp := next(ctx)
	var codes []string
	if resp != nil {
		for _, err := range resp.Errors {
			if code, ok := err.Extensions["code"].(string); ok {
				codes = append(codes, code)
			}
		}
	}
	op.End(codes)
	return resp
}
