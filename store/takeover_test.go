package store

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hbgraph/hbgraph/store/keys"
)

// The tests of this file check that a node's deletion takes everything
// that hangs from it (relationships, articles, counters, word counts), so
// that a later node of the same id, another subject's, never sees or acts
// on an earlier one's data: after a clean deletion, after a crash at every
// point of it (then a re-run or Repair), after a crash of a write racing
// it, and when a write races it.

// takeoverWorld is what alice's node "n" has before its deletion.
type takeoverWorld struct {
	articles []Article
	rels     []RelationshipKey
}

// newTakeoverWorld: alice's "n" with two articles and relationships both
// ways and to itself; carol's "x", whose relationship to "n" is hers.
func newTakeoverWorld(t *testing.T, s *Store) takeoverWorld {
	t.Helper()
	if _, err := s.CreateNode(bg, "n", "alice", Properties{"who": "alice"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateNode(bg, "x", "carol", nil); err != nil {
		t.Fatal(err)
	}
	w := takeoverWorld{}
	for _, k := range []RelationshipKey{{"n", "follows", "x"}, {"x", "follows", "n"}, {"n", "self", "n"}} {
		mustRel(t, s, k.Start, k.Type, k.End, Properties{"by": k.Start})
		w.rels = append(w.rels, k)
	}
	w.articles = append(w.articles,
		mustPostArticle(t, s, "n", "secret plans", "alice alone knows", "diary"),
		mustPostArticle(t, s, "n", "recipes", "alice bakes bread", "food"))
	return w
}

// checkNothingLeft checks that node "n", created again by bob, sees
// nothing of alice's: no article, relationship, word, and that her
// article ids and relationships cannot be acted on. Counters are checked
// as exact says: a crash between an article's or a relationship's writes
// leaves them off by one until Repair (countsOfN: only the new n's).
func checkNothingLeft(t *testing.T, s *Store, w takeoverWorld, exact countCheck) {
	t.Helper()
	page, err := s.Articles(bg, "n", ArticleQuery{}, PageRequest{Size: 10})
	if err != nil || len(page.Articles) != 0 {
		t.Errorf("articles of the new n: %+v, %v", page.Articles, err)
	}
	for _, c := range []string{"diary", "food"} {
		page, err := s.Articles(bg, "n", ArticleQuery{Category: c}, PageRequest{Size: 10})
		if err != nil || len(page.Articles) != 0 {
			t.Errorf("articles of the new n in %s: %+v, %v", c, page.Articles, err)
		}
	}
	if words, err := s.TopWords(bg, "n", 10); err != nil || len(words) != 0 {
		t.Errorf("word counts of the new n: %v, %v", words, err)
	}
	for _, a := range w.articles {
		if _, err := s.getArticle(bg, a.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("alice's article %q: %v, want not found", a.Title, err)
		}
		title := "bob's now"
		if _, err := s.UpdateArticle(bg, a.ID, &title, nil, nil); !errors.Is(err, ErrNotFound) {
			t.Errorf("update alice's article %q: %v, want not found", a.Title, err)
		}
		if err := s.DeleteArticle(bg, a.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("delete alice's article %q: %v, want not found", a.Title, err)
		}
	}
	for _, k := range w.rels {
		g, start, end, _ := k.Gets()
		rows, err := s.Read(bg, []Get{g, start, end})
		if err != nil {
			t.Fatal(err)
		}
		if rel, err := rows[0].Relationship(k, rows[1], rows[2]); rel != nil || err != nil {
			t.Errorf("alice's relationship %v: %+v, %v", k, rel, err)
		}
		if _, err := s.UpdateRelationshipProperties(bg, k, Properties{"by": "bob"}, nil); !errors.Is(err, ErrNotFound) {
			t.Errorf("update alice's relationship %v: %v, want not found", k, err)
		}
	}
	for _, id := range []string{"n", "x"} {
		for _, typ := range []string{"follows", "self"} {
			for _, dir := range []Direction{Outgoing, Incoming} {
				page, err := s.Adjacent(bg, id, typ, dir, PageRequest{Size: 10})
				if err != nil || len(page.Relationships) != 0 {
					t.Errorf("%s %s %v: %+v, %v", id, typ, dir, page.Relationships, err)
				}
				if exact == noCounts || (exact == countsOfN && id != "n") {
					continue
				}
				if d, err := s.Degrees(bg, []DegreeKey{{id, dir, typ}}); err != nil || d[0] != 0 {
					t.Errorf("degree of %s %s %v: %v, %v", id, typ, dir, d, err)
				}
			}
		}
	}
	if exact != noCounts {
		for _, c := range []string{"", "diary", "food"} {
			if n, err := s.CountArticles(bg, []ArticleCountKey{{"n", c}}); err != nil || n[0] != 0 {
				t.Errorf("article count of the new n in %q: %v, %v", c, n, err)
			}
		}
	}
}

// countCheck says which counters checkNothingLeft expects exact.
type countCheck int

const (
	noCounts countCheck = iota
	countsOfN
	allCounts
)

// recreateAsBob creates "n" again, as bob.
func recreateAsBob(t *testing.T, s *Store) {
	t.Helper()
	n, err := s.CreateNode(bg, "n", "bob", nil)
	if err != nil {
		t.Fatalf("bob creates n: %v", err)
	}
	if n.Owner != "bob" {
		t.Fatalf("owner %q", n.Owner)
	}
}

// checkNoRowNames fails if a graph or articles row or a word count row
// names node id (a deleted node whose id nobody took again).
func checkNoRowNames(t *testing.T, s *Store, id string) {
	t.Helper()
	g, err := s.scanGraph(bg)
	if err != nil {
		t.Fatal(err)
	}
	if g.nodes[id] {
		t.Errorf("node %q still exists", id)
	}
	for _, rel := range g.relationships {
		if rel.key.Start == id || rel.key.End == id {
			t.Errorf("relationship %v left", rel.key)
		}
	}
	for key := range g.index {
		a, _ := keys.DecodeAdjacency([]byte(key))
		if a.Node == id || a.Other == id {
			t.Errorf("index row %+v left", a)
		}
	}
	if has, err := s.hasArticles(bg, id, 1<<62); err != nil || has {
		t.Errorf("articles of %q left: %v", id, err)
	}
	words := storedWordCounts(t, s, id)
	maps.DeleteFunc(words, func(_ string, n int64) bool { return n == 0 }) // left by design, see wordcounts.go
	if len(words) != 0 {
		t.Errorf("word counts of %q left: %v", id, words)
	}
}

func TestDeleteNodeTakesArticles(t *testing.T) {
	s := newTestStore(t)
	w := newTakeoverWorld(t, s)
	mustArticleAuthor(t, s, "m")
	kept := mustPostArticle(t, s, "m", "kept", "m keeps this", "c")
	before := storedRows(t, s)
	for _, id := range []string{"n", "m"} {
		if err := s.DeleteNode(bg, id, false); !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "detach") {
			t.Fatalf("delete %s without detach: %v, want a conflict that says detach", id, err)
		}
	}
	if after := storedRows(t, s); len(after) != len(before) {
		t.Fatalf("a refused delete changed rows: %d, then %d", len(before), len(after))
	}
	if _, err := s.getArticle(bg, kept.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteNode(bg, "n", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.getNode(bg, "x"); err != nil {
		t.Fatalf("carol's x: %v", err)
	}
	recreateAsBob(t, s)
	checkNothingLeft(t, s, w, allCounts)
	checkGraphInvariants(t, s)
	checkArticleInvariants(t, s)
	repairTwice(t, s)
	checkNothingLeft(t, s, w, allCounts)
}

// TestDeleteNodeCrashAtEveryPoint crashes DeleteNode at each of its fault
// points; until the deletion is finished the node reads as gone and its id
// cannot be taken; a re-run and Repair each finish it.
func TestDeleteNodeCrashAtEveryPoint(t *testing.T) {
	probe := newTestStore(t)
	newTakeoverWorld(t, probe)
	points := faultPoints(t, probe, func() error { return probe.DeleteNode(bg, "n", true) })
	for _, finish := range []string{"rerun", "repair"} {
		for i, point := range points {
			t.Run(fmt.Sprintf("%s/%d-%s", finish, i, point), func(t *testing.T) {
				s := newTestStore(t)
				w := newTakeoverWorld(t, s)
				crashAt(s, i)
				if err := s.DeleteNode(bg, "n", true); !errors.Is(err, errCrash) {
					t.Fatalf("did not crash: %v", err)
				}
				s.fault = nil
				if point != pointNodeMark && point != pointNodeDegrees {
					if _, err := s.getNode(bg, "n"); !errors.Is(err, ErrNotFound) {
						t.Fatalf("n being deleted reads as %v", err)
					}
					if _, err := s.CreateNode(bg, "n", "bob", nil); !errors.Is(err, ErrConflict) {
						t.Fatalf("create n while it is being deleted: %v, want a conflict", err)
					}
					if _, err := s.PostArticle(bg, "n", "t", "b", "c"); !errors.Is(err, ErrNotFound) {
						t.Fatalf("post under n being deleted: %v", err)
					}
					if _, err := s.CreateRelationship(bg, RelationshipKey{"x", "late", "n"}, nil); !errors.Is(err, ErrNotFound) {
						t.Fatalf("relationship to n being deleted: %v", err)
					}
					if _, err := s.UpdateNodeProperties(bg, "n", Properties{"who": "bob"}, nil); !errors.Is(err, ErrNotFound) {
						t.Fatalf("update n being deleted: %v", err)
					}
				}
				switch finish {
				case "rerun":
					err := s.DeleteNode(bg, "n", point == pointNodeMark)
					if point == pointNodeDegrees && errors.Is(err, ErrNotFound) {
						err = nil // the node row is gone; Repair deletes its counters
					}
					if err != nil {
						t.Fatalf("re-run: %v", err)
					}
				case "repair":
					if _, err := s.Repair(bg); err != nil {
						t.Fatal(err)
					}
					if point == pointNodeMark {
						if err := s.DeleteNode(bg, "n", true); err != nil {
							t.Fatal(err)
						}
					}
				}
				checkNoRowNames(t, s, "n")
				recreateAsBob(t, s)
				// (x's counters may count a relationship whose deletion
				// was cut short until Repair: carol's count, not alice's.)
				checkNothingLeft(t, s, w, countsOfN)
				repairTwice(t, s)
				checkNothingLeft(t, s, w, allCounts)
				checkArticleInvariants(t, s)
			})
		}
	}
}

// crashAt makes s crash at its i-th fault point from now on.
func crashAt(s *Store, i int) {
	seen := 0
	s.fault = func(string) error {
		if seen == i {
			return errCrash
		}
		seen++
		return nil
	}
}

// TestWriteCrashThenDeleteEnd crashes a relationship's creation or an
// article's post at each of its fault points, then deletes a node it
// names: nothing of it may be left to a later node of that id, before
// Repair (but for counters) or after.
func TestWriteCrashThenDeleteEnd(t *testing.T) {
	type write struct {
		name string
		op   func(s *Store) error
		ends []string // the nodes whose deletion must take it
	}
	writes := []write{
		{"create relationship", func(s *Store) error {
			_, err := s.CreateRelationship(bg, RelationshipKey{"n", "late", "x"}, Properties{"v": 1})
			return err
		}, []string{"n", "x"}},
		{"create relationship to n", func(s *Store) error {
			_, err := s.CreateRelationship(bg, RelationshipKey{"x", "late", "n"}, Properties{"v": 1})
			return err
		}, []string{"n", "x"}},
		{"post article", func(s *Store) error {
			_, err := s.PostArticle(bg, "n", "late", "alice posts late", "diary")
			return err
		}, []string{"n"}},
	}
	for _, wr := range writes {
		probe := newTestStore(t)
		newTakeoverWorld(t, probe)
		points := faultPoints(t, probe, func() error { return wr.op(probe) })
		for _, end := range wr.ends {
			for i, point := range points {
				t.Run(fmt.Sprintf("%s/delete %s/%d-%s", wr.name, end, i, point), func(t *testing.T) {
					s := newTestStore(t)
					w := newTakeoverWorld(t, s)
					w.rels = append(w.rels, RelationshipKey{"n", "late", "x"}, RelationshipKey{"x", "late", "n"})
					crashAt(s, i)
					if err := wr.op(s); !errors.Is(err, errCrash) {
						t.Fatalf("did not crash: %v", err)
					}
					s.fault = nil
					if err := s.DeleteNode(bg, end, true); err != nil {
						t.Fatal(err)
					}
					if end == "n" {
						recreateAsBob(t, s)
						checkNothingLeft(t, s, w, noCounts)
						page, err := s.Adjacent(bg, "x", "late", Incoming, PageRequest{Size: 10})
						if err != nil || len(page.Relationships) != 0 {
							t.Fatalf("x's relationships from the old n: %+v, %v", page.Relationships, err)
						}
					} else if point != "index-incoming" {
						// (A crash between the two index rows leaves n's
						// alone, which x's deletion cannot find: it shows
						// in n's list until Repair deletes it.)
						for _, dir := range []Direction{Outgoing, Incoming} {
							page, err := s.Adjacent(bg, "n", "late", dir, PageRequest{Size: 10})
							if err != nil || len(page.Relationships) != 0 {
								t.Fatalf("n's relationships with the deleted x: %+v, %v", page.Relationships, err)
							}
						}
					}
					repairTwice(t, s)
					if end == "n" {
						checkNothingLeft(t, s, w, allCounts)
					} else {
						checkNoRowNames(t, s, "x")
					}
					checkArticleInvariants(t, s)
					checkArticleWordCounts(t, s, "n")
				})
			}
		}
	}
}

// TestDeleteRacesWrites runs a node's whole deletion (and, in one variant,
// its creation again by bob) at each fault point of a write under it that
// read the node before: the write must notice, undo itself and answer
// ErrNotFound, leaving nothing for the next owner, with counters exact.
func TestDeleteRacesWrites(t *testing.T) {
	ops := map[string]func(s *Store) error{
		"post article": func(s *Store) error {
			_, err := s.PostArticle(bg, "n", "late", "alice posts late", "diary")
			return err
		},
		"create relationship": func(s *Store) error {
			_, err := s.CreateRelationship(bg, RelationshipKey{"x", "late", "n"}, Properties{"v": 1})
			return err
		},
	}
	for name, op := range ops {
		probe := newTestStore(t)
		newTakeoverWorld(t, probe)
		points := faultPoints(t, probe, func() error { return op(probe) })
		for _, recreate := range []bool{false, true} {
			for i, point := range points {
				t.Run(fmt.Sprintf("%s/recreate=%v/%d-%s", name, recreate, i, point), func(t *testing.T) {
					s := newTestStore(t)
					w := newTakeoverWorld(t, s)
					w.rels = append(w.rels, RelationshipKey{"x", "late", "n"})
					seen := 0
					s.fault = func(string) error {
						if seen != i {
							seen++
							return nil
						}
						seen++
						hook := s.fault
						s.fault = nil
						defer func() { s.fault = hook }()
						if err := s.DeleteNode(bg, "n", true); err != nil {
							t.Errorf("delete: %v", err)
						}
						if recreate {
							recreateAsBob(t, s)
						}
						return nil
					}
					err := op(s)
					// A relationship whose row was written before the
					// deletion marked n was there, both ends live, for
					// anyone to see, and the deletion's detach took it:
					// the create happened, then the deletion (success).
					// Written after the mark, the create undoes itself;
					// it read n live before the deletion, which took
					// whatever it left, so it still came first (success),
					// unless n was created again (NOT_FOUND: the create
					// cannot tell the new n from the one it read).
					// Before its intents are placed the create has written
					// nothing but its claim (xp), and finds n gone
					// (NOT_FOUND); once it has answered (clearing them), it
					// came first.
					createdFirst := name == "create relationship" && point != pointRelationshipIntent && point != pointRelationshipClaim &&
						(!recreate || point == "degree-outgoing" || point == "degree-incoming" || point == pointRelationshipRecheck ||
							point == pointRelationshipIntentClear)
					if createdFirst && err != nil {
						t.Fatalf("a relationship created before the deletion of n: %v, want success", err)
					} else if !createdFirst && !errors.Is(err, ErrNotFound) {
						t.Fatalf("a write racing the deletion of n: %v, want not found", err)
					}
					s.fault = nil
					if !recreate {
						checkNoRowNames(t, s, "n")
						recreateAsBob(t, s)
					}
					checkNothingLeft(t, s, w, allCounts)
					checkGraphInvariants(t, s)
					checkArticleInvariants(t, s)
					checkArticleWordCounts(t, s, "n")
				})
			}
		}
	}
}

// TestCreateNodeRemovesLeftovers: rows an older hbgraph's deleteNode left
// (articles, a relationship to the node) go when the id is created again,
// and Repair deletes them while nobody has.
func TestCreateNodeRemovesLeftovers(t *testing.T) {
	for _, viaRepair := range []bool{false, true} {
		t.Run(fmt.Sprintf("repair=%v", viaRepair), func(t *testing.T) {
			s := newTestStore(t)
			w := newTakeoverWorld(t, s)
			// What deleteNode(n, detach) did before: relationships, then
			// the node row, and nothing of the articles.
			if err := s.detach(bg, "n"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.deleteEntity(bg, keys.Node("n")); err != nil {
				t.Fatal(err)
			}
			if viaRepair {
				report, err := s.Repair(bg)
				if err != nil {
					t.Fatal(err)
				}
				if report[fixArticleOfGoneNode] != 2 {
					t.Fatalf("repair: %v", report)
				}
				checkNoRowNames(t, s, "n")
			}
			recreateAsBob(t, s)
			checkNothingLeft(t, s, w, allCounts)
			repairTwice(t, s)
		})
	}
}

// keepArticlesOnDelete deletes node "n" as a version of hbgraph before
// this one did: its relationships, then its row, and none of its articles.
func keepArticlesOnDelete(t *testing.T, s *Store) {
	t.Helper()
	if err := s.detach(bg, "n"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.deleteEntity(bg, keys.Node("n")); err != nil {
		t.Fatal(err)
	}
}

// TestCreateNodeOverRemainsCrashAtEveryPoint crashes a CreateNode that
// found an earlier node's remains at each of its fault points: the node
// reads as gone and its id cannot be taken until DeleteNode or Repair has
// finished it as a deletion; then a new node sees nothing of the old one.
func TestCreateNodeOverRemainsCrashAtEveryPoint(t *testing.T) {
	setup := func(t *testing.T, s *Store) takeoverWorld {
		w := newTakeoverWorld(t, s)
		keepArticlesOnDelete(t, s)
		// A relationship to n that a crash left in the index only.
		if _, err := s.CreateNode(bg, "y", "carol", nil); err != nil {
			t.Fatal(err)
		}
		_, in, err := RelationshipKey{"y", "late", "n"}.index(s.nowMs())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.put(bg, keys.TableGraph, keys.FamilyGraph, in, cells{keys.QualProperties: []byte("{}")}, s.nowMs()); err != nil {
			t.Fatal(err)
		}
		return w
	}
	probe := newTestStore(t)
	setup(t, probe)
	points := faultPoints(t, probe, func() error { _, err := probe.CreateNode(bg, "n", "bob", nil); return err })
	if !slices.Contains(points, pointNodeRemains) || !slices.Contains(points, pointNodeLive) {
		t.Fatalf("CreateNode over remains passed %v", points)
	}
	for _, finish := range []string{"delete", "repair"} {
		for i, point := range points {
			t.Run(fmt.Sprintf("%s/%d-%s", finish, i, point), func(t *testing.T) {
				s := newTestStore(t)
				w := setup(t, s)
				crashAt(s, i)
				if _, err := s.CreateNode(bg, "n", "bob", nil); !errors.Is(err, errCrash) {
					t.Fatalf("did not crash: %v", err)
				}
				s.fault = nil
				if _, err := s.getNode(bg, "n"); !errors.Is(err, ErrNotFound) {
					t.Fatalf("n half created reads as %v", err)
				}
				if _, err := s.CreateNode(bg, "n", "dave", nil); !errors.Is(err, ErrConflict) {
					t.Fatalf("create n while it is half created: %v, want a conflict", err)
				}
				switch finish {
				case "delete":
					if err := s.DeleteNode(bg, "n", false); err != nil {
						t.Fatal(err)
					}
				case "repair":
					if _, err := s.Repair(bg); err != nil {
						t.Fatal(err)
					}
				}
				checkNoRowNames(t, s, "n")
				recreateAsBob(t, s)
				checkNothingLeft(t, s, w, countsOfN)
				repairTwice(t, s)
				checkNothingLeft(t, s, w, allCounts)
			})
		}
	}
}
