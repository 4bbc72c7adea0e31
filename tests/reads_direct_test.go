package tests

import (
	"testing"
	"time"
)

// TestReadsAnswerAsWritten covers the reads the embedded engine now
// answers directly (whole rows without an hrpc Get: nodes(ids:), node,
// _entities, a relationship page's ends and neighbours, and a writer's
// read before an update), with the result cache on and off: duplicates
// and missing ids in one batch, an update seen by the next read, and a
// deleted node gone from reads and from its neighbour's page. It guards
// behaviour that did not change: it passes before the change too.
func TestReadsAnswerAsWritten(t *testing.T) {
	parallelTest(t)
	for _, tc := range []struct {
		name string
		args []string
	}{{"cache", nil}, {"no cache", []string{"--result-cache-bytes", "0"}}} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, tc.args...)
			s.bulk(t, []string{
				`createNode(id: "a", properties: {n: 1}) { id }`,
				`createNode(id: "b", properties: {n: 2}) { id }`,
				`createNode(id: "c", properties: {n: 3}) { id }`,
				`createRelationship(startNodeId: "a", type: "knows", endNodeId: "b") { id }`,
			})
			time.Sleep(5 * time.Millisecond) // a->c the newer: first in a's page
			s.mustDo(t, `mutation { createRelationship(startNodeId: "a", type: "knows", endNodeId: "c") { id } }`, nil, nil)
			const (
				nodes     = `query($ids: [ID!]!) { nodes(ids: $ids) { id properties } }`
				neighbors = `{ node(id: "a") { id relationships(type: "knows", direction: OUTGOING, first: 10) {
					edges { neighbor { id properties } } } } }`
				entities = `query($r: [_Any!]!) { _entities(representations: $r) { ... on Node { id properties } } }`
			)
			check := func(t *testing.T, query string, vars map[string]any, want string) {
				t.Helper()
				for range 2 { // a miss, then what the first read left in the cache
					if got := compactJSON(t, s.do(t, query, vars).Data); got != want {
						t.Fatalf("%s\n got %s\nwant %s", query, got, want)
					}
				}
			}
			check(t, nodes, map[string]any{"ids": []string{"a", "b", "nope", "a"}},
				`{"nodes":[{"id":"a","properties":{"n":1}},{"id":"b","properties":{"n":2}},null,{"id":"a","properties":{"n":1}}]}`)
			check(t, neighbors, nil,
				`{"node":{"id":"a","relationships":{"edges":[{"neighbor":{"id":"c","properties":{"n":3}}},{"neighbor":{"id":"b","properties":{"n":2}}}]}}}`)

			s.mustDo(t, `mutation { updateNodeProperties(id: "b", set: {n: 20}) { id } }`, nil, nil)
			check(t, entities, map[string]any{"r": []map[string]any{{"__typename": "Node", "id": "b"}, {"__typename": "Node", "id": "nope"}}},
				`{"_entities":[{"id":"b","properties":{"n":20}},null]}`)
			check(t, neighbors, nil,
				`{"node":{"id":"a","relationships":{"edges":[{"neighbor":{"id":"c","properties":{"n":3}}},{"neighbor":{"id":"b","properties":{"n":20}}}]}}}`)

			s.mustDo(t, `mutation { deleteNode(id: "c", detach: true) }`, nil, nil)
			check(t, nodes, map[string]any{"ids": []string{"c", "b"}}, `{"nodes":[null,{"id":"b","properties":{"n":20}}]}`)
			check(t, neighbors, nil,
				`{"node":{"id":"a","relationships":{"edges":[{"neighbor":{"id":"b","properties":{"n":20}}}]}}}`)
		})
	}
}
