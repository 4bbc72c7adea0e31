package store

import (
	"fmt"
	"testing"
)

// Benchmarks of the writes not measured elsewhere (posts and edits are in
// articles_test.go, relationship creates and property updates in
// graph_bench_test.go): what each costs the store, the data set up
// outside the timer. The same file builds against 645e710, so that
// `go test -bench` compares the two trees (bench/RESULTS.md).

func BenchmarkCreateNode(b *testing.B) {
	s := newTestStore(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.CreateNode(bg, fmt.Sprintf("n%d", i), "", Properties{"name": "n"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDeleteNode(b *testing.B) {
	s := newTestStore(b)
	for i := range b.N {
		mustNode(b, s, fmt.Sprintf("n%d", i), Properties{"name": "n"})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := s.DeleteNode(bg, fmt.Sprintf("n%d", i), false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDeleteNodeDetach deletes nodes that each have one relationship.
func BenchmarkDeleteNodeDetach(b *testing.B) {
	s := hubFollowingEach(b)
	for i := range b.N {
		if err := s.DeleteNode(bg, fmt.Sprintf("n%d", i), true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDeleteRelationship(b *testing.B) {
	s := hubFollowingEach(b)
	for i := range b.N {
		if err := s.DeleteRelationship(bg, RelationshipKey{"hub", "follows", fmt.Sprintf("n%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDeleteArticle deletes the articles of an author with a dozen
// words, newest first.
func BenchmarkDeleteArticle(b *testing.B) {
	s := newTestStore(b)
	mustArticleAuthor(b, s, "bench")
	ids := make([]string, b.N)
	for i := range b.N {
		ids[i] = mustPostArticle(b, s, "bench", "A benchmark title", "Some body text with a few words in it.", "bench").ID
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := b.N - 1; i >= 0; i-- {
		if err := s.DeleteArticle(bg, ids[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// hubFollowingEach is a store where node "hub" follows each of b.N nodes
// "n0".., the timer reset after.
func hubFollowingEach(b *testing.B) *Store {
	s := newTestStore(b)
	mustNode(b, s, "hub", nil)
	for i := range b.N {
		mustNode(b, s, fmt.Sprintf("n%d", i), nil)
		mustRel(b, s, "hub", "follows", fmt.Sprintf("n%d", i), nil)
	}
	b.ReportAllocs()
	b.ResetTimer()
	return s
}
