package embedded

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// TestBinaryComparatorValueAnswersAsUnmarshal checks binaryComparatorValue
// against proto.Unmarshal of a pb.BinaryComparator: on comparators as
// gohbase makes them, on ones with repeated and unknown fields, and on
// random bytes and random corruptions of the others, the same value (or
// none) and an error for the same inputs.
func TestBinaryComparatorValueAnswersAsUnmarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var inputs [][]byte
	for _, v := range [][]byte{nil, {}, []byte("x"), bytes.Repeat([]byte{0xff}, 300)} {
		b, err := proto.Marshal(&pb.BinaryComparator{Comparable: &pb.ByteArrayComparable{Value: v}})
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	inner := protowire.AppendTag(nil, 1, protowire.BytesType)
	inner = protowire.AppendBytes(inner, []byte("first"))
	unknown := protowire.AppendTag(nil, 7, protowire.VarintType)
	unknown = protowire.AppendVarint(unknown, 42)
	twice := protowire.AppendTag(nil, 1, protowire.BytesType)
	twice = protowire.AppendBytes(twice, inner)
	twice = protowire.AppendTag(twice, 1, protowire.BytesType)
	twice = protowire.AppendBytes(twice, unknown) // merged: "first" stays
	inputs = append(inputs, twice, append(append([]byte(nil), unknown...), twice...))
	for range 20000 {
		switch b := inputs[rng.IntN(len(inputs))]; rng.IntN(3) {
		case 0:
			r := make([]byte, rng.IntN(24))
			for i := range r {
				r[i] = byte(rng.UintN(256))
			}
			inputs = append(inputs, r)
		case 1:
			if len(b) > 0 {
				c := append([]byte(nil), b...)
				c[rng.IntN(len(c))] = byte(rng.UintN(256))
				inputs = append(inputs, c)
			}
		default:
			inputs = append(inputs, b[:rng.IntN(len(b)+1)])
		}
	}
	for _, in := range inputs {
		var bc pb.BinaryComparator
		werr := proto.Unmarshal(in, &bc)
		got, err := binaryComparatorValue(in)
		if (err != nil) != (werr != nil) {
			t.Fatalf("%x: error %v, proto.Unmarshal's %v", in, err, werr)
		}
		if want := bc.GetComparable().GetValue(); err == nil && !bytes.Equal(got, want) {
			t.Fatalf("%x: value %x, proto.Unmarshal's %x", in, got, want)
		}
	}
}
