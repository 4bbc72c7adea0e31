package tests

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// parallel sends n requests at once (req(i) builds the i-th) and returns
// their responses; a request that fails at the HTTP level fails the test.
func parallel(t *testing.T, s *server, n int, req func(i int) gqlRequest) []*gqlResponse {
	t.Helper()
	out := make([]*gqlResponse, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i], errs[i] = s.tryPost(req(i))
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	return out
}

// TestConcurrentUpdates sends 32 updates of one node (then of one
// relationship) at once, each setting its own property: the
// compare-and-set loops of seed 002 must keep every one.
func TestConcurrentUpdates(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	const n = 32
	s.createNode(t, "hot", map[string]any{"base": true})
	s.createNode(t, "other", nil)
	s.createRel(t, "hot", "follows", "other", map[string]any{"base": true})
	want := map[string]any{"base": true}
	for i := range n {
		want[fmt.Sprintf("p%02d", i)] = i
	}

	// checkUpdates checks the responses of the n updates, of field.
	checkUpdates := func(t *testing.T, resps []*gqlResponse, field string) (newest string) {
		t.Helper()
		var stamps []string
		for i, r := range resps {
			var data map[string]struct {
				Properties map[string]any `json:"properties"`
				UpdatedAt  string         `json:"updatedAt"`
			}
			r.ok(t, &data)
			got := data[field]
			if v, ok := got.Properties[fmt.Sprintf("p%02d", i)]; !ok || v != float64(i) {
				t.Errorf("update %d returned properties %v without its own p%02d: %d", i, got.Properties, i, i)
			}
			stamps = append(stamps, got.UpdatedAt)
		}
		// Each compare-and-set winner's u is after the one it replaced.
		slices.Sort(stamps)
		if len(slices.Compact(slices.Clone(stamps))) != n {
			t.Errorf("the %d updates returned repeated updatedAt values: %q", n, stamps)
		}
		return stamps[n-1]
	}

	t.Run("node", func(t *testing.T) {
		resps := parallel(t, s, n, func(i int) gqlRequest {
			return gqlRequest{
				Query:     `mutation($set: JSON) { updateNodeProperties(id: "hot", set: $set) { properties updatedAt } }`,
				Variables: map[string]any{"set": map[string]any{fmt.Sprintf("p%02d", i): i}},
			}
		})
		newest := checkUpdates(t, resps, "updateNodeProperties")
		var got struct{ Node nodeOut }
		s.mustDo(t, `{ node(id: "hot") { `+nodeFields+` } }`, nil, &got)
		if !jsonEqual(t, got.Node.Properties, mustJSON(t, want)) {
			t.Errorf("after %d concurrent updates hot has %s, want %v", n, got.Node.Properties, want)
		}
		if got.Node.UpdatedAt != newest {
			t.Errorf("hot updatedAt %s, want the newest update's %s", got.Node.UpdatedAt, newest)
		}
	})

	t.Run("relationship", func(t *testing.T) {
		resps := parallel(t, s, n, func(i int) gqlRequest {
			return gqlRequest{
				Query: `mutation($set: JSON) { updateRelationshipProperties(startNodeId: "hot", type: "follows", endNodeId: "other", set: $set) {
					properties updatedAt } }`,
				Variables: map[string]any{"set": map[string]any{fmt.Sprintf("p%02d", i): i}},
			}
		})
		newest := checkUpdates(t, resps, "updateRelationshipProperties")
		// The relationship row and both index rows (stamped with u) must
		// have converged on the newest update.
		var got struct {
			Relationship relOut
			Hot          struct{ Out relConn }
			Other        struct{ In relConn }
		}
		s.mustDo(t, `{
			relationship(startNodeId: "hot", type: "follows", endNodeId: "other") { `+relFields+` }
			hot: node(id: "hot") { out: relationships(type: "follows", direction: OUTGOING) { `+relConnFields+` } }
			other: node(id: "other") { in: relationships(type: "follows", direction: INCOMING) { `+relConnFields+` } }
		}`, nil, &got)
		for _, r := range []struct {
			what string
			rel  relOut
			ok   bool
		}{
			{"relationship(hot follows other)", got.Relationship, true},
			{"hot's outgoing edge", edgeOf(got.Hot.Out), len(got.Hot.Out.Edges) == 1},
			{"other's incoming edge", edgeOf(got.Other.In), len(got.Other.In.Edges) == 1},
		} {
			if !r.ok {
				t.Errorf("%s: want exactly one edge", r.what)
				continue
			}
			if !jsonEqual(t, r.rel.Properties, mustJSON(t, want)) || r.rel.UpdatedAt != newest {
				t.Errorf("%s after %d concurrent updates: properties %s updated %s; want %v updated %s",
					r.what, n, r.rel.Properties, r.rel.UpdatedAt, want, newest)
			}
		}
	})
}

func edgeOf(c relConn) relOut {
	if len(c.Edges) == 0 {
		return relOut{Properties: json.RawMessage("null")}
	}
	return c.Edges[0].Node
}

// outcomes counts the responses by error code ("" for success).
func outcomes(t *testing.T, resps []*gqlResponse) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range resps {
		switch {
		case len(r.Errors) == 0:
			out[""]++
		case len(r.Errors) == 1:
			out[r.Errors[0].Code()]++
		default:
			t.Errorf("more than one error: %s", r.Body)
		}
	}
	return out
}

// TestConcurrentCreatesAndDeletes races creates and deletes of one key:
// exactly one of each wins, and the counters count it once.
func TestConcurrentCreatesAndDeletes(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	const n = 16

	t.Run("createNode", func(t *testing.T) {
		resps := parallel(t, s, n, func(i int) gqlRequest {
			return gqlRequest{Query: `mutation($p: JSON) { createNode(id: "dup", properties: $p) { id properties } }`,
				Variables: map[string]any{"p": map[string]any{"by": i}}}
		})
		if got := outcomes(t, resps); got[""] != 1 || got["ALREADY_EXISTS"] != n-1 {
			t.Fatalf("%d concurrent creates of one node: %v, want one success and %d ALREADY_EXISTS", n, got, n-1)
		}
		var winner nodeOut
		for _, r := range resps {
			if len(r.Errors) == 0 {
				winner = decode[struct{ CreateNode nodeOut }](t, r.Data).CreateNode
			}
		}
		var read struct{ Node nodeOut }
		s.mustDo(t, `{ node(id: "dup") { `+nodeFields+` } }`, nil, &read)
		if !jsonEqual(t, read.Node.Properties, winner.Properties) {
			t.Errorf("node(dup) has %s, but the create that succeeded wrote %s", read.Node.Properties, winner.Properties)
		}
	})

	s.createNode(t, "x", nil)
	s.createNode(t, "y", nil)
	degrees := func(t *testing.T) (out, in, edgesOut, edgesIn int) {
		t.Helper()
		var got struct {
			X struct{ Out relConn }
			Y struct{ In relConn }
		}
		s.mustDo(t, `{
			x: node(id: "x") { out: relationships(type: "follows", direction: OUTGOING) { `+relConnFields+` } }
			y: node(id: "y") { in: relationships(type: "follows", direction: INCOMING) { `+relConnFields+` } }
		}`, nil, &got)
		return got.X.Out.TotalCount, got.Y.In.TotalCount, len(got.X.Out.Edges), len(got.Y.In.Edges)
	}

	t.Run("createRelationship", func(t *testing.T) {
		resps := parallel(t, s, n, func(i int) gqlRequest {
			return gqlRequest{Query: `mutation { createRelationship(startNodeId: "x", type: "follows", endNodeId: "y") { id } }`}
		})
		if got := outcomes(t, resps); got[""] != 1 || got["ALREADY_EXISTS"] != n-1 {
			t.Errorf("%d concurrent creates of one relationship: %v, want one success and %d ALREADY_EXISTS", n, got, n-1)
		}
		if out, in, eo, ei := degrees(t); out != 1 || in != 1 || eo != 1 || ei != 1 {
			t.Errorf("after the creates: totalCount %d out, %d in; edges %d, %d; want 1 each", out, in, eo, ei)
		}
	})

	t.Run("deleteRelationship", func(t *testing.T) {
		s.createRel(t, "y", "follows", "x", nil) // must survive, and keep its counts
		resps := parallel(t, s, n, func(i int) gqlRequest {
			return gqlRequest{Query: `mutation { deleteRelationship(startNodeId: "x", type: "follows", endNodeId: "y") }`}
		})
		if got := outcomes(t, resps); got[""] != 1 || got["NOT_FOUND"] != n-1 {
			t.Errorf("%d concurrent deletes of one relationship: %v, want one success and %d NOT_FOUND", n, got, n-1)
		}
		if out, in, eo, ei := degrees(t); out != 0 || in != 0 || eo != 0 || ei != 0 {
			t.Errorf("after the deletes: totalCount %d out, %d in; edges %d, %d; want 0 each", out, in, eo, ei)
		}
		var got struct {
			Y struct{ Out relConn }
		}
		s.mustDo(t, `{ y: node(id: "y") { out: relationships(type: "follows", direction: OUTGOING) { `+relConnFields+` } } }`, nil, &got)
		if got.Y.Out.TotalCount != 1 || len(got.Y.Out.Edges) != 1 {
			t.Errorf("y follows x: totalCount %d, %d edges; want 1", got.Y.Out.TotalCount, len(got.Y.Out.Edges))
		}
	})

	t.Run("postArticle and deleteArticle", func(t *testing.T) {
		s.createNode(t, "writer", nil)
		resps := parallel(t, s, n, func(i int) gqlRequest {
			return gqlRequest{Query: `mutation($t: String!) { postArticle(authorId: "writer", title: $t, body: "same words", category: "c") { id } }`,
				Variables: map[string]any{"t": fmt.Sprintf("title %d", i)}}
		})
		ids := map[string]bool{}
		for _, r := range resps {
			var got struct{ PostArticle idOut }
			r.ok(t, &got)
			ids[got.PostArticle.ID] = true
		}
		if len(ids) != n {
			t.Fatalf("%d concurrent posts made %d distinct ids", n, len(ids))
		}
		counts := func(t *testing.T) (all, inC, edges int, words []wordCount) {
			t.Helper()
			var got struct {
				Node struct {
					Articles   articleConn
					C          articleConn
					WordCounts []wordCount
				}
			}
			s.mustDo(t, `{ node(id: "writer") { articles(first: 20) { `+articleConnFields+` } c: articles(category: "c") { totalCount }
				wordCounts(first: 3) { word count } } }`, nil, &got)
			return got.Node.Articles.TotalCount, got.Node.C.TotalCount, len(got.Node.Articles.Edges), got.Node.WordCounts
		}
		all, inC, edges, words := counts(t)
		if want := []wordCount{{"same", n}, {"title", n}, {"words", n}}; all != n || inC != n || edges != n || !slices.Equal(words, want) {
			t.Errorf("after %d posts: totalCount %d, in c %d, %d edges, words %v; want %d, %d, %d, %v", n, all, inC, edges, words, n, n, n, want)
		}

		var victim string
		for id := range ids {
			victim = id
			break
		}
		resps = parallel(t, s, n, func(i int) gqlRequest {
			return gqlRequest{Query: `mutation($id: ID!) { deleteArticle(id: $id) }`, Variables: map[string]any{"id": victim}}
		})
		if got := outcomes(t, resps); got[""] != 1 || got["NOT_FOUND"] != n-1 {
			t.Errorf("%d concurrent deletes of one article: %v, want one success and %d NOT_FOUND", n, got, n-1)
		}
		all, inC, edges, words = counts(t)
		if want := []wordCount{{"same", n - 1}, {"title", n - 1}, {"words", n - 1}}; all != n-1 || inC != n-1 || edges != n-1 || !slices.Equal(words, want) {
			t.Errorf("after the deletes: totalCount %d, in c %d, %d edges, words %v; want %d, %d, %d, %v", all, inC, edges, words, n-1, n-1, n-1, want)
		}
	})
}
