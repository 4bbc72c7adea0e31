package embedded

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"
)

// cellBlockCall is a call gohbase's region client sends with its cells in
// a cell block when the call enables them (region/client.go): Put, Delete,
// Increment and Append, not CheckAndMutate.
type cellBlockCall interface {
	SerializeCellBlocks([][]byte) (proto.Message, [][]byte, uint32)
	CellBlocksEnabled() bool
}

// requestOf is the request a region server receives for call: a
// mutation's cells from its cell block, as gohbase sends them, read back
// into the MutationProto's column values (one allocation each kind, not
// several a cell as ToProto makes); any other call's protobuf. The
// mutation's column values are in slab (nil for another call), which the
// caller releases once the call is answered.
func requestOf(call hrpc.Call) (msg proto.Message, slab *cellSlab, err error) {
	cb, ok := call.(cellBlockCall)
	if !ok || !cb.CellBlocksEnabled() {
		return call.ToProto(), nil, nil
	}
	defer func() {
		// gohbase panics on a mutation it cannot put in a cell block (a
		// Put of a family with a nil map of cells): its region client
		// would take the process down; the engine answers the call.
		if p := recover(); p != nil {
			msg, slab, err = nil, nil, fmt.Errorf("%w: gohbase cannot send this mutation: %v", ErrInvalidRequest, p)
		}
	}()
	msg, blocks, _ := cb.SerializeCellBlocks(nil)
	req, ok := msg.(*pb.MutateRequest)
	if !ok || req.Mutation == nil {
		return call.ToProto(), nil, nil
	}
	m := req.Mutation
	slab = cellSlabs.Get().(*cellSlab)
	if err := readCellBlocks(m, blocks, slab); err != nil {
		slab.release()
		return nil, nil, err
	}
	m.AssociatedCellCount = nil
	return req, slab, nil
}

// cellSlab holds the column values readCellBlocks reads a mutation's
// cells into, kept in cellSlabs between calls. Nothing points into it
// once the call is answered: the engine keeps a cell's qualifier and
// value, which point into the cell block, not the protobuf around them.
type cellSlab struct {
	cells []readCell
	ptrs  []*pb.MutationProto_ColumnValue_QualifierValue
	cvs   []pb.MutationProto_ColumnValue
	cvps  []*pb.MutationProto_ColumnValue
	used  int // cells taken
}

var cellSlabs = sync.Pool{New: func() any { return new(cellSlab) }}

// keptSlabCells bounds the cells of a slab put back: a large mutation's
// are dropped.
const keptSlabCells = 256

// take returns n zeroed cells and their pointers.
func (s *cellSlab) take(n int) ([]readCell, []*pb.MutationProto_ColumnValue_QualifierValue) {
	if cap(s.cells) < n {
		s.cells, s.ptrs = make([]readCell, n), make([]*pb.MutationProto_ColumnValue_QualifierValue, n)
	}
	s.used = n
	return s.cells[:n], s.ptrs[:n]
}

// family returns a zeroed column value of the slab, appended to its list.
func (s *cellSlab) family(fam []byte) *pb.MutationProto_ColumnValue {
	if len(s.cvs) == cap(s.cvs) {
		// A new array: the old one's column values stay where the list
		// points to them.
		s.cvs = make([]pb.MutationProto_ColumnValue, 0, max(4, 2*cap(s.cvs)))
	}
	s.cvs = s.cvs[:len(s.cvs)+1]
	cv := &s.cvs[len(s.cvs)-1]
	cv.Family = fam
	s.cvps = append(s.cvps, cv)
	return cv
}

func (s *cellSlab) release() {
	if s == nil {
		return
	}
	clear(s.cells[:s.used])
	clear(s.ptrs[:s.used])
	clear(s.cvs)
	clear(s.cvps)
	s.cvs, s.cvps, s.used = s.cvs[:0], s.cvps[:0], 0
	if cap(s.cells) > keptSlabCells {
		s.cells, s.ptrs = nil, nil
	}
	if cap(s.cvs) > keptSlabCells {
		s.cvs, s.cvps = nil, nil
	}
	cellSlabs.Put(s)
}

// Cell types of a cell block (HBase's KeyValue.Type).
const (
	cellPut                 = 4
	cellDelete              = 8
	cellDeleteFamilyVersion = 10
	cellDeleteColumn        = 12
	cellDeleteFamily        = 14
)

// readCellBlocks fills m's column values from the cells of blocks, each
//
//	uint32 length, uint32 key length, uint32 value length,
//	uint16 row length, row, uint8 family length, family, qualifier,
//	uint64 timestamp, uint8 type, value
//
// as m's ToProto would have made them: a family's cells in one column
// value, a timestamp only where it is not LATEST_TIMESTAMP, a delete
// type from the cell's type. Qualifiers and values alias the block.
func readCellBlocks(m *pb.MutationProto, blocks [][]byte, slab *cellSlab) error {
	want := int(m.GetAssociatedCellCount())
	if want == 0 {
		for _, b := range blocks {
			if len(b) > 0 {
				return fmt.Errorf("%w: cells in the cell block of a mutation that says it has none", ErrInvalidRequest)
			}
		}
		return nil
	}
	cells, ptrs := slab.take(want)
	first := len(slab.cvps)
	n := 0
	for _, b := range blocks {
		for len(b) > 0 {
			if n == want {
				return fmt.Errorf("%w: more cells in the cell block than the mutation's %d", ErrInvalidRequest, want)
			}
			c, rest, err := nextCell(b)
			if err != nil {
				return err
			}
			b = rest
			if string(c.row) != string(m.GetRow()) {
				return fmt.Errorf("%w: a cell of row %q in a mutation of row %q", ErrInvalidRequest, c.row, m.GetRow())
			}
			rc := &cells[n]
			qv := &rc.qv
			qv.Qualifier, qv.Value = c.qualifier, c.value
			if c.ts < latestTimestamp {
				rc.ts = c.ts
				qv.Timestamp = &rc.ts
			}
			if c.typ != cellPut {
				switch c.typ {
				case cellDelete:
					rc.del = pb.MutationProto_DELETE_ONE_VERSION
				case cellDeleteColumn:
					rc.del = pb.MutationProto_DELETE_MULTIPLE_VERSIONS
				case cellDeleteFamily:
					rc.del = pb.MutationProto_DELETE_FAMILY
				case cellDeleteFamilyVersion:
					rc.del = pb.MutationProto_DELETE_FAMILY_VERSION
				default:
					return fmt.Errorf("%w: cell type %d", ErrInvalidRequest, c.typ)
				}
				qv.DeleteType = &rc.del
			}
			ptrs[n] = qv
			if len(slab.cvps) == first || string(slab.cvps[len(slab.cvps)-1].Family) != string(c.family) {
				slab.family(c.family).QualifierValue = ptrs[n:n:want]
			}
			last := slab.cvps[len(slab.cvps)-1]
			last.QualifierValue = last.QualifierValue[:len(last.QualifierValue)+1]
			n++
		}
	}
	if n != want {
		return fmt.Errorf("%w: %d cells in the cell block, the mutation says %d", ErrInvalidRequest, n, want)
	}
	m.ColumnValue = slab.cvps[first:len(slab.cvps):len(slab.cvps)]
	return nil
}

// readCell is a cell read from a cell block, with the fields its
// QualifierValue points to: a mutation's cells take one allocation.
type readCell struct {
	qv  pb.MutationProto_ColumnValue_QualifierValue
	ts  uint64
	del pb.MutationProto_DeleteType
}

// blockCell is one cell of a cell block; its slices alias the block.
type blockCell struct {
	row, family, qualifier, value []byte
	ts                            uint64
	typ                           byte
}

func nextCell(b []byte) (blockCell, []byte, error) {
	bad := func(what string) (blockCell, []byte, error) {
		return blockCell{}, nil, fmt.Errorf("%w: a cell block's cell: %s", ErrInvalidRequest, what)
	}
	if len(b) < 12 {
		return bad("short header")
	}
	total := int(binary.BigEndian.Uint32(b))
	keyLen := int(binary.BigEndian.Uint32(b[4:]))
	valueLen := int(binary.BigEndian.Uint32(b[8:]))
	if total != 8+keyLen+valueLen || len(b) < 4+total || keyLen < 2+1+8+1 {
		return bad("lengths")
	}
	key, value := b[12:12+keyLen], b[12+keyLen:4+total]
	rowLen := int(binary.BigEndian.Uint16(key))
	if 2+rowLen+1 > len(key)-9 {
		return bad("row length")
	}
	row := key[2 : 2+rowLen]
	famLen := int(key[2+rowLen])
	rest := key[2+rowLen+1:]
	if famLen > len(rest)-9 {
		return bad("family length")
	}
	family, qualifier := rest[:famLen], rest[famLen:len(rest)-9]
	ts := binary.BigEndian.Uint64(rest[len(rest)-9:])
	c := blockCell{row: row, family: family, qualifier: qualifier, value: value, ts: ts, typ: rest[len(rest)-1]}
	return c, b[4+total:], nil
}
