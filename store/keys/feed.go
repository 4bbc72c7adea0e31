package keys

import "fmt"

// Tags of the home feed's rows in table graph, after H(x). ON-DISK FORMAT:
// never change or reuse one (see the tags of rows.go).
const (
	tagFeed       byte = 0x04
	tagWideAuthor byte = 0x05
)

// FeedLayout is one row of a reader's home feed (docs/design.md, "The home
// feed") in table graph, family g: article (author, posted, articleId)
// entered reader's feed of relationship type typ, because reader follows
// author (reader -[typ]-> author). The row holds no copy of the article (a
// page reads the timeline rows), so an edit shows in every feed at once.
// Newest first by posted time; articles posted in the same millisecond by
// author, then as on the author's timeline (the highest articleId first).
// H(reader) puts a reader's feed rows in the region of its node.
//
//	+-----------+------+-------------+-----------+-------------+-------------+-----------------+
//	| H(reader) | 0x04 | str(reader) | str(type) | rev(posted) | str(author) | desc(articleId) |
//	| 4 bytes   | tag  |             |           | 8 bytes     |             | 8 bytes         |
//	+-----------+------+-------------+-----------+-------------+-------------+-----------------+
var FeedLayout = mustLayout("feed", TableGraph,
	hashPart(2), tagPart(tagFeed), strPart("reader"), strPart("type"), revPart("posted"),
	strPart("author"), descPart("articleId"))

// WideAuthorLayout is the row that lists author among the wide authors of
// relationship type typ in table graph, family g: an author with more
// followers than the fan-out bound, whose articles are not written into
// every follower's feed but merged into a feed when it is read. A prefix up
// to str(type) lists them all (a small set: the store caps what a read
// takes of it).
//
//	+---------+------+-----------+-------------+
//	| H(type) | 0x05 | str(type) | str(author) |
//	| 4 bytes | tag  |           |             |
//	+---------+------+-----------+-------------+
var WideAuthorLayout = mustLayout("wideauthor", TableGraph,
	hashPart(2), tagPart(tagWideAuthor), strPart("type"), strPart("author"))

// Feed is one feed row: Article in Reader's feed of relationship type Type.
type Feed struct {
	Reader, Type string
	Article      Article
}

// Key returns the feed row. It fails with ErrInvalidValue if Article.Posted
// is negative or Article.Seq is above math.MaxInt64.
func (f Feed) Key() ([]byte, error) {
	return FeedLayout.Encode(f.Reader, f.Type, f.Article.Posted, f.Article.Author, f.Article.Seq)
}

// DecodeFeed parses a feed row; errors wrap ErrInvalidKey.
func DecodeFeed(row []byte) (Feed, error) {
	var f fields
	if err := FeedLayout.decode(row, &f); err != nil {
		return Feed{}, err
	}
	return Feed{Reader: f.strs[0], Type: f.strs[1],
		Article: Article{Author: f.strs[2], Posted: f.times[0], Seq: f.nums[0]}}, nil
}

// FeedPrefix returns the prefix of reader's feed rows of relType: scan
// [prefix, PrefixEnd(prefix)) for them newest first.
func FeedPrefix(reader, relType string) []byte { return mustEncode(FeedLayout, reader, relType) }

// FeedReaderPrefix returns the prefix of every feed row of reader, of any
// type: what a deletion of reader, or repair, removes.
func FeedReaderPrefix(reader string) []byte { return mustEncode(FeedLayout, reader) }

// WideAuthor returns the row listing author as wide in relType.
func WideAuthor(relType, author string) []byte { return mustEncode(WideAuthorLayout, relType, author) }

// DecodeWideAuthor returns the type and author of a wide-author row;
// errors wrap ErrInvalidKey.
func DecodeWideAuthor(row []byte) (relType, author string, err error) {
	var f fields
	if err := WideAuthorLayout.decode(row, &f); err != nil {
		return "", "", err
	}
	return f.strs[0], f.strs[1], nil
}

// WideAuthorPrefix returns the prefix of relType's wide-author rows.
func WideAuthorPrefix(relType string) []byte { return mustEncode(WideAuthorLayout, relType) }

// FeedBound returns the row of timeline prefix tl (TimelinePrefix(author))
// that splits author's articles at feed position (posted, atAuthor, seq):
// the articles that come after that position in a feed are the timeline
// rows >= the bound, those before it the rows < it; with inclusive, the
// position itself is author's article (author == atAuthor) and lies at
// the bound, which the caller skips. Feeds order articles posted in the
// same millisecond by author, so another author's bound is a millisecond
// boundary. It fails with ErrInvalidValue for a negative time.
func FeedBound(author string, posted int64, atAuthor string, seq uint64) (bound []byte, inclusive bool, err error) {
	tl := TimelinePrefix(author)
	if posted < 0 {
		return nil, false, fmt.Errorf("%w: negative time", ErrInvalidValue)
	}
	switch {
	case author == atAuthor:
		b, err := Article{Author: author, Posted: posted, Seq: seq}.Key()
		return b, true, err
	case author > atAuthor:
		// Its articles of the millisecond come after the position: the
		// bound is the millisecond's first row (rows with time <= posted).
		start, _, err := Window(tl, 0, posted+1)
		return start, false, err
	default:
		// Its articles of the millisecond come before: the bound is the
		// first row of the millisecond before (rows with time < posted).
		if posted == 0 {
			return PrefixEnd(tl), false, nil // nothing is older
		}
		start, _, err := Window(tl, 0, posted)
		return start, false, err
	}
}
