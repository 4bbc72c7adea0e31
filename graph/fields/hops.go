package fields

import "github.com/hbgraph/hbgraph/store"

// HopTo is a hop's typed definition: the id of the Node its parent names.
// The plan reads that node in the next wave; gqlgen's resolver loads it
// (both: NOT_FOUND when it does not exist, a node that must).
type HopTo[P any] struct {
	Target func(p P) string
}

// HopParentTypes are the Go types the executors hold each type's values
// as, for its hops (as ParentTypes for projections).
var HopParentTypes = map[string]any{
	"Relationship":     (*HopTo[*store.Relationship])(nil),
	"Article":          (*HopTo[*store.Article])(nil),
	"RelationshipEdge": (*HopTo[RelEdge])(nil),
}

// hop registers a hop of typ.name.
func hop[P any](typ, name string, target func(p P) string) HopTo[P] {
	h := HopTo[P]{target}
	register(&Desc{Type: typ, Name: name, Kind: Hop, Hop: &h})
	return h
}

var (
	RelationshipStartNode = hop("Relationship", "startNode", func(r *store.Relationship) string { return r.Start })
	RelationshipEndNode   = hop("Relationship", "endNode", func(r *store.Relationship) string { return r.End })
	ArticleAuthor         = hop("Article", "author", func(a *store.Article) string { return a.Author })
	// RelationshipEdgeNeighbor: the other end of the relationship.
	RelationshipEdgeNeighbor = hop("RelationshipEdge", "neighbor", func(e RelEdge) string {
		if e.Page.Dir == store.Incoming {
			return e.Rel().Start
		}
		return e.Rel().End
	})
)
