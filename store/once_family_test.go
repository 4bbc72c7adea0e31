package store

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"github.com/tsuna/gohbase/region"

	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/keys"
)

// familyRecorder is a client that records the families each Get and Scan
// asks for (nil: the whole row).
type familyRecorder struct {
	gohbase.Client
	mu    sync.Mutex
	reads []map[string][]string // Gets' and Scans'
	scans []map[string][]string // Scans' alone
}

func (r *familyRecorder) note(fams map[string][]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads = append(r.reads, fams)
}

func (r *familyRecorder) take() []map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reads
	r.reads, r.scans = nil, nil
	return out
}

func (r *familyRecorder) takeScans() []map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.scans
	r.reads, r.scans = nil, nil
	return out
}

// families are the families columns names (nil: none, the whole row).
func families(cols []*pb.Column) map[string][]string {
	if len(cols) == 0 {
		return nil
	}
	m := map[string][]string{}
	for _, c := range cols {
		m[string(c.Family)] = nil
	}
	return m
}

// noteGet records g's families. Its request needs a region; any will do
// for its columns (the engine sets its own).
func (r *familyRecorder) noteGet(g *hrpc.Get) {
	g.SetRegion(region.NewInfo(0, nil, g.Table(), g.Table(), nil, nil))
	r.note(families(g.ToProto().(*pb.GetRequest).GetGet().GetColumn()))
}

func (r *familyRecorder) Get(g *hrpc.Get) (*hrpc.Result, error) {
	r.noteGet(g)
	return r.Client.Get(g)
}

func (r *familyRecorder) Scan(sc *hrpc.Scan) hrpc.Scanner {
	sc.SetRegion(region.NewInfo(0, nil, sc.Table(), sc.Table(), nil, nil))
	fams := families(sc.ToProto().(*pb.ScanRequest).GetScan().GetColumn())
	r.note(fams)
	r.mu.Lock()
	r.scans = append(r.scans, fams)
	r.mu.Unlock()
	return r.Client.Scan(sc)
}

func (r *familyRecorder) SendBatch(ctx context.Context, batch []hrpc.Call) ([]hrpc.RPCResult, bool) {
	for _, c := range batch {
		if g, ok := c.(*hrpc.Get); ok {
			r.noteGet(g)
		}
	}
	return r.Client.SendBatch(ctx, batch)
}

// onceFamilyFixture writes a node (created and updated with ops), a
// relationship and an article (posted and updated with ops).
func onceFamilyFixture(t *testing.T, s *Store) (article Article) {
	t.Helper()
	for _, id := range []string{"ann", "bob"} {
		if _, err := s.CreateNode(WithOp(bg, DeriveOpID("create", id)), id, "", Properties{"k": 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.UpdateNodeProperties(WithOp(bg, DeriveOpID("update")), "ann", Properties{"k": 2}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateRelationship(WithOp(bg, DeriveOpID("follow")), RelationshipKey{"ann", "follows", "bob"}, nil); err != nil {
		t.Fatal(err)
	}
	a, err := s.PostArticle(WithOp(bg, DeriveOpID("post")), "bob", "t", "cats", "pets")
	if err != nil {
		t.Fatal(err)
	}
	body := "cats and dogs"
	if _, err := s.UpdateArticle(WithOp(bg, DeriveOpID("edit")), a.ID, nil, &body, nil); err != nil {
		t.Fatal(err)
	}
	return a
}

// The write bookkeeping is kept in keys.FamilyOnce, and a request's pages
// ask for the data family alone, so they never carry it.
func TestRequestReadsLeaveTheBookkeeping(t *testing.T) {
	rec := &familyRecorder{Client: openTestEngine(t, nil)}
	s, err := New(rec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := onceFamilyFixture(t, s)

	// Where the cells are: every once column in FamilyOnce, none in the
	// data family.
	once := 0
	for _, row := range []struct{ table, key string }{
		{keys.TableGraph, string(keys.NodeRow("ann"))},
		{keys.TableGraph, string(RelationshipKey{"ann", "follows", "bob"}.row())},
		{keys.TableArticles, mustArticleRow(t, a.ID)},
	} {
		g, err := hrpc.NewGetStr(bg, row.table, row.key)
		if err != nil {
			t.Fatal(err)
		}
		res, err := rec.Client.Get(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Cells {
			q := string(c.Qualifier)
			if want := keys.OnceColumn(row.table, q); want != (string(c.Family) == keys.FamilyOnce) {
				t.Errorf("%s row %x: %s:%s in the wrong family", row.table, row.key, c.Family, q)
			}
			if keys.OnceColumn(row.table, q) {
				once++
			}
		}
	}
	if once < 5 { // xc, xu of ann; xc of the relationship; xc, xo of the article
		t.Fatalf("%d once cells written, want at least 5", once)
	}

	// A page reads the data family alone; a Get (Read) reads its one row
	// whole, which costs less than naming a family (see Read).
	rec.take()
	if _, err := s.Articles(bg, "bob", ArticleQuery{}, PageRequest{Size: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AdjacentIndex(bg, "ann", "follows", Outgoing, PageRequest{Size: 5}); err != nil {
		t.Fatal(err)
	}
	scans := rec.takeScans()
	if len(scans) != 2 {
		t.Fatalf("%d scans recorded, want the 2 pages", len(scans))
	}
	for _, fams := range scans {
		if _, ok := fams[keys.FamilyOnce]; ok || len(fams) != 1 {
			t.Errorf("a page asked for families %v, want its data family alone", fams)
		}
	}

	// A writer reads whole rows: an update retried with its op answers
	// success, which it can tell only from FamilyOnce.
	if _, err := s.UpdateNodeProperties(WithOp(bg, DeriveOpID("update")), "ann", Properties{"k": 2}, nil); err != nil {
		t.Fatal(err)
	}
	whole := false
	for _, fams := range rec.take() {
		whole = whole || fams == nil
	}
	if !whole {
		t.Error("an update read no whole row")
	}
}

// Rows written before keys.FamilyOnce hold their once columns in the data
// family: writes still recognise their own effect from them, and a later
// write's FamilyOnce cell wins over the one left behind.
func TestOnceColumnsOfAnOlderLayout(t *testing.T) {
	db := openTestEngine(t, nil)
	s, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := onceFamilyFixture(t, s)
	rows := []struct{ table, data, key string }{
		{keys.TableGraph, keys.FamilyGraph, string(keys.NodeRow("ann"))},
		{keys.TableGraph, keys.FamilyGraph, string(RelationshipKey{"ann", "follows", "bob"}.row())},
		{keys.TableArticles, keys.FamilyArticles, mustArticleRow(t, a.ID)},
	}
	// Back to the older layout: FamilyOnce's cells moved into the data
	// family, at their timestamps.
	for _, row := range rows {
		g, err := hrpc.NewGetStr(bg, row.table, row.key, hrpc.Families(map[string][]string{keys.FamilyOnce: nil}))
		if err != nil {
			t.Fatal(err)
		}
		res, err := db.Get(g)
		if err != nil || len(res.Cells) == 0 {
			t.Fatalf("%s row %x: %v, %d once cells", row.table, row.key, err, len(res.Cells))
		}
		for _, c := range res.Cells {
			p, err := hrpc.NewPutStr(bg, row.table, row.key, map[string]map[string][]byte{row.data: {string(c.Qualifier): c.Value}},
				hrpc.TimestampUint64(*c.Timestamp))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Put(p); err != nil {
				t.Fatal(err)
			}
		}
		d, err := hrpc.NewDelStr(bg, row.table, row.key, map[string]map[string][]byte{keys.FamilyOnce: nil})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Delete(d); err != nil {
			t.Fatal(err)
		}
	}
	// The family delete markers are stamped now: a write in the same
	// millisecond would be hidden behind them (an older layout has no
	// such markers). Writes after it start on the next one.
	time.Sleep(2 * time.Millisecond)

	// Retries recognise their own writes.
	if _, err := s.CreateNode(WithOp(bg, DeriveOpID("create", "ann")), "ann", "", Properties{"k": 1}); err != nil {
		t.Fatalf("a create retried over the older layout: %v, want success", err)
	}
	if _, err := s.CreateRelationship(WithOp(bg, DeriveOpID("follow")), RelationshipKey{"ann", "follows", "bob"}, nil); err != nil {
		t.Fatalf("a relationship create retried over the older layout: %v, want success", err)
	}
	again, err := s.PostArticle(WithOp(bg, DeriveOpID("post")), "bob", "t", "cats", "pets")
	if err != nil || again.ID != a.ID {
		t.Fatalf("a post retried over the older layout: %+v, %v; want article %s", again, err, a.ID)
	}
	body := "cats and dogs"
	edit := WithOp(bg, DeriveOpID("edit"))
	if _, err := s.UpdateArticle(edit, a.ID, nil, &body, nil); err != nil {
		t.Fatal(err)
	}
	checkArticleWordCounts(t, s, "bob") // counted once: the retry applied nothing

	// New updates write FamilyOnce; the older cell stays behind it, and
	// every update is still recognised: the newest ops are FamilyOnce's.
	birds, fish := "birds", "fish"
	edit2 := WithOp(bg, DeriveOpID("edit2"))
	if _, err := s.UpdateArticle(edit2, a.ID, nil, &birds, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateArticle(WithOp(bg, DeriveOpID("edit3")), a.ID, nil, &fish, nil); err != nil {
		t.Fatal(err)
	}
	for _, retry := range []struct {
		ctx  context.Context
		body *string
	}{{edit, &body}, {edit2, &birds}} {
		got, err := s.UpdateArticle(retry.ctx, a.ID, nil, retry.body, nil)
		if err != nil || got.Body != "fish" {
			t.Fatalf("an update retried after the newest: %+v, %v; want success, body fish", got, err)
		}
	}
	// The same for a node's updates.
	upd2 := WithOp(bg, DeriveOpID("update2"))
	if _, err := s.UpdateNodeProperties(upd2, "ann", Properties{"k": 3}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateNodeProperties(bg, "ann", Properties{"k": 4}, nil); err != nil {
		t.Fatal(err)
	}
	n, err := s.UpdateNodeProperties(upd2, "ann", Properties{"k": 3}, nil)
	if err != nil || string(n.Properties.JSON()) != `{"k":4}` {
		t.Fatalf("a node update retried after the newest: %+v, %v; want success, k 4", n, err)
	}
	checkArticleWordCounts(t, s, "bob")
	checkArticleInvariants(t, s)
	if report, err := s.Repair(bg); err != nil || len(report) != 0 {
		t.Fatalf("repair: %v, %v; want nothing to fix", report, err)
	}
}

func mustArticleRow(t *testing.T, id string) string {
	t.Helper()
	g, err := ArticleGet(id)
	if err != nil {
		t.Fatal(err)
	}
	return g.row
}

// A cluster's tables made by an older hbgraph lack keys.FamilyOnce: the
// store says which and how to add it, before any write fails on it.
func TestCheckFamiliesNamesTheMissingOne(t *testing.T) {
	old := map[string][]string{}
	for table, fams := range keys.Tables() {
		old[table] = fams[:1]
	}
	db, err := embedded.Open(embedded.Options{Tables: old, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	s, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = s.CheckFamilies(bg)
	if !errors.Is(err, ErrMissingFamily) || !strings.Contains(err.Error(), "alter 'articles', {NAME => 'x'") {
		t.Fatalf("CheckFamilies on tables without %s: %v, want ErrMissingFamily naming the alter command", keys.FamilyOnce, err)
	}
	if err := newTestStore(t).CheckFamilies(bg); err != nil {
		t.Fatalf("CheckFamilies on hbgraph's tables: %v", err)
	}
}
