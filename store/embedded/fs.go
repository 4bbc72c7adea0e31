package embedded

import (
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// noSyncWALFS hands Pebble WAL files whose Sync is a no-op.
//
// Pebble buffers a NoSync commit inside the process and writes it to the WAL
// file later, so a killed process can lose acknowledged writes. Committing
// with pebble.Sync makes Pebble write(2) the record before returning; this
// file system then skips the fsync that would follow, which is what
// Options.Sync=false means: safe against a process crash, not a power cut.
// Manifests and tables keep their real syncs.
type noSyncWALFS struct{ vfs.FS }

func (fs noSyncWALFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	return wrapWAL(name, f), err
}

func (fs noSyncWALFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	return wrapWAL(newname, f), err
}

func wrapWAL(name string, f vfs.File) vfs.File {
	if f == nil || !strings.HasSuffix(name, ".log") {
		return f
	}
	return noSyncFile{f}
}

type noSyncFile struct{ vfs.File }

func (noSyncFile) Sync() error                       { return nil }
func (noSyncFile) SyncData() error                   { return nil }
func (noSyncFile) SyncTo(length int64) (bool, error) { return true, nil }
