package importer

import "os"

// Bytes of input per record the embedded engine holds after an import
// (the key filter's count of the bench's 10,000-node dataset: 50,002
// records of 1.36 MB of nodes, 2.31 million of 37.2 MB of relationships,
// 1.81 million of 43.4 MB of articles), rounded down so that the estimate
// errs large.
const (
	nodeBytesPerRecord         = 25
	relationshipBytesPerRecord = 15
	articleBytesPerRecord      = 20
)

// ExpectedRecords estimates, from the files' sizes, how many records an
// import of files adds to the embedded engine, so that it can size its
// key filter for them once (embedded.Options.ExpectedRecords). A file
// that cannot be read counts for nothing: the import reports it.
func ExpectedRecords(files Files) int64 {
	var n int64
	for _, f := range []struct {
		name           string
		bytesPerRecord int64
	}{
		{files.Nodes, nodeBytesPerRecord},
		{files.Relationships, relationshipBytesPerRecord},
		{files.Articles, articleBytesPerRecord},
	} {
		if f.name == "" {
			continue
		}
		if info, err := os.Stat(f.name); err == nil {
			n += info.Size() / f.bytesPerRecord
		}
	}
	return n
}
