package tests

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestImportRerunResumesAfterKill: an import killed (SIGKILL) part way,
// then run again and followed by repair, leaves the store a clean import
// leaves: the same export byte for byte, for nodes, relationships and
// articles, and nothing more for a second repair to fix. The rerun skips
// the rows the first run wrote. Without --sync an import writes no log, so
// the kill loses its writes since the last memtable flush (with this
// dataset, all of them); with --sync it keeps every write it made, and the
// rerun resumes from a store the kill cut in the middle of a batch.
func TestImportRerunResumesAfterKill(t *testing.T) {
	parallelTest(t)
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	gen := exec.Command(goTool(), "run", "github.com/hbgraph/hbgraph/bench/gen", "-out", src, "-nodes", "300")
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("bench/gen: %v\n%s", err, out)
	}
	clean := filepath.Join(tmp, "clean")
	importDir(t, clean, src)
	exportTo(t, clean, filepath.Join(tmp, "e-clean"))
	for _, tc := range []struct {
		name  string
		flags []string
	}{{"no log", nil}, {"sync", []string{"--sync"}}} {
		t.Run(tc.name, func(t *testing.T) {
			killAndRerunImport(t, src, filepath.Join(tmp, "e-clean"), tc.flags)
		})
	}
}

// killAndRerunImport imports src into a new directory with flags, kills
// it part way, runs it again and repair, and compares the export with
// wantExport.
func killAndRerunImport(t *testing.T, src, wantExport string, flags []string) {
	killed := t.TempDir()
	args := append([]string{"import", "--data-dir", killed}, flags...)
	for flag, name := range exportFiles {
		args = append(args, flag, filepath.Join(src, name))
	}
	cmd := exec.Command(serverBin, args...)
	cmd.Env = append(cmd.Environ(), "HBGRAPH_LOG_LEVEL=warn")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()

	out, ok := runHbgraph(t, "", args...)
	if !ok {
		t.Fatalf("the rerun failed:\n%s", out)
	}
	t.Logf("rerun after the kill:\n%s", out)
	if out, ok := runHbgraph(t, "", "repair", "--data-dir", killed); !ok {
		t.Fatalf("repair after the rerun: %s", out)
	}
	if out, ok := runHbgraph(t, "", "repair", "--data-dir", killed); !ok || !strings.Contains(out, "nothing to fix") {
		t.Fatalf("a second repair found more to fix:\n%s", out)
	}
	got := filepath.Join(t.TempDir(), "e-killed")
	exportTo(t, killed, got)
	sameFiles(t, wantExport, got)
}
