package embedded

import (
	"testing"
	"time"
)

// WaitKeyFilter waits until c consults a key filter and builds none.
func WaitKeyFilter(tb testing.TB, c *Client) {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for c.filter.Load() == nil || c.filterBuilding.Load() {
		if time.Now().After(deadline) {
			tb.Fatal("the key filter was not built within a minute")
		}
		time.Sleep(time.Millisecond)
	}
}

// MayHaveRecordOfColumn is the key filter's answer for a column's record.
func (c *Client) MayHaveRecordOfColumn(table, row, family, qualifier string) bool {
	t := c.tables[table]
	f, err := t.family([]byte(family))
	if err != nil {
		panic(err)
	}
	w := c.newRowWriter(t, []byte(row))
	defer w.close()
	return c.mayHaveRecord(w.columnKey(f, []byte(qualifier)))
}

// RebuildKeyFilter builds c's key filter again and waits for it.
func RebuildKeyFilter(tb testing.TB, c *Client) {
	tb.Helper()
	WaitKeyFilter(tb, c)
	c.startKeyFilter(1)
	WaitKeyFilter(tb, c)
}
