package plan

// Kind is what the plan does for one field of one object type that the
// registry (graph/fields) does not describe yet: _entities, the page
// scans and the connections' edges, pageInfo and edge nodes. The set is
// closed: every object field of the schema has a descriptor in
// graph/fields (projections, store reads, root reads of nodes, hops), a
// Kind (kinds) or is listed in fallbackFields, and TestEveryFieldPlanned
// fails otherwise, so a field added to the schema makes its operations
// fall back to gqlgen (a slower answer, never a wrong one) until it is
// planned.
type Kind uint8

const (
	KQueryEntities Kind = iota + 1
	KRelConnEdges
	KRelConnPageInfo
	KRelEdgeNode
	KArtConnEdges
	KArtConnPageInfo
	KArtEdgeNode
)

// kindInfo is a Kind and the object type its value is made of ("" for
// scalars and enums).
type kindInfo struct {
	kind  Kind
	child string
}

// kinds maps "Type.field" to what the plan does for it.
var kinds = map[string]kindInfo{
	"Query._entities": {KQueryEntities, "_Entity"},

	"RelationshipConnection.edges":    {KRelConnEdges, "RelationshipEdge"},
	"RelationshipConnection.pageInfo": {KRelConnPageInfo, "PageInfo"},

	"RelationshipEdge.node": {KRelEdgeNode, "Relationship"},

	"ArticleConnection.edges":    {KArtConnEdges, "ArticleEdge"},
	"ArticleConnection.pageInfo": {KArtConnPageInfo, "PageInfo"},

	"ArticleEdge.node": {KArtEdgeNode, "Article"},
}

// fallbackTypes are the object types whose fields gqlgen always executes:
// mutations (their root fields run one after another and write), and
// federation's _service and Entity (gqlgen's own type behind _entities).
// Introspection types (__Type, ...) are left to gqlgen by their names.
var fallbackTypes = map[string]bool{
	"Mutation": true,
	"_Service": true,
	"Entity":   true,
}

// fallbackFields are the fields of planned types that gqlgen executes:
// introspection and federation's _service.
var fallbackFields = map[string]bool{
	"Query.__schema": true,
	"Query.__type":   true,
	"Query._service": true,
}

// entityTypes are the members of the _Entity union, in the order of
// Field.entities.
var entityTypes = [...]string{"Node", "Relationship", "Article"}
