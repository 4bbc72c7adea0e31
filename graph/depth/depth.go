// Package depth is a gqlgen extension that refuses operations nested deeper
// than a limit before any resolver runs: a deep query fans out into store
// work that the complexity limit alone may price too low.
package depth

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Code is the error code of a refused operation.
const Code = "BAD_USER_INPUT"

// Limit refuses operations whose selections nest deeper than Max fields.
type Limit struct{ Max int }

var (
	_ graphql.HandlerExtension        = Limit{}
	_ graphql.OperationContextMutator = Limit{}
)

func (Limit) ExtensionName() string { return "DepthLimit" }

func (l Limit) Validate(graphql.ExecutableSchema) error {
	if l.Max < 1 {
		return fmt.Errorf("depth limit must be at least 1, got %d", l.Max)
	}
	return nil
}

func (l Limit) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	if d := Of(oc.Operation.SelectionSet, oc.Doc.Fragments, 0); d > l.Max {
		err := gqlerror.Errorf("operation is %d fields deep; the limit is %d", d, l.Max)
		err.Extensions = map[string]any{"code": Code}
		return err
	}
	return nil
}

// Of returns the depth of a selection set: 1 for a set of scalar fields.
// Fragment spreads count as their contents; a fragment that spreads itself
// (invalid, and refused by validation) stops the walk.
func Of(set ast.SelectionSet, fragments ast.FragmentDefinitionList, level int) int {
	if level > 64 {
		return level // cyclic fragments: validation rejects these anyway
	}
	deepest := 0
	for _, sel := range set {
		d := 0
		switch s := sel.(type) {
		case *ast.Field:
			if s.Name == "__schema" || s.Name == "__type" {
				continue // introspection reads the schema, never the store; GraphiQL's is 15 deep
			}
			d = 1 + Of(s.SelectionSet, fragments, level+1)
		case *ast.InlineFragment:
			d = Of(s.SelectionSet, fragments, level+1)
		case *ast.FragmentSpread:
			if f := fragments.ForName(s.Name); f != nil {
				d = Of(f.SelectionSet, fragments, level+1)
			}
		}
		deepest = max(deepest, d)
	}
	return deepest
}
