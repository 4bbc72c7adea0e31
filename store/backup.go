package store

import (
	"context"
	"errors"
)

// ErrNoBackup: the store runs on a cluster, which hbgraph does not back up
// (HBase's own snapshots do).
var ErrNoBackup = errors.New("store: backups are for the embedded engine; back a cluster up with HBase snapshots")

// backuper is what the embedded engine offers for backups (see
// embedded.Client.Backup); its manifest is returned as the engine's type.
type backuper[M any] interface {
	Backup(ctx context.Context, dir string, labels map[string]string, taken func()) (M, error)
}

// Backup writes a backup of the embedded engine into dir and returns its
// manifest (for JSON). The caller quiesces multi-row writes first: the
// engine's copy is consistent record by record, not operation by
// operation. taken is called once the copy is taken (or has failed): the
// caller may let writes go on then.
func Backup[M any](ctx context.Context, s *Store, dir string, labels map[string]string, taken func()) (M, error) {
	b, ok := s.hc.(backuper[M])
	if !ok {
		taken()
		var zero M
		return zero, ErrNoBackup
	}
	return b.Backup(ctx, dir, labels, taken)
}
