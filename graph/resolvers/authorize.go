package resolvers

import (
	"context"
	"fmt"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/graph/fields"
	"github.com/hbgraph/hbgraph/graph/model"
	"github.com/hbgraph/hbgraph/store"
)

// mayWriteNode checks that the caller may change node id and what belongs
// to it (the relationships that start at it, the articles it wrote): its
// owner or an admin. A node that does not exist is NOT_FOUND to anyone
// but an admin, so a caller cannot write to one another creates between
// this check and the write. The owner is written once, with the node.
//
// (The store checks the owner again inside the compare-and-set of a node's
// update or deletion and of a relationship's creation: see store.Writer.
// deleteNode leaves the check to the store alone, so that its retry after
// the node is gone is recognised there.)
func (r *Resolver) mayWriteNode(ctx context.Context, id string) error {
	p := auth.From(ctx)
	if p.Admin {
		return nil
	}
	if !p.Authenticated() {
		return auth.ErrUnauthenticated
	}
	get, err := store.NodeGet(id)
	if err != nil {
		return err
	}
	rows, err := r.Store.Read(ctx, []store.Get{get})
	if err != nil {
		return err
	}
	n, deleting, err := rows[0].NodeOrDeletion(id)
	switch {
	case err != nil:
		return err
	case n == nil, deleting:
		return fmt.Errorf("node %q: %w", id, errNoSuchNode)
	}
	if err := auth.MayWrite(p, n.Owner); err != nil {
		return fmt.Errorf("node %q: %w", id, &store.Refusal{Kind: err, Reason: "the node belongs to another subject (or to nobody): only its owner or an admin may change it"})
	}
	return nil
}

// errNoSuchNode is the node a write names, missing.
var errNoSuchNode = &store.Refusal{Kind: store.ErrNotFound, Reason: "the node does not exist"}

// mayWriteArticle is mayWriteNode for the author of article id.
func (r *Resolver) mayWriteArticle(ctx context.Context, id string) error {
	if auth.From(ctx).Admin {
		return nil
	}
	author, err := store.ArticleAuthor(id)
	if err != nil {
		return err
	}
	return r.mayWriteNode(ctx, author)
}

// ownerFor is node n's owner as the caller may see it (fields.NodeOwner,
// which the plan writes with): nil unless the caller owns n or is an
// admin.
func ownerFor(ctx context.Context, n *model.Node) *string {
	owner, _ := fields.NodeOwner.Value(fields.In{Caller: auth.From(ctx)}, &n.Node)
	return owner
}
