package importer

import (
	"path/filepath"
	"strings"
	"testing"
)

// ExpectedRecords counts each file's bytes at its kind's rate, and a file
// it cannot read, or none named, as nothing.
func TestExpectedRecordsFollowTheFilesSizes(t *testing.T) {
	dir := t.TempDir()
	line := strings.Repeat("x", 299)                                        // 300 bytes with its newline
	nodes := write(t, dir, "nodes.jsonl", line, line)                       // 600 bytes
	relationships := write(t, dir, "relationships.jsonl", line, line, line) // 900
	articles := write(t, dir, "articles.jsonl", line)                       // 300
	missing := filepath.Join(dir, "missing.jsonl")
	for _, tc := range []struct {
		files Files
		want  int64
	}{
		{Files{}, 0},
		{Files{Nodes: nodes}, 600 / nodeBytesPerRecord},
		{Files{Relationships: relationships}, 900 / relationshipBytesPerRecord},
		{Files{Articles: articles}, 300 / articleBytesPerRecord},
		{Files{Nodes: nodes, Relationships: relationships, Articles: articles},
			600/nodeBytesPerRecord + 900/relationshipBytesPerRecord + 300/articleBytesPerRecord},
		{Files{Nodes: missing, Relationships: relationships}, 900 / relationshipBytesPerRecord},
	} {
		if got := ExpectedRecords(tc.files); got != tc.want {
			t.Errorf("ExpectedRecords(%+v) = %d, want %d", tc.files, got, tc.want)
		}
	}
}
