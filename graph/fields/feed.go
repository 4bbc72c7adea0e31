package fields

import (
	"github.com/hbgraph/hbgraph/loaders"
	"github.com/hbgraph/hbgraph/store"
)

// The home feed (Node.feed): a page of the articles of the nodes this node
// follows, read by store.Feed in the node's wave. It is an ArticlePage,
// held and written as an ArticleConnection's page, without totalCount
// (which no counter answers exactly: docs/design.md, "The home feed").
var NodeFeed = scan("Node", "feed", decodeFeedArgs, Scan[FeedArgs, loaders.ArticlesKey, store.ArticleCountKey]{feedKey, articleCount})

// FeedArgs are Node.feed's arguments.
type FeedArgs struct {
	Via string
	PageArgs
}

func decodeFeedArgs(m map[string]any) (any, error) {
	c := converter{m: m}
	a := &FeedArgs{Via: c.str("via"), PageArgs: c.page()}
	return a, c.err
}

func feedKey(id string, a *FeedArgs, wanted PageInfoWanted) (loaders.ArticlesKey, error) {
	req, err := PageRequest(wanted, a.PageArgs)
	if err != nil {
		return loaders.ArticlesKey{}, err
	}
	if a.Via == "" {
		return loaders.ArticlesKey{}, BadInput("via may not be empty")
	}
	return loaders.ArticlesKey{Author: id, Feed: a.Via, Page: req}, nil
}

var (
	FeedConnectionEdges = nested("FeedConnection", "edges", Nested[*store.ArticlePage, ArtEdge]{
		Len: func(p *store.ArticlePage) int { return len(p.Articles) },
		At:  func(p *store.ArticlePage, i int) ArtEdge { return ArtEdge{Page: p, I: i} },
	})
	FeedConnectionPageInfo = nested("FeedConnection", "pageInfo", Nested[*store.ArticlePage, Page]{
		At: func(p *store.ArticlePage, _ int) Page { return pageOf(p.Cursors, p.PageInfo) },
	})
)

func init() {
	ParentTypes["FeedConnection"] = (*Leaf[*store.ArticlePage])(nil)
	ReadParentTypes["FeedConnection"] = (*ReadOf[store.ArticleCountKey])(nil)
}
