package tests

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// runCommand runs hbgraph with args to its end (bounded) and returns its
// output and exit status.
func runCommand(t testing.TB, args ...string) (out string, status int) {
	t.Helper()
	cmd := exec.Command(serverBin, args...)
	done := make(chan struct{})
	timer := time.AfterFunc(time.Minute, func() {
		select {
		case <-done:
		default:
			_ = cmd.Process.Kill()
		}
	})
	b, err := cmd.CombinedOutput()
	close(done)
	timer.Stop()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		status = exit.ExitCode()
	default:
		t.Fatalf("hbgraph %q: %v", args, err)
	}
	return string(b), status
}

// TestVersion: `hbgraph version` and --version (-v) print the version, the
// commit (or that it is unknown) and the Go version the binary was built
// with, and exit 0.
func TestVersion(t *testing.T) {
	t.Parallel()
	want := regexp.MustCompile(`(?m)\Ahbgraph \S+.*\ncommit ([0-9a-f]{40}( \(modified\))?|unknown)( \S+)?\ngo +` + regexp.QuoteMeta(runtime.Version()) + `\n\z`)
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		out, status := runCommand(t, args...)
		if status != 0 || !want.MatchString(out) {
			t.Errorf("hbgraph %q: exit %d, printed\n%s", args, status, out)
		}
	}
}

// TestDataDirThatHoldsNoStore: a mistyped --data-dir is never taken
// silently. repair refuses a directory that holds no store (missing or
// empty), naming it, and creates nothing; the server creates a store
// where there was none but says so in the log, naming the directory, and
// says nothing of the kind once the store exists; repair then runs.
func TestDataDirThatHoldsNoStore(t *testing.T) {
	parallelTest(t)
	root := t.TempDir()
	missing := filepath.Join(root, "dta")
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{missing, empty} {
		out, status := runCommand(t, "repair", "--data-dir", dir)
		if status == 0 || !strings.Contains(out, dir) || !strings.Contains(out, "holds no hbgraph store") || strings.Contains(out, "nothing to fix") {
			t.Errorf("repair on %s: exit %d:\n%s", dir, status, out)
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("repair created %s: %v", missing, err)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("repair wrote into %s: %v", empty, entries)
	}

	created := regexp.MustCompile(`"level":"warn".*"data_dir":"` + regexp.QuoteMeta(missing) + `".*creating a new, empty one`)
	s := startServerAt(t, missing)
	if !created.MatchString(s.out.String()) {
		t.Errorf("a new store was created without a warning naming %s:\n%s", missing, s.out.String())
	}
	s.stop(t)
	s = startServerAt(t, missing)
	if strings.Contains(s.out.String(), "creating a new") {
		t.Errorf("a store that exists was reported as created:\n%s", s.out.String())
	}
	s.stop(t)
	if out, status := runCommand(t, "repair", "--data-dir", missing); status != 0 || !strings.Contains(out, "nothing to fix") {
		t.Errorf("repair on the server's store: exit %d:\n%s", status, out)
	}
}

// TestDataDirInUse: a second server, or repair, on a data directory a
// running server holds says that another hbgraph holds it, naming it, not
// the system call's "resource temporarily unavailable".
func TestDataDirInUse(t *testing.T) {
	parallelTest(t)
	s := startServer(t)
	for _, args := range [][]string{
		{"--data-dir", s.dataDir, "--listen", "127.0.0.1:" + freePort(t), "--admin-listen", "127.0.0.1:" + freePort(t)},
		{"repair", "--data-dir", s.dataDir},
	} {
		out, status := runCommand(t, args...)
		if status == 0 || !strings.Contains(out, "another hbgraph") || !strings.Contains(out, s.dataDir) ||
			strings.Contains(out, "resource temporarily unavailable") {
			t.Errorf("hbgraph %q beside a running server: exit %d:\n%s", args, status, out)
		}
	}
}

// TestHelpShowsDefaults: --help shows the default of a bool flag that is
// on, names each flag's variable once, and lists every header a page may
// always send.
func TestHelpShowsDefaults(t *testing.T) {
	t.Parallel()
	out, status := runCommand(t, "--help")
	if status != 0 {
		t.Fatalf("--help: exit %d\n%s", status, out)
	}
	line := func(flag string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), flag+" ") {
				return l
			}
		}
		t.Fatalf("--help has no %s:\n%s", flag, out)
		return ""
	}
	if l := line("--introspection"); !strings.Contains(l, "(default: true)") {
		t.Errorf("--introspection's default is not shown: %s", l)
	}
	if l := line("--pprof"); strings.Count(l, "HBGRAPH_PPROF") != 1 {
		t.Errorf("--pprof names its variable more than once: %s", l)
	}
	if l := line("--cors-headers"); !strings.Contains(l, "Accept") {
		t.Errorf("--cors-headers does not list Accept, which is always allowed: %s", l)
	}
	if l := line("--listen"); !strings.Contains(l, "--auth-jwks-url") {
		t.Errorf("--listen does not say that checking tokens allows any address: %s", l)
	}
}
