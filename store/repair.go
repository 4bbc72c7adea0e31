package store

import (
	"bytes"
	"context"
	"fmt"
	"sort"

	"github.com/hbgraph/hbgraph/store/keys"
)

// RepairReport counts what Repair fixed, by kind of fix.
type RepairReport map[string]int

func (r RepairReport) fix(kind string, n int) {
	if n > 0 {
		r[kind] += n
	}
}

// String lists the fixes, one per line, or says there was nothing to fix.
func (r RepairReport) String() string {
	if len(r) == 0 {
		return "nothing to fix\n"
	}
	kinds := make([]string, 0, len(r))
	for k := range r {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var b bytes.Buffer
	for _, k := range kinds {
		fmt.Fprintf(&b, "%s: %d\n", k, r[k])
	}
	return b.String()
}

// Repair brings the rows that multi-row operations keep in step back in
// step after a crash between their writes (DESIGN.md, "Writes without
// locks"): every relationship gets exactly its two index rows with its
// current properties, index rows without their relationship go, every
// degree counter is set to the number of index rows it counts, and (see
// repairArticles) every article gets exactly its category row and every
// article counter its exact count.
//
// It reads each table once, holding one entry per relationship, index row
// and counter in memory. Run it while writes are stopped: a write racing it
// can be counted twice or not at all (the next Repair corrects that).
func (s *Store) Repair(ctx context.Context) (RepairReport, error) {
	report := RepairReport{}
	if err := s.repairGraph(ctx, report.fix); err != nil {
		return report, fmt.Errorf("repair graph: %w", err)
	}
	if err := s.repairArticles(ctx, report.fix); err != nil {
		return report, fmt.Errorf("repair articles: %w", err)
	}
	return report, nil
}

// graphScan is what one pass over the graph table finds.
type graphScan struct {
	nodes         map[string]bool   // ids of existing nodes
	relationships map[string]relRow // by relationship row key
	index         map[string]row    // adjacency rows by key
	degrees       map[string]row    // degree rows by key
}

type relRow struct {
	key RelationshipKey
	e   entity
}

func (s *Store) scanGraph(ctx context.Context) (graphScan, error) {
	g := graphScan{nodes: map[string]bool{}, relationships: map[string]relRow{}, index: map[string]row{}, degrees: map[string]row{}}
	all := scanRange{table: keys.TableGraph, family: keys.FamilyGraph}
	err := s.scanAll(ctx, all, func(rw row) (bool, error) {
		if id, err := keys.DecodeNode(rw.key); err == nil {
			g.nodes[id] = true
		} else if r, err := keys.DecodeRelationship(rw.key); err == nil {
			e, ok, err := decodeEntity(rw.cells)
			if err != nil || !ok {
				return false, fmt.Errorf("relationship row %q: %v", rw.key, err)
			}
			g.relationships[string(rw.key)] = relRow{RelationshipKey{r.Start, r.Type, r.End}, e}
		} else if _, err := keys.DecodeAdjacency(rw.key); err == nil {
			g.index[string(rw.key)] = rw
		} else if _, err := keys.DecodeDegree(rw.key); err == nil {
			g.degrees[string(rw.key)] = rw
		}
		return true, nil
	})
	return g, err
}

func (s *Store) repairGraph(ctx context.Context, fix func(kind string, n int)) error {
	g, err := s.scanGraph(ctx)
	if err != nil {
		return err
	}
	// Index rows each relationship should have, with its properties at u.
	want := map[string]bool{}
	for _, rel := range g.relationships {
		out, in, err := rel.key.index(rel.e.created)
		if err != nil {
			return err
		}
		for _, ix := range [][]byte{out, in} {
			want[string(ix)] = true
			have, ok := g.index[string(ix)]
			if ok && bytes.Equal(have.cells[qualProperties], rel.e.props) && have.ts >= rel.e.updated {
				continue
			}
			kind := "index row written"
			if ok {
				kind = "index row refreshed"
			}
			if err := s.put(ctx, keys.TableGraph, keys.FamilyGraph, ix, cells{qualProperties: rel.e.props}, rel.e.updated); err != nil {
				return err
			}
			fix(kind, 1)
			g.index[string(ix)] = row{key: ix, cells: cells{qualProperties: rel.e.props}, ts: rel.e.updated}
		}
	}
	for key, ix := range g.index {
		if want[key] {
			continue
		}
		if err := s.deleteRow(ctx, keys.TableGraph, ix.key, ix.ts); err != nil {
			return err
		}
		fix("orphan index row deleted", 1)
		delete(g.index, key)
	}
	// Degree counters equal the index rows they count.
	counts := map[string]int64{}
	for _, ix := range g.index {
		a, err := keys.DecodeAdjacency(ix.key)
		if err != nil {
			return err
		}
		d, err := keys.Degree{Node: a.Node, Dir: a.Dir, Type: a.Type}.Key()
		if err != nil {
			return err
		}
		counts[string(d)]++
	}
	for key := range g.degrees {
		if _, ok := counts[key]; !ok {
			counts[key] = 0 // counts nothing any more
		}
	}
	for key, n := range counts {
		have := g.degrees[key]
		if v, ok := decodeMs(have.cells[qualDegree]); ok && v == n {
			if n == 0 {
				// A zero counter of a node that is gone: delete it once
				// that cannot hide a later Increment (deleteDegreeRows).
				d, err := keys.DecodeDegree(have.key)
				if err != nil {
					return err
				}
				if !g.nodes[d.Node] && s.waitClockPast(ctx, have.ts) {
					if err := s.deleteRow(ctx, keys.TableGraph, have.key, have.ts); err != nil {
						return err
					}
					fix("orphan degree counter deleted", 1)
				}
			}
			continue
		}
		// A Put older than the counter's cell would lose: stamp it after.
		ts := max(s.nowMs(), have.ts+1)
		if err := s.put(ctx, keys.TableGraph, keys.FamilyGraph, []byte(key), cells{qualDegree: encodeMs(n)}, ts); err != nil {
			return err
		}
		fix("degree counter corrected", 1)
	}
	return nil
}
