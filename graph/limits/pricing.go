package limits

import (
	"github.com/hbgraph/hbgraph/graph/fields"
	"github.com/hbgraph/hbgraph/graph/generated"
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
	// The connections (page scans) are priced by the walker from their
	// descriptors' typed arguments (scanPrice), as they are read.
	c.Node.WordCounts = func(child int, first *int) int {
		n := fields.DefaultPageSize // first: null (else the schema's default, 10, is given)
		if first != nil {
			n = *first
		}
		return pagePrice(child, n)
	}
	c.Query.Nodes = func(child int, ids []string) int { return saturatingAdd(1, saturatingMul(max(len(ids), 1), child)) }
	return c
}

// pagePrice is a page of n rows of child's figure each.
func pagePrice(child, n int) int { return saturatingAdd(1, saturatingMul(max(n, 1), child)) }

// scanPrice is the price of a page scan (graph/fields) from the typed
// arguments its descriptor decodes, as the plan and the resolvers read
// them: its page size times its selections. ok is false when the field
// is not a page scan or its arguments do not decode (gqlgen reports
// them).
func scanPrice(typ, name string, child int, args map[string]any) (int, bool) {
	d := fields.Lookup(typ, name)
	if d == nil || d.Kind != fields.PageScan {
		return 0, false
	}
	a, err := d.Args(args)
	if err != nil {
		return 0, false
	}
	return pagePrice(child, a.(fields.Sized).Size()), true // the size the read asks for
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
