package keys

import "math"

// ArticleLayoutVersion is the version of the timeline and category layouts
// the table articles holds. ON-DISK FORMAT: the store keeps it in the row
// ArticleLayoutRow and serves articles only from a table of this version.
//
//	1  ... rev(posted) u64(articleId): articles posted in the same
//	   millisecond came oldest first.
//	2  ... rev(posted) desc(articleId) (TimelineLayout, CategoryLayout):
//	   newest first, ties included.
//
// Both versions have the same parts but the last, so a row of version 1
// migrates to version 2 by rewriting its last 8 bytes: MigrateArticleRow.
const ArticleLayoutVersion = 2

// ArticleLayoutRow returns the row of table articles that records its
// ArticleLayoutVersion. It is 0x00000000 0x00 0x02 "article layout": after
// the four bytes where the other rows have H(author), 0x00 0x02 is no valid
// str part, so no layout decodes the row and it lies under no author's
// prefix (H(author) str(author)); whole-table scans pass over it.
func ArticleLayoutRow() []byte { return []byte("\x00\x00\x00\x00\x00\x02article layout") }

// Layouts of article layout version 1, kept to recognise and migrate rows.
var (
	timelineLayoutV1 = mustLayout("timeline v1", TableArticles,
		hashPart(1), strPart("author"), tagPart(tagTimeline), revPart("posted"), u64Part("articleId"))
	categoryLayoutV1 = mustLayout("category v1", TableArticles,
		hashPart(1), strPart("author"), tagPart(tagCategory), strPart("category"),
		revPart("posted"), u64Part("articleId"))
)

// MigrateArticleRow returns, for a timeline or category row of article
// layout version 1, the row of the same article (and category) in the
// current layout, and true; for any other row, false.
//
// No row is of both versions: a version 1 row's last 8 bytes are an
// articleId of at most math.MaxInt64 (the seq counter is an int64), so below
// 2^63, while desc(articleId) is MaxUint64 - articleId, at least 2^63. A row
// migrated once is therefore never migrated again, and a version 1 row never
// decodes as a current one. A version 1 row whose articleId is above
// math.MaxInt64 (which only an import could have written) has no current
// form: false.
func MigrateArticleRow(row []byte) ([]byte, bool) {
	if v, err := timelineLayoutV1.Decode(row); err == nil {
		a := Article{Author: v[0].(string), Posted: v[1].(int64), Seq: v[2].(uint64)}
		if a.Seq > math.MaxInt64 {
			return nil, false
		}
		k, err := a.Key()
		return k, err == nil
	}
	if v, err := categoryLayoutV1.Decode(row); err == nil {
		c := Category{Name: v[1].(string), Article: Article{Author: v[0].(string), Posted: v[2].(int64), Seq: v[3].(uint64)}}
		if c.Article.Seq > math.MaxInt64 {
			return nil, false
		}
		k, err := c.Key()
		return k, err == nil
	}
	return nil, false
}

// Cells of ArticleLayoutRow besides QualLayoutVersion, written while a
// table of layout 1 is migrated in the background (ON-DISK FORMAT). While
// QualLayoutMigratingFrom holds the old version (an int64) and
// QualLayoutVersion is absent, the table holds rows of both layouts and
// QualLayoutCursor is the prefix (AuthorRowPrefix) of the first author not
// known to be done: every author below it holds rows of the current layout
// only. The migration ends by writing QualLayoutVersion, then deleting
// both cells. A hbgraph from before online migration sees no version and
// rows, and refuses the table, as it refuses one of layout 1.
const (
	QualLayoutMigratingFrom = "m"
	QualLayoutCursor        = "c"
)

// AuthorRowPrefix returns the leading H(author) str(author) of a row of
// table articles (a timeline, category or counters row, of either layout)
// and true; false for any other row, such as ArticleLayoutRow. The rows of
// one author are exactly those with this prefix (str is prefix-free), and
// prefixes order authors as the table does.
func AuthorRowPrefix(row []byte) ([]byte, bool) {
	if len(row) < 4 {
		return nil, false
	}
	_, n, err := decodeStr(row[4:])
	if err != nil || hash(row[4:4+n]) != uint32(row[0])<<24|uint32(row[1])<<16|uint32(row[2])<<8|uint32(row[3]) {
		return nil, false
	}
	return row[:4+n], true
}
