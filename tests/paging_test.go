package tests

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// pagedConn is a connection whose edges are identified by node.id.
type pagedConn struct {
	TotalCount int      `json:"totalCount"`
	PageInfo   pageInfo `json:"pageInfo"`
	Edges      []struct {
		Cursor string `json:"cursor"`
		Node   idOut  `json:"node"`
	} `json:"edges"`
}

func (c pagedConn) ids() []string {
	out := make([]string, len(c.Edges))
	for i, e := range c.Edges {
		out[i] = e.Node.ID
	}
	return out
}

// connection is one connection under test: query has the variables
// $first, $after, $last and $before and selects the connection as
// node { c: ... { totalCount pageInfo edges { cursor node { id } } } }.
type connection struct {
	name  string
	query string
	want  []string // every edge's node id, newest first
	total int      // totalCount, if not len(want)
}

// page fetches one page; nil arguments are left out.
func (c connection) page(t *testing.T, s *server, first *int, after *string, last *int, before *string) pagedConn {
	t.Helper()
	vars := map[string]any{}
	if first != nil {
		vars["first"] = *first
	}
	if after != nil {
		vars["after"] = *after
	}
	if last != nil {
		vars["last"] = *last
	}
	if before != nil {
		vars["before"] = *before
	}
	var got struct {
		Node struct {
			C pagedConn `json:"c"`
		} `json:"node"`
	}
	s.mustDo(t, c.query, vars, &got)
	if total := cmp.Or(c.total, len(c.want)); got.Node.C.TotalCount != total {
		t.Errorf("totalCount %d, want %d", got.Node.C.TotalCount, total)
	}
	checkCursors(t, got.Node.C)
	return got.Node.C
}

// checkCursors checks that start/endCursor are the first and last edge's.
func checkCursors(t *testing.T, c pagedConn) {
	t.Helper()
	info := c.PageInfo
	if len(c.Edges) == 0 {
		if info.StartCursor != nil || info.EndCursor != nil {
			t.Errorf("empty page has startCursor %v, endCursor %v; want null", info.StartCursor, info.EndCursor)
		}
		return
	}
	first, last := c.Edges[0].Cursor, c.Edges[len(c.Edges)-1].Cursor
	if info.StartCursor == nil || *info.StartCursor != first || info.EndCursor == nil || *info.EndCursor != last {
		t.Errorf("startCursor %v, endCursor %v; want the first and last edge's, %q and %q", info.StartCursor, info.EndCursor, first, last)
	}
}

// checkPaging pages c to the end forward (first/after) and back to the
// start backward (last/before), size edges a page.
func checkPaging(t *testing.T, s *server, c connection, size int) {
	n := len(c.want)
	if n < 2*size+1 || n > 100 {
		t.Fatalf("%d edges: the checks below want 3 pages of %d and at most one page of 100", n, size)
	}
	// Every edge's cursor, from one page of all of them: paging forward and
	// backward must hand out the same ones.
	hundred := 100
	whole := c.page(t, s, &hundred, nil, nil, nil)
	if !slices.Equal(whole.ids(), c.want) {
		t.Errorf("first: 100 read\n%q\nwant (newest first)\n%q", whole.ids(), c.want)
	}
	cursorOf := map[string]string{} // node id -> cursor
	for _, e := range whole.Edges {
		cursorOf[e.Node.ID] = e.Cursor
	}
	checkCursor := func(t *testing.T, id, cursor string) {
		t.Helper()
		if cursorOf[id] != cursor {
			t.Errorf("edge %s has cursor %q, but %q in the page of all edges", id, cursor, cursorOf[id])
		}
	}

	t.Run("forward", func(t *testing.T) {
		var got []string
		var after *string
		for page := 0; ; page++ {
			if page > n/size+1 {
				t.Fatalf("still paging after %d pages", page)
			}
			c := c.page(t, s, &size, after, nil, nil)
			wantLen := min(size, n-len(got))
			if len(c.Edges) != wantLen {
				t.Fatalf("page %d has %d edges, want %d", page, len(c.Edges), wantLen)
			}
			got = append(got, c.ids()...)
			if c.PageInfo.HasNextPage != (len(got) < n) || c.PageInfo.HasPreviousPage != (page > 0) {
				t.Errorf("page %d (after %d edges): hasNextPage %v, hasPreviousPage %v; want %v, %v",
					page, len(got), c.PageInfo.HasNextPage, c.PageInfo.HasPreviousPage, len(got) < n, page > 0)
			}
			for _, e := range c.Edges {
				checkCursor(t, e.Node.ID, e.Cursor)
			}
			after = c.PageInfo.EndCursor
			if !c.PageInfo.HasNextPage {
				break
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("paging forward read\n%q\nwant (each edge once, newest first)\n%q", got, c.want)
		}
		// Past the end: nothing, and no next page.
		end := c.page(t, s, &size, after, nil, nil)
		if len(end.Edges) != 0 || end.PageInfo.HasNextPage || !end.PageInfo.HasPreviousPage {
			t.Errorf("after the last edge: %d edges, pageInfo %+v; want none, no next page, a previous one", len(end.Edges), end.PageInfo)
		}
	})

	t.Run("backward", func(t *testing.T) {
		var got []string
		var before *string
		for page := 0; ; page++ {
			if page > n/size+1 {
				t.Fatalf("still paging after %d pages", page)
			}
			c := c.page(t, s, nil, nil, &size, before)
			wantLen := min(size, n-len(got))
			if len(c.Edges) != wantLen {
				t.Fatalf("page %d has %d edges, want %d", page, len(c.Edges), wantLen)
			}
			got = append(c.ids(), got...)
			if c.PageInfo.HasPreviousPage != (len(got) < n) || c.PageInfo.HasNextPage != (page > 0) {
				t.Errorf("page %d (%d edges read): hasNextPage %v, hasPreviousPage %v; want %v, %v",
					page, len(got), c.PageInfo.HasNextPage, c.PageInfo.HasPreviousPage, page > 0, len(got) < n)
			}
			for _, e := range c.Edges {
				checkCursor(t, e.Node.ID, e.Cursor)
			}
			before = c.PageInfo.StartCursor
			if !c.PageInfo.HasPreviousPage {
				break
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("paging backward read\n%q\nwant (each edge once, newest first)\n%q", got, c.want)
		}
		// Before the newest: nothing, and no previous page.
		start := c.page(t, s, nil, nil, &size, before)
		if len(start.Edges) != 0 || start.PageInfo.HasPreviousPage || !start.PageInfo.HasNextPage {
			t.Errorf("before the first edge: %d edges, pageInfo %+v; want none, no previous page, a next one", len(start.Edges), start.PageInfo)
		}
	})

	t.Run("back from the middle", func(t *testing.T) {
		// The size edges before edge 2*size are edges size .. 2*size-1.
		before := cursorOf[c.want[2*size]]
		got := c.page(t, s, nil, nil, &size, &before)
		if want := c.want[size : 2*size]; !slices.Equal(got.ids(), want) {
			t.Errorf("last %d before edge %d = %q, want %q", size, 2*size, got.ids(), want)
		}
		// And the size edges after edge size-1 are the same ones.
		after := cursorOf[c.want[size-1]]
		got = c.page(t, s, &size, &after, nil, nil)
		if want := c.want[size : 2*size]; !slices.Equal(got.ids(), want) {
			t.Errorf("first %d after edge %d = %q, want %q", size, size-1, got.ids(), want)
		}
		if !got.PageInfo.HasNextPage || !got.PageInfo.HasPreviousPage {
			t.Errorf("pageInfo %+v, want a next and a previous page", got.PageInfo)
		}
	})

	t.Run("empty pages", func(t *testing.T) {
		zero := 0
		got := c.page(t, s, &zero, nil, nil, nil)
		if len(got.Edges) != 0 || !got.PageInfo.HasNextPage || got.PageInfo.HasPreviousPage {
			t.Errorf("first: 0 = %d edges, pageInfo %+v; want none, a next page, no previous", len(got.Edges), got.PageInfo)
		}
		got = c.page(t, s, nil, nil, &zero, nil)
		if len(got.Edges) != 0 || got.PageInfo.HasNextPage || !got.PageInfo.HasPreviousPage {
			t.Errorf("last: 0 = %d edges, pageInfo %+v; want none, no next page, a previous one", len(got.Edges), got.PageInfo)
		}
	})

	t.Run("default page size", func(t *testing.T) {
		got := c.page(t, s, nil, nil, nil, nil)
		if want := c.want[:min(20, n)]; !slices.Equal(got.ids(), want) {
			t.Errorf("no first/last = %q, want the newest 20 %q", got.ids(), want)
		}
	})
}

// TestPaging pages a node's 45 followers, an author's articles and one
// category of them, 7 at a time, forward to the end and backward to the
// start.
func TestPaging(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	s.createNode(t, "star", map[string]any{"name": "Star"})

	// 45 followers, created in one request, so many share a millisecond:
	// those are ordered by the follower's id (key: rev(created) str(other)).
	var fields []string
	for i := range 45 {
		id := fmt.Sprintf("fan%02d", (i*17)%45) // not in id order
		fields = append(fields,
			fmt.Sprintf(`createNode(id: %s) { id }`, lit(id)),
			fmt.Sprintf(`createRelationship(startNodeId: %s, type: "follows", endNodeId: "star", properties: {n: %d}) { %s }`, lit(id), i, relFields))
	}
	var rels []relOut
	for i, raw := range s.bulk(t, fields) {
		if i%2 == 1 {
			rels = append(rels, decode[relOut](t, raw))
		}
	}
	slices.SortStableFunc(rels, func(a, b relOut) int {
		if c := strings.Compare(b.CreatedAt, a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.StartNode.ID, b.StartNode.ID)
	})
	followers := make([]string, len(rels))
	for i, r := range rels {
		followers[i] = r.ID
	}

	// 23 articles in two categories, posted in one request: ties in a
	// millisecond come the last posted first (key: rev(posted)
	// desc(articleId)), so the newest-first order is the reverse of
	// posting order.
	fields = fields[:0]
	for i := range 23 {
		category := "a"
		if i%3 == 0 {
			category = "b"
		}
		fields = append(fields, fmt.Sprintf(`postArticle(authorId: "star", title: "post %d", body: "body %d", category: %q) { %s }`, i, i, category, articleFields))
	}
	var posts []articleOut
	for _, raw := range s.bulk(t, fields) {
		posts = append(posts, decode[articleOut](t, raw))
	}
	slices.Reverse(posts)
	slices.SortStableFunc(posts, func(a, b articleOut) int { return strings.Compare(b.PostedAt, a.PostedAt) })
	var all, inA []string
	for _, a := range posts {
		all = append(all, a.ID)
		if a.Category == "a" {
			inA = append(inA, a.ID)
		}
	}

	// 20 articles a few milliseconds apart, and a window of 14 of them.
	var timed []articleOut
	s.createNode(t, "clock", nil)
	for i := range 20 {
		timed = append(timed, s.postArticle(t, "clock", fmt.Sprintf("tick %d", i), "tock", "time"))
		time.Sleep(2 * time.Millisecond)
	}
	since, until := timed[3].PostedAt, timed[17].PostedAt // [since, until)
	var inWindow []string
	for i := len(timed) - 1; i >= 0; i-- {
		if a := timed[i]; a.PostedAt >= since && a.PostedAt < until {
			inWindow = append(inWindow, a.ID)
		}
	}

	const args = `first: $first, after: $after, last: $last, before: $before`
	const sel = `{ totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { id } } }`
	const vars = `($first: Int, $after: String, $last: Int, $before: String)`
	for _, c := range []connection{
		{"followers", `query` + vars + ` { node(id: "star") { c: relationships(type: "follows", direction: INCOMING, ` + args + `) ` + sel + ` } }`, followers, 0},
		{"articles", `query` + vars + ` { node(id: "star") { c: articles(` + args + `) ` + sel + ` } }`, all, 0},
		{"category", `query` + vars + ` { node(id: "star") { c: articles(category: "a", ` + args + `) ` + sel + ` } }`, inA, 0},
	} {
		t.Run(c.name, func(t *testing.T) { checkPaging(t, s, c, 7) })
	}
	window := connection{"window", `query` + vars + ` { node(id: "clock") { c: articles(postedAfter: ` + lit(since) + `, postedBefore: ` + lit(until) + `, ` +
		args + `) ` + sel + ` } }`, inWindow, len(timed)}
	t.Run(window.name, func(t *testing.T) { checkPaging(t, s, window, 4) })
}

// TestArticleTiesNewestFirst posts articles in one request, so that many
// share a millisecond, and pages through the author's articles and one
// category of them with first/after and last/before: newest first means
// the reverse of posting order, ties included (issue 12: they came
// T4 T5 T6 T7 T0 T1 T2 T3).
func TestArticleTiesNewestFirst(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	var posts []articleOut
	for attempt := 0; ; attempt++ {
		author := fmt.Sprintf("tie%d", attempt)
		s.createNode(t, author, nil)
		var fields []string
		for i := range 24 {
			category := "x"
			if i%3 == 0 {
				category = "y"
			}
			fields = append(fields, fmt.Sprintf(`postArticle(authorId: %q, title: "T%d", body: "b", category: %q) { %s }`,
				author, i, category, articleFields))
		}
		posts = posts[:0]
		for _, raw := range s.bulk(t, fields) {
			posts = append(posts, decode[articleOut](t, raw))
		}
		ties := 0
		for i := 1; i < len(posts); i++ {
			if posts[i].PostedAt == posts[i-1].PostedAt {
				ties++
			}
		}
		if ties >= 3 {
			break
		}
		if attempt == 4 {
			t.Fatalf("5 requests of 24 posts each, none with 3 posts sharing a millisecond with the one before: nothing to test")
		}
	}
	author := posts[0].Author.ID
	var all, inY []string
	for i := len(posts) - 1; i >= 0; i-- {
		all = append(all, posts[i].ID)
		if posts[i].Category == "y" {
			inY = append(inY, posts[i].ID)
		}
	}
	// The query, read as titles.
	var first10 struct {
		Node struct {
			Articles struct {
				Edges []struct {
					Node struct{ Title string } `json:"node"`
				} `json:"edges"`
			} `json:"articles"`
		} `json:"node"`
	}
	s.mustDo(t, `query($a: ID!) { node(id: $a) { articles(first: 10) { edges { node { title } } } } }`, map[string]any{"a": author}, &first10)
	var titles []string
	for _, e := range first10.Node.Articles.Edges {
		titles = append(titles, e.Node.Title)
	}
	if got, want := strings.Join(titles, " "), "T23 T22 T21 T20 T19 T18 T17 T16 T15 T14"; got != want {
		t.Fatalf("articles(first: 10) = %s, want %s", got, want)
	}

	const args = `first: $first, after: $after, last: $last, before: $before`
	const sel = `{ totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { id } } }`
	const vars = `($first: Int, $after: String, $last: Int, $before: String)`
	for _, c := range []connection{
		{"articles", `query` + vars + ` { node(id: ` + lit(author) + `) { c: articles(` + args + `) ` + sel + ` } }`, all, 0},
		{"category", `query` + vars + ` { node(id: ` + lit(author) + `) { c: articles(category: "y", ` + args + `) ` + sel + ` } }`, inY, 0},
	} {
		for _, size := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d", c.name, size), func(t *testing.T) { checkPaging(t, s, c, size) })
		}
	}
}

// TestPageLookaheadOnlyWhenAsked checks that a page reads the row past its
// end only when the query selects the flag that row decides (hasNextPage
// forward, hasPreviousPage backward), directly or through a fragment, and
// that the same connection asked both ways in one query answers both right.
func TestPageLookaheadOnlyWhenAsked(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	var fields []string
	fields = append(fields, `createNode(id: "hub") { id }`)
	for i := range 8 {
		id := fmt.Sprintf("out%d", i)
		fields = append(fields, fmt.Sprintf(`createNode(id: %q) { id }`, id),
			fmt.Sprintf(`createRelationship(startNodeId: "hub", type: "follows", endNodeId: %q) { id }`, id),
			fmt.Sprintf(`postArticle(authorId: "hub", title: "post %d", body: "words", category: "c") { id }`, i))
	}
	s.bulk(t, fields)

	// scanned sums the rows read by the query's scans of table.
	scanned := func(t *testing.T, query string, table string) (int, *gqlResponse) {
		t.Helper()
		r, rep := s.explained(t, query, nil)
		if len(r.Errors) > 0 {
			t.Fatalf("errors: %s", r.Body)
		}
		n := 0
		for _, w := range rep.Waves {
			for _, c := range w.Calls {
				if c.Op == "Scan" && c.Table == table {
					n += c.RowsRead
				}
			}
		}
		return n, r
	}
	for _, c := range []struct {
		name, query string
		table       string
		read        int
	}{
		{"relationships, no pageInfo", `{ node(id: "hub") { relationships(type: "follows", direction: OUTGOING, first: 3) { edges { cursor } } } }`, "graph", 3},
		{"relationships, hasNextPage", `{ node(id: "hub") { relationships(type: "follows", direction: OUTGOING, first: 3) { pageInfo { hasNextPage } edges { cursor } } } }`, "graph", 4},
		{"relationships, endCursor only", `{ node(id: "hub") { relationships(type: "follows", direction: OUTGOING, first: 3) { pageInfo { endCursor } } } }`, "graph", 3},
		{"relationships backward, hasNextPage only", `{ node(id: "hub") { relationships(type: "follows", direction: OUTGOING, last: 3) { pageInfo { hasNextPage } } } }`, "graph", 3},
		{"relationships backward, hasPreviousPage", `{ node(id: "hub") { relationships(type: "follows", direction: OUTGOING, last: 3) { pageInfo { hasPreviousPage } } } }`, "graph", 4},
		{"articles, no pageInfo", `{ node(id: "hub") { articles(first: 2) { edges { node { id } } } } }`, "articles", 2},
		{"articles, through a fragment", `{ node(id: "hub") { articles(first: 2) { ...more } } } fragment more on ArticleConnection { pageInfo { hasNextPage } }`, "articles", 3},
		{"articles, skipped", `{ node(id: "hub") { articles(first: 2) { pageInfo @skip(if: true) { hasNextPage } edges { cursor } } } }`, "articles", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, r := scanned(t, c.query, c.table); got != c.read {
				t.Errorf("the scans read %d rows of %s, want %d: %s", got, c.table, c.read, r.Body)
			}
		})
	}

	// Asked both ways in one query: each page answers as if asked alone.
	var got struct {
		Node struct {
			Bare  pagedConn `json:"bare"`
			Flags pagedConn `json:"flags"`
			Last  pagedConn `json:"last"`
		} `json:"node"`
	}
	s.mustDo(t, `{ node(id: "hub") {
		bare: articles(first: 8) { edges { cursor node { id } } }
		flags: articles(first: 7) { pageInfo { hasNextPage hasPreviousPage } edges { cursor node { id } } }
		last: articles(first: 8) { pageInfo { hasNextPage } edges { node { id } } } } }`, nil, &got)
	if len(got.Node.Bare.Edges) != 8 || len(got.Node.Flags.Edges) != 7 || len(got.Node.Last.Edges) != 8 {
		t.Fatalf("edges %d, %d, %d; want 8, 7, 8", len(got.Node.Bare.Edges), len(got.Node.Flags.Edges), len(got.Node.Last.Edges))
	}
	if !slices.Equal(got.Node.Bare.ids()[:7], got.Node.Flags.ids()) {
		t.Errorf("first 8 %v and first 7 %v disagree", got.Node.Bare.ids(), got.Node.Flags.ids())
	}
	if !got.Node.Flags.PageInfo.HasNextPage || got.Node.Flags.PageInfo.HasPreviousPage {
		t.Errorf("first 7 of 8: page info %+v, want a next page and no previous one", got.Node.Flags.PageInfo)
	}
	if got.Node.Last.PageInfo.HasNextPage {
		t.Errorf("first 8 of 8: hasNextPage true, want false")
	}
}
