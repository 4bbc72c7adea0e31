package fields

import (
	"fmt"

	"github.com/99designs/gqlgen/graphql"

	"github.com/hbgraph/hbgraph/store"
)

// NodesByID is a root field whose value is the Nodes its arguments name
// (node, nodes): read in the first wave, each with the reads keyed by its
// id; one Node or a list of them, as the field's definition says.
type NodesByID struct {
	// IDs are the nodes' ids, checked: an error fails the field before
	// anything is read.
	IDs func(in In) ([]string, error)
	// Whole: the field fails as a whole on the first node that failed
	// (nodes(ids:)), and nothing below it is read.
	Whole bool
}

// nodesByID registers a root field reading nodes by id.
func nodesByID(name string, args func(map[string]any) (any, error), n NodesByID) NodesByID {
	register(&Desc{Type: "Query", Name: name, Kind: NodeRead, Args: args, Nodes: &n})
	return n
}

var (
	// QueryNode: one node, null when there is none.
	QueryNode = nodesByID("node", decodeNodeArgs, NodesByID{IDs: func(in In) ([]string, error) {
		ids := in.Args.(*IDsArgs).IDs
		return ids, store.ValidateNodeID(ids[0])
	}})
	// QueryNodes: nodes in the order of the ids, null where there is none.
	QueryNodes = nodesByID("nodes", decodeIDsArgs, NodesByID{Whole: true, IDs: func(in In) ([]string, error) {
		ids := in.Args.(*IDsArgs).IDs
		return ids, NodeIDs(ids)
	}})
)

// decodeNodeArgs decodes node(id:)'s argument as a list of one id.
func decodeNodeArgs(m map[string]any) (any, error) {
	c := converter{m: m}
	a := &IDsArgs{}
	a.one[0] = c.id("id")
	a.IDs = a.one[:]
	return a, c.err
}

// NodeIDs checks nodes(ids:)'s argument: at most store.MaxPageSize ids,
// each a valid node id. The first bad id fails the whole field.
func NodeIDs(ids []string) error {
	if len(ids) > store.MaxPageSize {
		return BadInput("at most %d ids at once, got %d", store.MaxPageSize, len(ids))
	}
	for _, id := range ids {
		if err := store.ValidateNodeID(id); err != nil {
			return err
		}
	}
	return nil
}

// BadInput is an error about the client's input (BAD_USER_INPUT), its
// message read by the client: the format's arguments must be ours (limits,
// counts, Go-free words), never the client's values.
func BadInput(format string, args ...any) error {
	return &store.Refusal{Kind: store.ErrInvalidInput, Reason: fmt.Sprintf(format, args...)}
}

// converter converts arguments one by one with the functions gqlgen's
// generated code uses, keeping the first error.
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
