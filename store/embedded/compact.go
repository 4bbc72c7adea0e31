package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// MajorCompact purges the delete markers older than the horizon, as an
// HBase major compaction does: once a marker is gone, a Put with an older
// timestamp than the marker's shows again. It returns how many markers it
// purged. It runs by itself periodically; calling it is safe at any time.
func (c *Client) MajorCompact() (purged int, err error) {
	if err := c.enter(); err != nil {
		return 0, err
	}
	defer c.leave()
	now := c.now()
	horizon := uint64(c.horizon.Milliseconds())
	if now <= horizon {
		return 0, nil
	}
	cutoff := now - horizon // markers with ts <= cutoff are expired
	const chunk = 1024
	for {
		entries, err := c.expiredMarkers(cutoff, chunk)
		if err != nil {
			return purged, err
		}
		for _, e := range entries {
			ok, err := c.purgeMarker(e)
			if err != nil {
				return purged, err
			}
			if ok {
				purged++
			}
		}
		if len(entries) < chunk {
			return purged, nil
		}
	}
}

// CompactAll rewrites every stored file into Pebble's bottom level, as an
// HBase major compaction after a bulk load does. A load leaves its data
// spread over several levels, and a read seeks in each level that holds
// part of its range: after CompactAll it seeks in one. It blocks until done
// or ctx is cancelled; reads and writes may go on meanwhile.
func (c *Client) CompactAll(ctx context.Context) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.leave()
	it, err := c.db.NewIter(nil)
	if err != nil {
		return fmt.Errorf("embedded: compact: %w", err)
	}
	var first, last []byte
	if it.First() {
		first = bytes.Clone(it.Key())
		it.Last()
		last = bytes.Clone(it.Key())
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return fmt.Errorf("embedded: compact: %w", err)
	}
	if first == nil {
		return nil // empty
	}
	c.compress.Store(true) // a bulk load's last rewrite (bulkLoadCompactions)
	// Compact's end is exclusive: the key just after the last one.
	if err := c.db.Compact(ctx, first, append(last, 0), true); err != nil {
		return fmt.Errorf("embedded: compact: %w", err)
	}
	return nil
}

func (c *Client) expiredMarkers(cutoff uint64, limit int) ([][]byte, error) {
	it, err := c.db.NewIter(&pebble.IterOptions{
		LowerBound: []byte{spaceMarker},
		UpperBound: markerIndexKey(cutoff+1, nil),
	})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var entries [][]byte
	for it.First(); it.Valid() && len(entries) < limit; it.Next() {
		entries = append(entries, append([]byte(nil), it.Key()...))
	}
	return entries, it.Error()
}

// purgeMarker removes one marker index entry and the marker it points at,
// if the record still carries that marker.
func (c *Client) purgeMarker(entry []byte) (bool, error) {
	ts := binary.BigEndian.Uint64(entry[1:])
	key := entry[1+tsLength:]
	dk, ok := parseDataKey(key)
	if !ok {
		return false, fmt.Errorf("%w: marker index entry %q", errCorrupt, entry)
	}
	t := c.tables[string(unescape(nil, dk.tableEsc))]
	b := c.db.NewBatch()
	defer b.Close()
	if err := b.Delete(entry, nil); err != nil {
		return false, err
	}
	purged := false
	if t != nil {
		mu := c.lockRow(t, unescape(nil, dk.rowEsc))
		defer mu.Unlock()
	}
	v, closer, err := c.db.Get(key)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return false, err
	default:
		v = append([]byte(nil), v...)
		closer.Close()
		if dk.kind == kindFamilyMarker {
			if old, err := decodeTs(v); err == nil && old == ts {
				purged = true
				if err := b.Delete(key, nil); err != nil {
					return false, err
				}
			}
		} else if col, err := decodeColumn(v); err == nil && col.hasDel && col.delTs == ts {
			purged = true
			col.hasDel, col.delTs = false, 0
			if col.hasPut {
				err = b.Set(key, col.encode(), nil)
			} else {
				err = b.Delete(key, nil)
			}
			if err != nil {
				return false, err
			}
		}
	}
	cached := purged && t != nil && c.results != nil
	var (
		stripe    int
		rowPrefix []byte
	)
	if cached {
		row := unescape(nil, dk.rowEsc)
		stripe, rowPrefix = rowStripe(t, row), t.rowPrefix(row)
		c.results.beginWrite(t, stripe, rowPrefix)
	}
	err = b.Commit(c.writeOpts)
	if cached {
		c.results.endWrite(t, stripe, rowPrefix, nil)
	}
	if err != nil {
		return false, err
	}
	if purged && dk.kind == kindFamilyMarker && t != nil {
		// Under the row's lock: no mutation of the row can add it back
		// meanwhile.
		delete(c.familyMarkers[rowStripe(t, unescape(nil, dk.rowEsc))], string(key))
	}
	return purged, nil
}

// compactPeriodically runs MajorCompact every half horizon (at most hourly).
func (c *Client) compactPeriodically() {
	defer c.compactor.Done()
	every := c.horizon / 2
	if every > time.Hour {
		every = time.Hour
	}
	if every < time.Second {
		every = time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
			if n, err := c.MajorCompact(); err != nil {
				if !errors.Is(err, ErrClosed) {
					c.log.Error().Err(err).Msg("embedded: major compaction")
				}
			} else if n > 0 {
				c.log.Debug().Int("purged", n).Msg("embedded: delete markers purged")
			}
		}
	}
}
