package resolvers

import (
	"context"

	"github.com/hbgraph/hbgraph/graph/fields"
	"github.com/hbgraph/hbgraph/graph/model"
	"github.com/hbgraph/hbgraph/loaders"
)

// feedPage is a page of node id's home feed (Node.feed), by its
// descriptor, through the article pages' loader.
func feedPage(ctx context.Context, id string, args *fields.FeedArgs) (*model.ArticleConnection, error) {
	k, err := fields.NodeFeed.Key(id, args, pageInfoSelected(ctx, "FeedConnection"))
	if err != nil {
		return nil, err
	}
	page, err := loaders.For(ctx).ArticlePage(ctx, k)
	if err != nil {
		return nil, err
	}
	return articleConnection(k, page), nil
}
