package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/keys"
)

// ErrMissingFamily: a table lacks a column family this hbgraph reads and
// writes (keys.Tables), as a cluster's tables created by an older hbgraph
// lack keys.FamilyOnce. Nothing was read or written.
var ErrMissingFamily = errors.New("store: a table lacks a column family")

// CheckFamilies asks every table for each of its families, and fails with
// ErrMissingFamily, naming the HBase shell command that adds it, when one
// is missing: without it every write to the table would fail. The
// embedded engine declares them all when it opens. A server calls it at
// start.
func (s *Store) CheckFamilies(ctx context.Context) error {
	tables := keys.Tables()
	for _, table := range slices.Sorted(func(yield func(string) bool) {
		for t := range tables {
			if !yield(t) {
				return
			}
		}
	}) {
		for _, fam := range tables[table] {
			if err := s.checkFamily(ctx, table, fam); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Store) checkFamily(ctx context.Context, table, family string) error {
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	g, err := hrpc.NewGetStr(ctx, table, string(keys.PingRow()), hrpc.Families(map[string][]string{family: nil}))
	if err != nil {
		return err
	}
	_, err = s.hc.Get(g)
	if err != nil && strings.Contains(err.Error(), "NoSuchColumnFamilyException") {
		return fmt.Errorf("%w: table %s has no column family %q, which this hbgraph writes; add it in the HBase shell "+
			"with: alter '%s', {NAME => '%s', VERSIONS => 1, BLOOMFILTER => 'ROW'}", ErrMissingFamily, table, family, table, family)
	}
	return classify("get "+table, err)
}
