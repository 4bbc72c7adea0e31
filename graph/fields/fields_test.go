package fields

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/store"
)

func marshalled(m graphql.Marshaler) []byte {
	var b bytes.Buffer
	m.MarshalGQL(&b)
	return b.Bytes()
}

// TestScalarsWriteAsGqlgen: each scalar's Append writes what gqlgen's
// marshaller for it writes (for Time and JSON, what graph/model's did
// before they called these: strconv.Quote of the formatted time,
// json.Marshal).
func TestScalarsWriteAsGqlgen(t *testing.T) {
	strs := []string{"", "plain", `q"uote\back`, "tab\tnl\ncr\r", "\x00\x01\x1f\x7f", "é漢字🙂", "\xff\xfe invalid", "</script>\u2028"}
	for _, s := range strs {
		if got, want := String.Append(nil, s), marshalled(graphql.MarshalString(s)); !bytes.Equal(got, want) {
			t.Errorf("String %q: %s, gqlgen %s", s, got, want)
		}
		if got, want := ID.Append(nil, s), marshalled(graphql.MarshalID(s)); !bytes.Equal(got, want) {
			t.Errorf("ID %q: %s, gqlgen %s", s, got, want)
		}
	}
	for _, n := range []int64{0, -1, 42, 1 << 40, -1 << 63} {
		if got, want := Int.Append(nil, n), marshalled(graphql.MarshalInt64(n)); !bytes.Equal(got, want) {
			t.Errorf("Int %d: %s, gqlgen %s", n, got, want)
		}
	}
	for _, v := range []bool{true, false} {
		if got, want := Boolean.Append(nil, v), marshalled(graphql.MarshalBoolean(v)); !bytes.Equal(got, want) {
			t.Errorf("Boolean %v: %s, gqlgen %s", v, got, want)
		}
	}
	zone := time.FixedZone("x", -5*3600)
	for _, tm := range []time.Time{{}, time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), time.Date(2024, 5, 1, 7, 3, 4, 5_678_000, zone), time.UnixMilli(1)} {
		want := strconv.Quote(tm.UTC().Format("2006-01-02T15:04:05.000Z07:00"))
		if got := Time.Append(nil, tm); string(got) != want {
			t.Errorf("Time %v: %s, want %s", tm, got, want)
		}
	}
	for _, v := range []any{nil, "s\n<", 1.5, int64(3), true, []any{"a", 1.0, nil}, map[string]any{"b": 1, "a": "x"}, json.RawMessage(`{"raw":1}`)} {
		want, _ := json.Marshal(v)
		if got := JSON.Append(nil, v); !bytes.Equal(got, want) {
			t.Errorf("JSON %v: %s, want %s", v, got, want)
		}
	}
}

// TestOwnerVisibility: only the owner and admins see who owns a node, and
// nobody sees an owner there is not.
func TestOwnerVisibility(t *testing.T) {
	n := &store.Node{ID: "n", Owner: "alice"}
	for _, c := range []struct {
		caller auth.Principal
		owner  *store.Node
		want   string
	}{
		{auth.Principal{Subject: "alice"}, n, "alice"},
		{auth.Principal{Subject: "bob"}, n, ""},
		{auth.Principal{}, n, ""},
		{auth.Principal{Subject: "bob", Admin: true}, n, "alice"},
		{auth.Principal{Admin: true}, &store.Node{ID: "m"}, ""},
	} {
		got, err := NodeOwner.Value(In{Caller: c.caller}, c.owner)
		if err != nil || (got == nil) != (c.want == "") || got != nil && *got != c.want {
			t.Errorf("%+v sees %v, %v; want %q", c.caller, got, err, c.want)
		}
	}
}

// TestLeafNullAndError: a leaf appends nothing for a null or a failed
// value, and says which.
func TestLeafNullAndError(t *testing.T) {
	l := Lookup("PageInfo", "startCursor").Leaf.(*Leaf[Page])
	b, null, _, err := l.Append(In{}, Page{}, []byte("x"), 1<<10)
	if string(b) != "x" || !null || err != nil {
		t.Errorf("empty page's startCursor: %q %v %v", b, null, err)
	}
	if Lookup("Node", "nickname") != nil || Lookup("Node", "id").Kind != Projection {
		t.Error("Lookup")
	}
}

// TestAppendTimeAnswersAsAppendFormat: the digit-by-digit Time is
// AppendFormat's with the layout, for random instants of years -50 to
// 10,050 in random zones (those outside 0-9999 take AppendFormat itself).
func TestAppendTimeAnswersAsAppendFormat(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lo := time.Date(-50, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(10050, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for range 100000 {
		sec := lo + rng.Int64N(hi-lo)
		tm := time.Unix(sec, rng.Int64N(1e9)).In(time.FixedZone("z", (rng.IntN(49)-24)*1800))
		want := `"` + tm.UTC().Format(timeLayout) + `"`
		if got := AppendTime(nil, tm); string(got) != want {
			t.Fatalf("%v: %s, want %s", tm, got, want)
		}
	}
}
