package embedded_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tsuna/gohbase/hrpc"

	"github.com/hbgraph/hbgraph/store/embedded"
)

// newBackupSource is an engine on disk holding rows r0000..r(n-1) of
// specTable, some flushed into tables by a compaction and some only in
// the write-ahead log, plus a deleted row (its delete marker).
func newBackupSource(t *testing.T, n int) *embedded.Client {
	t.Helper()
	c := openSpec(t, embedded.Options{Dir: t.TempDir()})
	rows := rowNames("r%04d", n)
	putRows(t, c, rows[:n/2]...)
	if err := c.CompactAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	putRows(t, c, rows[n/2:]...)
	mustPut(t, c, "gone", vals("f", "q", "v"))
	mustDel(t, c, "gone", nil)
	return c
}

func TestBackupRestoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	c := newBackupSource(t, 200)
	dir := filepath.Join(t.TempDir(), "backup")
	var taken atomic.Int32
	m, err := c.Backup(ctx, dir, map[string]string{"who": "test"}, func() { taken.Add(1) })
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	if taken.Load() != 1 {
		t.Errorf("taken called %d times, want once", taken.Load())
	}
	if got := m.Tables[specTable]; got.Rows != 201 || got.Records < 201 || got.SHA256 == "" {
		t.Errorf("manifest for %s: %+v, want 201 rows (gone's markers count)", specTable, got)
	}
	if m.Labels["who"] != "test" || m.Bytes <= 0 || m.Created.IsZero() {
		t.Errorf("manifest: %+v", m)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("backup directory: %v, mode %v; want created owner-only", err, fi.Mode())
	}
	// Writes after the backup are not in it.
	mustPut(t, c, "later", vals("f", "q", "v"))

	data := filepath.Join(t.TempDir(), "restored")
	if _, err := embedded.RestoreBackup(ctx, dir, data); err != nil {
		t.Fatalf("RestoreBackup: %v", err)
	}
	r := openSpec(t, embedded.Options{Dir: data})
	got := rowKeys(mustScan(t, r, "", ""))
	if len(got) != 200 || got[0] != "r0000" || got[199] != "r0199" {
		t.Errorf("restored rows: %d (%v…), want r0000..r0199 and neither gone nor later", len(got), got[:min(3, len(got))])
	}
}

func TestBackupRefusesItsTarget(t *testing.T) {
	ctx := context.Background()
	c := newBackupSource(t, 10)
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]string{"not empty": full, "relative": "backup-here"} {
		if _, err := c.Backup(ctx, dir, nil, nil); !errors.Is(err, embedded.ErrBackup) {
			t.Errorf("%s: Backup = %v, want ErrBackup", name, err)
		}
	}
	if _, err := os.Stat("backup-here"); err == nil {
		t.Error("a relative target was created")
	}
	// An empty directory is fine.
	empty := t.TempDir()
	if _, err := c.Backup(ctx, empty, nil, nil); err != nil {
		t.Errorf("Backup into an empty directory: %v", err)
	}
	// Restore refuses a data directory that holds anything.
	if _, err := embedded.RestoreBackup(ctx, empty, full); !errors.Is(err, embedded.ErrBackup) {
		t.Errorf("RestoreBackup into a non-empty directory = %v, want ErrBackup", err)
	}
}

// TestBackupDetectsCorruption damages a good backup in each way a disk or
// an operator might, and expects VerifyBackup (and RestoreBackup, which
// leaves the target empty) to refuse it.
func TestBackupDetectsCorruption(t *testing.T) {
	ctx := context.Background()
	c := newBackupSource(t, 500)
	good := filepath.Join(t.TempDir(), "good")
	if _, err := c.Backup(ctx, good, nil, nil); err != nil {
		t.Fatal(err)
	}
	files := func(dir, suffix string) []string {
		m, _ := filepath.Glob(filepath.Join(dir, embedded.BackupStoreDir, "*"+suffix))
		if len(m) == 0 {
			t.Fatalf("no %s file in the backup", suffix)
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		damage func(dir string)
	}{
		{"a table's byte flipped", func(dir string) {
			f := files(dir, ".sst")[0]
			b, _ := os.ReadFile(f)
			b[len(b)/3] ^= 0x5a
			mustWrite(t, f, b)
		}},
		{"a table removed", func(dir string) { _ = os.Remove(files(dir, ".sst")[0]) }},
		{"the log truncated", func(dir string) {
			for _, f := range files(dir, ".log") {
				_ = os.Truncate(f, 0)
			}
		}},
		{"the manifest's checksum changed", func(dir string) {
			editManifest(t, dir, func(m *embedded.BackupManifest) {
				s := m.Tables[specTable]
				s.SHA256 = strings.Repeat("0", 64)
				m.Tables[specTable] = s
			})
		}},
		{"the manifest's row count changed", func(dir string) {
			editManifest(t, dir, func(m *embedded.BackupManifest) {
				s := m.Tables[specTable]
				s.Rows--
				m.Tables[specTable] = s
			})
		}},
		{"a table the manifest does not name", func(dir string) {
			editManifest(t, dir, func(m *embedded.BackupManifest) { delete(m.Tables, specTable) })
		}},
		{"the manifest removed", func(dir string) { _ = os.Remove(filepath.Join(dir, embedded.BackupManifestName)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "copy")
			copyDir(t, good, dir)
			if _, err := embedded.VerifyBackup(ctx, dir); err != nil {
				t.Fatalf("the undamaged copy: %v", err)
			}
			tc.damage(dir)
			if _, err := embedded.VerifyBackup(ctx, dir); !errors.Is(err, embedded.ErrBackup) {
				t.Fatalf("VerifyBackup = %v, want ErrBackup", err)
			}
			target := t.TempDir()
			if _, err := embedded.RestoreBackup(ctx, dir, target); err == nil {
				t.Fatal("RestoreBackup accepted it")
			}
			if left, _ := os.ReadDir(target); len(left) != 0 {
				t.Errorf("the refused restore left %d files", len(left))
			}
		})
	}
}

// TestBackupUnderWrites backs up while writers run: every Put acknowledged
// before Backup began is in the copy, which verifies.
func TestBackupUnderWrites(t *testing.T) {
	ctx := context.Background()
	c := openSpec(t, embedded.Options{Dir: t.TempDir()})
	var (
		mu    sync.Mutex
		acked []string
		stop  atomic.Bool
		wg    sync.WaitGroup
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				row := fmt.Sprintf("w%d-%06d", w, i)
				p, err := hrpc.NewPutStr(ctx, specTable, row, vals("f", "q", row))
				if err == nil {
					_, err = c.Put(p)
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked = append(acked, row)
				mu.Unlock()
			}
		}()
	}
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 2000 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	before := append([]string(nil), acked...)
	mu.Unlock()
	dir := filepath.Join(t.TempDir(), "b")
	_, err := c.Backup(ctx, dir, nil, nil)
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatalf("Backup under writes: %v", err)
	}
	data := filepath.Join(t.TempDir(), "r")
	if _, err := embedded.RestoreBackup(ctx, dir, data); err != nil {
		t.Fatal(err)
	}
	r := openSpec(t, embedded.Options{Dir: data})
	have := map[string]bool{}
	for _, k := range rowKeys(mustScan(t, r, "", "")) {
		have[k] = true
	}
	for _, row := range before {
		if !have[row] {
			t.Fatalf("row %s, acknowledged before the backup, is not in it (%d rows restored)", row, len(have))
		}
	}
}

func mustWrite(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(name, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func editManifest(t *testing.T, dir string, edit func(*embedded.BackupManifest)) {
	t.Helper()
	m, err := embedded.ReadBackupManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, _ := json.Marshal(m)
	mustWrite(t, filepath.Join(dir, embedded.BackupManifestName), b)
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBackupOntoAnotherFileSystem: the checkpoint is staged beside the
// store, copied, and the staging directory removed.
func TestBackupOntoAnotherFileSystem(t *testing.T) {
	var shm, tmp syscall.Stat_t
	data := t.TempDir()
	if syscall.Stat("/dev/shm", &shm) != nil || syscall.Stat(data, &tmp) != nil || shm.Dev == tmp.Dev {
		t.Skip("needs /dev/shm on another file system than the test's temporary directory")
	}
	ctx := context.Background()
	c := openSpec(t, embedded.Options{Dir: data})
	putRows(t, c, rowNames("r%03d", 50)...)
	if err := c.CompactAll(ctx); err != nil {
		t.Fatal(err)
	}
	base, err := os.MkdirTemp("/dev/shm", "hbgraph-backup-test-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	dir := filepath.Join(base, "b")
	if _, err := c.Backup(ctx, dir, nil, nil); err != nil {
		t.Fatalf("Backup onto /dev/shm: %v", err)
	}
	if staged, _ := filepath.Glob(filepath.Join(data, "backup-staging*")); len(staged) != 0 {
		t.Errorf("staging left in the data directory: %v", staged)
	}
	if _, err := embedded.VerifyBackup(ctx, dir); err != nil {
		t.Error(err)
	}
}
