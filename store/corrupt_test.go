package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hbgraph/hbgraph/store/keys"
)

// TestCorruptRowsAreErrCorrupt damages a node row, a degree counter and an
// article's cells, and reads each through the API its callers use: every
// error is ErrCorrupt (never ErrNotFound or ErrInvalidInput) and names the
// row key.
func TestCorruptRowsAreErrCorrupt(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	mustNode(t, s, "alice", nil)
	a, err := s.PostArticle(ctx, "alice", "Title", "some words", "tech")
	if err != nil {
		t.Fatal(err)
	}
	nodeRow := keys.Node("alice")
	degreeRow, err := keys.Degree{Node: "alice", Dir: Outgoing, Type: "follows"}.Key()
	if err != nil {
		t.Fatal(err)
	}
	_, articleRow, err := parseArticleID(a.ID)
	if err != nil {
		t.Fatal(err)
	}
	damage := func(table, family string, row []byte, c cells) {
		t.Helper()
		if err := s.put(ctx, table, family, row, c, s.nowMs()+1000); err != nil {
			t.Fatal(err)
		}
	}
	damage(keys.TableGraph, keys.FamilyGraph, nodeRow, cells{keys.QualUpdated: []byte("x")})
	damage(keys.TableGraph, keys.FamilyGraph, degreeRow, cells{keys.QualDegree: []byte("xyz")})
	damage(keys.TableArticles, keys.FamilyArticles, articleRow, cells{keys.QualArticleU: []byte("not a time")})

	nodeGet, _ := NodeGet("alice")
	degreeGet, _ := DegreeKey{Node: "alice", Dir: Outgoing, Type: "follows"}.Get()
	articleGet, _ := ArticleGet(a.ID)
	rows, err := s.Read(ctx, []Get{nodeGet, degreeGet, articleGet})
	if err != nil {
		t.Fatal(err)
	}
	_, nodeErr := rows[0].Node("alice")
	_, degreeErr := rows[1].Degree()
	_, articleErr := rows[2].Article(a.ID)
	_, updateErr := s.UpdateNodeProperties(ctx, "alice", Properties{"k": 1}, nil)
	for _, tc := range []struct {
		what string
		err  error
		row  []byte
	}{
		{"Row.Node", nodeErr, nodeRow},
		{"Row.Degree", degreeErr, degreeRow},
		{"Row.Article", articleErr, articleRow},
		{"UpdateNodeProperties", updateErr, nodeRow},
	} {
		if !errors.Is(tc.err, ErrCorrupt) || errors.Is(tc.err, ErrNotFound) || errors.Is(tc.err, ErrInvalidInput) {
			t.Errorf("%s: %v, want ErrCorrupt alone", tc.what, tc.err)
			continue
		}
		if !strings.Contains(tc.err.Error(), fmt.Sprintf("%x", tc.row)) {
			t.Errorf("%s: %v does not name the row %x", tc.what, tc.err, tc.row)
		}
	}
}
