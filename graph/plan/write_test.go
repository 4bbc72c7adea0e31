package plan

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/hbgraph/hbgraph/graph/fields"
	"github.com/hbgraph/hbgraph/store"
)

var errNoTime = errors.New("no time")

// TestProjectionNulls: the writer applies gqlgen's rules to a projection
// from the field's definition, not from the field: a null in a non-null
// field is gqlgen's error (path, no locations) and nulls the nearest
// nullable parent; a failed non-null field reports its error (with its
// location) and does the same. No field of the schema does either today,
// so the leaves are replaced through the hooks. (Both are INTERNAL, worded
// by the test's presenter as the server's: the message is the log's.)
func TestProjectionNulls(t *testing.T) {
	nullLeaf := &fields.Leaf[*store.Node]{Append: func(_ fields.In, _ *store.Node, b []byte, _ int) ([]byte, bool, int, error) { return b, true, 0, nil }}
	failLeaf := &fields.Leaf[*store.Node]{Append: func(_ fields.In, _ *store.Node, b []byte, _ int) ([]byte, bool, int, error) {
		return b, false, 0, errNoTime
	}}
	var written []error
	h := &hooks{written: func(data []byte, errs []error) ([]byte, []error) {
		written = errs
		return data, errs
	}, compiled: func(p *Plan) {
		eachField(p.Root, func(f *Field) {
			switch f.Alias {
			case "id":
				f.leaf = nullLeaf
			case "createdAt":
				f.leaf = failLeaf
			}
		})
	}}
	d := newDifferWith(t, h)
	for _, c := range []struct {
		query, data, errs string
		cause             error
	}{
		{`{ node(id: "n1") { id } }`, `{"node":null}`,
			`[{"message":"internal error (request id req)","path":["node","id"],"extensions":{"code":"INTERNAL"}}]`,
			errNull},
		{`{ node(id: "n1") { createdAt } }`, `{"node":null}`,
			`[{"message":"internal error (request id req)","path":["node","createdAt"],"locations":[{"line":1,"column":20}],"extensions":{"code":"INTERNAL"}}]`,
			errNoTime},
		{`{ nodes(ids: ["n1"]) { updatedAt id } }`, `{"nodes":[null]}`,
			`[{"message":"internal error (request id req)","path":["nodes",0,"id"],"extensions":{"code":"INTERNAL"}}]`,
			errNull},
	} {
		body, _ := json.Marshal(map[string]any{"query": c.query})
		a, err := ask(d.plan, body, "")
		if err != nil {
			t.Fatal(err)
		}
		errs, _ := json.Marshal(a.Errors)
		if string(a.Data) != c.data || string(errs) != c.errs {
			t.Errorf("%s:\n data %s\n errors %s\nwant\n data %s\n errors %s", c.query, a.Data, errs, c.data, c.errs)
		}
		if len(written) != 1 || !errors.Is(written[0], c.cause) {
			t.Errorf("%s: the plan reported %v, want %v", c.query, written, c.cause)
		}
	}
}
