package plan

import (
	"errors"
	"slices"

	"github.com/99designs/gqlgen/graphql"
)

// argVals are a field's arguments converted with the functions gqlgen's
// generated code uses (graph/generated's unmarshalers), so they are what
// the resolvers receive.
type argVals struct {
	proj any // a described field's, as its descriptor decodes them
	reps []entityRep
}

// entityRep is one of _entities' representations, as the plan takes them:
// a known __typename and a string id.
type entityRep struct {
	typ int // index in entityTypes
	id  string
}

// errRepresentation sends _entities to gqlgen, whose messages for a
// representation it cannot resolve are its own.
var errRepresentation = errors.New("plan: a representation gqlgen reports on")

// convert converts the argument map of field f (field.ArgumentMap:
// literals, variables and defaults as gqlgen sees them): by its
// descriptor's Args when it has one (_entities' by entityRep). An error is an
// argument gqlgen would report itself: the caller lets gqlgen execute.
func convert(f *Field, m map[string]any) (argVals, error) {
	var a argVals
	if f.desc != nil {
		var err error
		a.proj, err = f.desc.Args(m)
		return a, err
	}
	if f.entity {
		vs := graphql.CoerceList(m["representations"])
		a.reps = make([]entityRep, len(vs))
		for i, v := range vs {
			rep, _ := v.(map[string]any)
			typ, _ := rep["__typename"].(string)
			id, ok := rep["id"].(string)
			a.reps[i].typ = slices.Index(entityTypes[:], typ)
			if !ok || a.reps[i].typ < 0 {
				return a, errRepresentation
			}
			a.reps[i].id = id
		}
	}
	return a, nil
}
