package keys

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Tag bytes. ON-DISK FORMAT: never change or reuse one; a new layout in a
// table takes a new tag.
const (
	// table graph
	tagNode         byte = 0x00
	tagRelationship byte = 0x01
	tagAdjacency    byte = 0x02
	tagDegree       byte = 0x03

	// table articles, after str(author)
	tagTimeline  byte = 0x00
	tagCategory  byte = 0x01
	tagCounters  byte = 0x02
	tagArticleOp byte = 0x03

	// table wordcounts, after str(author) (the word count row has none)
	tagTopWords byte = 0x01
)

// Direction is the side of a relationship an adjacency or degree row is seen
// from. Its byte values are ON-DISK FORMAT: never change them. The zero
// Direction is invalid, so a forgotten field is an error, not a row.
type Direction byte

const (
	Outgoing Direction = 0x01 // the node is the relationship's start
	Incoming Direction = 0x02 // the node is the relationship's end
)

func (d Direction) valid() bool { return d == Outgoing || d == Incoming }

// Opposite returns the direction the other end sees: Incoming for Outgoing
// and Outgoing for Incoming. An invalid Direction is returned unchanged.
func (d Direction) Opposite() Direction {
	switch d {
	case Outgoing:
		return Incoming
	case Incoming:
		return Outgoing
	}
	return d
}

// String returns "OUTGOING", "INCOMING" or "Direction(0xNN)".
func (d Direction) String() string {
	switch d {
	case Outgoing:
		return "OUTGOING"
	case Incoming:
		return "INCOMING"
	}
	return fmt.Sprintf("Direction(0x%02x)", byte(d))
}

// NodeLayout is the row of a node (seed 000) in table graph, family g; cells
// c (created), p (properties), u (updated).
//
//	+---------+------+---------+
//	| H(id)   | 0x00 | str(id) |
//	| 4 bytes | tag  |         |
//	+---------+------+---------+
var NodeLayout = mustLayout("node", TableGraph,
	hashPart(2), tagPart(tagNode), strPart("id"))

// RelationshipLayout is the row of a relationship (seed 000) in table graph,
// family g; cells c, p, u. H(start) puts it in the region of its start node.
//
//	+----------+------+------------+-----------+----------+
//	| H(start) | 0x01 | str(start) | str(type) | str(end) |
//	| 4 bytes  | tag  |            |           |          |
//	+----------+------+------------+-----------+----------+
var RelationshipLayout = mustLayout("relationship", TableGraph,
	hashPart(2), tagPart(tagRelationship), strPart("start"), strPart("type"), strPart("end"))

// AdjacencyLayout is the index row of a relationship seen from one end n
// (seeds 000/002) in table graph, family g; cell p holds the relationship's
// properties, its timestamp the relationship's updated time; cell xe
// (QualEnds, absent in older rows and imports) its ends' creation times,
// as its row's. A prefix up to
// str(type) lists n's relationships of one type and direction, newest first.
//
//	+---------+------+--------+------+-----------+--------------+------------+
//	| H(n)    | 0x02 | str(n) | dir  | str(type) | rev(created) | str(other) |
//	| 4 bytes | tag  |        | 1 B  |           | 8 bytes      |            |
//	+---------+------+--------+------+-----------+--------------+------------+
var AdjacencyLayout = mustLayout("adjacency", TableGraph,
	hashPart(2), tagPart(tagAdjacency), strPart("node"), dirPart("dir"), strPart("type"),
	revPart("created"), strPart("other"))

// DegreeLayout is the counter row of n's relationships of one type and
// direction in table graph, family g; cell n holds an int64.
//
//	+---------+------+--------+------+-----------+
//	| H(n)    | 0x03 | str(n) | dir  | str(type) |
//	| 4 bytes | tag  |        | 1 B  |           |
//	+---------+------+--------+------+-----------+
var DegreeLayout = mustLayout("degree", TableGraph,
	hashPart(2), tagPart(tagDegree), strPart("node"), dirPart("dir"), strPart("type"))

// TimelineLayout is the row of an article in its author's timeline (seed 001)
// in table articles, family a; it holds the article. Newest first: by posted
// time, and articles posted in the same millisecond by articleId, the
// highest (the last created) first.
//
//	+-----------+-------------+------+-------------+-----------------+
//	| H(author) | str(author) | 0x00 | rev(posted) | desc(articleId) |
//	| 4 bytes   |             | tag  | 8 bytes     | 8 bytes         |
//	+-----------+-------------+------+-------------+-----------------+
//
// Article layout 2 (see ArticleLayoutVersion); layout 1 had u64(articleId).
var TimelineLayout = mustLayout("timeline", TableArticles,
	hashPart(1), strPart("author"), tagPart(tagTimeline), revPart("posted"), descPart("articleId"))

// CategoryLayout is the secondary index row of an article by category (seed
// 001) in table articles, family a; it holds a copy of the article. Newest
// first within a category, in the timeline's order.
//
//	+-----------+-------------+------+---------------+-------------+-----------------+
//	| H(author) | str(author) | 0x01 | str(category) | rev(posted) | desc(articleId) |
//	| 4 bytes   |             | tag  |               | 8 bytes     | 8 bytes         |
//	+-----------+-------------+------+---------------+-------------+-----------------+
//
// Article layout 2 (see ArticleLayoutVersion); layout 1 had u64(articleId).
var CategoryLayout = mustLayout("category", TableArticles,
	hashPart(1), strPart("author"), tagPart(tagCategory), strPart("category"),
	revPart("posted"), descPart("articleId"))

// CountersLayout is the counter row of an author in table articles, family a;
// cells seq (the next articleId), n (article count), n/ + category.
//
//	+-----------+-------------+------+
//	| H(author) | str(author) | 0x02 |
//	| 4 bytes   |             | tag  |
//	+-----------+-------------+------+
var CountersLayout = mustLayout("counters", TableArticles,
	hashPart(1), strPart("author"), tagPart(tagCounters))

// ArticleOpLayout is the row that records one article write of an author
// by its OpID (store.OpID: the 16 bytes as two u64 parts, high half
// first), in table articles, family a: what a retry of the write with the
// same op needs to find its earlier effect (the article a post created,
// whose key the retry cannot derive). Short-lived: Repair deletes those
// older than a day.
//
//	+-----------+-------------+------+----------+----------+
//	| H(author) | str(author) | 0x03 | u64(opHi)| u64(opLo)|
//	| 4 bytes   |             | tag  | 8 bytes  | 8 bytes  |
//	+-----------+-------------+------+----------+----------+
var ArticleOpLayout = mustLayout("articleop", TableArticles,
	hashPart(1), strPart("author"), tagPart(tagArticleOp), u64Part("opHi"), u64Part("opLo"))

// WordCountsLayout is the word count row of an author (seed 004, row =
// source, qualifier = word) in table wordcounts, family w; one int64 cell per
// word.
//
//	+-----------+-------------+
//	| H(author) | str(author) |
//	| 4 bytes   |             |
//	+-----------+-------------+
var WordCountsLayout = mustLayout("wordcounts", TableWordCounts,
	hashPart(1), strPart("author"))

// TopWordsLayout is the top-words row of an author in table wordcounts,
// family w: the author's most frequent words with their counts, kept by
// the writers of the word count row so that a read of the top words costs
// the list, not the author's vocabulary. Cells QualTopWords (the list),
// QualTopVersion (its compare-and-set token), QualTopDirty,
// QualTopDirtySeen, and the pending merges (QualTopPendingPrefix). The word count row is a prefix of it (the word count
// row has no tag): both are AuthorPrefix(author), and sort together.
//
//	+-----------+-------------+------+
//	| H(author) | str(author) | 0x01 |
//	| 4 bytes   |             | tag  |
//	+-----------+-------------+------+
var TopWordsLayout = mustLayout("topwords", TableWordCounts,
	hashPart(1), strPart("author"), tagPart(tagTopWords))

// layouts lists every declared layout, for tests.
var layouts = []*Layout{
	NodeLayout, RelationshipLayout, AdjacencyLayout, DegreeLayout,
	TimelineLayout, CategoryLayout, CountersLayout, WordCountsLayout,
	TopWordsLayout, ArticleOpLayout, FeedLayout, WideAuthorLayout,
}

// mustEncode encodes values that cannot be invalid (strings only).
func mustEncode(l *Layout, values ...any) []byte {
	b, err := l.Prefix(values...)
	if err != nil {
		panic(err) // a bug in this package: strings always encode
	}
	return b
}

// Node returns the row of node id.
func Node(id string) []byte { return mustEncode(NodeLayout, id) }

// NodeRow is Node(id) as a string, in one allocation: the key of every
// node Get.
func NodeRow(id string) string { return NodeLayout.keyOf1(id) }

// DecodeNode returns the id of a node row; errors wrap ErrInvalidKey.
func DecodeNode(row []byte) (string, error) {
	var f fields
	if err := NodeLayout.decode(row, &f); err != nil {
		return "", err
	}
	return f.strs[0], nil
}

// Relationship identifies a relationship: start -[type]-> end.
type Relationship struct {
	Start, Type, End string
}

// Key returns the relationship's row.
func (r Relationship) Key() []byte {
	return mustEncode(RelationshipLayout, r.Start, r.Type, r.End)
}

// DecodeRelationship parses a relationship row; errors wrap ErrInvalidKey.
func DecodeRelationship(row []byte) (Relationship, error) {
	var f fields
	if err := RelationshipLayout.decode(row, &f); err != nil {
		return Relationship{}, err
	}
	return Relationship{Start: f.strs[0], Type: f.strs[1], End: f.strs[2]}, nil
}

// Adjacency is one adjacency index row: relationship of type Type between
// Node and Other, created at Created (Unix ms), seen from Node in direction
// Dir.
type Adjacency struct {
	Node    string
	Dir     Direction
	Type    string
	Created int64
	Other   string
}

// Key returns the adjacency row. It fails with ErrInvalidValue if Dir is
// invalid or Created is negative.
func (a Adjacency) Key() ([]byte, error) {
	return AdjacencyLayout.Encode(a.Node, a.Dir, a.Type, a.Created, a.Other)
}

// DecodeAdjacency parses an adjacency row; errors wrap ErrInvalidKey.
func DecodeAdjacency(row []byte) (Adjacency, error) {
	var f fields
	if err := AdjacencyLayout.decode(row, &f); err != nil {
		return Adjacency{}, err
	}
	return Adjacency{
		Node:    f.strs[0],
		Dir:     f.dirs[0],
		Type:    f.strs[1],
		Created: f.times[0],
		Other:   f.strs[2],
	}, nil
}

// AdjacencyPrefix returns the prefix of node's adjacency rows of relType in
// direction dir: scan [prefix, PrefixEnd(prefix)) for them newest first. It
// fails with ErrInvalidValue if dir is invalid.
func AdjacencyPrefix(node string, dir Direction, relType string) ([]byte, error) {
	return AdjacencyLayout.Prefix(node, dir, relType)
}

// Degree identifies the counter of Node's relationships of Type in direction
// Dir.
type Degree struct {
	Node string
	Dir  Direction
	Type string
}

// Key returns the degree counter row. It fails with ErrInvalidValue if Dir is
// invalid.
func (d Degree) Key() ([]byte, error) {
	return DegreeLayout.Encode(d.Node, d.Dir, d.Type)
}

// DecodeDegree parses a degree counter row; errors wrap ErrInvalidKey.
func DecodeDegree(row []byte) (Degree, error) {
	var f fields
	if err := DegreeLayout.decode(row, &f); err != nil {
		return Degree{}, err
	}
	return Degree{Node: f.strs[0], Dir: f.dirs[0], Type: f.strs[1]}, nil
}

// Article identifies an article: its author, when it was posted (Unix ms)
// and its per-author sequence number (articleId in DESIGN.md, from the
// author's seq counter). Its public id is ID; its row is Key.
type Article struct {
	Author string
	Posted int64
	Seq    uint64
}

// Key returns the article's timeline row. It fails with ErrInvalidValue if
// Posted is negative or Seq is above math.MaxInt64.
func (a Article) Key() ([]byte, error) {
	return TimelineLayout.Encode(a.Author, a.Posted, a.Seq)
}

// DecodeTimeline parses a timeline row; errors wrap ErrInvalidKey.
func DecodeTimeline(row []byte) (Article, error) {
	var f fields
	if err := TimelineLayout.decode(row, &f); err != nil {
		return Article{}, err
	}
	return Article{Author: f.strs[0], Posted: f.times[0], Seq: f.nums[0]}, nil
}

// TimelinePrefix returns the prefix of author's timeline rows: scan
// [prefix, PrefixEnd(prefix)) for the articles newest first, or see Window.
func TimelinePrefix(author string) []byte { return mustEncode(TimelineLayout, author) }

// Category is one category index row: Article filed under category Name.
type Category struct {
	Name    string
	Article Article
}

// Key returns the category index row. It fails with ErrInvalidValue if
// Article.Posted is negative or Article.Seq is above math.MaxInt64.
func (c Category) Key() ([]byte, error) {
	return CategoryLayout.Encode(c.Article.Author, c.Name, c.Article.Posted, c.Article.Seq)
}

// DecodeCategory parses a category index row; errors wrap ErrInvalidKey.
func DecodeCategory(row []byte) (Category, error) {
	var f fields
	if err := CategoryLayout.decode(row, &f); err != nil {
		return Category{}, err
	}
	return Category{
		Name:    f.strs[1],
		Article: Article{Author: f.strs[0], Posted: f.times[0], Seq: f.nums[0]},
	}, nil
}

// CategoryPrefix returns the prefix of author's category index rows for
// category: scan [prefix, PrefixEnd(prefix)) for them newest first, or see
// Window.
func CategoryPrefix(author, category string) []byte {
	return mustEncode(CategoryLayout, author, category)
}

// Counters returns the counter row of author.
func Counters(author string) []byte { return mustEncode(CountersLayout, author) }

// DecodeCounters returns the author of a counter row; errors wrap
// ErrInvalidKey.
func DecodeCounters(row []byte) (string, error) {
	var f fields
	if err := CountersLayout.decode(row, &f); err != nil {
		return "", err
	}
	return f.strs[0], nil
}

// ArticleOp returns the op row of author's write op (ArticleOpLayout).
func ArticleOp(author string, op [16]byte) []byte {
	b, err := ArticleOpLayout.Encode(author, binary.BigEndian.Uint64(op[:8]), binary.BigEndian.Uint64(op[8:]))
	if err != nil {
		panic(err) // a bug in this package: strings and u64s always encode
	}
	return b
}

// DecodeArticleOp returns the author and op of an op row; errors wrap
// ErrInvalidKey.
func DecodeArticleOp(row []byte) (string, [16]byte, error) {
	var f fields
	var op [16]byte
	if err := ArticleOpLayout.decode(row, &f); err != nil {
		return "", op, err
	}
	binary.BigEndian.PutUint64(op[:8], f.nums[0])
	binary.BigEndian.PutUint64(op[8:], f.nums[1])
	return f.strs[0], op, nil
}

// AuthorPrefix returns H(author) str(author): the prefix of every row of
// author in table articles (timeline, category index, counters; scan
// [prefix, PrefixEnd(prefix)) for all of them), and the whole of author's
// row in table wordcounts (and the prefix of their top-words row). Authors
// therefore sort the same way in both tables, by AuthorPrefix.
func AuthorPrefix(author string) []byte {
	p := TimelinePrefix(author)
	return p[:len(p)-1] // without the timeline's tag
}

// DecodeAuthor returns the author of a row of table articles: a timeline,
// category index, counters or op row. Errors wrap ErrInvalidKey.
func DecodeAuthor(row []byte) (string, error) {
	if a, err := DecodeTimeline(row); err == nil {
		return a.Author, nil
	}
	if c, err := DecodeCategory(row); err == nil {
		return c.Article.Author, nil
	}
	if author, err := DecodeCounters(row); err == nil {
		return author, nil
	}
	if author, _, err := DecodeArticleOp(row); err == nil {
		return author, nil
	}
	return "", fmt.Errorf("%w: not a timeline, category, counters or op row", ErrInvalidKey)
}

// WordCounts returns the word count row of author.
func WordCounts(author string) []byte { return mustEncode(WordCountsLayout, author) }

// DecodeWordCounts returns the author of a word count row; errors wrap
// ErrInvalidKey.
func DecodeWordCounts(row []byte) (string, error) {
	var f fields
	if err := WordCountsLayout.decode(row, &f); err != nil {
		return "", err
	}
	return f.strs[0], nil
}

// TopWords returns the top-words row of author.
func TopWords(author string) []byte { return mustEncode(TopWordsLayout, author) }

// DecodeTopWords returns the author of a top-words row; errors wrap
// ErrInvalidKey.
func DecodeTopWords(row []byte) (string, error) {
	var f fields
	if err := TopWordsLayout.decode(row, &f); err != nil {
		return "", err
	}
	return f.strs[0], nil
}

// Window returns the scan range [start, stop) of the rows under prefix whose
// time lies in [after, before), newest first, for a prefix directly followed
// by a rev part: TimelinePrefix, CategoryPrefix (posted) or AdjacencyPrefix
// (created). The newer bound gives the start row. Both rows start with
// prefix, so the range never leaves it. It fails with ErrInvalidValue if a
// bound is negative, and returns ErrEmptyWindow if after >= before. For a
// window open on one side pass after = 0 or before = math.MaxInt64 (which
// leaves out only t = math.MaxInt64).
func Window(prefix []byte, after, before int64) (start, stop []byte, err error) {
	if after < 0 || before < 0 {
		return nil, nil, fmt.Errorf("%w: window [%d, %d): negative time", ErrInvalidValue, after, before)
	}
	if after >= before {
		return nil, nil, ErrEmptyWindow
	}
	// Rows with time t <= before-1 have rev >= MaxInt64-(before-1); rows with
	// t >= after have rev <= MaxInt64-after, i.e. rev < MaxInt64-after+1. Both
	// bounds fit in 8 bytes: MaxInt64-x+1 <= 1<<63 for x >= 0.
	start = binary.BigEndian.AppendUint64(append(make([]byte, 0, len(prefix)+8), prefix...),
		uint64(math.MaxInt64-before)+1)
	stop = binary.BigEndian.AppendUint64(append(make([]byte, 0, len(prefix)+8), prefix...),
		uint64(math.MaxInt64-after)+1)
	return start, stop, nil
}
