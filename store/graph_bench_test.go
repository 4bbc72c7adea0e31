package store

import (
	"fmt"
	"testing"

	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/keys"
)

// go test -run '^$' -bench 'Relationship|Node|Adjacency' -benchmem ./store/

func BenchmarkCreateRelationship(b *testing.B) {
	s := newTestStore(b)
	mustNode(b, s, "hub", nil)
	for i := range b.N {
		mustNode(b, s, fmt.Sprintf("n%d", i), nil)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.CreateRelationship(bg, RelationshipKey{"hub", "follows", fmt.Sprintf("n%d", i)}, Properties{"w": i}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUpdateNodeProperties(b *testing.B) {
	s := newTestStore(b)
	mustNode(b, s, "n", Properties{"name": "n"})
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.UpdateNodeProperties(bg, "n", Properties{"counter": i}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetNodes100(b *testing.B) {
	s := newTestStore(b)
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = fmt.Sprintf("node%03d", i)
		mustNode(b, s, ids[i], Properties{"name": ids[i], "rank": i})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		nodes, err := s.getNodes(bg, ids)
		if err != nil || nodes[99] == nil {
			b.Fatal(err)
		}
	}
}

// fillAdjacency writes n outgoing "follows" index rows for node directly
// (the rows CreateRelationship would write), so a 100,000-degree node is
// built in seconds; paging reads only these rows.
func fillAdjacency(b *testing.B, s *Store, node string, n int) {
	b.Helper()
	props, _ := encodeProperties(Properties{"since": 2020})
	for i := range n {
		row, err := keys.Adjacency{Node: node, Dir: keys.Outgoing, Type: "follows",
			Created: int64(1_700_000_000_000 + i), Other: fmt.Sprintf("o%06d", i)}.Key()
		if err != nil {
			b.Fatal(err)
		}
		if err := s.put(bg, keys.TableGraph, keys.FamilyGraph, row, cells{keys.QualProperties: props}, int64(1_700_000_000_000+i)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAdjacencyPage20(b *testing.B) {
	s := newTestStore(b)
	fillAdjacency(b, s, "hub", 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		page, err := s.Adjacent(bg, "hub", "follows", Outgoing, PageRequest{Size: 20})
		if err != nil || len(page.Relationships) != 20 {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdjacencyPageDepth pages a node with 100,000 relationships at
// page 1 and page 500 (20 per page): a cursor turns into a start row, so
// both should cost the same.
func BenchmarkAdjacencyPageDepth(b *testing.B) {
	s := newTestStore(b)
	fillAdjacency(b, s, "hub", 100_000)
	cursorAt := map[int]string{1: ""}
	cursor := ""
	for page := 1; page < 500; page++ {
		p, err := s.Adjacent(bg, "hub", "follows", Outgoing, PageRequest{Size: 20, Cursor: cursor})
		if err != nil {
			b.Fatal(err)
		}
		cursor = p.Cursors.All()[p.Cursors.Len()-1]
	}
	cursorAt[500] = cursor
	for _, depth := range []int{1, 500} {
		b.Run(fmt.Sprintf("page%d", depth), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := s.Adjacent(bg, "hub", "follows", Outgoing, PageRequest{Size: 20, Cursor: cursorAt[depth]})
				if err != nil || len(p.Relationships) != 20 || !p.HasNext {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGetNodeOfABusyNode reads a node that has made 0, 1,000 and
// 4,000 relationship creates, with the engine's result cache off (as after
// an eviction, or on a cluster): each create left a dead intent column in
// the node's row (keys.QualRelIntentPrefix), which a request's read of the
// node must not pay for.
func BenchmarkGetNodeOfABusyNode(b *testing.B) {
	for _, creates := range []int{0, 1000, 4000} {
		b.Run(fmt.Sprint("creates=", creates), func(b *testing.B) {
			db, err := embedded.Open(embedded.Options{Tables: keys.Tables(), Logger: zerolog.Nop(), ResultCacheBytes: -1})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(db.Close)
			s, err := New(db, Options{})
			if err != nil {
				b.Fatal(err)
			}
			mustNode(b, s, "hub", Properties{"name": "hub"})
			for i := range creates {
				id := fmt.Sprintf("n%d", i)
				mustNode(b, s, id, nil)
				if _, err := s.CreateRelationship(bg, RelationshipKey{"hub", "follows", id}, nil); err != nil {
					b.Fatal(err)
				}
			}
			ids := []string{"hub"}
			b.ReportAllocs()
			for b.Loop() {
				nodes, err := s.getNodes(bg, ids)
				if err != nil || nodes[0] == nil {
					b.Fatal(err)
				}
			}
		})
	}
}
