package embedded

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
)

// A CheckAndMutate writes the columns its mutation changes, not the
// condition's column it read: a compare-and-set on a node's u that puts
// an intent commits the intent alone.
func TestCheckAndMutateCommitsOnlyWhatItChanged(t *testing.T) {
	ctx := context.Background()
	c, err := Open(Options{Tables: map[string][]string{"t": {"g", "x"}}, ResultCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := hrpc.NewPutStr(ctx, "t", "node", map[string]map[string][]byte{"g": {"u": []byte("1"), "p": []byte("{}")}})
	if err == nil {
		_, err = c.Put(p)
	}
	if err != nil {
		t.Fatal(err)
	}
	tb := c.tables["t"]
	w := c.newRowWriter(tb, []byte("node"))
	defer w.close()
	cond := &pb.Condition{Row: []byte("node"), Family: []byte("g"), Qualifier: []byte("u"), CompareType: pb.CompareType_EQUAL.Enum()}
	if ok, err := w.conditionHolds(cond, []byte("1")); err != nil || !ok {
		t.Fatalf("condition: %v, %v", ok, err)
	}
	intent, err := hrpc.NewPutStr(ctx, "t", "node", map[string]map[string][]byte{"x": {"xr1": []byte("intent")}})
	if err != nil {
		t.Fatal(err)
	}
	intent.SetRegion(tb.region)
	m := intent.ToProto().(*pb.MutateRequest).GetMutation()
	if _, err := w.apply(m); err != nil {
		t.Fatal(err)
	}
	if err := w.commit(); err != nil {
		t.Fatal(err)
	}
	if n := w.batch.Count(); n != 1 {
		t.Errorf("the commit wrote %d records, want 1 (the intent; not u, which it only read)", n)
	}
	r, err := hrpc.NewGetStr(ctx, "t", "node")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Get(r)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range res.Cells {
		got = append(got, fmt.Sprintf("%s:%s=%s", c.Family, c.Qualifier, c.Value))
	}
	if want := "g:p={} g:u=1 x:xr1=intent"; strings.Join(got, " ") != want {
		t.Errorf("row %q, want %q", got, want)
	}
}
