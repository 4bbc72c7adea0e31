package plan

import (
	"errors"
	"slices"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/hbgraph/hbgraph/graph/fetchkeys"
	"github.com/hbgraph/hbgraph/graph/model"
)

// argVals are a field's arguments converted with the functions gqlgen's
// generated code uses (graph/generated's unmarshalers), so they are what
// the resolvers receive.
type argVals struct {
	rels fetchkeys.RelationshipsArgs
	arts fetchkeys.ArticlesArgs
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

// hasArgs tells whether fields of kind k take arguments.
func hasArgs(k Kind) bool {
	switch k {
	case KQueryEntities, KNodeRelationships, KNodeArticles:
		return true
	}
	return false
}

// convert converts the argument map of field f (field.ArgumentMap:
// literals, variables and defaults as gqlgen sees them): by its
// descriptor's Args when it has one, else by its kind. An error is an
// argument gqlgen would report itself: the caller lets gqlgen execute.
func convert(f *Field, m map[string]any) (argVals, error) {
	var a argVals
	if f.desc != nil {
		var err error
		a.proj, err = f.desc.Args(m)
		return a, err
	}
	k := f.Kind
	c := converter{m: m}
	switch k {
	case KNodeRelationships:
		a.rels.Type = c.str("type")
		if v, ok := m["direction"]; ok {
			if err := a.rels.Direction.UnmarshalGQL(v); err != nil && c.err == nil {
				c.err = err
			}
		}
		a.rels.Page = c.page()
	case KNodeArticles:
		a.arts.Category, a.arts.PostedAfter, a.arts.PostedBefore = c.optStr("category"), c.optTime("postedAfter"), c.optTime("postedBefore")
		a.arts.Page = c.page()
	case KQueryEntities:
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
	return a, c.err
}

// converter converts arguments one by one, keeping the first error.
type converter struct {
	m   map[string]any
	err error
}

func (c *converter) keep(err error) {
	if err != nil && c.err == nil {
		c.err = err
	}
}

func (c *converter) id(name string) string {
	v, ok := c.m[name]
	if !ok {
		return ""
	}
	s, err := graphql.UnmarshalID(v)
	c.keep(err)
	return s
}

func (c *converter) str(name string) string {
	v, ok := c.m[name]
	if !ok {
		return ""
	}
	s, err := graphql.UnmarshalString(v)
	c.keep(err)
	return s
}

func (c *converter) optStr(name string) *string {
	v := c.m[name]
	if v == nil {
		return nil
	}
	s, err := graphql.UnmarshalString(v)
	c.keep(err)
	return &s
}

func (c *converter) optInt(name string) *int {
	v := c.m[name]
	if v == nil {
		return nil
	}
	n, err := graphql.UnmarshalInt(v)
	c.keep(err)
	return &n
}

// page converts Relay's page arguments, in the schema's order.
func (c *converter) page() fetchkeys.Page {
	return fetchkeys.Page{First: c.optInt("first"), After: c.optStr("after"), Last: c.optInt("last"), Before: c.optStr("before")}
}

func (c *converter) optTime(name string) *time.Time {
	v := c.m[name]
	if v == nil {
		return nil
	}
	t, err := model.UnmarshalTime(v)
	c.keep(err)
	return &t
}
