package plan

// handPlanned are the fields the plan executes without a descriptor in
// graph/fields, and why. Every other object field of the schema has a
// descriptor (projections, store reads, root reads of nodes, page scans,
// nested objects, hops) or is left to gqlgen (fallbackTypes,
// fallbackFields), and TestEveryFieldPlanned fails otherwise, so a field
// added to the schema makes its operations fall back to gqlgen (a slower
// answer, never a wrong one) until it is described.
var handPlanned = map[string]string{
	// Federation's: its argument is gqlgen's _Any, its value a union
	// whose members are read by three typed reads (a node, a
	// relationship's rows, an article's), and its errors are gqlgen's
	// federation code's, at ["_entities", i] without locations.
	"Query._entities": "federation's representations",
}

// fallbackTypes are the object types whose fields gqlgen always executes:
// mutations (their root fields run one after another and write),
// subscriptions and their events (gqlgen's WebSocket transport runs each
// event's selection as it comes, one at a time: nothing for a plan's
// waves to batch), and federation's _service and Entity (gqlgen's own
// type behind _entities). Introspection types (__Type, ...) are left to
// gqlgen by their names.
var fallbackTypes = map[string]bool{
	"Mutation":          true,
	"Subscription":      true,
	"RelationshipEvent": true,
	"NodeEvent":         true,
	"_Service":          true,
	"Entity":            true,
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
