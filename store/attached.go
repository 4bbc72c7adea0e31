package store

import (
	"context"

	"github.com/hbgraph/hbgraph/store/keys"
)

// attachedPage is how many index rows AttachedKeys reads per scan.
const attachedPage = 256

// AttachedKeys calls fn with the key of each relationship node id has now,
// either direction, every type, as its index lists them (a relationship
// from the node to itself once), until fn returns an error. A pure read:
// the subscription events of a detaching deleteNode read what it is about
// to delete with it.
func (s *Store) AttachedKeys(ctx context.Context, id string, fn func(RelationshipKey) error) error {
	if err := ValidateNodeID(id); err != nil {
		return err
	}
	r := adjacencyOf(id)
	r.limit, r.keyOnly = attachedPage, true
	loops := map[RelationshipKey]bool{} // a self-loop has two index rows here
	for {
		rows, err := s.scan(ctx, r)
		if err != nil {
			return err
		}
		for _, rw := range rows {
			r.start = keys.After(rw.key)
			a, err := keys.DecodeAdjacency(rw.key)
			if err != nil {
				return err
			}
			k := relationshipOf(a)
			if k.Start == k.End {
				if loops[k] {
					continue
				}
				loops[k] = true
			}
			if err := fn(k); err != nil {
				return err
			}
		}
		if len(rows) < attachedPage {
			return nil
		}
	}
}
