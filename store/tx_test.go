package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/hbasefault"
	"github.com/hbgraph/hbgraph/store/keys"
	"github.com/hbgraph/hbgraph/store/pagescan"
)

// engineWithoutTx is the embedded engine without its transactions: the
// store then runs each write's calls one by one, as over a cluster.
type engineWithoutTx struct {
	engineCalls
}

type engineCalls interface {
	gohbase.Client
	pagescan.RowReader
	pagescan.Scanner
	rpcSender
}

// txTwins are two stores on a clock that stands still, over two engines:
// one runs writes in the engine's transactions, the other call by call.
func txTwins(t *testing.T) (inTx, callByCall *Store, dbTx, dbCalls *embedded.Client) {
	t.Helper()
	clk := newFakeClock() // (step 0: every reading the same millisecond)
	dbTx, dbCalls = openTestEngine(t, clk), openTestEngine(t, clk)
	var err error
	if inTx, err = New(dbTx, Options{Clock: clk.Now}); err != nil {
		t.Fatal(err)
	}
	if callByCall, err = New(engineWithoutTx{dbCalls}, Options{Clock: clk.Now}); err != nil {
		t.Fatal(err)
	}
	return inTx, callByCall, dbTx, dbCalls
}

// rawCells is every cell of every table of db, op columns and timestamps
// included, one line a cell.
func rawCells(t *testing.T, db *embedded.Client) []string {
	t.Helper()
	var out []string
	for _, table := range slices.Sorted(maps.Keys(keys.Tables())) {
		sc, err := hrpc.NewScanStr(context.Background(), table)
		if err != nil {
			t.Fatal(err)
		}
		scanner := db.Scan(sc)
		for {
			r, err := scanner.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range r.Cells {
				out = append(out, fmt.Sprintf("%s %q %s:%q=%x@%d", table, c.Row, c.Family, c.Qualifier, c.Value, *c.Timestamp))
			}
		}
		scanner.Close()
	}
	return out
}

// A write run in one transaction leaves what the same write leaves run
// call by call, cell for cell (op columns and timestamps included), and
// answers the same: a create (of a relationship and its reverse, a
// self-loop, a follow, over a deleted one's residue, a retry of one, one
// that exists, one whose end is missing) and a post. What it does not
// leave is the intents a create places on its ends and clears, which
// only a delete marker on the node's row remembered.
func TestTransactionLeavesWhatCallByCallLeaves(t *testing.T) {
	inTx, callByCall, dbTx, dbCalls := txTwins(t)
	type step struct {
		name string
		run  func(s *Store, ctx context.Context) (string, error)
	}
	rel := func(a, typ, b string) func(s *Store, ctx context.Context) (string, error) {
		return func(s *Store, ctx context.Context) (string, error) {
			r, err := s.CreateRelationship(ctx, RelationshipKey{a, typ, b}, Properties{"w": a + b})
			return fmt.Sprint(r), err
		}
	}
	posted := map[*Store]string{} // the id of a's second post, in each store
	steps := []step{
		{"node a", func(s *Store, ctx context.Context) (string, error) {
			n, err := s.CreateNode(ctx, "a", "", nil)
			return fmt.Sprint(n), err
		}},
		{"node b", func(s *Store, ctx context.Context) (string, error) {
			n, err := s.CreateNode(ctx, "b", "", nil)
			return fmt.Sprint(n), err
		}},
		{"node c", func(s *Store, ctx context.Context) (string, error) {
			n, err := s.CreateNode(ctx, "c", "", nil)
			return fmt.Sprint(n), err
		}},
		{"a knows b", rel("a", "knows", "b")},
		{"b knows a", rel("b", "knows", "a")},
		{"a knows a", rel("a", "knows", "a")},
		{"c follows a", rel("c", "follows", "a")},
		{"a knows b again", rel("a", "knows", "b")},
		{"a knows nobody", rel("a", "knows", "nobody")},
		{"post by a", func(s *Store, ctx context.Context) (string, error) {
			art, err := s.PostArticle(ctx, "a", "A title", "Some body words, some words.", "news")
			return fmt.Sprint(art), err
		}},
		{"post by a, again", func(s *Store, ctx context.Context) (string, error) {
			art, err := s.PostArticle(ctx, "a", "Another title", "Other words.", "news")
			posted[s] = art.ID
			return fmt.Sprint(art), err
		}},
		{"edit of a's post", func(s *Store, ctx context.Context) (string, error) {
			body, category := "Other words, and more words.", "opinion"
			art, err := s.UpdateArticle(ctx, posted[s], nil, &body, &category)
			return fmt.Sprint(art), err
		}},
		{"deletion of a's post", func(s *Store, ctx context.Context) (string, error) {
			return "", s.DeleteArticle(ctx, posted[s])
		}},
		{"edit of a's deleted post", func(s *Store, ctx context.Context) (string, error) {
			body := "Gone."
			art, err := s.UpdateArticle(ctx, posted[s], nil, &body, nil)
			return fmt.Sprint(art), err
		}},
		{"delete a knows b", func(s *Store, ctx context.Context) (string, error) {
			return "", s.DeleteRelationship(ctx, RelationshipKey{"a", "knows", "b"})
		}},
		{"delete a knows b again", func(s *Store, ctx context.Context) (string, error) {
			return "", s.DeleteRelationship(ctx, RelationshipKey{"a", "knows", "b"})
		}},
		{"delete a knows a", func(s *Store, ctx context.Context) (string, error) {
			return "", s.DeleteRelationship(ctx, RelationshipKey{"a", "knows", "a"})
		}},
		{"delete c follows a", func(s *Store, ctx context.Context) (string, error) {
			return "", s.DeleteRelationship(ctx, RelationshipKey{"c", "follows", "a"})
		}},
		{"a knows b over its residue", rel("a", "knows", "b")},
	}
	for i, st := range steps {
		ctx := WithOp(context.Background(), DeriveOpID("tx twins", fmt.Sprint(i)))
		got, gotErr := st.run(inTx, ctx)
		want, wantErr := st.run(callByCall, ctx)
		if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("%s: in a transaction %s, %v; call by call %s, %v", st.name, got, gotErr, want, wantErr)
		}
		if i == 3 {
			// A retry of the create (its op again) is answered as its own.
			got, gotErr = st.run(inTx, ctx)
			want, wantErr = st.run(callByCall, ctx)
			if got != want || gotErr != nil || wantErr != nil {
				t.Errorf("%s, retried: in a transaction %s, %v; call by call %s, %v", st.name, got, gotErr, want, wantErr)
			}
		}
	}
	a, b := rawCells(t, dbTx), rawCells(t, dbCalls)
	if !slices.Equal(a, b) {
		t.Errorf("the stores differ:\nin a transaction:\n%s\ncall by call:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	if dbTx.TxConflicts() != 0 {
		t.Errorf("%d transactions could not go on, want none: one at a time, no scan in them, and a re-sent Increment answered within", dbTx.TxConflicts())
	}
}

// A create whose transaction cannot go on (a row it needs held by another
// transaction) runs again call by call, and is made once.
func TestCreateRelationshipRunsAgainWhenItsTransactionCannotGoOn(t *testing.T) {
	db := openTestEngine(t, nil)
	s, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustNode(t, s, "a", nil)
	mustNode(t, s, "b", nil)
	// Another transaction holds b's row: the create's, which reads a's
	// row with b's, waits for none of them if it takes a's first, and
	// cannot go on; if it takes b's first it waits, and goes on once the
	// other is done.
	ctx, other := db.BeginTx(context.Background())
	out := make([]pagescan.Row, 1)
	db.GetRows(ctx, keys.TableGraph, [][]byte{keys.Node("b")}, "", out)
	if out[0].Err != nil {
		t.Fatal(out[0].Err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.CreateRelationship(bg, RelationshipKey{"a", "knows", "b"}, nil)
		done <- err
	}()
	for db.TxConflicts() == 0 {
		select {
		case err := <-done:
			other.Discard()
			t.Logf("the create's transaction took b's row first and waited (%v): nothing to test this run", err)
			return
		default:
		}
	}
	other.Discard() // the create, now call by call, waits for b's row
	if err := <-done; err != nil {
		t.Fatalf("create after its transaction could not go on: %v", err)
	}
	if _, err := s.CreateRelationship(bg, RelationshipKey{"a", "knows", "b"}, nil); !errors.Is(err, ErrAlreadyExists) {
		t.Errorf("create again: %v, want ALREADY_EXISTS", err)
	}
	ds := []DegreeKey{{"a", keys.Outgoing, "knows"}, {"b", keys.Incoming, "knows"}}
	if n, err := s.Degrees(bg, ds); err != nil || n[0] != 1 || n[1] != 1 {
		t.Errorf("degrees of a (out) and b (in): %v, %v; want 1 each", n, err)
	}
}

// A retry in a transaction of a create whose earlier try (call by call)
// wrote its index rows, and lost its claim on their creation time to
// another create since, takes those index rows back, as a retry call by
// call does: the earlier try's intents name them. (The concurrent
// simulation found the retry in a transaction leaving them, seed 982561.)
func TestCreateRelationshipRetryInATransactionTakesBackAnEarlierTrysIndexRows(t *testing.T) {
	db := openTestEngine(t, nil)
	callByCall, err := New(engineWithoutTx{db}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	inTx, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustNode(t, inTx, "a", nil)
	mustNode(t, inTx, "b", nil)
	k := RelationshipKey{"a", "likes", "b"}
	x, y := WithOp(bg, DeriveOpID("x")), WithOp(bg, DeriveOpID("y"))
	callByCall.fault = crashAtPoint(pointRelationshipRow) // both index rows, no relationship row
	if _, err := callByCall.CreateRelationship(x, k, nil); !errors.Is(err, errCrash) {
		t.Fatalf("x cut short: %v", err)
	}
	callByCall.fault = crashAtPoint(pointRelationshipIntent) // its claim over x's, nothing else
	if _, err := callByCall.CreateRelationship(y, k, nil); !errors.Is(err, errCrash) {
		t.Fatalf("y cut short: %v", err)
	}
	callByCall.fault = nil
	if _, err := inTx.CreateRelationship(x, k, nil); err != nil {
		t.Fatalf("x retried in a transaction: %v", err)
	}
	if o := orphans(t, inTx); len(o) != 0 {
		t.Errorf("left behind: %q", o)
	}
	if report, err := inTx.Repair(bg); err != nil || len(report) != 0 {
		t.Errorf("repair: %v, %v; want nothing to fix", report, err)
	}
}

// An edit in a transaction writes no xp (nothing comes between its
// writes there), so when its compare-and-set is re-sent and answers false
// (ApplyTwice) the edit must tell its own compare-and-set from an earlier
// attempt's without it, and still make the category row, counts and word
// counts; one that applies and answers an error (FailAfter) answers
// UNAVAILABLE, having applied nothing, and its retry makes the edit.
func TestEditInATransactionWhoseCompareAndSetIsAmbiguous(t *testing.T) {
	for _, mode := range []hbasefault.Mode{hbasefault.FailAfter, hbasefault.ApplyTwice} {
		t.Run(mode.String(), func(t *testing.T) {
			s, fc := txStoreWithFaults(t)
			mustArticleAuthor(t, s, "ann")
			a := mustPostArticle(t, s, "ann", "t", "one two three", "news")
			fc.Add(hbasefault.Rule{Kind: hbasefault.CheckAndMutate, Table: keys.TableArticles, Nth: 1, Mode: mode})
			fc.Record(true)
			body, category := "two three four four", "opinion"
			ctx := WithOp(bg, DeriveOpID("test", "edit"))
			got, err := s.UpdateArticle(ctx, a.ID, nil, &body, &category)
			if errors.Is(err, ErrUnavailable) {
				// Unknown, as it may be: the transaction applied nothing,
				// and the caller's retry with the same op makes the edit.
				got, err = s.UpdateArticle(ctx, a.ID, nil, &body, &category)
			}
			if err != nil || got.Body != body || got.Category != category {
				t.Fatalf("the edit: %+v, %v", got, err)
			}
			if !slices.ContainsFunc(fc.Calls(), func(c hbasefault.Call) bool { return c.Mode == mode }) {
				t.Fatal("the fault never fired")
			}
			_, row, err := parseArticleID(a.ID)
			if err != nil {
				t.Fatal(err)
			}
			c, err := s.get(bg, keys.TableArticles, keys.FamilyArticles, row)
			if err != nil || c[keys.QualArticlePrev] != nil {
				t.Fatalf("xp after the edit: %q, %v; want none", c[keys.QualArticlePrev], err)
			}
			checkArticleWordCounts(t, s, "ann")
			checkArticleInvariants(t, s)
			if report, err := s.Repair(bg); err != nil || len(report) != 0 {
				t.Fatalf("repair fixed %v, %v", report, err)
			}
		})
	}
}

// txStoreWithFaults is a store whose writes run in transactions of an
// engine, their calls through a fault injector with no rule yet.
func txStoreWithFaults(t *testing.T) (*Store, *hbasefault.Client) {
	clk := newFakeClock()
	clk.step = 1
	db := openTestEngine(t, clk)
	fc := hbasefault.New(db)
	s, err := New(simTxClient{fc, db}, Options{Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s, fc
}

// A deletion in a transaction writes no mark (the row's deletion takes
// it). Under each fault at each of its calls after the read, with the
// caller's retry, the article goes once with its counts, the other stays,
// and repair finds nothing.
func TestDeletionInATransactionUnderFaults(t *testing.T) {
	rules := []hbasefault.Rule{
		{Kind: hbasefault.Delete, Table: keys.TableArticles, Nth: 1},      // the category row
		{Kind: hbasefault.Increment, Table: keys.TableArticles, Nth: 1},   // the counters
		{Kind: hbasefault.Increment, Table: keys.TableWordCounts, Nth: 1}, // the word counts
		{Kind: hbasefault.Put, Table: keys.TableWordCounts, Nth: 1},       // their pending cell
		{Kind: hbasefault.Delete, Table: keys.TableArticles, Nth: 2},      // the timeline row
	}
	for _, rule := range rules {
		for _, mode := range hbasefault.Modes {
			rule.Mode = mode
			t.Run(fmt.Sprintf("%s %s %d %s", rule.Kind, rule.Table, rule.Nth, mode), func(t *testing.T) {
				s, fc := txStoreWithFaults(t)
				mustArticleAuthor(t, s, "ann")
				kept := mustPostArticle(t, s, "ann", "kept", "one two", "news")
				a := mustPostArticle(t, s, "ann", "gone", "one two three", "news")
				fc.Add(rule)
				fc.Record(true)
				ctx := WithOp(bg, DeriveOpID("test", "delete"))
				err := s.DeleteArticle(ctx, a.ID)
				if errors.Is(err, ErrUnavailable) {
					err = s.DeleteArticle(ctx, a.ID) // the caller's retry
				}
				if err != nil {
					t.Fatalf("the deletion: %v", err)
				}
				if !slices.ContainsFunc(fc.Calls(), func(c hbasefault.Call) bool { return c.Mode == mode }) {
					t.Fatal("the fault never fired")
				}
				if _, err := s.getArticle(bg, a.ID); !errors.Is(err, ErrNotFound) {
					t.Fatalf("the deleted article reads %v", err)
				}
				if _, err := s.getArticle(bg, kept.ID); err != nil {
					t.Fatalf("the other article: %v", err)
				}
				checkArticleWordCounts(t, s, "ann")
				checkArticleInvariants(t, s)
				if report, err := s.Repair(bg); err != nil || len(report) != 0 {
					t.Fatalf("repair fixed %v, %v", report, err)
				}
			})
		}
	}
}

// A relationship's deletion in a transaction, under each fault at each of
// its calls, with the caller's retry: the relationship goes once, the
// degrees and both index rows with it, the other stays, and repair finds
// nothing.
func TestRelationshipDeletionInATransactionUnderFaults(t *testing.T) {
	rules := []hbasefault.Rule{
		{Kind: hbasefault.CheckAndMutate, Table: keys.TableGraph, Nth: 1}, // the relationship row
		{Kind: hbasefault.Increment, Table: keys.TableGraph, Nth: 1},      // a degree
		{Kind: hbasefault.Increment, Table: keys.TableGraph, Nth: 2},      // the other
		{Kind: hbasefault.Delete, Table: keys.TableGraph, Nth: 1},         // an index row
	}
	for _, rule := range rules {
		for _, mode := range hbasefault.Modes {
			rule.Mode = mode
			t.Run(fmt.Sprintf("%s %d %s", rule.Kind, rule.Nth, mode), func(t *testing.T) {
				s, fc := txStoreWithFaults(t)
				for _, id := range []string{"a", "b", "c"} {
					mustNode(t, s, id, nil)
				}
				mustRel(t, s, "a", "knows", "c", nil)
				k := RelationshipKey{"a", "knows", "b"}
				mustRel(t, s, k.Start, k.Type, k.End, nil)
				fc.Add(rule)
				fc.Record(true)
				ctx := WithOp(bg, DeriveOpID("test", "delete"))
				err := s.DeleteRelationship(ctx, k)
				if errors.Is(err, ErrUnavailable) {
					err = s.DeleteRelationship(ctx, k) // the caller's retry
				}
				if err != nil {
					t.Fatalf("the deletion: %v", err)
				}
				if !slices.ContainsFunc(fc.Calls(), func(c hbasefault.Call) bool { return c.Mode == mode }) {
					t.Fatal("the fault never fired")
				}
				if _, err := s.GetRelationship(bg, k); !errors.Is(err, ErrNotFound) {
					t.Fatalf("the deleted relationship reads %v", err)
				}
				if _, err := s.GetRelationship(bg, RelationshipKey{"a", "knows", "c"}); err != nil {
					t.Fatalf("the other relationship: %v", err)
				}
				checkGraphInvariants(t, s)
				if report, err := s.Repair(bg); err != nil || len(report) != 0 {
					t.Fatalf("repair fixed %v, %v", report, err)
				}
			})
		}
	}
}
