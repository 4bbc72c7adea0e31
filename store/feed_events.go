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
// enters its feed of relType. Its cost is bounded by the smaller of the
// readers and the author's followers: when the author's degree counter
// says it has fewer followers than there are readers, one key-only scan
// of its incoming index rows narrows the readers to its followers first.
// Then one batch of Gets per followingBatch readers left (each reader's
// relationship row and node row, and the author's row once) tells the
// live follows.
func (s *Store) Following(ctx context.Context, relType, author string, readers []string) ([]bool, error) {
	out := make([]bool, len(readers))
	authorGet, err := NodeGet(author)
	if err != nil {
		return nil, err
	}
	idx := make([]int, len(readers)) // the readers left, by index
	for i := range idx {
		idx[i] = i
	}
	followers, err := s.followersIfFewer(ctx, relType, author, len(readers))
	if err != nil {
		return nil, err
	}
	if followers != nil {
		idx = idx[:0]
		for i, r := range readers {
			if followers[r] {
				idx = append(idx, i)
			}
		}
	}
	for lo := 0; lo < len(idx); lo += followingBatch {
		batchIdx := idx[lo:min(len(idx), lo+followingBatch)]
		batch := make([]string, len(batchIdx))
		for i, j := range batchIdx {
			batch[i] = readers[j]
		}
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
			out[batchIdx[i]] = rel != nil
		}
	}
	return out, nil
}

// followersIfFewer returns the nodes with an incoming relType index row
// on author (its followers, some perhaps stale), when its degree counter
// and the scan find at most limit of them; nil when it has more (the
// caller then checks each reader instead).
func (s *Store) followersIfFewer(ctx context.Context, relType, author string, limit int) (map[string]bool, error) {
	deg, err := keys.Degree{Node: author, Dir: keys.Incoming, Type: relType}.Key()
	if err != nil {
		return nil, err
	}
	c, err := s.get(ctx, keys.TableGraph, keys.FamilyGraph, deg)
	if err != nil {
		return nil, err
	}
	if n, _ := decodeMs(c[keys.QualDegree]); n > int64(limit) {
		return nil, nil
	}
	prefix, err := keys.AdjacencyPrefix(author, keys.Incoming, relType)
	if err != nil {
		return nil, err
	}
	rows, err := s.scan(ctx, scanRange{table: keys.TableGraph, family: keys.FamilyGraph, start: prefix,
		stop: keys.PrefixEnd(prefix), limit: limit + 1, keyOnly: true})
	if err != nil || len(rows) > limit {
		return nil, err
	}
	out := make(map[string]bool, len(rows))
	for _, rw := range rows {
		a, err := keys.DecodeAdjacency(rw.key)
		if err != nil {
			return nil, corrupt(rw.key, "not an adjacency row")
		}
		out[a.Other] = true
	}
	return out, nil
}
