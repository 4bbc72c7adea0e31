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
// the rows the first run wrote.
func TestImportRerunResumesAfterKill(t *testing.T) {
	parallelTest(t)
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	gen := exec.Command(goTool(), "run", "github.com/hbgraph/hbgraph/bench/gen", "-out", src, "-nodes", "300")
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("bench/gen: %v\n%s", err, out)
	}
	clean, killed := filepath.Join(tmp, "clean"), filepath.Join(tmp, "killed")
	importDir(t, clean, src)

	args := []string{"import", "--data-dir", killed}
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
	exportTo(t, clean, filepath.Join(tmp, "e-clean"))
	exportTo(t, killed, filepath.Join(tmp, "e-killed"))
	sameFiles(t, filepath.Join(tmp, "e-clean"), filepath.Join(tmp, "e-killed"))
}
