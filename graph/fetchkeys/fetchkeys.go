// Package fetchkeys turns a field's GraphQL arguments into the keys of the
// store reads that answer it, and a read's results into the values the
// schema names. The resolvers (gqlgen's executor) and the plan (package
// plan) both call these functions, so the two executors make the same
// store calls and report the same input errors for the same arguments:
// a key built one way by one and another way by the other would compile,
// and cost a store call or change an answer.
//
// Errors that reject an argument wrap store.ErrInvalidInput
// (BAD_USER_INPUT); nothing here reads the store.
package fetchkeys

import (
	"fmt"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/hbgraph/hbgraph/graph/fields"
	"github.com/hbgraph/hbgraph/graph/model"
	"github.com/hbgraph/hbgraph/loaders"
	"github.com/hbgraph/hbgraph/store"
)

// DefaultPageSize is the size of a page when neither first nor last is
// given (the schema's documented default).
const DefaultPageSize = 20

// PageInfoWanted tells which of PageInfo's hasNextPage and hasPreviousPage
// a connection field selects.
type PageInfoWanted struct{ Next, Previous bool }

// AllPageInfo is what a connection read outside a query's selection (or
// without one) assumes is wanted.
var AllPageInfo = PageInfoWanted{Next: true, Previous: true}

// PageInfoOf reads from the selections of connection field f, of type
// connType, which page flags it selects (through fragments and directives,
// as gqlgen collects them).
func PageInfoOf(oc *graphql.OperationContext, f graphql.CollectedField, connType string) PageInfoWanted {
	var w PageInfoWanted
	for _, c := range graphql.CollectFields(oc, f.Selections, []string{connType}) {
		if c.Name != "pageInfo" {
			continue
		}
		for _, p := range graphql.CollectFields(oc, c.Selections, []string{"PageInfo"}) {
			switch p.Name {
			case "hasNextPage":
				w.Next = true
			case "hasPreviousPage":
				w.Previous = true
			}
		}
	}
	return w
}

// Page is a connection field's Relay page arguments, each nil when
// absent or null: named, so that after and before cannot be swapped.
type Page struct {
	First  *int
	After  *string
	Last   *int
	Before *string
}

// Size is the page size asked for: first, else last, else
// DefaultPageSize (the size a valid request reads, and the one the
// complexity prices).
func (p Page) Size() int {
	switch {
	case p.First != nil:
		return *p.First
	case p.Last != nil:
		return *p.Last
	}
	return DefaultPageSize
}

// RelationshipsArgs are Node.relationships' arguments.
type RelationshipsArgs struct {
	Type      string
	Direction model.Direction
	Page
}

// ArticlesArgs are Node.articles' arguments.
type ArticlesArgs struct {
	Category                  *string
	PostedAfter, PostedBefore *time.Time
	Page
}

// PageRequest turns Relay's first/after/last/before into a store page
// request: first/after page forward, last/before backward; mixing the two
// directions is refused. The store reads one row past the page only when
// the flag that row decides (hasNextPage forward, hasPreviousPage
// backward) is wanted.
func PageRequest(wanted PageInfoWanted, p Page) (store.PageRequest, error) {
	forward := p.First != nil || p.After != nil
	backward := p.Last != nil || p.Before != nil
	if forward && backward {
		return store.PageRequest{}, fields.BadInput("use first/after or last/before, not both")
	}
	req := store.PageRequest{Size: p.Size(), Backward: backward}
	req.NoLookahead = backward && !wanted.Previous || !backward && !wanted.Next
	if req.Size < 0 || req.Size > store.MaxPageSize {
		return store.PageRequest{}, fields.BadInput("first and last must be between 0 and %d, got %d", store.MaxPageSize, req.Size)
	}
	if p.After != nil {
		req.Cursor = *p.After
	}
	if p.Before != nil {
		req.Cursor = *p.Before
	}
	if (p.After != nil && *p.After == "") || (p.Before != nil && *p.Before == "") {
		return store.PageRequest{}, fields.BadInput("a cursor may not be empty")
	}
	return req, nil
}

// PageInfo is a page's PageInfo for gqlgen's resolvers, made by PageInfo's
// descriptors (graph/fields), which the plan writes with: its flags, and
// its first and last cursors (nil on an empty page).
func PageInfo(cursors store.Cursors, info store.PageInfo) model.PageInfo {
	in, pg := fields.In{}, fields.Page{Cursors: cursors, Info: info}
	var p model.PageInfo
	p.HasNextPage, _, _ = fields.PageHasNextPage.Get(in, pg)
	p.HasPreviousPage, _, _ = fields.PageHasPreviousPage.Get(in, pg)
	p.StartCursor, _ = fields.PageStartCursor.Value(in, pg)
	p.EndCursor, _ = fields.PageEndCursor.Value(in, pg)
	return p
}

// Direction is the store's direction for the schema's.
func Direction(d model.Direction) store.Direction {
	if d == model.DirectionIncoming {
		return store.Incoming
	}
	return store.Outgoing
}

// Adjacency and Articles build the loader keys of a node's connections
// from the field's arguments.
func Adjacency(id string, a *RelationshipsArgs, wanted PageInfoWanted) (loaders.AdjacencyKey, error) {
	req, err := PageRequest(wanted, a.Page)
	if err != nil {
		return loaders.AdjacencyKey{}, err
	}
	return loaders.AdjacencyKey{Node: id, Type: a.Type, Dir: Direction(a.Direction), Page: req}, nil
}

func Articles(id string, a *ArticlesArgs, wanted PageInfoWanted) (loaders.ArticlesKey, error) {
	req, err := PageRequest(wanted, a.Page)
	if err != nil {
		return loaders.ArticlesKey{}, err
	}
	k := loaders.ArticlesKey{Author: id, Page: req}
	if a.Category != nil {
		if *a.Category == "" { // the store reads "" as every category
			return loaders.ArticlesKey{}, fields.BadInput("category may not be empty; leave it out for every category")
		}
		k.Category = *a.Category
	}
	k.After, k.HasAfter = msOf(a.PostedAfter)
	k.Before, k.HasBefore = msOf(a.PostedBefore)
	return k, nil
}

// Degree is the counter behind a relationship connection's totalCount.
func Degree(k loaders.AdjacencyKey) store.DegreeKey {
	return store.DegreeKey{Node: k.Node, Dir: k.Dir, Type: k.Type}
}

// ArticleCount is the counter behind an article connection's totalCount.
func ArticleCount(k loaders.ArticlesKey) store.ArticleCountKey {
	return store.ArticleCountKey{Author: k.Author, Category: k.Category}
}

func msOf(t *time.Time) (int64, bool) {
	if t == nil {
		return 0, false
	}
	ms := t.UnixMilli()
	if time.UnixMilli(ms).Before(*t) {
		ms++ // the store rounds up to its millisecond precision too
	}
	return ms, true
}

// MissingEndpoint is the error of a node that must exist (a relationship's
// end, an article's author) and does not.
func MissingEndpoint(id string) error {
	return fmt.Errorf("node %q: %w", id, &store.Refusal{Kind: store.ErrNotFound, Reason: "the node it refers to does not exist"})
}
