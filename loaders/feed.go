package loaders

import (
	"context"

	"github.com/hbgraph/hbgraph/store"
)

// read reads k's page: a page of Author's articles, or of Author's home
// feed when k.Feed is set (both are ArticlePages, written alike).
func (k ArticlesKey) read(ctx context.Context, s *store.Store) (store.ArticlePage, error) {
	if k.Feed != "" {
		return s.Feed(ctx, k.Author, k.Feed, k.Page)
	}
	return s.Articles(ctx, k.Author, k.query(), k.Page)
}
