package limits

import (
	"time"

	"github.com/hbgraph/hbgraph/graph/generated"
	"github.com/hbgraph/hbgraph/graph/model"
)

// DefaultPageSize is a connection's page size when neither first nor last
// is given (the schema says 20).
const DefaultPageSize = 20

// Pricing is the schema's ComplexityRoot (generated.Config.Complexity): a
// connection costs its page size times its selections, so that an
// operation's complexity grows with the rows it can make the store read;
// nodes(ids:) costs the number of ids times its selections.
func Pricing() generated.ComplexityRoot {
	var c generated.ComplexityRoot
	page := func(child int, first, last *int) int {
		n := DefaultPageSize
		if first != nil {
			n = *first
		} else if last != nil {
			n = *last
		}
		return saturatingAdd(1, saturatingMul(max(n, 1), child))
	}
	c.Node.Relationships = func(child int, _ string, _ model.Direction, first *int, _ *string, last *int, _ *string) int {
		return page(child, first, last)
	}
	c.Node.Articles = func(child int, _ *string, _ *time.Time, _ *time.Time, first *int, _ *string, last *int, _ *string) int {
		return page(child, first, last)
	}
	c.Node.WordCounts = func(child int, first *int) int { return page(child, first, nil) }
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
