package limits

import (
	"time"

	"github.com/hbgraph/hbgraph/graph/fetchkeys"
	"github.com/hbgraph/hbgraph/graph/generated"
	"github.com/hbgraph/hbgraph/graph/model"
	"github.com/hbgraph/hbgraph/store"
)

// BytesPerPoint prices the fields that carry large values: such a field
// costs 1 plus a point for every BytesPerPoint of the largest value the
// store lets it hold. A point of any other field stands for a row read or
// a small value (an id, a title of at most 1 KiB, a time), so at this rate
// --max-complexity (10,000) lets one operation return at most about 80 MB
// of large values, and --max-complexity-in-flight (10,000) bounds the large
// values being read and written at once the same way: the response limit
// (--max-response-bytes) is then what stops the rest.
const BytesPerPoint = 8 << 10

// Costs of the fields that carry large values (see BytesPerPoint): 100
// aliases of article(id:) { body } cost 13,000, over the default
// complexity; a page of 100 nodes with their properties costs 1,201.
const (
	BodyCost       = 1 + store.MaxBodyBytes/BytesPerPoint       // Article.body: up to 1 MiB
	PropertiesCost = 1 + store.MaxPropertiesBytes/BytesPerPoint // properties, property(name:): up to 64 KiB
)

// Pricing is the schema's ComplexityRoot (generated.Config.Complexity): a
// connection costs its page size times its selections, so that an
// operation's complexity grows with the rows it can make the store read;
// nodes(ids:) costs the number of ids times its selections; a field that
// carries a large value costs its largest size (BodyCost, PropertiesCost).
func Pricing() generated.ComplexityRoot {
	var c generated.ComplexityRoot
	c.Article.Body = func(int) int { return BodyCost }
	c.Node.PropertiesJSON = func(int) int { return PropertiesCost }
	c.Node.Property = func(int, string) int { return PropertiesCost }
	c.Relationship.PropertiesJSON = func(int) int { return PropertiesCost }
	page := func(child, n int) int { return saturatingAdd(1, saturatingMul(max(n, 1), child)) }
	c.Node.Relationships = func(child int, _ string, _ model.Direction, first *int, _ *string, last *int, _ *string) int {
		return page(child, fetchkeys.Page{First: first, Last: last}.Size()) // the size the read asks for
	}
	c.Node.Articles = func(child int, _ *string, _ *time.Time, _ *time.Time, first *int, _ *string, last *int, _ *string) int {
		return page(child, fetchkeys.Page{First: first, Last: last}.Size())
	}
	c.Node.WordCounts = func(child int, first *int) int {
		n := fetchkeys.DefaultPageSize // first: null (else the schema's default, 10, is given)
		if first != nil {
			n = *first
		}
		return page(child, n)
	}
	c.Query.Nodes = func(child int, ids []string) int { return saturatingAdd(1, saturatingMul(max(len(ids), 1), child)) }
	return c
}

// saturatingMul multiplies non-negative a and b, stopping at the largest
// int: a page size times a saturated child figure must not wrap.
func saturatingMul(a, b int) int {
	const maxInt = int(^uint(0) >> 1)
	if a != 0 && b > maxInt/a {
		return maxInt
	}
	return a * b
}
