package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/keys"
)

// indexRow is an adjacency index row as the embedded engine holds it.
type indexRow struct {
	key   []byte
	cells map[string][]byte // family g
}

// adjacencyRows are node's index rows of type knows in direction dir, read
// from the stopped server's data directory.
func adjacencyRows(t *testing.T, dataDir, node string, dir keys.Direction) []indexRow {
	t.Helper()
	c, err := embedded.Open(embedded.Options{Dir: dataDir, Tables: keys.Tables(), ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	prefix, err := keys.AdjacencyPrefix(node, dir, "knows")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := hrpc.NewScanRangeStr(context.Background(), keys.TableGraph, string(prefix), string(keys.PrefixEnd(prefix)),
		hrpc.Families(map[string][]string{keys.FamilyGraph: nil}))
	if err != nil {
		t.Fatal(err)
	}
	var rows []indexRow
	scanner := c.Scan(sc)
	for {
		res, err := scanner.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		r := indexRow{key: bytes.Clone(res.Cells[0].Row), cells: map[string][]byte{}}
		for _, cell := range res.Cells {
			r.cells[string(cell.Qualifier)] = bytes.Clone(cell.Value)
		}
		rows = append(rows, r)
	}
	return rows
}

// putRows writes rows back into the stopped server's data directory,
// stamped now (after the delete markers of the deletion that took them).
func putRows(t *testing.T, dataDir string, rows []indexRow) {
	t.Helper()
	c, err := embedded.Open(embedded.Options{Dir: dataDir, Tables: keys.Tables()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, r := range rows {
		put, err := hrpc.NewPutStr(context.Background(), keys.TableGraph, string(r.key),
			map[string]map[string][]byte{keys.FamilyGraph: r.cells}, hrpc.Timestamp(time.Now()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Put(put); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRelationshipOfAnEarlierNodeNotListed (issue 23): a relationship
// create that read its start a, racing a's deletion with detach and a's
// creation again, writes its index rows after the detach looked: the new
// a must not list the deleted a's relationship (nor n list it as the new
// a's), on either executor. The race is staged on the stopped server's
// data: the index rows of a -knows-> n, as its create wrote them, put back
// after a was deleted and created again.
func TestRelationshipOfAnEarlierNodeNotListed(t *testing.T) {
	parallelTest(t)
	dataDir := t.TempDir()
	s := startServerAt(t, dataDir)
	s.mustDo(t, `mutation { a: createNode(id: "a") { id } n: createNode(id: "n") { id }
		r: createRelationship(startNodeId: "a", type: "knows", endNodeId: "n") { id } }`, nil, nil)
	s.stop(t)
	out := adjacencyRows(t, dataDir, "a", keys.Outgoing)
	in := adjacencyRows(t, dataDir, "n", keys.Incoming)
	if len(out) != 1 || len(in) != 1 {
		t.Fatalf("index rows of a -knows-> n: %d outgoing, %d incoming, want 1 and 1", len(out), len(in))
	}

	s = startServerAt(t, dataDir)
	s.mustDo(t, `mutation { deleteNode(id: "a", detach: true) }`, nil, nil)
	time.Sleep(5 * time.Millisecond) // the new a's creation time is another millisecond
	s.mustDo(t, `mutation { createNode(id: "a") { id } }`, nil, nil)
	s.stop(t)
	putRows(t, dataDir, append(out, in...))

	for _, executor := range []string{"plan", "gqlgen"} {
		s = startServerAt(t, dataDir, "--executor", executor)
		var got struct {
			A struct {
				Out struct{ Edges []json.RawMessage } `json:"out"`
			} `json:"a"`
			N struct {
				In struct{ Edges []json.RawMessage } `json:"in"`
			} `json:"n"`
		}
		s.mustDo(t, `{ a: node(id: "a") { out: relationships(type: "knows", direction: OUTGOING) { edges { node { id } } } }
			n: node(id: "n") { in: relationships(type: "knows", direction: INCOMING) { edges { node { id } } } } }`, nil, &got)
		if len(got.A.Out.Edges) != 0 || len(got.N.In.Edges) != 0 {
			t.Errorf("%s: the new a lists %d relationships and n %d, want none: the deleted a's relationship under the new one",
				executor, len(got.A.Out.Edges), len(got.N.In.Edges))
		}
		s.stop(t)
	}
}
