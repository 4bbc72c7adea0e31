package tests

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// errorSnapshot reads everything a bad request near a, b and c could
// change; it must read the same before and after each one.
const errorSnapshot = `fragment C on RelationshipConnection { totalCount edges { cursor node { id properties createdAt updatedAt } neighbor { id } } }
fragment N on Node {
	id properties createdAt updatedAt
	fo: relationships(type: "follows", direction: OUTGOING) { ...C }
	fi: relationships(type: "follows", direction: INCOMING) { ...C }
	lo: relationships(type: "likes", direction: OUTGOING) { ...C }
	li: relationships(type: "likes", direction: INCOMING) { ...C }
	articles { totalCount edges { cursor node { id title body category postedAt updatedAt } } }
	tech: articles(category: "tech") { totalCount edges { cursor node { id } } }
	other: articles(category: "other") { totalCount edges { cursor node { id } } }
	wordCounts(first: 1000) { word count }
}
query($article: ID!) {
	a: node(id: "a") { ...N }
	b: node(id: "b") { ...N }
	c: node(id: "c") { ...N }
	ghost: node(id: "ghost") { id }
	fresh: node(id: "fresh") { id }
	ab: relationship(startNodeId: "a", type: "follows", endNodeId: "b") { id properties updatedAt }
	aGhost: relationship(startNodeId: "a", type: "follows", endNodeId: "ghost") { id }
	ghostB: relationship(startNodeId: "ghost", type: "follows", endNodeId: "b") { id }
	article(id: $article) { id title body category updatedAt }
}`

// errorCase is one bad request and the error it must get.
type errorCase struct {
	name  string
	query string
	vars  map[string]any
	code  string // extensions.code
	path  string // the error's path, dot-joined; "" for none
	// alt is another acceptable code, where the API leaves the choice open
	// (a malformed scalar may fail validation or be a bad input).
	alt string
}

// anyPath in errorCase.path accepts any path.
const anyPath = "*"

type vars = map[string]any

// tamper flips the last byte of a base64url token (a cursor).
func tamper(t testing.TB, token string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) == 0 {
		t.Fatalf("cursor %q is not base64url: %v", token, err)
	}
	b[len(b)-1] ^= 0x01
	return base64.RawURLEncoding.EncodeToString(b)
}

// TestErrorCodes sends, for every argument of every mutation and the
// paging arguments of every connection, a bad value and checks the error
// code and path and that the stored data did not change; then the request
// limits (depth, complexity) and invalid GraphQL.
func TestErrorCodes(t *testing.T) {
	parallelTest(t)
	// A body limit above 1 MiB, so that an article body just over the
	// store's 1 MiB limit reaches the store.
	// A complexity limit for the whole pages of articles (bodies cost 129
	// each) read below.
	s := startServer(t, "--max-body-bytes", "4194304", "--max-complexity", "20000")
	s.createNode(t, "a", map[string]any{"name": "A", "n": 1})
	s.createNode(t, "b", map[string]any{"name": "B"})
	s.createNode(t, "c", nil)
	s.createRel(t, "a", "follows", "b", map[string]any{"w": 1})
	s.createRel(t, "c", "follows", "a", nil)
	art := s.postArticle(t, "a", "A title", "some body words", "tech")
	s.postArticle(t, "a", "Another", "more body words", "other")
	s.postArticle(t, "b", "B's", "b words", "tech")

	var cur struct {
		A struct {
			Fo, Fi         relConn
			Articles, Tech articleConn
		}
		B struct{ Articles articleConn }
		C struct{ Fo relConn }
	}
	s.mustDo(t, `{
		a: node(id: "a") {
			fo: relationships(type: "follows", direction: OUTGOING) { `+relConnFields+` }
			fi: relationships(type: "follows", direction: INCOMING) { `+relConnFields+` }
			articles { `+articleConnFields+` }
			tech: articles(category: "tech") { `+articleConnFields+` }
		}
		b: node(id: "b") { articles { `+articleConnFields+` } }
		c: node(id: "c") { fo: relationships(type: "follows", direction: OUTGOING) { `+relConnFields+` } }
	}`, nil, &cur)
	if len(cur.A.Fo.Edges) != 1 || len(cur.A.Fi.Edges) != 1 || len(cur.A.Articles.Edges) != 2 || len(cur.A.Tech.Edges) != 1 ||
		len(cur.B.Articles.Edges) != 1 || len(cur.C.Fo.Edges) != 1 {
		t.Fatalf("setup: unexpected connections %+v", cur)
	}
	var (
		aOut     = cur.A.Fo.Edges[0].Cursor       // a follows OUTGOING
		aIn      = cur.A.Fi.Edges[0].Cursor       // a follows INCOMING
		cOut     = cur.C.Fo.Edges[0].Cursor       // c follows OUTGOING
		aAll     = cur.A.Articles.Edges[0].Cursor // a's articles
		aTech    = cur.A.Tech.Edges[0].Cursor     // a's tech articles
		bAll     = cur.B.Articles.Edges[0].Cursor // b's articles
		missing  = withSeq(t, art.ID, 99)         // well-formed, but no article's
		id257    = strings.Repeat("x", 257)
		id258mb  = strings.Repeat("雪", 86) // 86 characters, 258 bytes
		type65   = strings.Repeat("t", 65)
		type66mb = strings.Repeat("雪", 22) // 22 characters, 66 bytes
		tooBig   = map[string]any{"big": strings.Repeat("x", 64<<10)}
		// Exactly 64 KiB encoded alone ({"big":"..."} is 10 bytes more
		// than the string), too much merged with a's or a->b's properties.
		fillsLimit = map[string]any{"big": strings.Repeat("x", 64<<10-10)}
		title1025  = strings.Repeat("t", 1025)
		body1MiB1  = strings.Repeat("b", 1<<20+1)
	)
	forged := func(edit func(*articleID)) string {
		a := parseArticleID(t, art.ID)
		edit(&a)
		return a.String()
	}
	forgedIDs := []struct{ name, id string }{
		{"not base64", "not an id!"},
		{"base64 junk", base64.RawURLEncoding.EncodeToString([]byte("junk that is no id"))},
		{"unknown version", forged(func(a *articleID) { a.version = 2 })},
		{"trailing byte", forged(func(a *articleID) { a.trailing = []byte{0} })},
		{"author overruns", forged(func(a *articleID) { a.authorLenAdd = 40 })},
		{"truncated", art.ID[:len(art.ID)-2]},
		{"padded", art.ID + "=="},
	}

	const (
		bad      = "BAD_USER_INPUT"
		notFound = "NOT_FOUND"
		exists   = "ALREADY_EXISTS"
		conflict = "CONFLICT"
	)
	var cases []errorCase
	add := func(c ...errorCase) { cases = append(cases, c...) }

	// createNode(id, properties)
	const createNode = `mutation($id: ID!, $p: JSON) { createNode(id: $id, properties: $p) { id } }`
	add(
		errorCase{"createNode id empty", createNode, vars{"id": ""}, bad, "createNode", ""},
		errorCase{"createNode id 257 bytes", createNode, vars{"id": id257}, bad, "createNode", ""},
		errorCase{"createNode id 258 bytes in 86 characters", createNode, vars{"id": id258mb}, bad, "createNode", ""},
		errorCase{"createNode properties a string", createNode, vars{"id": "fresh", "p": "name"}, bad, "createNode", ""},
		errorCase{"createNode properties a list", createNode, vars{"id": "fresh", "p": []any{1, 2}}, bad, "createNode", ""},
		errorCase{"createNode properties a number", createNode, vars{"id": "fresh", "p": 3}, bad, "createNode", ""},
		errorCase{"createNode properties nested object", createNode, vars{"id": "fresh", "p": vars{"a": vars{"b": 1}}}, bad, "createNode", ""},
		errorCase{"createNode properties object in a list", createNode, vars{"id": "fresh", "p": vars{"a": []any{vars{"b": 1}}}}, bad, "createNode", ""},
		errorCase{"createNode properties list in a list", createNode, vars{"id": "fresh", "p": vars{"a": []any{[]any{1}}}}, bad, "createNode", ""},
		errorCase{"createNode properties over 64 KiB", createNode, vars{"id": "fresh", "p": tooBig}, bad, "createNode", ""},
		errorCase{"createNode properties empty name", createNode, vars{"id": "fresh", "p": vars{"": 1}}, bad, "createNode", ""},
		errorCase{"createNode properties nested literal", `mutation { createNode(id: "fresh", properties: {a: {b: 1}}) { id } }`, nil, bad, "createNode", ""},
		errorCase{"createNode twice", createNode, vars{"id": "a", "p": vars{"name": "replaced"}}, exists, "createNode", ""},
	)

	// updateNodeProperties(id, set, remove)
	const updateNode = `mutation($id: ID!, $set: JSON, $remove: [String!]) { updateNodeProperties(id: $id, set: $set, remove: $remove) { id } }`
	add(
		errorCase{"updateNodeProperties id empty", updateNode, vars{"id": "", "set": vars{"x": 1}}, bad, "updateNodeProperties", ""},
		errorCase{"updateNodeProperties id 257 bytes", updateNode, vars{"id": id257, "set": vars{"x": 1}}, bad, "updateNodeProperties", ""},
		errorCase{"updateNodeProperties set a string", updateNode, vars{"id": "a", "set": "x"}, bad, "updateNodeProperties", ""},
		errorCase{"updateNodeProperties set a list", updateNode, vars{"id": "a", "set": []any{"x"}}, bad, "updateNodeProperties", ""},
		errorCase{"updateNodeProperties set nested object", updateNode, vars{"id": "a", "set": vars{"x": vars{"y": 1}}}, bad, "updateNodeProperties", ""},
		errorCase{"updateNodeProperties set over 64 KiB", updateNode, vars{"id": "a", "set": tooBig}, bad, "updateNodeProperties", ""},
		errorCase{"updateNodeProperties merged over 64 KiB", updateNode, vars{"id": "a", "set": fillsLimit}, bad, "updateNodeProperties", ""},
		errorCase{"updateNodeProperties remove empty name", updateNode, vars{"id": "a", "remove": []any{""}}, bad, "updateNodeProperties", ""},
		errorCase{"updateNodeProperties set and remove one name", updateNode, vars{"id": "a", "set": vars{"n": 2}, "remove": []any{"n"}}, bad, "updateNodeProperties", ""},
		errorCase{"updateNodeProperties missing node", updateNode, vars{"id": "ghost", "set": vars{"x": 1}}, notFound, "updateNodeProperties", ""},
		errorCase{"updateNodeProperties missing node remove", updateNode, vars{"id": "ghost", "remove": []any{"x"}}, notFound, "updateNodeProperties", ""},
	)

	// deleteNode(id, detach)
	const deleteNode = `mutation($id: ID!, $detach: Boolean) { deleteNode(id: $id, detach: $detach) }`
	add(
		errorCase{"deleteNode id empty", deleteNode, vars{"id": ""}, bad, "deleteNode", ""},
		errorCase{"deleteNode id 257 bytes", deleteNode, vars{"id": id257, "detach": true}, bad, "deleteNode", ""},
		errorCase{"deleteNode missing node", deleteNode, vars{"id": "ghost"}, notFound, "deleteNode", ""},
		errorCase{"deleteNode missing node detach", deleteNode, vars{"id": "ghost", "detach": true}, notFound, "deleteNode", ""},
		errorCase{"deleteNode with relationships", deleteNode, vars{"id": "a"}, conflict, "deleteNode", ""},
		errorCase{"deleteNode detach not a Boolean", `mutation { deleteNode(id: "a", detach: "yes") }`, nil, "GRAPHQL_VALIDATION_FAILED", "", ""},
		errorCase{"deleteNode with relationships detach false", deleteNode, vars{"id": "b", "detach": false}, conflict, "deleteNode", ""},
	)

	// createRelationship(startNodeId, type, endNodeId, properties)
	const createRel = `mutation($s: ID!, $t: String!, $e: ID!, $p: JSON) { createRelationship(startNodeId: $s, type: $t, endNodeId: $e, properties: $p) { id } }`
	rel := func(s, typ, e string, p any) vars { return vars{"s": s, "t": typ, "e": e, "p": p} }
	add(
		errorCase{"createRelationship start empty", createRel, rel("", "likes", "b", nil), bad, "createRelationship", ""},
		errorCase{"createRelationship start 257 bytes", createRel, rel(id257, "likes", "b", nil), bad, "createRelationship", ""},
		errorCase{"createRelationship end empty", createRel, rel("a", "likes", "", nil), bad, "createRelationship", ""},
		errorCase{"createRelationship end 257 bytes", createRel, rel("a", "likes", id257, nil), bad, "createRelationship", ""},
		errorCase{"createRelationship type empty", createRel, rel("a", "", "b", nil), bad, "createRelationship", ""},
		errorCase{"createRelationship type 65 bytes", createRel, rel("a", type65, "b", nil), bad, "createRelationship", ""},
		errorCase{"createRelationship type 66 bytes in 22 characters", createRel, rel("a", type66mb, "b", nil), bad, "createRelationship", ""},
		errorCase{"createRelationship properties a string", createRel, rel("a", "likes", "b", "x"), bad, "createRelationship", ""},
		errorCase{"createRelationship properties nested object", createRel, rel("a", "likes", "b", vars{"x": vars{}}), bad, "createRelationship", ""},
		errorCase{"createRelationship properties over 64 KiB", createRel, rel("a", "likes", "b", tooBig), bad, "createRelationship", ""},
		errorCase{"createRelationship missing start", createRel, rel("ghost", "follows", "b", nil), notFound, "createRelationship", ""},
		errorCase{"createRelationship missing end", createRel, rel("a", "follows", "ghost", nil), notFound, "createRelationship", ""},
		errorCase{"createRelationship twice", createRel, rel("a", "follows", "b", vars{"w": 2}), exists, "createRelationship", ""},
	)

	// updateRelationshipProperties(startNodeId, type, endNodeId, set, remove)
	const updateRel = `mutation($s: ID!, $t: String!, $e: ID!, $set: JSON, $remove: [String!]) {
		updateRelationshipProperties(startNodeId: $s, type: $t, endNodeId: $e, set: $set, remove: $remove) { id } }`
	urel := func(s, typ, e string, set any, remove ...any) vars {
		v := vars{"s": s, "t": typ, "e": e, "set": set}
		if remove != nil {
			v["remove"] = remove
		}
		return v
	}
	add(
		errorCase{"updateRelationshipProperties start empty", updateRel, urel("", "follows", "b", vars{"x": 1}), bad, "updateRelationshipProperties", ""},
		errorCase{"updateRelationshipProperties start 257 bytes", updateRel, urel(id257, "follows", "b", vars{"x": 1}), bad, "updateRelationshipProperties", ""},
		errorCase{"updateRelationshipProperties end empty", updateRel, urel("a", "follows", "", vars{"x": 1}), bad, "updateRelationshipProperties", ""},
		errorCase{"updateRelationshipProperties end 257 bytes", updateRel, urel("a", "follows", id257, vars{"x": 1}), bad, "updateRelationshipProperties", ""},
		errorCase{"updateRelationshipProperties type empty", updateRel, urel("a", "", "b", vars{"x": 1}), bad, "updateRelationshipProperties", ""},
		errorCase{"updateRelationshipProperties type 65 bytes", updateRel, urel("a", type65, "b", vars{"x": 1}), bad, "updateRelationshipProperties", ""},
		errorCase{"updateRelationshipProperties set a string", updateRel, urel("a", "follows", "b", "x"), bad, "updateRelationshipProperties", ""},
		errorCase{"updateRelationshipProperties set nested object", updateRel, urel("a", "follows", "b", vars{"x": vars{"y": 1}}), bad, "updateRelationshipProperties", ""},
		errorCase{"updateRelationshipProperties set over 64 KiB", updateRel, urel("a", "follows", "b", tooBig), bad, "updateRelationshipProperties", ""},
		errorCase{"updateRelationshipProperties merged over 64 KiB", updateRel, urel("a", "follows", "b", fillsLimit), bad, "updateRelationshipProperties", ""},
		errorCase{"updateRelationshipProperties remove empty name", updateRel, urel("a", "follows", "b", nil, ""), bad, "updateRelationshipProperties", ""},
		errorCase{"updateRelationshipProperties set and remove one name", updateRel, urel("a", "follows", "b", vars{"w": 3}, "w"), bad, "updateRelationshipProperties", ""},
		errorCase{"updateRelationshipProperties missing relationship", updateRel, urel("a", "likes", "b", vars{"x": 1}), notFound, "updateRelationshipProperties", ""},
		errorCase{"updateRelationshipProperties reversed relationship", updateRel, urel("b", "follows", "a", vars{"x": 1}), notFound, "updateRelationshipProperties", ""},
		errorCase{"updateRelationshipProperties missing end node", updateRel, urel("a", "follows", "ghost", vars{"x": 1}), notFound, "updateRelationshipProperties", ""},
	)

	// deleteRelationship(startNodeId, type, endNodeId)
	const deleteRel = `mutation($s: ID!, $t: String!, $e: ID!) { deleteRelationship(startNodeId: $s, type: $t, endNodeId: $e) }`
	drel := func(s, typ, e string) vars { return vars{"s": s, "t": typ, "e": e} }
	add(
		errorCase{"deleteRelationship start empty", deleteRel, drel("", "follows", "b"), bad, "deleteRelationship", ""},
		errorCase{"deleteRelationship start 257 bytes", deleteRel, drel(id257, "follows", "b"), bad, "deleteRelationship", ""},
		errorCase{"deleteRelationship end empty", deleteRel, drel("a", "follows", ""), bad, "deleteRelationship", ""},
		errorCase{"deleteRelationship end 257 bytes", deleteRel, drel("a", "follows", id257), bad, "deleteRelationship", ""},
		errorCase{"deleteRelationship type empty", deleteRel, drel("a", "", "b"), bad, "deleteRelationship", ""},
		errorCase{"deleteRelationship type 65 bytes", deleteRel, drel("a", type65, "b"), bad, "deleteRelationship", ""},
		errorCase{"deleteRelationship missing relationship", deleteRel, drel("a", "likes", "b"), notFound, "deleteRelationship", ""},
		errorCase{"deleteRelationship reversed relationship", deleteRel, drel("b", "follows", "a"), notFound, "deleteRelationship", ""},
		errorCase{"deleteRelationship missing nodes", deleteRel, drel("ghost", "follows", "ghost2"), notFound, "deleteRelationship", ""},
	)

	// postArticle(authorId, title, body, category)
	const post = `mutation($a: ID!, $t: String!, $b: String!, $c: String!) { postArticle(authorId: $a, title: $t, body: $b, category: $c) { id } }`
	art4 := func(a, title, body, c string) vars { return vars{"a": a, "t": title, "b": body, "c": c} }
	add(
		errorCase{"postArticle author empty", post, art4("", "T", "B", "tech"), bad, "postArticle", ""},
		errorCase{"postArticle author 257 bytes", post, art4(id257, "T", "B", "tech"), bad, "postArticle", ""},
		errorCase{"postArticle title empty", post, art4("a", "", "B", "tech"), bad, "postArticle", ""},
		errorCase{"postArticle title 1025 bytes", post, art4("a", title1025, "B", "tech"), bad, "postArticle", ""},
		errorCase{"postArticle body over 1 MiB", post, art4("a", "T", body1MiB1, "tech"), bad, "postArticle", ""},
		errorCase{"postArticle category empty", post, art4("a", "T", "B", ""), bad, "postArticle", ""},
		errorCase{"postArticle category 65 bytes", post, art4("a", "T", "B", type65), bad, "postArticle", ""},
		errorCase{"postArticle missing author", post, art4("ghost", "T", "B", "tech"), notFound, "postArticle", ""},
	)

	// updateArticle(id, title, body, category)
	const updateArt = `mutation($id: ID!, $t: String, $b: String, $c: String) { updateArticle(id: $id, title: $t, body: $b, category: $c) { id } }`
	add(
		errorCase{"updateArticle id empty", updateArt, vars{"id": "", "t": "T"}, bad, "updateArticle", ""},
		errorCase{"updateArticle title empty", updateArt, vars{"id": art.ID, "t": ""}, bad, "updateArticle", ""},
		errorCase{"updateArticle title 1025 bytes", updateArt, vars{"id": art.ID, "t": title1025}, bad, "updateArticle", ""},
		errorCase{"updateArticle body over 1 MiB", updateArt, vars{"id": art.ID, "b": body1MiB1}, bad, "updateArticle", ""},
		errorCase{"updateArticle category empty", updateArt, vars{"id": art.ID, "c": ""}, bad, "updateArticle", ""},
		errorCase{"updateArticle category 65 bytes", updateArt, vars{"id": art.ID, "c": type65}, bad, "updateArticle", ""},
		errorCase{"updateArticle good title, bad category", updateArt, vars{"id": art.ID, "t": "New", "c": ""}, bad, "updateArticle", ""},
		errorCase{"updateArticle missing article", updateArt, vars{"id": missing, "t": "T"}, notFound, "updateArticle", ""},
	)
	for _, f := range forgedIDs {
		add(errorCase{"updateArticle id " + f.name, updateArt, vars{"id": f.id, "t": "T"}, bad, "updateArticle", ""})
	}

	// deleteArticle(id)
	const deleteArt = `mutation($id: ID!) { deleteArticle(id: $id) }`
	add(
		errorCase{"deleteArticle id empty", deleteArt, vars{"id": ""}, bad, "deleteArticle", ""},
		errorCase{"deleteArticle missing article", deleteArt, vars{"id": missing}, notFound, "deleteArticle", ""},
	)
	for _, f := range forgedIDs {
		add(errorCase{"deleteArticle id " + f.name, deleteArt, vars{"id": f.id}, bad, "deleteArticle", ""})
	}

	// Query arguments.
	add(
		errorCase{"node id empty", `{ node(id: "") { id } }`, nil, bad, "node", ""},
		errorCase{"node id 257 bytes", `query($id: ID!) { node(id: $id) { id } }`, vars{"id": id257}, bad, "node", ""},
		errorCase{"nodes with an empty id", `{ nodes(ids: ["a", ""]) { id } }`, nil, bad, "nodes", ""},
		errorCase{"relationship type empty", `{ relationship(startNodeId: "a", type: "", endNodeId: "b") { id } }`, nil, bad, "relationship", ""},
		errorCase{"relationship start 257 bytes", `query($s: ID!) { relationship(startNodeId: $s, type: "follows", endNodeId: "b") { id } }`, vars{"s": id257}, bad, "relationship", ""},
	)
	hundredOne := make([]string, 101)
	for i := range hundredOne {
		hundredOne[i] = fmt.Sprintf("n%d", i)
	}
	// Page sizes and id counts are checked before execution (and before
	// complexity), so they are refused with no data and no path.
	add(errorCase{"nodes with 101 ids", `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, vars{"ids": hundredOne}, bad, "", ""})
	for _, f := range append(forgedIDs, struct{ name, id string }{"empty", ""}) {
		add(errorCase{"article id " + f.name, `query($id: ID!) { article(id: $id) { id } }`, vars{"id": f.id}, bad, "article", ""})
	}

	// Paging arguments of relationships (a follows OUTGOING).
	const rels = `query($first: Int, $after: String, $last: Int, $before: String, $type: String!) { node(id: "a") {
		relationships(type: $type, direction: OUTGOING, first: $first, after: $after, last: $last, before: $before) { totalCount edges { cursor } } } }`
	page := func(kv ...any) vars {
		v := vars{"type": "follows"}
		for i := 0; i < len(kv); i += 2 {
			v[kv[i].(string)] = kv[i+1]
		}
		return v
	}
	for _, c := range []struct {
		name string
		vars vars
	}{
		{"first -1", page("first", -1)},
		{"first 101", page("first", 101)},
		{"last -1", page("last", -1)},
		{"last 101", page("last", 101)},
		{"first and last", page("first", 1, "last", 1)},
		{"after and before", page("after", aOut, "before", aOut)},
		{"first and before", page("first", 1, "before", aOut)},
		{"last and after", page("last", 1, "after", aOut)},
		{"malformed cursor", page("after", "!!!")},
		{"empty cursor", page("after", "")},
		{"tampered cursor", page("after", tamper(t, aOut))},
		{"another node's cursor", page("after", cOut)},
		{"another node's cursor backward", page("before", cOut)},
		{"the other direction's cursor", page("after", aIn)},
		{"another type's cursor", page("type", "likes", "after", aOut)},
		{"an article cursor", page("after", aAll)},
		{"type empty", page("type", "")},
		{"type 65 bytes", page("type", type65)},
	} {
		add(errorCase{"relationships " + c.name, rels, c.vars, bad, pathUnlessPageSize(c.name, "node.relationships"), ""})
	}

	// Paging and selection arguments of articles (a's).
	const arts = `query($first: Int, $after: String, $last: Int, $before: String, $category: String, $since: Time, $until: Time) { node(id: "a") {
		articles(category: $category, postedAfter: $since, postedBefore: $until, first: $first, after: $after, last: $last, before: $before) { totalCount edges { cursor } } } }`
	for _, c := range []struct {
		name string
		vars vars
	}{
		{"first -1", page("first", -1)},
		{"first 101", page("first", 101)},
		{"last 101", page("last", 101)},
		{"first and last", page("first", 1, "last", 1)},
		{"malformed cursor", page("after", "%%%")},
		{"tampered cursor", page("before", tamper(t, aAll))},
		{"another author's cursor", page("after", bAll)},
		{"the all-articles cursor in a category", page("category", "tech", "after", aAll)},
		{"a category's cursor in all articles", page("after", aTech)},
		{"another category's cursor", page("category", "other", "after", aTech)},
		{"a relationship cursor", page("after", aOut)},
		{"category empty", page("category", "")},
		{"category 65 bytes", page("category", type65)},
		{"a cursor that is bad with an empty window", page("after", bAll, "since", "2030-01-01T00:00:00Z", "until", "2020-01-01T00:00:00Z")},
	} {
		add(errorCase{"articles " + c.name, arts, c.vars, bad, pathUnlessPageSize(c.name, "node.articles"), ""})
	}
	add(
		errorCase{"articles postedAfter not a time", arts, page("since", "yesterday"), bad, anyPath, "GRAPHQL_VALIDATION_FAILED"},
		errorCase{"articles postedBefore not a time literal", `{ node(id: "a") { articles(postedBefore: "soon") { totalCount } } }`, nil, bad, anyPath, "GRAPHQL_VALIDATION_FAILED"},
		errorCase{"wordCounts first -1", `{ node(id: "a") { wordCounts(first: -1) { word } } }`, nil, bad, "", ""},
		errorCase{"wordCounts first 1001", `{ node(id: "a") { wordCounts(first: 1001) { word } } }`, nil, bad, "", ""},
	)

	// Limits and invalid GraphQL.
	add(
		errorCase{"depth 13", `{ node(id: "a") { ` + deep(4) + ` } }`, nil, bad, "", ""},
		errorCase{"depth 13 in a fragment", `fragment Deep on Node { ` + deep(4) + ` } { node(id: "a") { ...Deep } }`, nil, bad, "", ""},
		errorCase{"depth 13 in an inline fragment", `{ node(id: "a") { ... on Node { ` + deep(4) + ` } } }`, nil, bad, "", ""},
		errorCase{"complexity", `{ node(id: "a") { relationships(type: "follows", direction: OUTGOING, first: 100) { edges { neighbor {
			relationships(type: "follows", direction: OUTGOING, first: 100) { edges { neighbor {
			relationships(type: "follows", direction: OUTGOING, first: 100) { edges { cursor } } } } } } } } } }`, nil, bad, "", ""},
		errorCase{"parse error", `{ node(id: "a") { id }`, nil, "GRAPHQL_PARSE_FAILED", "", ""},
		errorCase{"parse error trailing garbage", `{ node(id: "a") { id } } }`, nil, "GRAPHQL_PARSE_FAILED", "", ""},
		errorCase{"unknown field", `{ node(id: "a") { name } }`, nil, "GRAPHQL_VALIDATION_FAILED", "", ""},
		errorCase{"missing argument", `{ node { id } }`, nil, "GRAPHQL_VALIDATION_FAILED", "", ""},
		errorCase{"argument of the wrong type", `{ node(id: "a") { relationships(type: "follows", direction: OUTGOING, first: "x") { totalCount } } }`, nil, "GRAPHQL_VALIDATION_FAILED", "", ""},
		errorCase{"unknown enum value", `{ node(id: "a") { relationships(type: "follows", direction: SIDEWAYS) { totalCount } } }`, nil, "GRAPHQL_VALIDATION_FAILED", "", ""},
		errorCase{"variable of the wrong type", rels, page("first", "x"), "GRAPHQL_VALIDATION_FAILED", "variable.first", ""},
		errorCase{"missing variable", `query($id: ID!) { node(id: $id) { id } }`, nil, "GRAPHQL_VALIDATION_FAILED", "variable.id", ""},
		errorCase{"mutation field in a query", `{ createNode(id: "fresh") { id } }`, nil, "GRAPHQL_VALIDATION_FAILED", "", ""},
	)

	snapshot := func(t *testing.T) string {
		t.Helper()
		r := s.do(t, errorSnapshot, vars{"article": art.ID})
		r.ok(t, nil)
		return compactJSON(t, r.Data)
	}
	baseline := snapshot(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.do(t, c.query, c.vars)
			checkError(t, r, c)
			if c.path == "" || strings.HasPrefix(c.path, "variable.") { // refused before execution
				if !isNull(r.Data) {
					t.Errorf("a refused operation has data %s", r.Data)
				}
			}
			if after := snapshot(t); after != baseline {
				t.Errorf("the bad request changed the data:\nbefore %s\nafter  %s", baseline, after)
			}
		})
	}

	t.Run("depth 12 is allowed", func(t *testing.T) {
		var got struct {
			Node struct{ Relationships relConn }
		}
		s.mustDo(t, `{ node(id: "a") { `+deep12()+` } }`, nil, &got)
		if len(got.Node.Relationships.Edges) != 1 {
			t.Errorf("a follows %d nodes, want 1", len(got.Node.Relationships.Edges))
		}
	})

	t.Run("missing node is null without an error", func(t *testing.T) {
		r := s.do(t, `{ node(id: "ghost") { id } }`, nil)
		var got struct{ Node *idOut }
		r.ok(t, &got)
		if got.Node != nil {
			t.Errorf("node(ghost) = %+v, want null", got.Node)
		}
	})

	t.Run("limits accept the boundary", func(t *testing.T) {
		id256 := strings.Repeat("e", 256)
		id255mb := strings.Repeat("雪", 85)
		type64 := strings.Repeat("t", 64)
		atLimit := map[string]any{"big": strings.Repeat("x", 64<<10-10)}
		if n := len(mustJSON(t, atLimit)); n != 64<<10 {
			t.Fatalf("the properties at the limit encode to %d bytes", n)
		}
		n := s.createNode(t, id256, atLimit)
		if n.ID != id256 || !jsonEqual(t, n.Properties, mustJSON(t, atLimit)) {
			t.Errorf("createNode(256-byte id, 64 KiB properties) = %.100s...", n.Properties)
		}
		s.createNode(t, id255mb, nil)
		r := s.createRel(t, id256, type64, id255mb, atLimit)
		if r.Type != type64 || r.StartNode.ID != id256 || r.EndNode.ID != id255mb {
			t.Errorf("createRelationship at the limits = %+v", r)
		}
		title1024, body1MiB := strings.Repeat("t", 1024), strings.Repeat("b", 1<<20)
		a := s.postArticle(t, id256, title1024, body1MiB, type64)
		if a.Title != title1024 || len(a.Body) != 1<<20 || a.Category != type64 {
			t.Errorf("postArticle at the limits: title %d bytes, body %d, category %q", len(a.Title), len(a.Body), a.Category)
		}
		s.postArticle(t, id256, "Empty body", "", type64)
		var got struct {
			Node struct {
				Relationships relConn
				Articles      articleConn
				WordCounts    []wordCount
			}
			Nodes []*idOut
		}
		ids := make([]string, 100)
		for i := range ids {
			ids[i] = id255mb
		}
		s.mustDo(t, `query($id: ID!, $type: String!, $ids: [ID!]!) {
			node(id: $id) {
				relationships(type: $type, direction: OUTGOING, first: 100) { totalCount }
				articles(category: $type, last: 100) { totalCount edges { node { title } } }
				wordCounts(first: 1000) { word count }
			}
			nodes(ids: $ids) { id }
		}`, vars{"id": id256, "type": type64, "ids": ids}, &got)
		if got.Node.Relationships.TotalCount != 1 || got.Node.Articles.TotalCount != 2 || len(got.Node.Articles.Edges) != 2 || len(got.Nodes) != 100 {
			t.Errorf("reads at the limits: %d relationships, %d articles (%d edges), %d nodes; want 1, 2 (2), 100",
				got.Node.Relationships.TotalCount, got.Node.Articles.TotalCount, len(got.Node.Articles.Edges), len(got.Nodes))
		}
	})
}

// deep is a selection of levels nested relationships under node: node,
// then relationships { edges { neighbor { ... } } } levels-1 times, then
// relationships { edges { cursor } }: 3*levels+1 fields deep with node.
func deep(levels int) string {
	q := `relationships(type: "follows", direction: OUTGOING, first: 1) { edges { cursor } }`
	for range levels - 1 {
		q = `relationships(type: "follows", direction: OUTGOING, first: 1) { edges { neighbor { ` + q + ` } } }`
	}
	return q
}

// deep12 is deep(4) with its innermost edges { cursor } replaced by
// totalCount: exactly 12 fields deep with node.
func deep12() string {
	return strings.Replace(deep(4), `{ edges { cursor } }`, `{ totalCount }`, 1)
}

// checkError checks the response's one error against c.
// pathUnlessPageSize is path, or "" for the cases of a page size out of
// range: those are refused before execution.
func pathUnlessPageSize(name, path string) string {
	switch name {
	case "first -1", "first 101", "last -1", "last 101":
		return ""
	}
	return path
}

func checkError(t *testing.T, r *gqlResponse, c errorCase) {
	t.Helper()
	if len(r.Errors) != 1 {
		t.Errorf("want one error %s at %q, got status %d: %.2000s", c.code, c.path, r.Status, r.Body)
		return
	}
	e := r.Errors[0]
	if code := e.Code(); code != c.code && (c.alt == "" || code != c.alt) {
		want := c.code
		if c.alt != "" {
			want += " or " + c.alt
		}
		t.Errorf("code %q, want %s; error %v", code, want, e)
	}
	if c.path != anyPath && e.PathString() != c.path {
		t.Errorf("path %q, want %q; error %v", e.PathString(), c.path, e)
	}
}

// TestPageSizeBeforeComplexity: a page size over 100 is refused as a page
// size, whatever the complexity it would give the operation.
func TestPageSizeBeforeComplexity(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	for name, query := range map[string]string{
		"alone": `{ node(id: "a") { relationships(type: "follows", direction: OUTGOING, first: 1000) { edges { cursor } } } }`,
		"nested in a query over the complexity limit": `{ node(id: "a") { relationships(type: "follows", direction: OUTGOING, first: 100) { edges { neighbor {
			relationships(type: "follows", direction: OUTGOING, first: 100) { edges { neighbor {
			relationships(type: "follows", direction: OUTGOING, first: 1000) { edges { cursor } } } } } } } } } }`,
	} {
		r := s.do(t, query, nil)
		checkError(t, r, errorCase{code: "BAD_USER_INPUT"})
		if len(r.Errors) == 1 && !strings.Contains(r.Errors[0].Message, "first must be between 0 and 100, got 1000") {
			t.Errorf("%s: refused with %q, want the page size named", name, r.Errors[0].Message)
		}
	}
}
