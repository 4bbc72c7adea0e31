package store

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/hbasefault"
	"github.com/hbgraph/hbgraph/store/keys"
)

// A deletion without detach of a node from which nothing hangs deletes the
// row in the compare-and-set that confirms its mark (confirmMark). These
// tests cover that shorter way: its compare-and-set re-sent, a stray
// category row that sends it the longer way, and a post that lands
// between its scans and its compare-and-set.

// TestDeleteNodeAtOnceResent: the compare-and-set that confirms and
// deletes applies twice, as gohbase's re-send does (the caller gets the
// second answer, false). The deletion reads the row again, finds its own
// residue and answers success; a retry with its op answers success too;
// the node's degree rows go; the id can be created again.
func TestDeleteNodeAtOnceResent(t *testing.T) {
	s, fc, _ := faultedStores(t)
	mustNode(t, s, "a", nil)
	mustNode(t, s, "b", nil)
	rel := RelationshipKey{"a", "knows", "b"}
	if _, err := s.CreateRelationship(bg, rel, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRelationship(bg, rel); err != nil {
		t.Fatal(err)
	}
	degreeRows := degreeRowsOf("a")
	if degrees, err := s.scan(bg, degreeRows); err != nil || len(degrees) != 1 {
		t.Fatalf("a's degree rows before its deletion: %d, %v; want its knows row, at zero", len(degrees), err)
	}
	// The deletion's compare-and-sets of a: its tentative mark, then the
	// one that confirms it and deletes the row.
	fc.Add(hbasefault.Rule{Kind: hbasefault.CheckAndMutate, Nth: 2, Mode: hbasefault.ApplyTwice,
		Match: func(_ string, row []byte) bool { return bytes.Equal(row, keys.Node("a")) }})
	op := WithOp(bg, DeriveOpID("alice", "key", "0", "deleteNode", "a"))
	if err := s.DeleteNode(op, "a", false); err != nil {
		t.Fatalf("the deletion answered %v, want success", err)
	}
	fc.Clear()
	if n, err := s.getNode(bg, "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a reads %v, %v", n, err)
	}
	if err := s.DeleteNode(op, "a", false); err != nil {
		t.Errorf("the retry answered %v, want success", err)
	}
	if degrees, err := s.scan(bg, degreeRows); err != nil || len(degrees) != 0 {
		t.Errorf("a's degree rows after its deletion: %d, %v", len(degrees), err)
	}
	checkGraphInvariants(t, s)
	if _, err := s.CreateNode(bg, "a", "", nil); err != nil {
		t.Errorf("a created again: %v", err)
	}
}

// TestDeleteNodeWithAStrayCategoryRow: a category row a crash left
// without its article keeps no node from its deletion without detach,
// which goes the longer way and deletes it.
func TestDeleteNodeWithAStrayCategoryRow(t *testing.T) {
	s := newTestStore(t)
	mustArticleAuthor(t, s, "ann")
	a := mustPostArticle(t, s, "ann", "a title", "some words", "news")
	k, row, err := parseArticleID(a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.deleteRow(bg, keys.TableArticles, row, s.nowMs()); err != nil {
		t.Fatal(err) // the timeline row: its category row is a stray
	}
	articles, strays, err := s.probeAuthorRows(bg, "ann")
	if err != nil || articles || !strays {
		t.Fatalf("probeAuthorRows = %v, %v, %v; want a stray", articles, strays, err)
	}
	if err := s.DeleteNode(bg, "ann", false); err != nil {
		t.Fatalf("the deletion answered %v, want success", err)
	}
	crow, err := categoryRow(k, "news")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := s.get(bg, keys.TableArticles, keys.FamilyArticles, crow); err != nil || len(c) != 0 {
		t.Errorf("the stray category row after the deletion: %v, %v", c, err)
	}
	if articles, strays, err := s.probeAuthorRows(bg, "ann"); err != nil || articles || strays {
		t.Errorf("probeAuthorRows after the deletion = %v, %v, %v", articles, strays, err)
	}
}

// casHookClient calls before and after around each compare-and-set.
type casHookClient struct {
	gohbase.Client
	before func(*hrpc.CheckAndMutate)
	after  func(*hrpc.CheckAndMutate, bool)
}

func (c *casHookClient) CheckAndMutate(cam *hrpc.CheckAndMutate) (bool, error) {
	if c.before != nil {
		c.before(cam)
	}
	ok, err := c.Client.CheckAndMutate(cam)
	if c.after != nil {
		c.after(cam, ok)
	}
	return ok, err
}

// TestDeleteNodeAtOnceBesideAPost: a post under the node writes its
// article after the deletion's scans and before the compare-and-set that
// deletes the row, and reads the author again after it. The post finds
// its author gone and takes its article back; the deletion answers
// success; nothing of the article is left.
func TestDeleteNodeAtOnceBesideAPost(t *testing.T) {
	clk := newFakeClock()
	clk.step = 1
	engine := openTestEngine(t, clk)
	hooks := &casHookClient{Client: engine}
	sd, err := New(hooks, Options{Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := New(engine, Options{Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	mustArticleAuthor(t, sp, "ann")
	written, recheck := make(chan struct{}), make(chan struct{})
	sp.fault = func(p string) error {
		if p == pointArticleRecheck {
			close(written)
			<-recheck
		}
		return nil
	}
	posted := make(chan error, 1)
	casOnAnn := 0
	hooks.before = func(cam *hrpc.CheckAndMutate) {
		if !bytes.Equal(cam.Key(), keys.Node("ann")) {
			return
		}
		if casOnAnn++; casOnAnn != 2 {
			return // 1: the tentative mark
		}
		// 2: the one that deletes: the post writes its article first.
		go func() {
			_, err := sp.PostArticle(bg, "ann", "a title", "some words", "news")
			posted <- err
		}()
		<-written
	}
	hooks.after = func(cam *hrpc.CheckAndMutate, _ bool) {
		if bytes.Equal(cam.Key(), keys.Node("ann")) && casOnAnn == 2 {
			close(recheck)
		}
	}
	derr := sd.DeleteNode(bg, "ann", false)
	hooks.before, hooks.after = nil, nil
	if casOnAnn < 2 {
		t.Fatalf("the deletion made %d compare-and-sets on ann (answered %v)", casOnAnn, derr)
	}
	perr := <-posted
	if derr != nil {
		t.Fatalf("the deletion answered %v, want success", derr)
	}
	if !errors.Is(perr, ErrNotFound) {
		t.Errorf("the post answered %v, want NOT_FOUND: its author was deleted meanwhile", perr)
	}
	if articles, strays, err := sp.probeAuthorRows(bg, "ann"); err != nil || articles || strays {
		t.Errorf("ann's rows after both: articles %v, strays %v, %v", articles, strays, err)
	}
	checkGraphInvariants(t, sp)
	repairTwice(t, sp)
}
