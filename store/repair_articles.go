package store

import "context"

// repairArticles is written with the articles; placeholder so the package
// builds until then.
func (s *Store) repairArticles(ctx context.Context, fix func(kind string, n int)) error { return nil }
