package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRepairUnderWriteLoad runs Repair while writers post, update and
// delete articles and create and delete relationships, as a server would
// while an operator repairs. Afterwards nothing acknowledged is lost or
// there twice: each author's articles are exactly those acknowledged (with
// their last acknowledged title), each node's relationships exactly those
// acknowledged, and the article indexes agree; and, before any further
// Repair, every article and degree counter, word count and top-words list
// is exact (a Repair under load never makes one wrong), and a Repair then
// finds nothing to fix.
func TestRepairUnderWriteLoad(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(t)
	nodes := []string{"n0", "n1", "n2", "n3", "n4", "n5"}
	var mu sync.Mutex
	live := map[string]Article{}
	rels := map[RelationshipKey]bool{} // each writer its own type: one writer per key
	for _, n := range nodes {
		mustArticleAuthor(t, s, n)
	}
	for i, n := range nodes {
		for j := range 5 {
			a := mustPostArticle(t, s, n, fmt.Sprintf("seed %d", j), "some words here", "c")
			live[a.ID] = a
		}
		k := RelationshipKey{Start: n, Type: "follows", End: nodes[(i+1)%len(nodes)]}
		if _, err := s.CreateRelationship(ctx, k, nil); err != nil {
			t.Fatal(err)
		}
		rels[k] = true
	}

	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 11))
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				n := nodes[rng.IntN(len(nodes))]
				mu.Lock()
				var target string
				for id := range live { // a random live article
					target = id
					break
				}
				mu.Unlock()
				switch rng.IntN(5) {
				case 0:
					a, err := s.PostArticle(ctx, n, fmt.Sprintf("post %d %d", w, i), "fresh words here", "d")
					if err != nil {
						t.Errorf("post: %v", err)
						return
					}
					mu.Lock()
					live[a.ID] = a
					mu.Unlock()
				case 1:
					if target == "" {
						continue
					}
					title := fmt.Sprintf("update %d %d", w, i)
					a, err := s.UpdateArticle(ctx, target, &title, nil, nil)
					// UNAVAILABLE: the article was deleted while the update
					// was made (by another worker, whose delete takes it out
					// of live), so whether the update applied cannot matter.
					if errors.Is(err, ErrNotFound) || errors.Is(err, ErrUnavailable) {
						continue
					}
					if err != nil {
						t.Errorf("update: %v", err)
						return
					}
					mu.Lock()
					if was, ok := live[a.ID]; ok && !a.Updated.Before(was.Updated) {
						live[a.ID] = a // the later of two updates acknowledged at once
					}
					mu.Unlock()
				case 2:
					if target == "" {
						continue
					}
					err := s.DeleteArticle(ctx, target)
					if errors.Is(err, ErrNotFound) {
						continue
					}
					if err != nil {
						t.Errorf("delete: %v", err)
						return
					}
					mu.Lock()
					delete(live, target)
					mu.Unlock()
				case 3:
					k := RelationshipKey{Start: n, Type: fmt.Sprintf("likes%d", w), End: nodes[rng.IntN(len(nodes))]}
					_, err := s.CreateRelationship(ctx, k, Properties{"w": w})
					if errors.Is(err, ErrAlreadyExists) {
						continue
					}
					if err != nil {
						t.Errorf("create relationship: %v", err)
						return
					}
					mu.Lock()
					rels[k] = true
					mu.Unlock()
				case 4:
					k := RelationshipKey{Start: n, Type: fmt.Sprintf("likes%d", w), End: nodes[rng.IntN(len(nodes))]}
					err := s.DeleteRelationship(ctx, k)
					if errors.Is(err, ErrNotFound) {
						continue
					}
					if err != nil {
						t.Errorf("delete relationship: %v", err)
						return
					}
					mu.Lock()
					delete(rels, k)
					mu.Unlock()
				}
			}
		}()
	}
	repairs := 0
	for start := time.Now(); time.Since(start) < time.Second || repairs < 3; repairs++ {
		r, err := s.Repair(ctx)
		if err != nil {
			t.Errorf("Repair under load: %v", err)
		}
		for kind, n := range r {
			if !strings.Contains(kind, "word") {
				t.Logf("Repair under load: %s: %d", kind, n)
			}
		}
	}
	close(done)
	wg.Wait()

	// What the Repairs under load fixed is exact now that the writers are
	// done, without another Repair: counters, word counts, top words.
	checkArticleInvariants(t, s)
	checkGraphInvariants(t, s)
	for _, n := range nodes {
		checkArticleWordCounts(t, s, n)
		checkTopWordsExact(t, s, n)
	}
	for _, n := range nodes {
		checkTimeline(t, s, n, live, 50, "after Repair under load")
		for _, dir := range []Direction{Outgoing, Incoming} {
			for w := range 4 {
				typ := fmt.Sprintf("likes%d", w)
				p, err := s.Adjacent(ctx, n, typ, dir, PageRequest{Size: 50})
				if err != nil {
					t.Fatal(err)
				}
				seen := map[RelationshipKey]bool{}
				for _, r := range p.Relationships {
					k := RelationshipKey{Start: r.Start, Type: r.Type, End: r.End}
					if seen[k] || !rels[k] {
						t.Errorf("%s %v: relationship %v there twice or not acknowledged", n, dir, k)
					}
					seen[k] = true
				}
				for k := range rels {
					if k.Type == typ && ((dir == Outgoing && k.Start == n) || (dir == Incoming && k.End == n)) && !seen[k] {
						t.Errorf("%s %v: acknowledged relationship %v lost", n, dir, k)
					}
				}
			}
		}
	}
	if report, err := s.Repair(ctx); err != nil || len(report) != 0 {
		t.Fatalf("Repair after the load: %v, %v; want nothing to fix", report, err)
	}
}

// checkTopWordsExact asserts that author's top-words list answers as a
// ranking of the author's word counts would.
func checkTopWordsExact(t testing.TB, s *Store, author string) {
	t.Helper()
	got, err := s.TopWords(t.Context(), author, MaxTopWords)
	if err != nil {
		t.Fatal(err)
	}
	want := rankCounts(recountArticleWords(t, s, author), MaxTopWords)
	if !slices.Equal(got, want) {
		t.Errorf("top words of %q:\n have %v\n want %v", author, got, want)
	}
}

// TestRepairBesideAWriteInFlight runs a Repair inside each write, at the
// point between its row change and its counts, where a recount from the
// rows counts the write before its own Increment does: after the write,
// with no further Repair, every counter and word count is exact, and a
// Repair then finds nothing to fix.
func TestRepairBesideAWriteInFlight(t *testing.T) {
	cases := []struct {
		name, point string
		write       func(s *Store, a Article) error
	}{
		{"post, article counters", pointArticleCount, func(s *Store, _ Article) error {
			_, err := s.PostArticle(t.Context(), "ann", "new", "fresh words here", "d")
			return err
		}},
		{"post, word counts", pointWordCount, func(s *Store, _ Article) error {
			_, err := s.PostArticle(t.Context(), "ann", "new", "fresh words here", "d")
			return err
		}},
		{"update, word counts", pointWordCount, func(s *Store, a Article) error {
			body := "other words entirely"
			_, err := s.UpdateArticle(t.Context(), a.ID, nil, &body, nil)
			return err
		}},
		{"update, category counters", pointArticleCount, func(s *Store, a Article) error {
			cat := "e"
			_, err := s.UpdateArticle(t.Context(), a.ID, nil, nil, &cat)
			return err
		}},
		{"delete, article counters", pointArticleCount, func(s *Store, a Article) error {
			return s.DeleteArticle(t.Context(), a.ID)
		}},
		{"delete, word counts", pointWordCount, func(s *Store, a Article) error {
			return s.DeleteArticle(t.Context(), a.ID)
		}},
		{"create relationship", "degree-outgoing", func(s *Store, _ Article) error {
			_, err := s.CreateRelationship(t.Context(), RelationshipKey{Start: "ann", Type: "likes", End: "bob"}, nil)
			return err
		}},
		// Between its index rows and its row (the claim in xp only): the
		// scan finds the index rows without their relationship.
		{"create relationship, before its row", pointRelationshipRow, func(s *Store, _ Article) error {
			_, err := s.CreateRelationship(t.Context(), RelationshipKey{Start: "ann", Type: "likes", End: "bob"}, nil)
			return err
		}},
		{"delete relationship", "degree-outgoing", func(s *Store, _ Article) error {
			return s.DeleteRelationship(t.Context(), RelationshipKey{Start: "bob", Type: "likes", End: "ann"})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newTestStore(t)
			mustArticleAuthor(t, s, "ann")
			mustArticleAuthor(t, s, "bob")
			a := mustPostArticle(t, s, "ann", "old", "some old words", "c")
			mustPostArticle(t, s, "ann", "other", "more words", "c")
			if _, err := s.CreateRelationship(t.Context(), RelationshipKey{Start: "bob", Type: "likes", End: "ann"}, nil); err != nil {
				t.Fatal(err)
			}
			var report RepairReport
			var repairErr error
			ran := false
			s.fault = func(p string) error {
				if p == c.point && !ran { // (the Repair's own writes pass points too)
					ran = true
					report, repairErr = s.Repair(t.Context())
				}
				return nil
			}
			if err := c.write(s, a); err != nil {
				t.Fatal(err)
			}
			s.fault = nil
			if !ran || repairErr != nil {
				t.Fatalf("the Repair in the write: ran %v, %v", ran, repairErr)
			}
			t.Logf("the Repair in the write fixed: %v", report)
			checkArticleInvariants(t, s)
			checkGraphInvariants(t, s)
			checkArticleWordCounts(t, s, "ann")
			checkTopWordsExact(t, s, "ann")
			if again, err := s.Repair(t.Context()); err != nil || len(again) != 0 {
				t.Errorf("a Repair after the write: %v, %v; want nothing to fix", again, err)
			}
		})
	}
}
