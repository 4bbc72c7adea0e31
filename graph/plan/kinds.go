package plan

// Kind is what the plan does for one field of one object type. The set is
// closed: every object field of the schema is either a Kind (kinds) or
// listed in fallbackFields, and TestEveryFieldPlanned fails otherwise, so a
// field added to the schema makes its operations fall back to gqlgen (a
// slower answer, never a wrong one) until it is planned.
type Kind uint8

const (
	KTypename Kind = iota + 1 // __typename of any object

	KQueryNode
	KQueryNodes
	KQueryRelationship
	KQueryArticle
	KQueryEntities

	KNodeID
	KNodeOwner
	KNodeProperties
	KNodeProperty
	KNodeCreatedAt
	KNodeUpdatedAt
	KNodeRelationships
	KNodeArticles
	KNodeWordCounts

	KRelID
	KRelType
	KRelStartNode
	KRelEndNode
	KRelProperties
	KRelCreatedAt
	KRelUpdatedAt

	KRelConnEdges
	KRelConnPageInfo
	KRelConnTotalCount

	KRelEdgeCursor
	KRelEdgeNode
	KRelEdgeNeighbor

	KArticleID
	KArticleAuthor
	KArticleTitle
	KArticleBody
	KArticleCategory
	KArticlePostedAt
	KArticleUpdatedAt

	KArtConnEdges
	KArtConnPageInfo
	KArtConnTotalCount

	KArtEdgeCursor
	KArtEdgeNode

	KPageHasNext
	KPageHasPrevious
	KPageStartCursor
	KPageEndCursor

	KWordWord
	KWordCount
)

// kindInfo is a Kind and the object type its value is made of ("" for
// scalars and enums).
type kindInfo struct {
	kind  Kind
	child string
}

// kinds maps "Type.field" to what the plan does for it.
var kinds = map[string]kindInfo{
	"Query.node":         {KQueryNode, "Node"},
	"Query.nodes":        {KQueryNodes, "Node"},
	"Query.relationship": {KQueryRelationship, "Relationship"},
	"Query.article":      {KQueryArticle, "Article"},
	"Query._entities":    {KQueryEntities, "_Entity"},

	"Node.id":            {KNodeID, ""},
	"Node.owner":         {KNodeOwner, ""},
	"Node.properties":    {KNodeProperties, ""},
	"Node.property":      {KNodeProperty, ""},
	"Node.createdAt":     {KNodeCreatedAt, ""},
	"Node.updatedAt":     {KNodeUpdatedAt, ""},
	"Node.relationships": {KNodeRelationships, "RelationshipConnection"},
	"Node.articles":      {KNodeArticles, "ArticleConnection"},
	"Node.wordCounts":    {KNodeWordCounts, "WordCount"},

	"Relationship.id":         {KRelID, ""},
	"Relationship.type":       {KRelType, ""},
	"Relationship.startNode":  {KRelStartNode, "Node"},
	"Relationship.endNode":    {KRelEndNode, "Node"},
	"Relationship.properties": {KRelProperties, ""},
	"Relationship.createdAt":  {KRelCreatedAt, ""},
	"Relationship.updatedAt":  {KRelUpdatedAt, ""},

	"RelationshipConnection.edges":      {KRelConnEdges, "RelationshipEdge"},
	"RelationshipConnection.pageInfo":   {KRelConnPageInfo, "PageInfo"},
	"RelationshipConnection.totalCount": {KRelConnTotalCount, ""},

	"RelationshipEdge.cursor":   {KRelEdgeCursor, ""},
	"RelationshipEdge.node":     {KRelEdgeNode, "Relationship"},
	"RelationshipEdge.neighbor": {KRelEdgeNeighbor, "Node"},

	"Article.id":        {KArticleID, ""},
	"Article.author":    {KArticleAuthor, "Node"},
	"Article.title":     {KArticleTitle, ""},
	"Article.body":      {KArticleBody, ""},
	"Article.category":  {KArticleCategory, ""},
	"Article.postedAt":  {KArticlePostedAt, ""},
	"Article.updatedAt": {KArticleUpdatedAt, ""},

	"ArticleConnection.edges":      {KArtConnEdges, "ArticleEdge"},
	"ArticleConnection.pageInfo":   {KArtConnPageInfo, "PageInfo"},
	"ArticleConnection.totalCount": {KArtConnTotalCount, ""},

	"ArticleEdge.cursor": {KArtEdgeCursor, ""},
	"ArticleEdge.node":   {KArtEdgeNode, "Article"},

	"PageInfo.hasNextPage":     {KPageHasNext, ""},
	"PageInfo.hasPreviousPage": {KPageHasPrevious, ""},
	"PageInfo.startCursor":     {KPageStartCursor, ""},
	"PageInfo.endCursor":       {KPageEndCursor, ""},

	"WordCount.word":  {KWordWord, ""},
	"WordCount.count": {KWordCount, ""},
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
