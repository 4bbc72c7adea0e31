package store

import (
	"strings"
	"testing"

	"github.com/hbgraph/hbgraph/store/keys"
)

// A request's Read returns the data family of a row alone, through hrpc
// Gets (a cluster) and through the engine's row reader both: a node's row
// keeps a dead intent column in keys.FamilyOnce for each relationship create
// made on it, which a request's read must not step over. A writer's
// readWhole returns the bookkeeping too (the node's create op, xc).
func TestReadReturnsTheDataFamilyAlone(t *testing.T) {
	s, _, other := faultedStores(t)
	for name, st := range map[string]*Store{"hrpc Gets": s, "the engine's row reader": other} {
		t.Run(name, func(t *testing.T) {
			if (st.rows != nil) != (st == other) {
				t.Fatalf("the store reads rows through the engine's row reader: %v", st.rows != nil)
			}
			hub, end := name+"-hub", name+"-end"
			mustNode(t, st, hub, Properties{"name": "hub"})
			mustNode(t, st, end, nil)
			if _, err := st.CreateRelationship(bg, RelationshipKey{hub, "follows", end}, nil); err != nil {
				t.Fatal(err)
			}
			get, err := NodeGet(hub)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := st.Read(bg, []Get{get})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range rows[0].cells {
				if string(c.Family) != keys.FamilyGraph {
					t.Errorf("Read returned %s:%q", c.Family, c.Qualifier)
				}
			}
			if n, err := rows[0].Node(hub); err != nil || n == nil || !strings.Contains(string(n.Properties.raw), `"hub"`) {
				t.Fatalf("Read's node: %+v, %v", n, err)
			}
			whole, err := st.readWhole(bg, []Get{get})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := whole[0].cells.lookup(keys.QualCreateOp); !ok {
				t.Errorf("readWhole returned no create op: %d cells", len(whole[0].cells))
			}
		})
	}
}
