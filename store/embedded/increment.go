package embedded

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"
)

// IncrementNonced is pagescan.Incrementer: the MutationProto a nonced
// hrpc Increment of the same cells reaches the region server as, made
// directly, applied as sendCall applies one. It spares the store's
// Increments (three a post) the hrpc request, the cell block gohbase
// encodes and the engine decodes, and the protobuf answer converted.
func (c *Client) IncrementNonced(ctx context.Context, table string, row []byte, family string,
	qualifiers []string, deltas []int64, nonceGroup, nonce uint64) (*hrpc.Result, error) {
	if len(qualifiers) != len(deltas) {
		return nil, fmt.Errorf("%w: %d qualifiers, %d deltas", ErrInvalidRequest, len(qualifiers), len(deltas))
	}
	// One allocation each kind, as readCellBlocks makes them.
	values := make([]byte, 8*len(deltas))
	qvs := make([]pb.MutationProto_ColumnValue_QualifierValue, len(qualifiers))
	ptrs := make([]*pb.MutationProto_ColumnValue_QualifierValue, len(qualifiers))
	for i, q := range qualifiers {
		v := values[8*i : 8*i+8 : 8*i+8]
		binary.BigEndian.PutUint64(v, uint64(deltas[i]))
		// The engine only reads a qualifier (the answer's cells share it,
		// as they share the cell block's): the string's bytes serve.
		qvs[i].Qualifier, qvs[i].Value = bytesOf(q), v
		ptrs[i] = &qvs[i]
	}
	req := &pb.MutateRequest{
		NonceGroup: proto.Uint64(nonceGroup),
		Mutation: &pb.MutationProto{
			Row:         row,
			MutateType:  pb.MutationProto_INCREMENT.Enum(),
			Durability:  pb.MutationProto_USE_DEFAULT.Enum(),
			Nonce:       proto.Uint64(nonce),
			ColumnValue: []*pb.MutationProto_ColumnValue{{Family: []byte(family), QualifierValue: ptrs}},
		},
	}
	tx := txOf(ctx)
	if tx == nil { // (a transaction holds its call slot from begin to end)
		if err := c.enter(); err != nil {
			return nil, err
		}
		defer c.leave()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, err := c.table([]byte(table))
	if err != nil {
		return nil, err
	}
	var resp *pb.MutateResponse
	if tx != nil {
		resp, err = tx.mutate(t, req)
	} else {
		resp, err = c.mutate(ctx, t, req)
	}
	if err != nil {
		return nil, err
	}
	return hrpc.ToLocalResult(resp.GetResult()), nil
}
