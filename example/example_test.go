package example

import (
	"context"
	"reflect"
	"testing"

	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/store"
)

// newStore returns a store over a fresh in-memory engine.
func newStore(t *testing.T) *store.Store {
	t.Helper()
	st, _ := memstore.New(t)
	return st
}

func load(t *testing.T, st *store.Store) Summary {
	t.Helper()
	sum, err := Load(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func TestGenerateIsTheSameEveryTime(t *testing.T) {
	if a, b := generate(), generate(); !reflect.DeepEqual(a, b) {
		t.Fatal("two calls of generate differ")
	}
}

func TestGenerateShape(t *testing.T) {
	d := generate()
	if n := len(d.Nodes); n < 30 || n > 50 {
		t.Errorf("%d nodes, want 30-50", n)
	}
	ids := map[string]bool{}
	for _, n := range d.Nodes {
		if ids[n.ID] {
			t.Errorf("node %s twice", n.ID)
		}
		ids[n.ID] = true
	}
	rels := map[store.RelationshipKey]bool{}
	out := map[string]int{}
	for _, r := range d.Relationships {
		if rels[r.Key] || r.Key.Start == r.Key.End || !ids[r.Key.Start] || !ids[r.Key.End] {
			t.Errorf("relationship %v: a duplicate, a loop or an unknown node", r.Key)
		}
		rels[r.Key] = true
		out[r.Key.Start]++
	}
	articles := map[string]int{}
	cats := map[string]bool{}
	for _, a := range d.Articles {
		articles[a.Author]++
		cats[a.Category] = true
	}
	if len(cats) != len(categories) {
		t.Errorf("articles in %d categories, want %d", len(cats), len(categories))
	}
	for _, n := range d.Nodes {
		if out[n.ID] < 3 || articles[n.ID] < 1 {
			t.Errorf("%s follows %d and wrote %d articles: want at least 3 and 1", n.ID, out[n.ID], articles[n.ID])
		}
	}
	if !ids[firstNode] || out[firstNode] != 8 || articles[firstNode] != 4 {
		t.Errorf("%s: exists %v, follows %d, wrote %d articles: want true, 8, 4",
			firstNode, ids[firstNode], out[firstNode], articles[firstNode])
	}
}

func TestLoadFreshStore(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	d := generate()
	sum := load(t, st)
	want := Summary{Loaded: true, Nodes: len(d.Nodes), Relationships: len(d.Relationships), Articles: len(d.Articles)}
	if sum != want {
		t.Fatalf("Load: %+v, want %+v", sum, want)
	}

	// The page's example: alice, whom she follows, and what they wrote.
	alice := memstore.Node(t, st, firstNode)
	if alice == nil {
		t.Fatal("no alice")
	}
	props, err := alice.Properties.Map()
	if err != nil {
		t.Fatal(err)
	}
	if props["name"] != "Alice Archer" || props["city"] == nil {
		t.Errorf("alice's properties: %v", props)
	}
	// Every node is owned by the subject of its id: the README's token
	// example shows owner "alice" to a token whose sub is "alice".
	for _, n := range d.Nodes {
		if got := memstore.Node(t, st, n.ID); got == nil || got.Owner != n.ID {
			t.Errorf("node %s: %+v, want owned by %q", n.ID, got, n.ID)
		}
	}
	page, err := st.Adjacent(ctx, firstNode, follows, store.Outgoing, store.PageRequest{Size: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Relationships) != 8 {
		t.Fatalf("alice follows %d, want 8", len(page.Relationships))
	}
	for i, r := range page.Relationships {
		if i > 0 && r.Created.After(page.Relationships[i-1].Created) {
			t.Errorf("follows of alice not newest first at %d", i)
		}
		got, err := st.Articles(ctx, r.End, store.ArticleQuery{}, store.PageRequest{Size: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Articles) == 0 {
			t.Errorf("%s, whom alice follows, has no articles", r.End)
		}
	}
	if n := memstore.Degree(t, st, store.DegreeKey{Node: firstNode, Dir: store.Outgoing, Type: follows}); n != 8 {
		t.Errorf("alice's follows count %d, want 8", n)
	}
	words, err := st.TopWords(ctx, firstNode, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(words) != 5 {
		t.Errorf("alice's top words: %v", words)
	}

	// Every index row, counter and word count is as live writes leave them.
	report, err := st.Repair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(report) != 0 {
		t.Errorf("Repair after Load fixed:\n%s", report)
	}

	// A post by hand takes the author's next sequence number: it does not
	// collide with an imported article.
	a, err := st.PostArticle(ctx, firstNode, "Hello", "Written by hand.", "go")
	if err != nil {
		t.Fatal(err)
	}
	if memstore.Article(t, st, a.ID) == nil {
		t.Fatalf("article %s not found", a.ID)
	}
	if n := memstore.ArticleCount(t, st, store.ArticleCountKey{Author: firstNode}); n != 5 {
		t.Errorf("alice has %d articles after one post, want 5", n)
	}
}

func TestLoadTwiceWritesOnce(t *testing.T) {
	st := newStore(t)
	if sum := load(t, st); !sum.Loaded {
		t.Fatalf("first Load: %v", sum)
	}
	if sum := load(t, st); sum != (Summary{}) {
		t.Fatalf("second Load: %+v, want nothing loaded", sum)
	}
	if n := memstore.ArticleCount(t, st, store.ArticleCountKey{Author: firstNode}); n != 4 {
		t.Errorf("alice has %d articles after two Loads, want 4", n)
	}
}

func TestLoadLeavesAStoreWithDataAlone(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	if _, err := st.CreateNode(ctx, "zed", "", store.Properties{"name": "Zed"}); err != nil {
		t.Fatal(err)
	}
	sum := load(t, st)
	if sum != (Summary{}) {
		t.Fatalf("Load on a store with data: %+v, want nothing loaded", sum)
	}
	if sum.String() != "example data not loaded: the store already holds data" {
		t.Errorf("Summary says %q", sum)
	}
	if n := memstore.Node(t, st, firstNode); n != nil {
		t.Fatalf("%s after Load on a store with data: %+v, want none", firstNode, n)
	}
}
