package store

import (
	"context"

	"github.com/hbgraph/hbgraph/store/keys"
)

// What the articlePosted(feedOf:) subscription needs of the home feed
// (docs/design.md, "Subscriptions to a home feed").

// CheckFeedKept fails with ErrInvalidInput, naming the kept types, when
// the store keeps no feeds of relType.
func (s *Store) CheckFeedKept(relType string) error {
	if err := validateType("relationship type", relType); err != nil {
		return err
	}
	if !s.FeedKept(relType) {
		return s.errFeedNotKept(relType)
	}
	return nil
}

// FeedCursor is the cursor article a has in reader's feed of relType, as
// a page of Feed hands it out (fanned out or merged from a wide author:
// the same), so that Feed(after: it) goes on past a.
func FeedCursor(reader, relType string, a Article) (string, error) {
	k, err := keys.ParseArticleID(a.ID)
	if err != nil {
		return "", invalid("article id %q", a.ID)
	}
	row, err := keys.Feed{Reader: reader, Type: relType, Article: k}.Key()
	if err != nil {
		return "", err
	}
	pr := pageRange{layout: keys.FeedLayout, table: keys.TableGraph, family: keys.FamilyGraph,
		prefix: keys.FeedPrefix(reader, relType)}
	return pr.cursor(row), nil
}

// followingBatch is how many readers one Read of Following covers.
const followingBatch = 500

// Following reports, for each of readers, whether it has a live outgoing
// relationship of relType to author now: whether a post of author's
// enters its feed of relType. One batch of Gets per followingBatch
// readers (each reader's relationship row and node row, and the author's
// row once), never a scan.
func (s *Store) Following(ctx context.Context, relType, author string, readers []string) ([]bool, error) {
	out := make([]bool, len(readers))
	authorGet, err := NodeGet(author)
	if err != nil {
		return nil, err
	}
	for lo := 0; lo < len(readers); lo += followingBatch {
		batch := readers[lo:min(len(readers), lo+followingBatch)]
		gets := make([]Get, 1, 1+2*len(batch))
		gets[0] = authorGet
		valid := make([]bool, len(batch))
		for i, r := range batch {
			rg, sg, _, err := RelationshipKey{Start: r, Type: relType, End: author}.Gets()
			if err != nil {
				continue // not an id a relationship can have: follows nobody
			}
			valid[i] = true
			gets = append(gets, rg, sg)
		}
		rows, err := s.Read(ctx, gets)
		if err != nil {
			return nil, err
		}
		j := 1
		for i, r := range batch {
			if !valid[i] {
				continue
			}
			rel, err := rows[j].Relationship(RelationshipKey{Start: r, Type: relType, End: author}, rows[j+1], rows[0])
			j += 2
			if err != nil {
				return nil, err
			}
			out[lo+i] = rel != nil
		}
	}
	return out, nil
}
