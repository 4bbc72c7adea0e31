package explain

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/hbgraph/hbgraph/auth"
)

// Extension is the gqlgen handler extension that records each operation's
// name and error codes, and adds the store calls to the response's
// extensions when the request says "extensions": {"explain": true}, or
// always when Always is set.
type Extension struct {
	Always bool
	// RowKeys tells whether the caller may see row keys and the store's
	// errors; nil: callers with the admin scope (everyone while
	// authentication is off).
	RowKeys func(context.Context) bool
}

var (
	_ graphql.HandlerExtension    = Extension{}
	_ graphql.ResponseInterceptor = Extension{}
)

func (Extension) ExtensionName() string { return "Explain" }

func (Extension) Validate(graphql.ExecutableSchema) error { return nil }

func (e Extension) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	r := From(ctx)
	if resp == nil || r == nil {
		return resp
	}
	var codes []string
	for _, err := range resp.Errors {
		if code, ok := err.Extensions["code"].(string); ok {
			codes = append(codes, code)
		}
	}
	// Requests that fail parsing or validation have no operation context.
	var operation string
	asked := false
	if graphql.HasOperationContext(ctx) {
		oc := graphql.GetOperationContext(ctx)
		operation = oc.OperationName
		if operation == "" && oc.Operation != nil {
			// No operationName: the document's one operation, by its name.
			operation = oc.Operation.Name
		}
		asked, _ = oc.Extensions["explain"].(bool)
	}
	r.SetOutcome(operation, codes)
	if asked || e.Always {
		if resp.Extensions == nil {
			resp.Extensions = map[string]any{}
		}
		rowKeys := auth.From(ctx).Admin
		if e.RowKeys != nil {
			rowKeys = e.RowKeys(ctx)
		}
		resp.Extensions["explain"] = r.Report(rowKeys)
	}
	return resp
}
