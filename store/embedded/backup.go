package embedded

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/rs/zerolog"
)

// A backup is a directory holding a Pebble checkpoint of the whole store
// (BackupStoreDir: a consistent point-in-time copy, its tables hard-linked
// to the live ones where the file system allows) and a manifest
// (BackupManifestName) that says what the checkpoint must contain: per
// table the rows, the records and a SHA-256 over every record's key and
// value, computed from a snapshot taken at the checkpoint's instant, not
// from the copy. VerifyBackup reads the copy and compares.
const (
	BackupManifestName = "BACKUP.json"
	BackupStoreDir     = "store"
	// backupFormat is the manifest's format; a reader refuses others.
	backupFormat = 1
	// engineTable names, in a manifest, the records that belong to no
	// table (the delete marker index).
	engineTable = "(engine)"
)

// ErrBackup is wrapped by every error about a backup directory the caller
// gave: one that is not empty, not absolute, holds no backup, or whose
// contents do not match its manifest.
var ErrBackup = errors.New("backup")

// BackupManifest is BACKUP.json.
type BackupManifest struct {
	Format  int       `json:"format"`
	Created time.Time `json:"created"`
	// Labels are the caller's (the hbgraph version, the article layout).
	Labels map[string]string `json:"labels,omitempty"`
	// Tables has one entry per table that holds records, and engineTable.
	Tables map[string]TableSum `json:"tables"`
	// Bytes is the size of the checkpoint's files, hard-linked or not.
	Bytes int64 `json:"bytes"`
}

// TableSum is what one table of a backup must hold.
type TableSum struct {
	Rows    int64  `json:"rows"`    // distinct row keys (a deleted row's markers count until purged)
	Records int64  `json:"records"` // engine records (a column, a marker)
	SHA256  string `json:"sha256"`  // over each record's length-prefixed key and value, in key order
}

// Backup writes a backup of the store into dir, which must be absolute and
// either absent (it is created, readable by this user only) or an empty
// directory. Engine calls pause for the checkpoint itself (links and the
// copy of the write-ahead log, typically milliseconds); reading the
// snapshot for the manifest, and verifying the copy, do not block them. The
// caller quiesces multi-row writes if it needs them whole; taken, if not
// nil, is called once the checkpoint is taken (or has failed), when they
// may go on.
func (c *Client) Backup(ctx context.Context, dir string, labels map[string]string, taken func()) (*BackupManifest, error) {
	if taken == nil {
		taken = func() {}
	}
	if c.dir == "" {
		taken()
		return nil, fmt.Errorf("%w: the engine runs in memory: nothing on disk to back up", ErrBackup)
	}
	if err := prepareBackupDir(dir); err != nil {
		taken()
		return nil, err
	}
	storeDir := filepath.Join(dir, BackupStoreDir)
	// On the data directory's file system the checkpoint links the
	// tables; elsewhere it would copy them while engine calls wait, so it
	// is taken beside the store and copied after.
	checkpointDir := storeDir
	if !sameDevice(dir, c.dir) {
		checkpointDir = filepath.Join(c.dir, fmt.Sprintf("backup-staging.%d.%d", os.Getpid(), time.Now().UnixNano()))
		defer os.RemoveAll(checkpointDir)
	}
	snap, err := c.checkpoint(checkpointDir)
	taken()
	if err == nil && checkpointDir != storeDir {
		if err = os.Mkdir(storeDir, 0o700); err == nil {
			err = copyStore(checkpointDir, storeDir)
		}
		if err != nil {
			snap.Close()
		}
	}
	if err != nil {
		_ = os.RemoveAll(storeDir)
		return nil, fmt.Errorf("embedded: checkpoint into %s: %w", dir, err)
	}
	m := &BackupManifest{Format: backupFormat, Created: c.clock().UTC(), Labels: labels}
	m.Tables, err = sumRecords(ctx, snap)
	snap.Close()
	if err == nil {
		m.Bytes, err = dirBytes(storeDir)
	}
	if err == nil {
		err = writeManifest(dir, m)
	}
	if err != nil {
		_ = os.RemoveAll(storeDir)
		return nil, fmt.Errorf("embedded: backup into %s: %w", dir, err)
	}
	if _, err := VerifyBackup(ctx, dir); err != nil {
		return m, err
	}
	return m, nil
}

// checkpoint takes a snapshot and a checkpoint at the same instant: no
// engine call runs between the two.
func (c *Client) checkpoint(storeDir string) (*pebble.Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	snap := c.db.NewSnapshot()
	// WithFlushedWAL: the last commits' records are in the log file before
	// it is copied (with Options.Sync off they are written, not synced).
	if err := c.db.Checkpoint(storeDir, pebble.WithFlushedWAL()); err != nil {
		snap.Close()
		return nil, err
	}
	return snap, nil
}

// prepareBackupDir creates dir (owner-only) or checks that it is an empty
// directory.
func prepareBackupDir(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%w: %q is not an absolute path", ErrBackup, dir)
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("%w: creating %s: %w", ErrBackup, dir, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("%w: %s is not a directory this process can read: %w", ErrBackup, dir, err)
	case len(entries) > 0:
		return fmt.Errorf("%w: %s is not empty; back up into a new directory", ErrBackup, dir)
	}
	return nil
}

// recordSummer folds records, in key order, into per-table sums.
type recordSummer struct {
	sums    map[string]TableSum
	hashes  map[string]hashWriter
	table   string // of the last record
	lastRow []byte // table and row prefix of the last data record
	buf     []byte
}

type hashWriter interface {
	io.Writer
	Sum([]byte) []byte
}

func (s *recordSummer) add(key, value []byte) {
	table := engineTable
	newRow := false
	if dk, ok := parseDataKey(key); ok {
		if !bytes.Equal(dk.rowPrefix, s.lastRow) {
			newRow = true
			s.lastRow = append(s.lastRow[:0], dk.rowPrefix...)
			s.table = string(unescape(nil, dk.tableEsc))
		}
		table = s.table
	}
	h, ok := s.hashes[table]
	if !ok {
		h = sha256.New()
		s.hashes[table] = h
	}
	s.buf = binary.BigEndian.AppendUint32(s.buf[:0], uint32(len(key)))
	s.buf = append(s.buf, key...)
	s.buf = binary.BigEndian.AppendUint32(s.buf, uint32(len(value)))
	_, _ = h.Write(s.buf)
	_, _ = h.Write(value)
	sum := s.sums[table]
	sum.Records++
	if newRow {
		sum.Rows++
	}
	s.sums[table] = sum
}

func (s *recordSummer) result() map[string]TableSum {
	for name, h := range s.hashes {
		sum := s.sums[name]
		sum.SHA256 = hex.EncodeToString(h.Sum(nil))
		s.sums[name] = sum
	}
	return s.sums
}

type newIterer interface {
	NewIter(*pebble.IterOptions) (*pebble.Iterator, error)
}

// sumRecords reads every record of r.
func sumRecords(ctx context.Context, r newIterer) (map[string]TableSum, error) {
	it, err := r.NewIter(nil)
	if err != nil {
		return nil, err
	}
	s := &recordSummer{sums: map[string]TableSum{}, hashes: map[string]hashWriter{}}
	n := 0
	for it.First(); it.Valid(); it.Next() {
		if n++; n%4096 == 0 && ctx.Err() != nil {
			_ = it.Close()
			return nil, ctx.Err()
		}
		s.add(it.Key(), it.Value())
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, err
	}
	return s.result(), nil
}

func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	return n, err
}

// writeManifest writes dir's manifest durably: a temporary file, synced,
// renamed, the directory synced.
func writeManifest(dir string, m *BackupManifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, BackupManifestName+".tmp")
	if err := writeFileSync(tmp, append(data, '\n')); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, BackupManifestName)); err != nil {
		return err
	}
	return syncDir(dir)
}

func writeFileSync(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Sync(), f.Close())
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// ReadBackupManifest reads dir's manifest.
func ReadBackupManifest(dir string) (*BackupManifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, BackupManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s holds no %s: not a backup, or an unfinished one", ErrBackup, dir, BackupManifestName)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: reading the manifest: %w", ErrBackup, err)
	}
	var m BackupManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w: %s in %s is damaged: %w", ErrBackup, BackupManifestName, dir, err)
	}
	if m.Format != backupFormat {
		return nil, fmt.Errorf("%w: %s in %s is of format %d; this hbgraph reads format %d", ErrBackup, BackupManifestName, dir, m.Format, backupFormat)
	}
	return &m, nil
}

// VerifyBackup opens dir's checkpoint read-only and checks that every
// table holds what the manifest says. It returns the manifest.
func VerifyBackup(ctx context.Context, dir string) (*BackupManifest, error) {
	m, err := ReadBackupManifest(dir)
	if err != nil {
		return nil, err
	}
	if err := verifyStore(ctx, filepath.Join(dir, BackupStoreDir), m); err != nil {
		return m, fmt.Errorf("%w: %s does not match its manifest: %w", ErrBackup, dir, err)
	}
	return m, nil
}

// verifyStore opens storeDir read-only and compares its sums with m's.
func verifyStore(ctx context.Context, storeDir string, m *BackupManifest) error {
	desc, err := pebble.Peek(storeDir, vfs.Default)
	if err != nil || !desc.Exists {
		return fmt.Errorf("%s holds no store (%v)", storeDir, err)
	}
	cache := pebble.NewCache(8 << 20)
	defer cache.Unref()
	db, err := pebble.Open(storeDir, &pebble.Options{
		ReadOnly: true,
		FS:       vfs.Default,
		Cache:    cache,
		Logger:   pebbleLogger{zerolog.Nop()},
		// Damage is what verification looks for: the read returns it
		// (the default listener would end the process).
		EventListener: &pebble.EventListener{DataCorruption: func(pebble.DataCorruptionInfo) {}},
	})
	if err != nil {
		return fmt.Errorf("the store does not open: %w", err)
	}
	got, err := sumRecords(ctx, db)
	err = errors.Join(err, db.Close())
	if err != nil {
		return fmt.Errorf("reading the store: %w", err)
	}
	var diffs []string
	for _, name := range slices.Sorted(maps.Keys(joinKeys(got, m.Tables))) {
		if g, w := got[name], m.Tables[name]; g != w {
			diffs = append(diffs, fmt.Sprintf("table %s holds %d rows, %d records, sha256 %.12s…; the manifest says %d, %d, %.12s…",
				name, g.Rows, g.Records, g.SHA256, w.Rows, w.Records, w.SHA256))
		}
	}
	if len(diffs) > 0 {
		return errors.New(strings.Join(diffs, "; "))
	}
	return nil
}

func joinKeys(a, b map[string]TableSum) map[string]struct{} {
	keys := make(map[string]struct{}, len(a)+len(b))
	for k := range a {
		keys[k] = struct{}{}
	}
	for k := range b {
		keys[k] = struct{}{}
	}
	return keys
}

// RestoreBackup verifies the backup in from, copies its store into
// dataDir (absent, or an empty directory), and verifies the copy. A copy
// that fails is removed.
func RestoreBackup(ctx context.Context, from, dataDir string) (*BackupManifest, error) {
	m, err := VerifyBackup(ctx, from)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dataDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("%w: data directory %s: %w", ErrBackup, dataDir, err)
	case len(entries) > 0:
		return nil, fmt.Errorf("%w: data directory %s is not empty; restore into a new or empty directory", ErrBackup, dataDir)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: creating %s: %w", ErrBackup, dataDir, err)
	}
	if err := copyStore(filepath.Join(from, BackupStoreDir), dataDir); err != nil {
		removeContents(dataDir)
		return nil, fmt.Errorf("embedded: copying %s to %s: %w", from, dataDir, err)
	}
	if err := verifyStore(ctx, dataDir, m); err != nil {
		removeContents(dataDir)
		return nil, fmt.Errorf("%w: the copy in %s does not match the manifest: %w", ErrBackup, dataDir, err)
	}
	return m, nil
}

// copyStore copies the regular files of a checkpoint (it has no
// subdirectories) into to, each synced, then to itself.
func copyStore(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", filepath.Join(from, e.Name()))
		}
		if err := copyFile(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
			return err
		}
	}
	return syncDir(to)
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	return errors.Join(err, dst.Sync(), dst.Close())
}

// removeContents empties dir (one this process filled), keeping dir.
func removeContents(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// sameDevice reports whether a and b are on one file system (where hard
// links work); false when either cannot be read.
func sameDevice(a, b string) bool {
	var sa, sb syscall.Stat_t
	return syscall.Stat(a, &sa) == nil && syscall.Stat(b, &sb) == nil && sa.Dev == sb.Dev
}

// HoldsStore reports whether dir holds a store (of any engine version
// Pebble reads).
func HoldsStore(dir string) bool {
	desc, err := pebble.Peek(dir, vfs.Default)
	return err == nil && desc.Exists
}

// InUse reports whether a process holds dir's store open (Pebble's lock on
// its LOCK file).
func InUse(dir string) bool {
	lock, err := vfs.Default.Lock(filepath.Join(dir, "LOCK"))
	if err != nil {
		return true
	}
	_ = lock.Close()
	return false
}
