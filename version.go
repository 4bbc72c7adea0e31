package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/urfave/cli/v3"
)

func init() {
	cli.VersionPrinter = func(cmd *cli.Command) { printVersion(cmd.Root().Writer) }
}

// moduleVersion is the main module's version from the build information:
// a release's tag, or "(devel)" when built from a checkout.
func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

// versionText is what `hbgraph version` and --version print: the module's
// version, the commit it was built from (with "modified" when the work
// tree had changes) and the Go toolchain, all from the build information
// the Go linker records. A build without version control (-buildvcs=false,
// or outside a repository) says the commit is unknown.
func versionText(info *debug.BuildInfo, ok bool) string {
	if !ok {
		return "hbgraph (no build information)\n"
	}
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	commit, modified, at := "unknown", false, ""
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		case "vcs.time":
			at = s.Value
		}
	}
	if modified {
		commit += " (modified)"
	}
	if at != "" {
		commit += " " + at
	}
	return fmt.Sprintf("hbgraph %s\ncommit %s\ngo     %s\n", version, commit, info.GoVersion)
}

// printVersion writes versionText of this binary to w.
func printVersion(w io.Writer) {
	info, ok := debug.ReadBuildInfo()
	fmt.Fprint(w, versionText(info, ok))
}
