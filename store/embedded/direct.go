package embedded

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/tsuna/gohbase/filter"
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
	resp, err := c.applyRequest(ctx, table, req)
	if err != nil {
		return nil, err
	}
	return hrpc.ToLocalResult(resp.GetResult()), nil
}

// PutCells is pagescan.Putter: the MutationProto an hrpc Put of values
// stamped ts reaches the engine as, made directly (a post's category row
// and pending counts, an edit's), applied as a call is.
func (c *Client) PutCells(ctx context.Context, table string, row []byte, values map[string]map[string][]byte, ts uint64) error {
	_, err := c.applyRequest(ctx, table, &pb.MutateRequest{Mutation: putProto(row, values, &ts)})
	return err
}

// CheckAndPutCells is pagescan.CheckAndPutter: PutCells' mutation with the
// condition an hrpc CheckAndMutate of it carries (a BinaryComparator of
// expected, EQUAL), applied as a call is.
func (c *Client) CheckAndPutCells(ctx context.Context, table string, row []byte, family, qualifier string, expected []byte,
	values map[string]map[string][]byte, ts uint64) (bool, error) {
	return c.checkAndApply(ctx, table, row, family, qualifier, expected, putProto(row, values, &ts))
}

// DeleteRowAt is pagescan.RowDeleter: the MutationProto an hrpc Delete of
// the whole row stamped ts reaches the engine as (no cell named: every
// family goes), made directly, applied as a call is.
func (c *Client) DeleteRowAt(ctx context.Context, table string, row []byte, ts uint64) error {
	_, err := c.applyRequest(ctx, table, &pb.MutateRequest{Mutation: deleteRowProto(row, &ts)})
	return err
}

// CheckAndDeleteRowAt is pagescan.RowDeleter: DeleteRowAt's mutation with
// the condition an hrpc CheckAndMutate of it carries.
func (c *Client) CheckAndDeleteRowAt(ctx context.Context, table string, row []byte, family, qualifier string,
	expected []byte, ts uint64) (bool, error) {
	return c.checkAndApply(ctx, table, row, family, qualifier, expected, deleteRowProto(row, &ts))
}

func deleteRowProto(row []byte, ts *uint64) *pb.MutationProto {
	return &pb.MutationProto{
		Row:        row,
		MutateType: pb.MutationProto_DELETE.Enum(),
		Durability: pb.MutationProto_USE_DEFAULT.Enum(),
		Timestamp:  ts,
	}
}

// checkAndApply applies m if column (family, qualifier) of row holds
// expected, with the condition an hrpc CheckAndMutate carries (a
// BinaryComparator of expected, EQUAL), and reports whether it did.
func (c *Client) checkAndApply(ctx context.Context, table string, row []byte, family, qualifier string,
	expected []byte, m *pb.MutationProto) (bool, error) {
	cmp, err := filter.NewBinaryComparator(filter.NewByteArrayComparable(expected)).ConstructPBComparator()
	if err != nil {
		return false, err
	}
	resp, err := c.applyRequest(ctx, table, &pb.MutateRequest{
		Mutation: m,
		Condition: &pb.Condition{Row: row, Family: []byte(family), Qualifier: []byte(qualifier),
			CompareType: pb.CompareType_EQUAL.Enum(), Comparator: cmp},
	})
	if err != nil {
		return false, err
	}
	return resp.GetProcessed(), nil
}

// putProto is the MutationProto of a Put of values to row, every cell
// stamped *ts, as gohbase makes it (one allocation each kind).
func putProto(row []byte, values map[string]map[string][]byte, ts *uint64) *pb.MutationProto {
	n := 0
	for _, cells := range values {
		n += len(cells)
	}
	qvs := make([]pb.MutationProto_ColumnValue_QualifierValue, n)
	ptrs := make([]*pb.MutationProto_ColumnValue_QualifierValue, n)
	cvs := make([]pb.MutationProto_ColumnValue, 0, len(values))
	cvps := make([]*pb.MutationProto_ColumnValue, 0, len(values))
	i := 0
	for family, cells := range values {
		from := i
		for q, v := range cells {
			qvs[i].Qualifier, qvs[i].Value, qvs[i].Timestamp = bytesOf(q), v, ts
			ptrs[i] = &qvs[i]
			i++
		}
		cvs = append(cvs, pb.MutationProto_ColumnValue{Family: bytesOf(family), QualifierValue: ptrs[from:i:i]})
		cvps = append(cvps, &cvs[len(cvs)-1])
	}
	return &pb.MutationProto{
		Row:         row,
		MutateType:  pb.MutationProto_PUT.Enum(),
		Durability:  pb.MutationProto_USE_DEFAULT.Enum(),
		Timestamp:   ts,
		ColumnValue: cvps,
	}
}

// applyRequest applies a mutation as sendCall applies a call's: in ctx's
// transaction, or holding a call slot.
func (c *Client) applyRequest(ctx context.Context, table string, req *pb.MutateRequest) (*pb.MutateResponse, error) {
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
	if tx != nil {
		return tx.mutate(t, req)
	}
	return c.mutate(ctx, t, req)
}
