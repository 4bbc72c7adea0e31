// Package fetchkeys is what the gqlgen side needs of graph/fields beyond
// the descriptors: gqlgen's model values made by them (PageInfo), the
// schema's Direction as the store's, and the NOT_FOUND of a node that must
// exist, which both executors report. The keys of the store reads and
// the page arguments are the descriptors' (graph/fields: reads.go,
// scans.go), so that the two executors make the same store calls and
// report the same input errors for the same arguments.
package fetchkeys

import (
	"fmt"

	"github.com/hbgraph/hbgraph/graph/fields"
	"github.com/hbgraph/hbgraph/graph/model"
	"github.com/hbgraph/hbgraph/store"
)

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

// MissingEndpoint is the error of a node that must exist (a relationship's
// end, an article's author) and does not.
func MissingEndpoint(id string) error {
	return fmt.Errorf("node %q: %w", id, &store.Refusal{Kind: store.ErrNotFound, Reason: "the node it refers to does not exist"})
}
