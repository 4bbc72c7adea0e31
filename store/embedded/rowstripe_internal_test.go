package embedded

import (
	"hash/fnv"
	"testing"
)

// rowStripe is FNV-1a of the table's name, a 0 and the row, as hash/fnv
// computes it.
func TestRowStripeIsFNV1a(t *testing.T) {
	for _, name := range []string{"", "graph", "wordcounts"} {
		for _, row := range []string{"", "a", "\x00r1w\x00\x01", "a longer row key with \xff bytes"} {
			h := fnv.New32a()
			h.Write([]byte(name))
			h.Write([]byte{0})
			h.Write([]byte(row))
			if got, want := rowStripe(&table{name: name}, []byte(row)), int(h.Sum32()%rowLocks); got != want {
				t.Errorf("rowStripe(%q, %q) = %d, want %d", name, row, got, want)
			}
		}
	}
}
