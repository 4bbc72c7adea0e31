package plan

import (
	"github.com/99designs/gqlgen/graphql"
)

// argVals are a field's arguments converted with the functions gqlgen's
// generated code uses, so they are what the resolvers receive.
type argVals struct {
	id  string   // node
	ids []string // nodes
}

// hasArgs tells whether fields of kind k take arguments.
func hasArgs(k Kind) bool {
	switch k {
	case KQueryNode, KQueryNodes:
		return true
	}
	return false
}

// convert converts the argument map of a field of kind k (field.ArgumentMap:
// literals, variables, defaults as gqlgen sees them).
func convert(k Kind, m map[string]any) (argVals, error) {
	var a argVals
	var err error
	switch k {
	case KQueryNode:
		a.id, err = graphql.UnmarshalID(m["id"])
	case KQueryNodes:
		vs := graphql.CoerceList(m["ids"])
		a.ids = make([]string, len(vs))
		for i, v := range vs {
			if a.ids[i], err = graphql.UnmarshalID(v); err != nil {
				break
			}
		}
	}
	return a, err
}
