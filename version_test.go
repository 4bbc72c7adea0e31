package main

import (
	"runtime/debug"
	"testing"
)

// TestVersionText: the commit and whether the tree was modified come from
// the build's vcs settings; without them the commit is unknown.
func TestVersionText(t *testing.T) {
	for _, tc := range []struct {
		settings []debug.BuildSetting
		version  string
		want     string
	}{
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "c528c04f6939c71b8502b33cf3fd56ea4c313406"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-11-26T02:00:00Z"}}, "v1.2.0",
			"hbgraph v1.2.0\ncommit c528c04f6939c71b8502b33cf3fd56ea4c313406 (modified) 2026-11-26T02:00:00Z\ngo     go1.26.8\n"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "c528c04f6939c71b8502b33cf3fd56ea4c313406"}, {Key: "vcs.modified", Value: "false"}}, "",
			"hbgraph (devel)\ncommit c528c04f6939c71b8502b33cf3fd56ea4c313406\ngo     go1.26.8\n"},
		{nil, "(devel)", "hbgraph (devel)\ncommit unknown\ngo     go1.26.8\n"},
	} {
		info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/hbgraph/hbgraph", Version: tc.version}, Settings: tc.settings}
		if got := versionText(info, true); got != tc.want {
			t.Errorf("versionText:\n%s\nwant\n%s", got, tc.want)
		}
	}
}
