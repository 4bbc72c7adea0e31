package keys

// Qualifiers (column names) of the rows in each table. On-disk format, as
// the row keys are: declared here once, used by the store.
const (
	// Node and relationship rows, and their index rows (seed 000).
	QualCreated    = "c" // creation time, ms
	QualProperties = "p" // the properties, a JSON object
	QualUpdated    = "u" // last update time, ms: the compare-and-set token
	// A node's owner: the subject that created it, written with the row
	// and never changed (absent: nobody owns it).
	QualOwner = "o"
	// A node being deleted: when its deletion started (or its creation
	// over what an earlier node of its id left), ms. Absent or 0: a live
	// node.
	QualDeleting = "x"
	// Exactly once (docs/design.md, "Exactly once"): the ops (store.OpID,
	// 16 bytes) of the writes that made a node or relationship row what it
	// is, so that a write re-sent or retried recognises its own effect.
	QualCreateOp  = "xc" // the create's op, never overwritten by updates
	QualUpdateOps = "xu" // the ops of the row's last updates, newest first
	QualDeleteOp  = "xd" // the op that marked a node as being deleted (x)
	// A relationship create under way: its op and the creation time its
	// index rows were written with (a retry reuses them).
	QualPendingCreate = "xp"
	// The creation times (ms) of a relationship's start and end nodes
	// when it was created: the relationship is theirs, not a later node's
	// of the same id. On the relationship row and, copied, on both its
	// adjacency index rows (a page checks it against the ends' rows).
	QualEnds = "xe"
	// A relationship create under way, on each of its end node rows: one
	// cell per create, the qualifier this prefix and the create's op. A
	// node's deletion does not mark the node while one is there (see
	// docs/design.md, "Deleting a node").
	QualRelIntentPrefix = "xr"
	// A deleted row's residue: when (ms), by which op, and which creation
	// (time and op) it deleted. The row reads as absent while the residue
	// is at least its u; a create over it stamps its cells after it.
	QualGone = "g"
	// Degree counter rows.
	QualDegree = "n"

	// Timeline and category index rows (seed 001).
	QualTitle    = "t"
	QualBody     = "b"
	QualCategory = "k"
	QualArticleU = "u" // last update time, ms: the compare-and-set token
	// Exactly once (DESIGN.md, "Exactly once", "Articles"), timeline rows
	// only: the OpID (16 bytes) of the write that created the article,
	// never rewritten; the OpIDs of the last updates (16 bytes each,
	// newest last); the last update's op and the cells it replaced, until
	// the update's other writes are done; the OpID of the deletion under
	// way (the row is marked, then its other rows go, then it).
	QualArticleCreatedBy = "xc"
	QualArticleOps       = "xo"
	QualArticlePrev      = "xp"
	QualArticleDeleting  = "x"
	// A post whose home-feed fan-out is not done yet (docs/design.md,
	// "The home feed"): set with the timeline row, deleted once every
	// follower's feed row is written; Repair finishes what a crash left.
	QualArticleFanout = "xf"
	// An article op row (ArticleOpLayout): the write's kind byte, then
	// the article's posted (ms) and seq, 8 bytes each.
	QualArticleOpRecord = "r"
	// An author's counters row: the article sequence, the article count,
	// and one count per category (QualCategoryCount + the category).
	QualSeq           = "seq"
	QualArticleCount  = "n"
	QualCategoryCount = "n/"

	// The layout-version row of TableArticles (ArticleLayoutRow).
	QualLayoutVersion = "v"

	// A top-words row (TopWordsLayout); a word count row's qualifiers are
	// the words themselves.
	QualTopWords     = "l" // the list, most frequent first
	QualTopVersion   = "v" // int64, one more at every write: the compare-and-set token
	QualTopDirty     = "d" // int64 Increment by a writer that could not update the list
	QualTopDirtySeen = "s" // int64: the QualTopDirty the list was recomputed after
	// A post's counts not merged into the list yet: one cell per post,
	// the qualifier this prefix, the post's word serial (8 bytes, big
	// endian) and its Increment's nonce (8 bytes), merged into the list by
	// a later write (see store's wordcounts_pending.go).
	QualTopPendingPrefix = "p"
	// QualWordSerial is a cell of the word count row, not a word (words
	// are letters and digits): an int64 that every Increment of a post,
	// edit or deletion raises with its words (by 1, and by its distinct
	// words above the low 24 bits: see store's serialStep), so that the
	// Increment's answer is a snapshot of the counts it changed that can
	// be ordered against the snapshots the top-words list was merged from.
	QualWordSerial = "#s"
)
