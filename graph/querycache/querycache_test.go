package querycache

import (
	"context"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

func query(n int, fill byte) string { return "{" + strings.Repeat(string(fill), n-2) + "}" }

func TestCacheKeepsAndReturns(t *testing.T) {
	ctx := context.Background()
	c := Documents(10, 1<<20, 1<<10)
	doc := &ast.QueryDocument{}
	c.Add(ctx, "{ a }", doc)
	got, ok := c.Get(ctx, "{ a }")
	if !ok || got != doc {
		t.Fatalf("Get after Add = %v, %v; want the document", got, ok)
	}
	if _, ok := c.Get(ctx, "{ b }"); ok {
		t.Fatal("Get of a query never added found a document")
	}
}

func TestCacheBoundsEntries(t *testing.T) {
	ctx := context.Background()
	c := Documents(3, 1<<30, 1<<10)
	for _, q := range []string{"{a}", "{b}", "{c}"} {
		c.Add(ctx, q, &ast.QueryDocument{})
	}
	c.Get(ctx, "{a}") // a is now the most recently used; b the least
	c.Add(ctx, "{d}", &ast.QueryDocument{})
	if n, _ := c.Len(); n != 3 {
		t.Fatalf("entries = %d, want 3", n)
	}
	if _, ok := c.Get(ctx, "{b}"); ok {
		t.Error("the least recently used document was kept past the entry limit")
	}
	for _, q := range []string{"{a}", "{c}", "{d}"} {
		if _, ok := c.Get(ctx, q); !ok {
			t.Errorf("%s was evicted; only the least recently used should be", q)
		}
	}
}

func TestCacheBoundsBytes(t *testing.T) {
	ctx := context.Background()
	const queryLen = 1000
	budget := 5 * DocumentCost(query(queryLen, 'x'))
	c := Documents(1000, budget, 1<<20)
	for i := range 50 {
		c.Add(ctx, query(queryLen, byte('a'+i%26))+strings.Repeat(" ", i), &ast.QueryDocument{})
		if _, bytes := c.Len(); bytes > budget {
			t.Fatalf("after %d adds the cache holds %d estimated bytes, over its budget of %d", i+1, bytes, budget)
		}
	}
	if n, _ := c.Len(); n < 4 || n > 5 {
		t.Fatalf("entries = %d, want the 4-5 that fit the byte budget", n)
	}
}

func TestCacheNeverKeepsALargeQuery(t *testing.T) {
	ctx := context.Background()
	c := Documents(1000, 1<<30, 4096)
	large := query(4097, 'x')
	c.Add(ctx, large, &ast.QueryDocument{})
	if _, ok := c.Get(ctx, large); ok {
		t.Fatal("a query over the cacheable size was kept")
	}
	if n, bytes := c.Len(); n != 0 || bytes != 0 {
		t.Fatalf("cache holds %d entries, %d bytes after refusing a large query", n, bytes)
	}
	small := query(4096, 'x')
	c.Add(ctx, small, &ast.QueryDocument{})
	if _, ok := c.Get(ctx, small); !ok {
		t.Fatal("a query at the cacheable size was not kept")
	}
}

func TestCacheReAddDoesNotDoubleCount(t *testing.T) {
	ctx := context.Background()
	c := Documents(10, 1<<20, 1<<10)
	c.Add(ctx, "{a}", &ast.QueryDocument{})
	c.Add(ctx, "{a}", &ast.QueryDocument{})
	if n, bytes := c.Len(); n != 1 || bytes != DocumentCost("{a}") {
		t.Fatalf("after adding one query twice: %d entries, %d bytes; want 1, %d", n, bytes, DocumentCost("{a}"))
	}
}

func TestPersistedQueriesBoundedByText(t *testing.T) {
	ctx := context.Background()
	c := PersistedQueries(1000, 10_000, 4096)
	hash := strings.Repeat("a", 64)
	c.Add(ctx, hash, query(4097, 'x'))
	if _, ok := c.Get(ctx, hash); ok {
		t.Fatal("a persisted query over the cacheable size was kept")
	}
	for i := range 20 {
		c.Add(ctx, strings.Repeat(string(rune('a'+i)), 64), query(1000, 'x'))
	}
	if n, bytes := c.Len(); bytes > 10_000 || n != 9 {
		t.Fatalf("20 queries of 1,064 bytes in a 10,000-byte cache: %d kept, %d bytes; want 9", n, bytes)
	}
}
