package store

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Imports load data that already has its times and ids: the same write
// path as the live operations (every index row and counter is written),
// with the given created/updated/posted times and article sequence
// numbers. A row that exists already is skipped, not overwritten, so an
// interrupted import can simply be run again.

// errHiddenImport is an import's create that a delete marker hides: the
// row was deleted after the time it is imported at, which an import keeps.
var errHiddenImport = errHidden

func importTimes(created, updated time.Time) (int64, int64, error) {
	c, u := created.UnixMilli(), updated.UnixMilli()
	if c < 0 || u < c {
		return 0, 0, invalid("times must be >= 0 and updated >= created (got %d, %d)", c, u)
	}
	return c, u, nil
}

// importEntity is the entity an import creates: props encoded, its times
// checked, owner the owner cell (nil for a relationship).
func importEntity(props Properties, created, updated time.Time, owner []byte) (entity, error) {
	encoded, err := encodeProperties(props)
	if err != nil {
		return entity{}, err
	}
	c, u, err := importTimes(created, updated)
	if err != nil {
		return entity{}, err
	}
	return entity{created: c, updated: u, props: encoded, owner: owner}, nil
}

// ImportNode creates node id, owned by owner (empty: nobody), with the
// given properties and times unless it exists; created reports whether it
// did.
func (s *Store) ImportNode(ctx context.Context, id, owner string, props Properties, createdAt, updatedAt time.Time) (created bool, err error) {
	it, err := newNodeImport(0, NodeImport{ID: id, Owner: owner, Properties: props, Created: createdAt, Updated: updatedAt})
	if err != nil {
		return false, err
	}
	// An import of the same op that met its own earlier create (a
	// re-send, a retry) created it.
	_, err = s.createEntity(ctx, it.row, it.e, true, true)
	switch {
	case errors.Is(err, errCreatedThenDeleted):
		return true, nil
	case errors.Is(err, ErrAlreadyExists):
		return false, nil
	}
	return err == nil, err
}

// AdvanceArticleSeq makes the author's next sequence number greater than
// atLeast (an Increment by the shortfall: concurrent advances can only
// push it further, which is harmless). atLeast is at most math.MaxInt64,
// as article ids are.
func (s *Store) AdvanceArticleSeq(ctx context.Context, authorID string, atLeast uint64) error {
	if err := validateID("author id", authorID); err != nil {
		return err
	}
	if atLeast > math.MaxInt64 {
		return invalid("article id %d is above %d", atLeast, int64(math.MaxInt64))
	}
	// Its counters row is a row of the table: a table with rows and no
	// layout version is read as one of layout 1.
	if err := s.CheckArticleLayout(ctx); err != nil {
		return err
	}
	row := keys.Counters(authorID)
	c, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, row)
	if err != nil {
		return err
	}
	var cur int64
	if v := c[keys.QualSeq]; v != nil {
		var ok bool
		if cur, ok = decodeMs(v); !ok {
			return corrupt(row, "sequence counter %x", v)
		}
	}
	if cur >= int64(atLeast) {
		return nil
	}
	_, err = s.increment(ctx, keys.TableArticles, keys.FamilyArticles, row, keys.QualSeq, int64(atLeast)-cur)
	return err
}
