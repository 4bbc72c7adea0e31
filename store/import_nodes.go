package store

import (
	"context"
	"time"

	"github.com/hbgraph/hbgraph/store/keys"
)

// NodeImport is one node of an ImportNodes batch. Owner may be empty
// (nobody owns it).
type NodeImport struct {
	ID, Owner        string
	Properties       Properties
	Created, Updated time.Time
}

// ImportNodes imports a batch of nodes with the outcome ImportNode would
// give each, in the order of nodes, but with the batch's writes in key
// order: a CheckAndMutate "c absent" per node (HBase has no batched
// compare-and-set), then one SendBatch of Gets reading the created rows
// back (see createEntity: a delete marker may hide them). One at a time,
// in the order of a file, each node's create and read-back landed
// anywhere in the store; in key order each lands near the one before it,
// which a store of sorted rows serves faster once it outgrows the CPU's
// caches.
//
// A node that appears more than once in nodes is imported by its first
// occurrence (see ImportRelationships). The error is non-nil only when
// the batch stopped early (a fault point); the items it left unsettled
// carry it as their Err.
func (s *Store) ImportNodes(ctx context.Context, nodes []NodeImport) ([]ImportOutcome, error) {
	out := make([]ImportOutcome, len(nodes))
	pending := make([]*nodeImport, 0, len(nodes))
	ctx, op := withOp(ctx)
	for i, n := range nodes {
		it, err := newNodeImport(i, n)
		if err != nil {
			out[i].Err = err
			continue
		}
		// Each item's create is its own op, the same on a retry of the
		// batch with the same op.
		it.op = DeriveOpID(op.String(), "import node", n.ID)
		pending = append(pending, it)
	}
	err := importRounds(out, pending, func(round []*nodeImport) error {
		if err := createEntities(ctx, s, "import-node-create", sortedByRow(round)); err != nil {
			return err
		}
		for _, it := range round {
			it.settled = true
		}
		return nil
	})
	return out, err
}

// nodeImport is one valid node of a batch.
type nodeImport struct {
	entityImport
}

func newNodeImport(i int, n NodeImport) (*nodeImport, error) {
	if err := validateID("node id", n.ID); err != nil {
		return nil, err
	}
	if err := validateOwner(n.Owner); err != nil {
		return nil, err
	}
	e, err := importEntity(n.Properties, n.Created, n.Updated, ownerCell(n.Owner))
	if err != nil {
		return nil, err
	}
	return &nodeImport{entityImport{importItem: importItem{i: i, row: keys.Node(n.ID)}, e: e}}, nil
}
