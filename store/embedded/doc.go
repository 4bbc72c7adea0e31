// Package embedded is an in-process HBase: it implements gohbase.Client over
// Pebble, so hbgraph runs with nothing else installed and every store test
// exercises the exact requests a cluster would receive.
//
// # How requests are read
//
// Each call is given the table's region (SetRegion) and read in its wire
// form, as a region server reads it: its protobuf (ToProto), and for a
// Put, Delete, Increment or Append its cells from the cell block gohbase
// sends them in (SerializeCellBlocks). Timestamps, families, filters,
// comparators, time ranges, NumberOfRows and Reversed all come from the
// wire form, never from hrpc getters that do not carry them.
//
// # Cell model (what HBase does, and so what the engine does)
//
//   - A cell is (table, row, family, qualifier) -> (timestamp, value), with
//     timestamps in milliseconds. A Put without one gets the clock's time.
//   - One version is kept per cell (HBase's VERSIONS => 1): a newer Put
//     replaces the stored version, an older one is dropped, an equal one
//     wins (last write). Increment and Append write at the clock's time, or
//     one past the stored version's when the clock is behind it.
//   - Deletes are markers. A column delete at T hides that column's versions
//     with timestamp <= T; a family delete at T (and a row delete, which is a
//     family delete of every family) hides the whole family's. A Put that
//     arrives later with timestamp <= T stays hidden; one with > T shows. A
//     Delete and a Put in the same millisecond therefore hide the Put.
//   - Delete markers are kept for Options.DeleteMarkerHorizon (default 24h),
//     then purged by MajorCompact, which also runs in the background, as an
//     HBase major compaction would; after that a Put older than the purged
//     marker shows again.
//   - Mutations of one row are atomic, including CheckAndMutate (an empty
//     expected value matches an absent or empty cell; the comparator is
//     compared to the cell, so LESS means expected < stored). Reads see a
//     row before or after a mutation, never half of it. Nothing is atomic
//     across rows.
//   - An Increment or Append with a nonce (MutationProto.nonce, not 0;
//     MutateRequest.nonce_group names the client) is applied at most once
//     while its nonce is remembered, as HBase's ServerNonceManager does:
//     for Options.NonceGracePeriod (30 minutes, HBase's default), and at
//     most Options.MaxNonces of them, the oldest forgotten first. A
//     duplicate is answered as RSRpcServices answers it, with a Get of
//     its cells: their current values. Concurrent duplicates wait for the
//     first; one whose operation failed proceeds. A nonce sent in a batch
//     (SendBatch) has no group, as gohbase's MultiRequest has none. The
//     nonces are kept in memory only: a restart forgets them (HBase
//     recovers those in its WAL). Options.NoNonces keeps none (import).
//   - Scans run from the start row (inclusive) to the stop row (exclusive,
//     empty = end of table); reversed scans take the high row as start and
//     the low row as stop. NumberOfRows is a page size: each page opens a
//     fresh Pebble iterator, so the scanner keeps going until the caller
//     stops and an idle scanner pins nothing.
//   - Unknown tables and families fail (ErrUnknownTable matches
//     gohbase.TableNotFound; ErrUnknownFamily is HBase's
//     NoSuchColumnFamilyException). Calls after Close fail with ErrClosed.
//
// # What is not emulated
//
// Regions and region splits (one region per table; CacheRegions is a
// no-op), multiple versions (MaxVersions > 1 still returns one), cell TTLs,
// single-version deletes (DeleteOneVersion), filters other than
// PrefixFilter, KeyOnlyFilter, FirstKeyOnlyFilter, ColumnPrefixFilter and a
// MUST_PASS_ALL FilterList of those, comparators other than
// BinaryComparator, and CheckAndMutate conditions given as filters. Each
// returns an error wrapping ErrUnsupported that names the feature, never a
// silently different answer.
//
// # Storage and durability
//
// With Options.Dir the data lives in a Pebble directory. Every commit is
// written to Pebble's WAL file before the call returns, so an acknowledged
// write survives the process being killed; with Options.Sync the WAL is
// also fsynced, so it survives power loss. With no Dir, everything is kept
// in memory.
//
// Open lists the stored family delete markers in memory (their keys, one
// per marker younger than the horizon, read from the marker index), so that
// a mutation of a row that has none, nearly every row, does not read Pebble
// to find that out.
//
// The Pebble key layout is described in cells.go.
package embedded
