package store

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/store/keys"
)

// exportFixture fills s with more nodes than a page of scanAll holds and
// more articles than a page of article rows, with owners, relationships,
// an updated article and a deleted node, and returns what the scans must
// find: nodes by id, relationships by id, articles by author/seq.
func exportFixture(t *testing.T, s *Store) (nodes map[string]NodeRecord, rels map[string]RelationshipRecord, arts map[string]ArticleRecord) {
	t.Helper()
	ctx := t.Context()
	nodes, rels, arts = map[string]NodeRecord{}, map[string]RelationshipRecord{}, map[string]ArticleRecord{}
	const n = defaultChunkRows + 88
	for i := range n {
		id := fmt.Sprintf("n%03d", i)
		owner := ""
		if i%3 == 0 {
			owner = "sub-" + id
		}
		c, u := int64(1000+i), int64(2000+i)
		if _, err := s.ImportNode(ctx, id, owner, Properties{"i": i, "name": "<" + id + ">"}, time.UnixMilli(c), time.UnixMilli(u)); err != nil {
			t.Fatal(err)
		}
		nodes[id] = NodeRecord{ID: id, Owner: owner, Properties: []byte(fmt.Sprintf(`{"i":%d,"name":"\u003c%s\u003e"}`, i, id)), Created: c, Updated: u}
	}
	var batch []RelationshipImport
	for i := range 200 {
		k := RelationshipKey{Start: fmt.Sprintf("n%03d", i), Type: "follow", End: fmt.Sprintf("n%03d", (i*7+1)%n)}
		batch = append(batch, RelationshipImport{Key: k, Properties: Properties{"w": i}, Created: time.UnixMilli(int64(3000 + i)), Updated: time.UnixMilli(int64(4000 + i))})
		rels[k.ID()] = RelationshipRecord{Key: k, Properties: []byte(fmt.Sprintf(`{"w":%d}`, i)), Created: int64(3000 + i), Updated: int64(4000 + i)}
	}
	if out, err := s.ImportRelationships(ctx, batch); err != nil || out[0].Err != nil {
		t.Fatal(err, out[0].Err)
	}
	var articles []ArticleImport
	for i := range articleChunkRows + 9 {
		a := ArticleImport{Author: fmt.Sprintf("n%03d", i%5), Seq: uint64(i + 1), Title: fmt.Sprintf("t%d", i),
			Body: "some words", Category: []string{"tech", "life"}[i%2], Posted: time.UnixMilli(int64(5000 + i/3))}
		articles = append(articles, a)
		arts[fmt.Sprintf("%s/%d", a.Author, a.Seq)] = ArticleRecord{Author: a.Author, Seq: a.Seq, Title: a.Title,
			Body: a.Body, Category: a.Category, Posted: a.Posted.UnixMilli(), Updated: a.Posted.UnixMilli()}
	}
	// One imported with a later update time, as export writes it back.
	articles[0].Updated = time.UnixMilli(9000)
	first := arts["n000/1"]
	first.Updated = 9000
	arts["n000/1"] = first
	if out, err := s.ImportArticles(ctx, articles); err != nil || out[0].Err != nil {
		t.Fatal(err, out[0].Err)
	}
	// A node deleted (with its relationships) is in no scan.
	if err := s.DeleteNode(ctx, "n599", true); err != nil && !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	delete(nodes, "n599")
	for id, r := range rels {
		if r.Key.Start == "n599" || r.Key.End == "n599" {
			delete(rels, id)
		}
	}
	return nodes, rels, arts
}

// TestScansYieldEveryRecordOnceInKeyOrder: the export scans return every
// node, relationship and article as stored, each once, in row key order,
// across pages, and none of the index, counter or word count rows.
func TestScansYieldEveryRecordOnceInKeyOrder(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	wantNodes, wantRels, wantArts := exportFixture(t, s)

	var last []byte
	inOrder := func(what string, row []byte) {
		t.Helper()
		if last != nil && bytes.Compare(last, row) >= 0 {
			t.Fatalf("%s: row %x after %x: not in key order", what, row, last)
		}
		last = row
	}
	got := map[string]NodeRecord{}
	err := s.ScanNodes(ctx, func(n NodeRecord) error {
		inOrder("nodes", keys.Node(n.ID))
		if _, dup := got[n.ID]; dup {
			t.Fatalf("node %s twice", n.ID)
		}
		got[n.ID] = n
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(wantNodes) {
		t.Fatalf("%d nodes, want %d", len(got), len(wantNodes))
	}
	for id, want := range wantNodes {
		if g := got[id]; g.ID != want.ID || g.Owner != want.Owner || !bytes.Equal(g.Properties, want.Properties) ||
			g.Created != want.Created || g.Updated != want.Updated {
			t.Fatalf("node %s: %+v (%s), want %+v (%s)", id, g, g.Properties, want, want.Properties)
		}
	}

	last = nil
	gotRels := map[string]RelationshipRecord{}
	gone, err := s.ScanRelationships(ctx, func(r RelationshipRecord) error {
		inOrder("relationships", r.Key.row())
		gotRels[r.Key.ID()] = r
		return nil
	})
	if err != nil || gone != 0 {
		t.Fatal(gone, err)
	}
	if len(gotRels) != len(wantRels) {
		t.Fatalf("%d relationships, want %d", len(gotRels), len(wantRels))
	}
	for id, want := range wantRels {
		if g := gotRels[id]; g.Key != want.Key || !bytes.Equal(g.Properties, want.Properties) ||
			g.Created != want.Created || g.Updated != want.Updated {
			t.Fatalf("relationship %s: %+v, want %+v", id, g, want)
		}
	}

	last = nil
	gotArts := map[string]ArticleRecord{}
	gone, err = s.ScanArticles(ctx, func(a ArticleRecord) error {
		row, err := keys.Article{Author: a.Author, Posted: a.Posted, Seq: a.Seq}.Key()
		if err != nil {
			t.Fatal(err)
		}
		inOrder("articles", row)
		gotArts[fmt.Sprintf("%s/%d", a.Author, a.Seq)] = a
		return nil
	})
	if err != nil || gone != 0 {
		t.Fatal(gone, err)
	}
	if len(gotArts) != len(wantArts) {
		t.Fatalf("%d articles, want %d", len(gotArts), len(wantArts))
	}
	for id, want := range wantArts {
		if g := gotArts[id]; g != want {
			t.Fatalf("article %s: %+v, want %+v", id, g, want)
		}
	}
}

// TestScansStopAtTheCallersError: fn's error ends a scan and is returned.
func TestScansStopAtTheCallersError(t *testing.T) {
	s := newTestStore(t)
	exportFixture(t, s)
	stop := errors.New("stop")
	for name, scan := range map[string]func(n *int) error{
		"nodes": func(n *int) error {
			return s.ScanNodes(t.Context(), func(NodeRecord) error { *n++; return stop })
		},
		"relationships": func(n *int) error {
			_, err := s.ScanRelationships(t.Context(), func(RelationshipRecord) error { *n++; return stop })
			return err
		},
		"articles": func(n *int) error {
			_, err := s.ScanArticles(t.Context(), func(ArticleRecord) error { *n++; return stop })
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			var n int
			if err := scan(&n); !errors.Is(err, stop) || n != 1 {
				t.Fatalf("scan returned %v after %d calls; want stop after 1", err, n)
			}
		})
	}
}

// TestScanArticlesRefusesLayout1WithoutWriting: a table of article layout 1
// is refused (its rows would not decode) and nothing is written, not even
// the layout row CheckArticleLayout records in an empty table; an empty
// table yields nothing and stays empty.
func TestScanArticlesRefusesLayout1WithoutWriting(t *testing.T) {
	clk := newFakeClock()
	old := newTestStoreWithClock(t, clk)
	postTies(t, old, clk, "tie")
	s := newTestStore(t)
	copyAsLayout1(t, old, s)
	before := storedRows(t, s)
	_, err := s.ScanArticles(t.Context(), func(ArticleRecord) error { return nil })
	if !errors.Is(err, ErrArticleLayout) {
		t.Fatalf("scan of a layout 1 table: %v; want ErrArticleLayout", err)
	}
	if after := storedRows(t, s); len(after) != len(before) {
		t.Fatalf("the scan wrote: %d rows before, %d after", len(before), len(after))
	}

	empty := newTestStore(t)
	n := 0
	if _, err := empty.ScanArticles(t.Context(), func(ArticleRecord) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("empty store: %d articles, %v", n, err)
	}
	if rows := storedRows(t, empty); len(rows) != 0 {
		t.Fatalf("the scan of an empty store wrote %d rows", len(rows))
	}
}

// TestScansLeaveOutWhatAnUnfinishedDeletionLeaves: a node whose deletion
// started and was cut short (its x cell set, its relationships and
// articles still there) reads as gone, so the scans leave it out, and its
// relationships and articles, counting them; what they hand on, an import
// takes.
func TestScansLeaveOutWhatAnUnfinishedDeletionLeaves(t *testing.T) {
	s := newTestStore(t)
	ctx := t.Context()
	wantNodes, wantRels, wantArts := exportFixture(t, s)
	const victim = "n001" // n001 -> n008, n000 -> n001, and articles by n001
	var relsOf, artsOf int
	for _, r := range wantRels {
		if r.Key.Start == victim || r.Key.End == victim {
			relsOf++
		}
	}
	for _, a := range wantArts {
		if a.Author == victim {
			artsOf++
		}
	}
	if relsOf == 0 || artsOf == 0 {
		t.Fatalf("the fixture gives %s %d relationships and %d articles", victim, relsOf, artsOf)
	}
	if err := s.put(ctx, keys.TableGraph, keys.FamilyGraph, keys.Node(victim), cells{keys.QualDeleting: encodeMs(testClockStart)}, s.nowMs()); err != nil {
		t.Fatal(err)
	}
	nodes := 0
	if err := s.ScanNodes(ctx, func(n NodeRecord) error {
		if n.ID == victim {
			t.Errorf("node %s, being deleted, was scanned", victim)
		}
		nodes++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	rels := 0
	gone, err := s.ScanRelationships(ctx, func(r RelationshipRecord) error { rels++; return nil })
	if err != nil || gone != relsOf || rels != len(wantRels)-relsOf {
		t.Fatalf("relationships: %d scanned, %d gone, %v; want %d and %d", rels, gone, err, len(wantRels)-relsOf, relsOf)
	}
	arts := 0
	gone, err = s.ScanArticles(ctx, func(a ArticleRecord) error { arts++; return nil })
	if err != nil || gone != artsOf || arts != len(wantArts)-artsOf {
		t.Fatalf("articles: %d scanned, %d gone, %v; want %d and %d", arts, gone, err, len(wantArts)-artsOf, artsOf)
	}
	if nodes != len(wantNodes)-1 {
		t.Fatalf("%d nodes scanned, want %d", nodes, len(wantNodes)-1)
	}
}
