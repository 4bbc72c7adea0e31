// Package nointrospection is a gqlgen extension, used when introspection is
// turned off, that refuses operations asking for __schema or __type before
// they run, with a client error code. (gqlgen itself answers them with an
// untyped error from inside execution, which reads as a server fault.)
// Federation's _service { sdl } is not introspection and stays allowed.
// Rules are the validation rules to use then: without "Did you mean"
// suggestions, which would name the schema's fields one guess at a time.
package nointrospection

import (
	"context"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"github.com/hbgraph/hbgraph/graph/codes"
)

// Refuse is the extension.
type Refuse struct{}

var (
	_ graphql.HandlerExtension        = Refuse{}
	_ graphql.OperationContextMutator = Refuse{}
)

func (Refuse) ExtensionName() string                   { return "NoIntrospection" }
func (Refuse) Validate(graphql.ExecutableSchema) error { return nil }

func (Refuse) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	f := find(oc.Operation.SelectionSet, oc.Doc.Fragments, 0)
	if f == nil {
		return nil
	}
	err := gqlerror.ErrorPosf(f.Position, "introspection is turned off on this server")
	err.Path = ast.Path{ast.PathName(f.Alias)}
	err.Extensions = map[string]any{"code": codes.BadUserInput}
	return err
}

// find returns the first __schema or __type field of a selection set, at
// any depth, or nil.
func find(set ast.SelectionSet, fragments ast.FragmentDefinitionList, level int) *ast.Field {
	if level > 64 {
		return nil // cyclic fragments: validation rejects these
	}
	for _, sel := range set {
		var found *ast.Field
		switch s := sel.(type) {
		case *ast.Field:
			if s.Name == "__schema" || s.Name == "__type" {
				return s
			}
			found = find(s.SelectionSet, fragments, level+1)
		case *ast.InlineFragment:
			found = find(s.SelectionSet, fragments, level+1)
		case *ast.FragmentSpread:
			if f := fragments.ForName(s.Name); f != nil {
				found = find(f.SelectionSet, fragments, level+1)
			}
		}
		if found != nil {
			return found
		}
	}
	return nil
}

// Rules are gqlparser's default validation rules with each rule that
// suggests names ("Did you mean \"owner\"?") swapped for its variant that
// does not. Use with gqlgen's SetValidationRulesFn and
// SetDisableSuggestion(true) (which would otherwise put two of them back).
func Rules() *rules.Rules {
	r := rules.NewDefaultRules()
	for _, rule := range []core.Rule{
		rules.FieldsOnCorrectTypeRuleWithoutSuggestions,
		rules.KnownArgumentNamesRuleWithoutSuggestions,
		rules.KnownTypeNamesRuleWithoutSuggestions,
		rules.ScalarLeafsRuleWithoutSuggestions,
		rules.ValuesOfCorrectTypeRuleWithoutSuggestions,
	} {
		r.RemoveRule(strings.TrimSuffix(rule.Name, "WithoutSuggestions"))
		r.AddRule(rule.Name, rule.RuleFunc)
	}
	return r
}
