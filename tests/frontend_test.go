package tests

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// socialGraph is what TestFrontendScenario writes, kept as the model its
// reads are checked against.
type socialGraph struct {
	nodes    map[string]nodeOut // by id, as last written
	props    map[string]map[string]any
	rels     []relOut     // as last written, in creation order
	articles []articleOut // as last written, in posting order
}

// yuki is a node id with the bytes the seeds' "-"-joined keys got wrong.
const yuki = "雪-yuki 1/x\x01"

func buildSocialGraph(t *testing.T, s *server) *socialGraph {
	g := &socialGraph{nodes: map[string]nodeOut{}, props: map[string]map[string]any{}}
	for _, n := range []struct {
		id    string
		props map[string]any
	}{
		{"alice", map[string]any{"name": "Alice", "age": 34, "tags": []any{"go", "hbase"}, "verified": true, "score": 4.5, "nickname": nil}},
		{"bob", map[string]any{"name": "Bob", "age": 27, "tags": []any{}, "verified": false}},
		{"carol", map[string]any{"name": "Carol", "city": "Kyoto", "followers": json.Number("9007199254740993")}}, // 2^53+1
		{"dave", nil},
		{"erin", map[string]any{"name": "Erin", "langs": []any{"ja", "en"}}},
		{yuki, map[string]any{"name": "雪"}},
	} {
		out := s.createNode(t, n.id, n.props)
		want := n.props
		if want == nil {
			want = map[string]any{}
		}
		if out.ID != n.id || !jsonEqual(t, out.Properties, mustJSON(t, want)) || out.CreatedAt != out.UpdatedAt {
			t.Errorf("createNode(%q, %v) = %+v", n.id, n.props, out)
		}
		g.nodes[n.id], g.props[n.id] = out, want
	}

	for _, r := range []struct {
		start, typ, end string
		props           map[string]any
	}{
		{"alice", "follows", "bob", map[string]any{"since": 2019}},
		{"alice", "follows", "carol", map[string]any{"since": 2020}},
		{"alice", "follows", yuki, map[string]any{"since": 2024, "close": true}},
		{"bob", "follows", "alice", map[string]any{"since": 2019}},
		{"carol", "follows", "alice", map[string]any{}},
		{"dave", "follows", "alice", nil},
		{"erin", "follows", "alice", map[string]any{"since": 2021}},
		{"bob", "follows", "carol", map[string]any{"since": 2022}},
		{"bob", "likes", "alice", map[string]any{"weight": 1}},
		{"alice", "likes", "dave", map[string]any{"weight": 0.5}},
		{"carol", "likes", "alice", map[string]any{"weight": 2}},
		{yuki, "likes", "alice", map[string]any{"weight": 3, "note": "雪"}},
		{"erin", "likes", "erin", nil},  // a self-loop: in both of erin's connections
		{"alice", "follow", "bob", nil}, // a type that is a prefix of another
	} {
		out := s.createRel(t, r.start, r.typ, r.end, r.props)
		want := r.props
		if want == nil {
			want = map[string]any{}
		}
		if out.Type != r.typ || out.StartNode.ID != r.start || out.EndNode.ID != r.end || out.ID == "" ||
			!jsonEqual(t, out.Properties, mustJSON(t, want)) || out.CreatedAt != out.UpdatedAt {
			t.Errorf("createRelationship(%q, %q, %q, %v) = %+v", r.start, r.typ, r.end, r.props, out)
		}
		g.rels = append(g.rels, out)
	}

	for _, a := range []struct{ author, category, title, body string }{
		{"alice", "tech", "Batching reads in HBase", "One batch per level of the query. Batch, batch, batch."},
		{"alice", "travel", "Kyoto in autumn", "Maple leaves and temples."},
		{"alice", "tech", "Row keys that scale", "Hash the id first, then the id itself."},
		{"alice", "food", "Ramen notes", "Tonkotsu broth takes twelve hours."},
		{"alice", "tech", "Partial scans", "Stop row is the prefix plus one."},
		{"alice", "travel", "Hokkaido by train", "Snow, trains and more snow."},
		{"bob", "tech", "Hello from Bob", "First post."},
		{"bob", "tech", "Second post", "More posts soon."},
		{yuki, "travel", "雪の日", "雪が降る。Snow day in Sapporo 2024."},
		{"alice", "technology", "Not tech", "A category whose name starts with another's."},
	} {
		out := s.postArticle(t, a.author, a.title, a.body, a.category)
		if out.ID == "" || out.Author.ID != a.author || out.Title != a.title || out.Body != a.body ||
			out.Category != a.category || out.PostedAt != out.UpdatedAt {
			t.Errorf("postArticle(%q, %q) = %+v", a.author, a.title, out)
		}
		g.articles = append(g.articles, out)
		time.Sleep(3 * time.Millisecond) // distinct posting times, for the window below
	}

	// One update of each kind.
	var upd struct{ UpdateNodeProperties nodeOut }
	s.mustDo(t, `mutation { updateNodeProperties(id: "alice", set: {age: 35, city: "Osaka"}, remove: ["nickname"]) { `+nodeFields+` } }`, nil, &upd)
	alice := g.props["alice"]
	delete(alice, "nickname")
	alice["age"], alice["city"] = 35, "Osaka"
	if n := upd.UpdateNodeProperties; !jsonEqual(t, n.Properties, mustJSON(t, alice)) || n.CreatedAt != g.nodes["alice"].CreatedAt ||
		!parseTime(t, n.UpdatedAt).After(parseTime(t, n.CreatedAt)) {
		t.Errorf("updateNodeProperties(alice) = %+v", n)
	}
	g.nodes["alice"] = upd.UpdateNodeProperties

	var updRel struct{ UpdateRelationshipProperties relOut }
	s.mustDo(t, `mutation { updateRelationshipProperties(startNodeId: "alice", type: "follows", endNodeId: "bob", set: {close: true}, remove: ["since"]) { `+relFields+` } }`, nil, &updRel)
	if r := updRel.UpdateRelationshipProperties; r.ID != g.rels[0].ID || !jsonEqual(t, r.Properties, []byte(`{"close":true}`)) ||
		r.CreatedAt != g.rels[0].CreatedAt || !parseTime(t, r.UpdatedAt).After(parseTime(t, r.CreatedAt)) {
		t.Errorf("updateRelationshipProperties(alice follows bob) = %+v", r)
	}
	g.rels[0] = updRel.UpdateRelationshipProperties

	var updArt struct{ UpdateArticle articleOut }
	s.mustDo(t, `mutation($id: ID!) { updateArticle(id: $id, title: "Ramen in Sapporo", category: "travel") { `+articleFields+` } }`,
		map[string]any{"id": g.articles[3].ID}, &updArt)
	if a := updArt.UpdateArticle; a.ID != g.articles[3].ID || a.Title != "Ramen in Sapporo" || a.Category != "travel" ||
		a.Body != g.articles[3].Body || a.PostedAt != g.articles[3].PostedAt || !parseTime(t, a.UpdatedAt).After(parseTime(t, a.PostedAt)) {
		t.Errorf("updateArticle = %+v", a)
	}
	g.articles[3] = updArt.UpdateArticle
	return g
}

// relationshipsOf is the connection (node, type, direction) as the design
// orders it: newest first, ties by the other node's id (the index key is
// rev(created) str(other)).
func (g *socialGraph) relationshipsOf(node, typ, dir string) []relOut {
	var out []relOut
	for _, r := range g.rels {
		if r.Type == typ && (dir == "OUTGOING" && r.StartNode.ID == node || dir == "INCOMING" && r.EndNode.ID == node) {
			out = append(out, r)
		}
	}
	other := func(r relOut) string {
		if dir == "OUTGOING" {
			return r.EndNode.ID
		}
		return r.StartNode.ID
	}
	slices.SortStableFunc(out, func(a, b relOut) int {
		if c := strings.Compare(b.CreatedAt, a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(other(a), other(b))
	})
	return out
}

// articlesOf is an author's articles newest first (ties in posting order),
// those of category if it is not "", posted in [after, before) if set.
func (g *socialGraph) articlesOf(t testing.TB, author, category string, after, before *time.Time) []articleOut {
	var out []articleOut
	for _, a := range g.articles {
		posted := parseTime(t, a.PostedAt)
		if a.Author.ID != author || category != "" && a.Category != category ||
			after != nil && posted.Before(ceilMs(*after)) || before != nil && !posted.Before(ceilMs(*before)) {
			continue
		}
		out = append(out, a)
	}
	slices.SortStableFunc(out, func(a, b articleOut) int { return strings.Compare(b.PostedAt, a.PostedAt) })
	return out
}

// ceilMs rounds up to the millisecond, the precision of postedAt.
func ceilMs(t time.Time) time.Time {
	r := t.Truncate(time.Millisecond)
	if r.Before(t) {
		r = r.Add(time.Millisecond)
	}
	return r
}

type relConn struct {
	TotalCount int      `json:"totalCount"`
	PageInfo   pageInfo `json:"pageInfo"`
	Edges      []struct {
		Cursor   string  `json:"cursor"`
		Node     relOut  `json:"node"`
		Neighbor nodeOut `json:"neighbor"`
	} `json:"edges"`
}

type articleConn struct {
	TotalCount int      `json:"totalCount"`
	PageInfo   pageInfo `json:"pageInfo"`
	Edges      []struct {
		Cursor string     `json:"cursor"`
		Node   articleOut `json:"node"`
	} `json:"edges"`
}

const relConnFields = `totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
	edges { cursor node { ` + relFields + ` } neighbor { ` + nodeFields + ` } }`

const articleConnFields = `totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
	edges { cursor node { ` + articleFields + ` } }`

// checkWholePage checks a first page that holds the whole connection.
func checkWholePage(t *testing.T, what string, total int, info pageInfo, cursors []string, wantTotal int) {
	t.Helper()
	if total != wantTotal {
		t.Errorf("%s: totalCount %d, want %d", what, total, wantTotal)
	}
	if info.HasNextPage || info.HasPreviousPage {
		t.Errorf("%s: pageInfo %+v, want no next and no previous page", what, info)
	}
	if len(cursors) == 0 {
		if info.StartCursor != nil || info.EndCursor != nil {
			t.Errorf("%s: empty page with cursors %+v", what, info)
		}
		return
	}
	if info.StartCursor == nil || *info.StartCursor != cursors[0] || info.EndCursor == nil || *info.EndCursor != cursors[len(cursors)-1] {
		t.Errorf("%s: start/endCursor %v/%v, want the first and last edge's %q/%q", what, info.StartCursor, info.EndCursor, cursors[0], cursors[len(cursors)-1])
	}
	seen := map[string]bool{}
	for _, c := range cursors {
		if c == "" || seen[c] {
			t.Errorf("%s: empty or repeated cursor %q in %q", what, c, cursors)
		}
		seen[c] = true
	}
}

// TestFrontendScenario writes a small social graph and reads it back
// through every field of the schema, checking values.
func TestFrontendScenario(t *testing.T) {
	parallelTest(t)
	// Eight whole pages of articles with their bodies in one query cost
	// 25,221 since a body is priced at the 1 MiB it may hold.
	s := startServer(t, "--max-complexity", "30000")
	began := time.Now()
	g := buildSocialGraph(t, s)
	ended := time.Now()
	ids := []string{"alice", "bob", "carol", "dave", "erin", yuki}

	t.Run("node", func(t *testing.T) {
		var got struct {
			Node struct {
				nodeOut
				Name     json.RawMessage `json:"name"`
				Age      json.RawMessage `json:"age"`
				Tags     json.RawMessage `json:"tags"`
				Nickname json.RawMessage `json:"nickname"`
				Missing  json.RawMessage `json:"missing"`
			} `json:"node"`
			Nobody *nodeOut `json:"nobody"`
		}
		s.mustDo(t, `{
			node(id: "alice") { `+nodeFields+` name: property(name: "name") age: property(name: "age")
				tags: property(name: "tags") nickname: property(name: "nickname") missing: property(name: "nope") }
			nobody: node(id: "nobody") { id }
		}`, nil, &got)
		n := got.Node
		if n.ID != "alice" || !jsonEqual(t, n.Properties, mustJSON(t, g.props["alice"])) {
			t.Errorf("node(alice) = %s %s, want %v", n.ID, n.Properties, g.props["alice"])
		}
		for _, p := range []struct {
			name      string
			got, want json.RawMessage
		}{
			{"name", n.Name, json.RawMessage(`"Alice"`)},
			{"age", n.Age, json.RawMessage(`35`)},
			{"tags", n.Tags, json.RawMessage(`["go","hbase"]`)},
			{"nickname (removed)", n.Nickname, json.RawMessage(`null`)},
			{"nope (never set)", n.Missing, json.RawMessage(`null`)},
		} {
			if !jsonEqual(t, p.got, p.want) {
				t.Errorf("property(%s) = %s, want %s", p.name, p.got, p.want)
			}
		}
		if n.CreatedAt != g.nodes["alice"].CreatedAt || n.UpdatedAt != g.nodes["alice"].UpdatedAt {
			t.Errorf("alice created/updated %s/%s, want %s/%s", n.CreatedAt, n.UpdatedAt, g.nodes["alice"].CreatedAt, g.nodes["alice"].UpdatedAt)
		}
		created := parseTime(t, n.CreatedAt)
		if created.Before(began.Add(-time.Second)) || created.After(ended.Add(time.Second)) {
			t.Errorf("alice createdAt %s, want between %s and %s", n.CreatedAt, began, ended)
		}
		if got.Nobody != nil {
			t.Errorf("node(nobody) = %+v, want null", got.Nobody)
		}

		// Numbers keep their digits: 2^53+1 is no float64.
		var carol struct {
			Node struct {
				Followers json.RawMessage `json:"followers"`
			} `json:"node"`
		}
		s.mustDo(t, `{ node(id: "carol") { followers: property(name: "followers") } }`, nil, &carol)
		if string(carol.Node.Followers) != "9007199254740993" {
			t.Errorf("property(followers) = %s, want 9007199254740993", carol.Node.Followers)
		}
	})

	t.Run("nodes", func(t *testing.T) {
		var got struct {
			Nodes []*nodeOut `json:"nodes"`
		}
		want := []string{"alice", "nobody", yuki, "dave", "bob", "carol", "erin", "alice"}
		s.mustDo(t, `query($ids: [ID!]!) { nodes(ids: $ids) { `+nodeFields+` } }`, map[string]any{"ids": want}, &got)
		if len(got.Nodes) != len(want) {
			t.Fatalf("nodes(%q) returned %d entries", want, len(got.Nodes))
		}
		for i, id := range want {
			n, ok := g.nodes[id]
			switch {
			case !ok && got.Nodes[i] != nil:
				t.Errorf("nodes[%d] (%q) = %+v, want null", i, id, got.Nodes[i])
			case ok && got.Nodes[i] == nil:
				t.Errorf("nodes[%d] (%q) = null", i, id)
			case ok && (got.Nodes[i].ID != id || !jsonEqual(t, got.Nodes[i].Properties, mustJSON(t, g.props[id])) ||
				got.Nodes[i].CreatedAt != n.CreatedAt || got.Nodes[i].UpdatedAt != n.UpdatedAt):
				t.Errorf("nodes[%d] = %+v, want %+v with properties %v", i, *got.Nodes[i], n, g.props[id])
			}
		}
	})

	t.Run("relationship", func(t *testing.T) {
		var got struct {
			R *struct {
				relOut
				StartNode struct {
					ID   string `json:"id"`
					Name string `json:"name"`
				} `json:"startNode"`
				EndNode nodeOut `json:"endNode"`
			} `json:"r"`
			Yuki *relOut `json:"yuki"`
			None *relOut `json:"none"`
		}
		s.mustDo(t, `query($yuki: ID!) {
			r: relationship(startNodeId: "alice", type: "follows", endNodeId: "bob") {
				id type startNode { id name: property(name: "name") } endNode { `+nodeFields+` } properties createdAt updatedAt }
			yuki: relationship(startNodeId: $yuki, type: "likes", endNodeId: "alice") { `+relFields+` }
			none: relationship(startNodeId: "bob", type: "likes", endNodeId: "carol") { id }
		}`, map[string]any{"yuki": yuki}, &got)
		want := g.rels[0]
		if r := got.R; r == nil {
			t.Errorf("relationship(alice follows bob) = null")
		} else if r.ID != want.ID || r.Type != "follows" || r.StartNode.ID != "alice" || r.StartNode.Name != "Alice" ||
			r.EndNode.ID != "bob" || !jsonEqual(t, r.EndNode.Properties, mustJSON(t, g.props["bob"])) ||
			!jsonEqual(t, r.Properties, want.Properties) || r.CreatedAt != want.CreatedAt || r.UpdatedAt != want.UpdatedAt {
			t.Errorf("relationship(alice follows bob) = %+v, want %+v", *r, want)
		}
		want = g.rels[11]
		if r := got.Yuki; r == nil || r.ID != want.ID || r.StartNode.ID != yuki || r.EndNode.ID != "alice" ||
			!jsonEqual(t, r.Properties, want.Properties) || r.CreatedAt != want.CreatedAt || r.UpdatedAt != want.UpdatedAt {
			t.Errorf("relationship(yuki likes alice) = %+v, want %+v", r, want)
		}
		if got.None != nil {
			t.Errorf("relationship(bob likes carol) = %+v, want null", got.None)
		}
	})

	t.Run("relationships", func(t *testing.T) {
		for _, id := range ids {
			var got struct {
				Node map[string]relConn `json:"node"`
			}
			s.mustDo(t, `query($id: ID!) { node(id: $id) {
				fo: relationships(type: "follows", direction: OUTGOING) { `+relConnFields+` }
				fi: relationships(type: "follows", direction: INCOMING) { `+relConnFields+` }
				lo: relationships(type: "likes", direction: OUTGOING) { `+relConnFields+` }
				li: relationships(type: "likes", direction: INCOMING) { `+relConnFields+` }
				none: relationships(type: "blocks", direction: OUTGOING) { `+relConnFields+` }
				pre: relationships(type: "follow", direction: OUTGOING) { `+relConnFields+` }
				prei: relationships(type: "follow", direction: INCOMING) { `+relConnFields+` }
			} }`, map[string]any{"id": id}, &got)
			for alias, sel := range map[string]struct{ typ, dir string }{
				"fo": {"follows", "OUTGOING"}, "fi": {"follows", "INCOMING"},
				"lo": {"likes", "OUTGOING"}, "li": {"likes", "INCOMING"}, "none": {"blocks", "OUTGOING"},
				"pre": {"follow", "OUTGOING"}, "prei": {"follow", "INCOMING"},
			} {
				what := id + " " + sel.typ + " " + sel.dir
				c, want := got.Node[alias], g.relationshipsOf(id, sel.typ, sel.dir)
				cursors := make([]string, len(c.Edges))
				for i, e := range c.Edges {
					cursors[i] = e.Cursor
				}
				checkWholePage(t, what, c.TotalCount, c.PageInfo, cursors, len(want))
				if len(c.Edges) != len(want) {
					t.Errorf("%s: %d edges, want %d", what, len(c.Edges), len(want))
					continue
				}
				for i, e := range c.Edges {
					w := want[i]
					neighbor := w.EndNode.ID
					if sel.dir == "INCOMING" {
						neighbor = w.StartNode.ID
					}
					if e.Node.ID != w.ID || e.Node.Type != w.Type || e.Node.StartNode != w.StartNode || e.Node.EndNode != w.EndNode ||
						!jsonEqual(t, e.Node.Properties, w.Properties) || e.Node.CreatedAt != w.CreatedAt || e.Node.UpdatedAt != w.UpdatedAt {
						t.Errorf("%s: edge %d node = %+v, want %+v", what, i, e.Node, w)
					}
					if e.Neighbor.ID != neighbor || !jsonEqual(t, e.Neighbor.Properties, mustJSON(t, g.props[neighbor])) ||
						e.Neighbor.CreatedAt != g.nodes[neighbor].CreatedAt {
						t.Errorf("%s: edge %d neighbor = %+v, want %q with %v", what, i, e.Neighbor, neighbor, g.props[neighbor])
					}
				}
			}
		}
	})

	t.Run("articles", func(t *testing.T) {
		var alices []time.Time // alice's posting times, in posting order
		for _, a := range g.articles {
			if a.Author.ID == "alice" {
				alices = append(alices, parseTime(t, a.PostedAt))
			}
		}
		exactAfter, exactBefore := alices[1], alices[4]
		fineAfter, fineBefore := alices[1].Add(500*time.Microsecond), alices[4].Add(500*time.Microsecond)
		for _, id := range ids {
			var got struct {
				Node map[string]json.RawMessage `json:"node"`
			}
			s.mustDo(t, `query($id: ID!, $a: Time, $b: Time, $fa: Time, $fb: Time) { node(id: $id) {
				all: articles { `+articleConnFields+` }
				tech: articles(category: "tech") { `+articleConnFields+` }
				travel: articles(category: "travel") { `+articleConnFields+` }
				food: articles(category: "food") { `+articleConnFields+` }
				technology: articles(category: "technology") { `+articleConnFields+` }
				window: articles(postedAfter: $a, postedBefore: $b) { `+articleConnFields+` }
				fine: articles(postedAfter: $fa, postedBefore: $fb) { `+articleConnFields+` }
				since: articles(category: "tech", postedAfter: $a) { `+articleConnFields+` }
				wordCounts(first: 5) { word count }
				allWords: wordCounts(first: 1000) { word count }
			} }`, map[string]any{"id": id,
				"a": exactAfter.Format(time.RFC3339Nano), "b": exactBefore.Format(time.RFC3339Nano),
				"fa": fineAfter.Format(time.RFC3339Nano), "fb": fineBefore.Format(time.RFC3339Nano)}, &got)
			for _, sel := range []struct {
				alias, category string
				after, before   *time.Time
			}{
				{"all", "", nil, nil}, {"tech", "tech", nil, nil}, {"travel", "travel", nil, nil}, {"food", "food", nil, nil},
				{"technology", "technology", nil, nil},
				{"window", "", &exactAfter, &exactBefore}, {"fine", "", &fineAfter, &fineBefore}, {"since", "tech", &exactAfter, nil},
			} {
				what := id + " articles " + sel.alias
				c := decode[articleConn](t, got.Node[sel.alias])
				want := g.articlesOf(t, id, sel.category, sel.after, sel.before)
				// totalCount counts the author's (category's) articles; a window does not narrow it.
				wantTotal := len(g.articlesOf(t, id, sel.category, nil, nil))
				cursors := make([]string, len(c.Edges))
				for i, e := range c.Edges {
					cursors[i] = e.Cursor
				}
				checkWholePage(t, what, c.TotalCount, c.PageInfo, cursors, wantTotal)
				if len(c.Edges) != len(want) {
					t.Errorf("%s: %d edges, want %d (%+v)", what, len(c.Edges), len(want), c.Edges)
					continue
				}
				for i, e := range c.Edges {
					if e.Node != want[i] {
						t.Errorf("%s: edge %d = %+v, want %+v", what, i, e.Node, want[i])
					}
				}
			}
			if id == "alice" { // the windows above must have selected something to mean anything
				if n := len(g.articlesOf(t, id, "", &exactAfter, &exactBefore)); n != 3 {
					t.Errorf("the exact window holds %d of alice's articles, want 3", n)
				}
			}
			var texts []string
			for _, a := range g.articles {
				if a.Author.ID == id {
					texts = append(texts, a.Title, a.Body)
				}
			}
			for alias, n := range map[string]int{"wordCounts": 5, "allWords": 1000} {
				got, want := decode[[]wordCount](t, got.Node[alias]), topWords(texts, n)
				if !slices.Equal(got, want) {
					t.Errorf("%s wordCounts(first: %d) = %v, want %v", id, n, got, want)
				}
			}
		}
	})

	t.Run("article", func(t *testing.T) {
		for _, want := range g.articles {
			var got struct {
				Article *struct {
					articleOut
					Author struct {
						ID   string `json:"id"`
						Name string `json:"name"`
					} `json:"author"`
				} `json:"article"`
			}
			s.mustDo(t, `query($id: ID!) { article(id: $id) { id author { id name: property(name: "name") } title body category postedAt updatedAt } }`,
				map[string]any{"id": want.ID}, &got)
			a := got.Article
			if a == nil {
				t.Errorf("article(%q) = null, want %+v", want.ID, want)
				continue
			}
			wantName, _ := g.props[want.Author.ID]["name"].(string)
			if a.ID != want.ID || a.Author.ID != want.Author.ID || a.Author.Name != wantName || a.Title != want.Title ||
				a.Body != want.Body || a.Category != want.Category || a.PostedAt != want.PostedAt || a.UpdatedAt != want.UpdatedAt {
				t.Errorf("article(%q) = %+v, want %+v", want.ID, *a, want)
			}
		}
		// A well-formed id no article has: alice's with a sequence number never handed out.
		var got struct{ Article *articleOut }
		s.mustDo(t, `query($id: ID!) { article(id: $id) { id } }`, map[string]any{"id": withSeq(t, g.articles[0].ID, 99)}, &got)
		if got.Article != nil {
			t.Errorf("article(never posted) = %+v, want null", got.Article)
		}
	})
}
