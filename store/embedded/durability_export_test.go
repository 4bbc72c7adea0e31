package embedded

// FlushesCompleted is how many memtable flushes c's store has completed,
// for the durability test's child without a log: what a kill must keep.
func FlushesCompleted(c *Client) int64 { return c.db.Metrics().Flush.Count }
