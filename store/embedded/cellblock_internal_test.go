package embedded

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
)

// A mutation read from its cell block is the one its protobuf carries:
// every family, qualifier, value, timestamp and delete type, for random
// Puts, Deletes (of columns, families and rows), Increments and Appends,
// with and without a timestamp.
func TestCellBlockReadsAsToProto(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	tbl := newTable("t", []string{"f0", "f1", "f2"})
	for i := range 3000 {
		values := map[string]map[string][]byte{}
		for f := range r.IntN(3) + 1 {
			family := fmt.Sprintf("f%d", f)
			cells := map[string][]byte{}
			for q := range r.IntN(5) {
				v := make([]byte, r.IntN(3)*4) // 0, 4 or 8 bytes
				for j := range v {
					v[j] = byte(r.Uint32())
				}
				cells[fmt.Sprintf("q%d", q)] = v
			}
			values[family] = cells
		}
		wholeFamily := r.IntN(4) == 0 // a Delete's: nil cells (a Put's panics in gohbase)
		var opts []func(hrpc.Call) error
		if r.IntN(2) == 0 {
			opts = append(opts, hrpc.TimestampUint64(uint64(r.Int64N(1<<41))))
		}
		row := fmt.Sprintf("row%d", i)
		var call *hrpc.Mutate
		var err error
		switch r.IntN(5) {
		case 0:
			call, err = hrpc.NewPutStr(ctx, "t", row, values, opts...)
		case 1:
			if wholeFamily {
				values["f0"] = nil
			}
			call, err = hrpc.NewDelStr(ctx, "t", row, values, opts...)
		case 2:
			call, err = hrpc.NewDelStr(ctx, "t", row, nil, opts...) // the row
		case 3:
			call, err = hrpc.NewIncStr(ctx, "t", row, values, opts...)
		default:
			call, err = hrpc.NewAppStr(ctx, "t", row, values, opts...)
		}
		if err != nil {
			t.Fatal(err)
		}
		call.SetRegion(tbl.region)
		want := call.ToProto().(*pb.MutateRequest).GetMutation()
		msg, _, err := requestOf(call)
		if err != nil {
			t.Fatalf("mutation %d: %v", i, err)
		}
		got := msg.(*pb.MutateRequest).GetMutation()
		if g, w := describeMutation(got), describeMutation(want); g != w {
			t.Fatalf("mutation %d from its cell block:\n%s\nwant (ToProto):\n%s", i, g, w)
		}
	}
}

// describeMutation prints what the engine reads of m, in a fixed order: a
// family's cells are the ones its protobuf lists, whatever the order, and
// a family without cells (sent by ToProto, not in a cell block) says
// nothing.
func describeMutation(m *pb.MutationProto) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %v row=%q ts=%v durability=%v attrs=%d\n", m.GetMutateType(), m.Timestamp != nil, m.GetRow(),
		m.GetTimestamp(), m.GetDurability(), len(m.GetAttribute()))
	cvs := slices.Clone(m.GetColumnValue())
	slices.SortFunc(cvs, func(a, b *pb.MutationProto_ColumnValue) int { return bytes.Compare(a.GetFamily(), b.GetFamily()) })
	for _, cv := range cvs {
		qvs := slices.Clone(cv.GetQualifierValue())
		if len(qvs) == 0 {
			continue
		}
		slices.SortFunc(qvs, func(a, b *pb.MutationProto_ColumnValue_QualifierValue) int {
			return cmp.Compare(string(a.GetQualifier()), string(b.GetQualifier()))
		})
		for _, qv := range qvs {
			fmt.Fprintf(&b, "  %s:%q=%x ts=%v/%d del=%v/%v\n", cv.GetFamily(), qv.GetQualifier(), qv.GetValue(),
				qv.Timestamp != nil, qv.GetTimestamp(), qv.DeleteType != nil, qv.GetDeleteType())
		}
	}
	return b.String()
}

// A cell block that does not hold what the mutation says fails the call
// as an invalid request, whatever is wrong with it.
func TestCellBlockMalformedIsInvalid(t *testing.T) {
	call, err := hrpc.NewPutStr(context.Background(), "t", "row", map[string]map[string][]byte{"f": {"q": []byte("value")}})
	if err != nil {
		t.Fatal(err)
	}
	tbl := newTable("t", []string{"f"})
	call.SetRegion(tbl.region)
	msg, blocks, _ := call.SerializeCellBlocks(nil)
	whole := blocks[0]
	m := msg.(*pb.MutateRequest).GetMutation()
	cases := map[string][][]byte{
		"truncated":      {whole[:len(whole)-1]},
		"short header":   {whole[:7]},
		"one cell extra": {whole, whole},
		"none":           nil,
	}
	otherRow, err := hrpc.NewPutStr(context.Background(), "t", "other", map[string]map[string][]byte{"f": {"q": []byte("value")}})
	if err != nil {
		t.Fatal(err)
	}
	otherRow.SetRegion(tbl.region)
	_, ob, _ := otherRow.SerializeCellBlocks(nil)
	cases["another row's cell"] = ob
	bad := bytes.Clone(whole)
	bad[len(bad)-len("value")-1] = 99 // the type
	cases["unknown type"] = [][]byte{bad}
	cases["cells where none are said"] = [][]byte{whole}
	for name, blocks := range cases {
		m := &pb.MutationProto{Row: m.GetRow(), MutateType: m.MutateType, AssociatedCellCount: m.AssociatedCellCount}
		if name == "cells where none are said" {
			m.AssociatedCellCount = nil
		}
		if err := readCellBlocks(m, blocks, new(cellSlab)); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%s: %v, want ErrInvalidRequest", name, err)
		}
	}
}

// A mutation gohbase cannot put in a cell block (it panics) is refused,
// and the engine goes on.
func TestCellBlockGohbaseCannotSendIsInvalid(t *testing.T) {
	call, err := hrpc.NewPutStr(context.Background(), "t", "row", map[string]map[string][]byte{"f": nil})
	if err != nil {
		t.Fatal(err)
	}
	call.SetRegion(newTable("t", []string{"f"}).region)
	if _, _, err := requestOf(call); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("%v, want ErrInvalidRequest", err)
	}
}
