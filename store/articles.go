package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/hbgraph/hbgraph/store/keys"
)

// The blog of seed 001, in table articles, family a (layouts in store/keys):
//
//	timeline row   H(author) str(author) 0x00 rev(posted) desc(seq)
//	               t title, b body, k category, u updated (int64 ms);
//	               every cell stamped u
//	category row   H(author) str(author) 0x01 str(category) rev(posted) desc(seq)
//	               the same four cells, stamped u (seed 002's index rows)
//	counters row   H(author) str(author) 0x02
//	               seq (Increment: the last seq handed out), n (articles),
//	               n/<category> (articles in category); int64 cells
//	layout row     keys.ArticleLayoutRow(): v, the layout version (layout.go)
//
// Every operation on articles first checks the layout (CheckArticleLayout):
// a table of another layout fails it with ErrArticleLayout until Repair has
// migrated it.
//
// An article is written in this order, each step after a fault point named
// after it: seq, timeline row (CheckAndMutate "u absent"), category row,
// n, n/<category>, one word count Increment per distinct word. Updates and
// deletes are compare-and-set loops on u; the rows written after the
// timeline row follow it and converge by their timestamps. A crash between
// two writes leaves the later rows behind: Repair restores the category
// rows and counters (repairArticles) and the word counts
// (repairWordCounts).

// Article limits. An input outside them is ErrInvalidInput and writes
// nothing. The body bound keeps a timeline row, and its copy in the category
// index, far below HBase's default 10 MiB cell limit
// (hbase.client.keyvalue.maxsize); categories are bounded by MaxTypeBytes.
const (
	MaxTitleBytes = 1024
	MaxBodyBytes  = 1 << 20
)

// Fault points of the article writes (see Store.fault), each named after the
// write that follows it.
const (
	pointArticleSeq         = "article-seq"
	pointArticleTimeline    = "article-timeline"
	pointArticleCategory    = "article-category"
	pointArticleOldCategory = "article-old-category"
	pointArticleCount       = "article-count"
	pointWordCount          = "word-count"
	pointArticleRecheck     = "article-recheck"
)

// Article is one blog article. Posted and Updated have millisecond
// precision.
type Article struct {
	ID       string // public id; getArticle(ID) finds the article with one Get
	Author   string // the author's node id
	Title    string
	Body     string
	Category string
	Posted   time.Time
	Updated  time.Time
}

// articleCells is what timeline and category rows hold.
type articleCells struct {
	title, body, category string
	updated               int64 // u, and the newest cell's timestamp
}

func (a articleCells) cells() cells {
	return cells{
		keys.QualTitle:    []byte(a.title),
		keys.QualBody:     []byte(a.body),
		keys.QualCategory: []byte(a.category),
		keys.QualArticleU: encodeMs(a.updated),
	}
}

// cellsChangedFrom is the cells an update from old to a writes to a row
// that holds old: u, and those of the others that changed. A cell left
// keeps old's stamp, below u, which nothing newer than old's u hides (a
// row's deletion is stamped with a newer u, and takes every cell).
func (a articleCells) cellsChangedFrom(old articleCells) cells {
	c := cells{keys.QualArticleU: encodeMs(a.updated)}
	if a.title != old.title {
		c[keys.QualTitle] = []byte(a.title)
	}
	if a.body != old.body {
		c[keys.QualBody] = []byte(a.body)
	}
	if a.category != old.category {
		c[keys.QualCategory] = []byte(a.category)
	}
	return c
}

// decodeArticleCells reads t, b, k, u of the row with key row; ok is false
// when the row does not exist (no u).
func decodeArticleCells[K rowKey, C cellSource](row K, c C) (a articleCells, ok bool, err error) {
	return decodeArticleCellsSharing(row, c, nil, true)
}

// decodeArticleCellsSharing is decodeArticleCells for the rows of one
// page: a category equal to one of *categories is that string, not a new
// one (an author files many articles under a few categories), and a new
// one is added to it.
//
// Without withBody the row was read without its body (ArticleQuery.NoBody):
// body is "" and its absence is no corruption.
func decodeArticleCellsSharing[K rowKey, C cellSource](row K, c C, categories *[]string, withBody bool) (a articleCells, ok bool, err error) {
	uv, _ := c.lookup(keys.QualArticleU)
	if uv == nil {
		return a, false, nil
	}
	u, okU := decodeMs(uv)
	t, okT := c.lookup(keys.QualTitle)
	var b []byte
	okB := true
	if withBody {
		b, okB = c.lookup(keys.QualBody)
	}
	k, okK := c.lookup(keys.QualCategory)
	if !okU || !okT || !okB || !okK {
		return a, false, corrupt(row, "article cells %q", qualifiersOf(c))
	}
	return articleCells{title: cellString(t), body: cellString(b), category: sharedString(k, categories), updated: u}, true, nil
}

// cellString is a read cell's value as a string, without a copy: the
// title and body of every article a page lists were two allocations and
// two copies each (of the most read strings). A read's cells are never
// written again (the embedded engine hands each read bytes of its own,
// gohbase decodes each response into its own), and the strings keep them
// alive only as long as the article does.
func cellString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// sharedString is b as one of *known if one equals it, else as a new
// string added to them (at most 8 kept).
func sharedString(b []byte, known *[]string) string {
	if known == nil {
		return string(b)
	}
	for _, s := range *known {
		if s == string(b) {
			return s
		}
	}
	s := string(b)
	if len(*known) < 8 {
		*known = append(*known, s)
	}
	return s
}

// qualifiersOf names the columns of c that an article row has, for an
// error.
func qualifiersOf(c cellSource) []string {
	var qs []string
	for _, q := range []string{keys.QualTitle, keys.QualBody, keys.QualCategory, keys.QualArticleU} {
		if _, ok := c.lookup(q); ok {
			qs = append(qs, q)
		}
	}
	return qs
}

func articleFrom(k keys.Article, a articleCells) (Article, error) {
	id, err := k.ID()
	if err != nil {
		return Article{}, err
	}
	return Article{
		ID: id, Author: k.Author, Title: a.title, Body: a.body, Category: a.category,
		Posted: time.UnixMilli(k.Posted), Updated: time.UnixMilli(a.updated),
	}, nil
}

// categoryRow is the category index row of article k filed under category.
func categoryRow(k keys.Article, category string) ([]byte, error) {
	return keys.Category{Name: category, Article: k}.Key()
}

func validateTitle(title string) error {
	if len(title) == 0 || len(title) > MaxTitleBytes || !utf8.ValidString(title) {
		return invalid("title must be 1-%d bytes of valid UTF-8", MaxTitleBytes)
	}
	return nil
}

func validateBody(body string) error {
	if len(body) > MaxBodyBytes || !utf8.ValidString(body) {
		return invalid("body must be at most %d bytes of valid UTF-8", MaxBodyBytes)
	}
	return nil
}

// ArticleAuthor is the id of the node that wrote article id (ids encode
// their author); ErrInvalidInput for an id that does not parse.
func ArticleAuthor(id string) (string, error) {
	k, _, err := parseArticleID(id)
	return k.Author, err
}

// parseArticleID turns a public id into its timeline row.
func parseArticleID(id string) (keys.Article, []byte, error) {
	k, err := keys.ParseArticleID(id)
	if err != nil {
		return keys.Article{}, nil, invalid("article id is not one hbgraph gave out")
	}
	if err := validateID("article author", k.Author); err != nil {
		return keys.Article{}, nil, invalid("article id is not one hbgraph gave out")
	}
	row, err := k.Key()
	if err != nil {
		return keys.Article{}, nil, invalid("article id is not one hbgraph gave out")
	}
	return k, row, nil
}

// PostArticle adds an article to the timeline of author authorID, files it
// under category and counts its words, and returns it.
//
// It fails with ErrInvalidInput, writing nothing, for a bad author id or
// category (see validateID, validateType), an empty or over-long title or an
// over-long body (MaxTitleBytes, MaxBodyBytes), more than MaxArticleWords
// distinct words or text that is not valid UTF-8; with ErrNotFound if the author is not an existing node. Once the
// timeline row is written the article exists: an error after that (a crash)
// leaves its index row, counters or word counts behind until Repair and
// RebuildWordCounts.
func (s *Store) PostArticle(ctx context.Context, authorID, title, body, category string) (Article, error) {
	if err := validateID("author id", authorID); err != nil {
		return Article{}, err
	}
	if err := validateTitle(title); err != nil {
		return Article{}, err
	}
	if err := validateBody(body); err != nil {
		return Article{}, err
	}
	words, err := countArticleWords(title, body)
	if err != nil {
		return Article{}, err
	}
	if err := validateType("category", category); err != nil {
		return Article{}, err
	}
	if err := s.CheckArticleLayout(ctx); err != nil {
		return Article{}, err
	}
	var (
		posted Article
		k      keys.Article
	)
	err = s.atomically(ctx, func(ctx context.Context) error {
		var err error
		posted, k, err = s.postArticle(ctx, authorID, title, body, category, words)
		return err
	})
	if err != nil {
		return Article{}, err
	}
	// Outside the transaction: it reads the followers with scans.
	if err := s.fanOutPost(ctx, k); err != nil {
		return Article{}, err
	}
	return posted, nil
}

// postArticle is PostArticle once its input is checked (words: the
// article's, countArticleWords), but for the feed.
func (s *Store) postArticle(ctx context.Context, authorID, title, body, category string, words map[string]int64) (Article, keys.Article, error) {
	op, derived := OpFrom(ctx)
	var author Node
	first, err := s.readLiveNode(ctx, authorID)
	if err == nil {
		author, err = nodeFrom(authorID, first)
	}
	authorGone := false
	if errors.Is(err, ErrNotFound) && derived {
		// A retry whose author went since an earlier attempt: that
		// attempt may have left its article, or some of its writes,
		// behind (a deletion of the author that swept the article
		// decremented counts the attempt may not have incremented yet).
		// If it recorded its article, the post is made to its end (each
		// write again, idempotent) and then undone, so its counts add up
		// to nothing; the answer is NOT_FOUND all the same.
		rec, rerr := s.readArticleOp(ctx, authorID, op)
		if rerr != nil {
			return Article{}, keys.Article{}, fmt.Errorf("post article: %w", rerr)
		}
		authorGone = rec != nil
	}
	if err != nil && !authorGone {
		return Article{}, keys.Article{}, fmt.Errorf("post article: author: %w", err)
	}
	if !authorGone && !writerOf(ctx).mayWrite(author.Owner) {
		return Article{}, keys.Article{}, fmt.Errorf("post article: %w", errAuthorReplaced(authorID))
	}
	if !derived {
		op = NewOpID()
		ctx = WithOp(ctx, op) // every Increment below carries its nonce
	}
	a := articleCells{title: title, body: body, category: category}
	k, row, resumed, err := s.postTimelineRow(ctx, authorID, op, derived, a)
	if err != nil {
		return Article{}, keys.Article{}, err
	}
	if resumed && !authorGone {
		// An earlier attempt of this op made the row, which a deletion
		// (the author's, or the attempt's own undo) may have marked since
		// and not finished, cut short: it is finished here, with its op,
		// before this attempt's writes (whose Puts it hides, and whose
		// Increments count once, as the earlier attempt's), so that no
		// marked row and no count of it is left behind. (A row a deletion
		// finished is gone: this attempt's Put is hidden under its marker.)
		c, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, row)
		if err != nil {
			return Article{}, keys.Article{}, fmt.Errorf("post article: %w", err)
		}
		t, ok, err := decodeTimelineState(row, c)
		if err != nil {
			return Article{}, keys.Article{}, fmt.Errorf("post article: %w", err)
		}
		if ok && t.isMarked() {
			withCounts := s.recent(t.updated)
			if !withCounts {
				s.uncountedAuthors.Store(k.Author, struct{}{})
			}
			if err := s.finishArticleDeletion(ctx, k, row, t, withCounts); err != nil {
				return Article{}, keys.Article{}, fmt.Errorf("post article: %w", err)
			}
		}
	}
	a.updated = k.Posted
	// The rest is idempotent (stamped u, Increments with the op's nonce):
	// a retry that found its timeline row makes it again.
	if err := s.postIndexAndCounts(ctx, k, row, a, words); err != nil {
		return Article{}, keys.Article{}, err
	}
	// The author may have been deleted (or deleted and created again,
	// by someone this writer may not write for) since it was read, after
	// its deletion had swept its timeline: then the article is the
	// deleted node's, and goes.
	if err := s.faultPoint(pointArticleRecheck); err != nil {
		return Article{}, keys.Article{}, err
	}
	var again Node
	if s.inTx(ctx) && !authorGone && first.tentative == 0 {
		// In one transaction, which holds the author's row since it read
		// it live and unmarked: the recheck would read the same.
		again = author
	} else {
		again, err = s.recheckNode(ctx, authorID) // (takes back a deletion's tentative mark: see confirmMark)
	}
	if authorGone || err == nil && (!again.Created.Equal(author.Created) || !writerOf(ctx).mayWrite(again.Owner)) {
		err = errAuthorReplaced(authorID)
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Article{}, keys.Article{}, fmt.Errorf("post article: %w", err) // as a crash: Repair or the deletion takes it
	}
	if err != nil {
		if derr := s.deleteArticle(ctx, k, row, false, false); derr != nil && !errors.Is(derr, ErrNotFound) {
			return Article{}, keys.Article{}, derr
		}
		return Article{}, keys.Article{}, fmt.Errorf("post article: the author was deleted meanwhile: %w", err)
	}
	art, err := articleFrom(k, a)
	return art, k, err
}

// postIndexAndCounts writes a post's category row, counts and word
// counts (words: articleWords(a)): on a cluster all three at once (each is
// idempotent, and none reads what another writes), else one after the
// other.
func (s *Store) postIndexAndCounts(ctx context.Context, k keys.Article, row []byte, a articleCells, words map[string]int64) error {
	if s.overlapCalls {
		// (A copy of a for the goroutines: a parameter they captured would
		// be on the heap on every call, one after the other or not.)
		post := a
		return s.overlap(
			func() error { return s.putCategoryRow(ctx, k, post) },
			func() error { return s.countArticles(ctx, k.Author, postCounts(post), purposeCount("post", row)) },
			func() error { return s.addWordCounts(ctx, k.Author, words, purposeWords("post", row)) },
		)
	}
	if err := s.putCategoryRow(ctx, k, a); err != nil {
		return err
	}
	if err := s.countArticles(ctx, k.Author, postCounts(a), purposeCount("post", row)); err != nil {
		return err
	}
	return s.addWordCounts(ctx, k.Author, words, purposeWords("post", row))
}

// postCounts are the counts a post adds.
func postCounts(a articleCells) map[string]int64 {
	return map[string]int64{keys.QualArticleCount: 1, keys.QualCategoryCount + a.category: 1}
}

// postTimelineRow creates the timeline row of a new article of author
// with the cells of a (their u: the posting time) and returns its key and
// row; or, if op created one already (a re-sent compare-and-set, or the
// caller's retry with the same op), that one's, with again true (also
// when a retry found its op row: the row may have been made, and gone).
//
// The sequence number comes from an Increment of the counters row's seq,
// whose nonce is op's: a re-sent Increment is applied once, and a retry's
// Increment with the same purpose is answered, as HBase answers a
// duplicate (it turns it into a Get), with seq's current value, which a
// later post may have been handed too. Taking it is safe: the timeline
// row's compare-and-set "u absent" catches a collision in the same
// millisecond (the row exists, and was not created by op), after which
// the next attempt increments with another purpose, so gets a fresh
// number; in another millisecond the rows differ, and two articles whose
// posting times differ may share a sequence number (it only orders the
// articles of one millisecond).
//
// With a derived op (a caller's retry is possible) the article's key is
// recorded first in the author's op row (a compare-and-set "absent"), and
// read from it by every attempt: a retry reuses the sequence number and
// posting time of the first, and so finds the row it created, instead of
// posting a copy.
func (s *Store) postTimelineRow(ctx context.Context, authorID string, op OpID, derived bool, a articleCells) (k keys.Article, row []byte, again bool, err error) {
	counters := keys.Counters(authorID)
	opRow := keys.ArticleOp(authorID, op)
	var (
		record   []byte // the op row's record as last read or written; nil: none
		read     bool   // record is the op row's current one
		collided bool   // record names another post's row: take a new seq
	)
	err = s.casLoop(ctx, "post article: a taken sequence number", func(attempt int) (bool, error) {
		if derived && !read {
			var err error
			if record, err = s.readArticleOp(ctx, authorID, op); err != nil {
				return false, fmt.Errorf("post article: %w", err)
			}
			read = true
			again = again || record != nil && attempt == 0
		}
		var ok bool
		if record != nil && !collided {
			var kind byte
			if kind, k, ok = decodeOpRecord(authorID, record); !ok || kind != articleOpPost {
				return false, fmt.Errorf("post article: %w", corrupt(opRow, "op record %x", record))
			}
		} else {
			if attempt > 0 {
				if err := s.faultPoint(pointArticleSeq); err != nil {
					return false, err
				}
			}
			seq, err := s.incrementFor(ctx, fmt.Sprintf("article-seq/%d", attempt),
				keys.TableArticles, keys.FamilyArticles, counters, keys.QualSeq, 1)
			if err != nil {
				return false, fmt.Errorf("post article: %w", err)
			}
			if seq <= 0 {
				return false, fmt.Errorf("post article: %w", corrupt(counters, "sequence counter %d", seq))
			}
			k = keys.Article{Author: authorID, Posted: s.nowMs(), Seq: uint64(seq)}
			if derived {
				next := encodeOpRecord(articleOpPost, k)
				ts := k.Posted
				if record != nil {
					_, was, _ := decodeOpRecord(authorID, record)
					ts = max(ts, was.Posted+1) // a Put older than the cell it replaces would be dropped
				}
				if err := s.faultPoint(pointArticleOpRow); err != nil {
					return false, err
				}
				won, err := s.checkAndPut(ctx, keys.TableArticles, keys.FamilyArticles, opRow, keys.QualArticleOpRecord, record,
					cells{keys.QualArticleOpRecord: next}, ts)
				if err != nil {
					return false, fmt.Errorf("post article: %w", err)
				}
				read = false // a re-send, or a concurrent retry, may have written it: read it again
				if !won {
					return false, nil
				}
				record, read, collided = next, true, false
			}
		}
		var err error
		if row, err = k.Key(); err != nil {
			return false, err
		}
		a.updated = k.Posted
		c := a.cells()
		c[keys.QualArticleCreatedBy] = op[:]
		if s.feedPending() {
			c[keys.QualArticleFanout] = []byte{1} // until fanOutPost is done
		}
		if err := s.faultPoint(pointArticleTimeline); err != nil {
			return false, err
		}
		// "u absent": a sequence number handed out twice (a duplicate's
		// answer, a counter row lost and rebuilt) takes a fresh one
		// instead of overwriting. A row deleted since this op created it
		// is "absent" too: the Put is then stamped before the deletion's
		// marker and stays hidden.
		won, err := s.checkAndPut(ctx, keys.TableArticles, keys.FamilyArticles, row, keys.QualArticleU, nil, c, a.updated)
		if err != nil {
			return false, fmt.Errorf("post article: %w", err)
		}
		if won {
			return true, nil
		}
		have, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, row)
		if err != nil {
			return false, fmt.Errorf("post article: %w", err)
		}
		if bytes.Equal(have[keys.QualArticleCreatedBy], op[:]) {
			again = true
			return true, nil // this op's own row
		}
		if have[keys.QualArticleU] == nil {
			// There at the compare-and-set, gone by the read: a deletion
			// finished in between. Most likely of this op's own row (made
			// by a re-sent compare-and-set or an earlier attempt, then
			// swept or deleted, with its counts decremented): the key is
			// kept, the next compare-and-set wins with its Put hidden
			// under the deletion's marker, and the Increments of this
			// row's nonces balance the deletion's. A new key would count
			// a second row and leave that decrement unbalanced. (Another
			// post's row, on a sequence number handed out twice in the
			// same millisecond and deleted in this window, cannot be told
			// apart; Repair recounts.)
			again = true
			return false, nil
		}
		collided = true
		return false, nil
	})
	return k, row, again, err
}

// putCategoryRow writes the category index row of k from a, stamped a's u,
// so that of concurrent writers the newest update wins.
func (s *Store) putCategoryRow(ctx context.Context, k keys.Article, a articleCells) error {
	return s.putCategoryCells(ctx, k, a, a.cells())
}

// putCategoryCells writes cells of a to the category index row of k, as
// putCategoryRow does.
func (s *Store) putCategoryCells(ctx context.Context, k keys.Article, a articleCells, c cells) error {
	crow, err := categoryRow(k, a.category)
	if err != nil {
		return err
	}
	if err := s.faultPoint(pointArticleCategory); err != nil {
		return err
	}
	return s.put(ctx, keys.TableArticles, keys.FamilyArticles, crow, c, a.updated)
}

// countArticles adds deltas to the author's counters (n, n/category) with
// one Increment of the row, after the article-count fault point, with the
// nonce of ctx's op for purpose.
func (s *Store) countArticles(ctx context.Context, author string, deltas map[string]int64, purpose string) error {
	if err := s.faultPoint(pointArticleCount); err != nil {
		return err
	}
	return s.incrementColumnsFor(ctx, purpose, keys.TableArticles, keys.FamilyArticles, keys.Counters(author), deltas)
}

// getArticle returns the article with public id id: one Get of its timeline
// row. It fails with ErrInvalidInput for a malformed id and ErrNotFound if
// there is no such article.
func (s *Store) getArticle(ctx context.Context, id string) (Article, error) {
	k, row, err := parseArticleID(id)
	if err != nil {
		return Article{}, err
	}
	if err := s.CheckArticleLayout(ctx); err != nil {
		return Article{}, err
	}
	if err := s.migrateAuthorFirst(ctx, k.Author); err != nil {
		return Article{}, err
	}
	c, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, row)
	if err != nil {
		return Article{}, err
	}
	a, ok, err := decodeArticleCells(row, c)
	if err != nil {
		return Article{}, err
	}
	if !ok {
		return Article{}, fmt.Errorf("article %q: %w", id, ErrNotFound)
	}
	return articleFrom(k, a)
}

// UpdateArticle changes the title, body and/or category of an article (nil:
// unchanged) with a compare-and-set on its u (seed 002), retrying on
// contention up to Options.MaxAttempts, then ErrConflict. It then writes the
// category row stamped with the new u, deletes the old category's row with
// the same stamp if the category changed, moves the per-category counts and
// applies the word count changes, and clears xp. With nothing to change it
// returns the article as it is.
//
// Exactly once: the compare-and-set adds the ctx's op to the row's recent
// update ops (xo) and keeps the replaced cells with the op in xp until the
// other writes are made. A re-sent compare-and-set answers false, and the
// re-read finds the op; so does the caller's retry with the same op, which
// then makes the other writes again if xp is still its own (each is
// idempotent) and answers the article as it is. The next writer of the
// row finishes an xp left by a crash before its own change.
//
// It fails with ErrInvalidInput (nothing written) for a malformed id or bad
// new values, as PostArticle does, and ErrNotFound if there is no such
// article.
func (s *Store) UpdateArticle(ctx context.Context, id string, title, body, category *string) (Article, error) {
	k, row, err := parseArticleID(id)
	if err != nil {
		return Article{}, err
	}
	if title != nil {
		if err := validateTitle(*title); err != nil {
			return Article{}, err
		}
	}
	if body != nil {
		if err := validateBody(*body); err != nil {
			return Article{}, err
		}
	}
	if category != nil {
		if err := validateType("category", *category); err != nil {
			return Article{}, err
		}
	}
	if title == nil && body == nil && category == nil {
		return s.getArticle(ctx, id)
	}
	if err := s.CheckArticleLayout(ctx); err != nil {
		return Article{}, err
	}
	if err := s.migrateAuthorFirst(ctx, k.Author); err != nil {
		return Article{}, err
	}
	if err := s.checkAuthorWritable(ctx, k.Author); err != nil {
		return Article{}, fmt.Errorf("article %q: %w", id, err)
	}
	op, ok := OpFrom(ctx)
	if !ok {
		op = NewOpID()
		ctx = WithOp(ctx, op)
	}
	var next articleCells
	// One transaction on the embedded engine (see atomically): the
	// update's compare-and-set and its other writes commit together.
	err = s.atomically(ctx, func(ctx context.Context) error {
		var err error
		next, err = s.updateArticle(ctx, id, k, row, op, title, body, category)
		return err
	})
	if err != nil {
		return Article{}, err
	}
	return articleFrom(k, next)
}

// updateArticle is UpdateArticle once its input is checked, with the op
// the update is made with: the article's cells after it.
func (s *Store) updateArticle(ctx context.Context, id string, k keys.Article, row []byte, op OpID, title, body, category *string) (next articleCells, err error) {
	var old articleCells
	done := false // the update applied, and its other writes were made
	sent := false // a compare-and-set of this call was sent: it may have applied
	prev := true  // the compare-and-set wrote xp, which the update clears at its end
	err = s.casLoop(ctx, "update article", func(int) (bool, error) {
		c, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, row)
		if err != nil {
			return false, err
		}
		t, ok, err := decodeTimelineState(row, c)
		if err != nil {
			return false, err
		}
		if !ok && sent {
			// A compare-and-set of this call answered false (a re-send of
			// one that applied does) or failed, and the row is gone since:
			// deleted after this update applied, or before. Nothing left
			// says which: the outcome is unknown, not NOT_FOUND.
			return false, fmt.Errorf("article %q: deleted while this update was made: %w", id, ErrUnavailable)
		}
		if !ok {
			return false, fmt.Errorf("article %q: %w", id, ErrNotFound)
		}
		if t.hasOp(op) {
			// Applied already: a re-sent compare-and-set, or the caller's
			// retry. Its other writes are finished below if xp is still
			// its own; else they were made (xp cleared), or a later update
			// (or a deletion) found and finished them.
			next = t.articleCells
			switch pop, pold, ok := decodePrev(t.prev); {
			case ok && pop == op && !t.isMarked():
				old = pold
			case sent && !prev:
				// This call's own compare-and-set, in its transaction,
				// which wrote no xp (nothing comes between its writes
				// there): old is what it replaced, its other writes are
				// still to make.
			default:
				done = true
			}
			return true, nil
		}
		if t.isMarked() {
			// A deletion under way (or cut short): finished first (see
			// deleteArticle), so that no read after this NOT_FOUND finds
			// the article.
			if err := s.finishArticleDeletion(ctx, k, row, t, s.recent(t.updated)); err != nil {
				return false, err
			}
			return false, fmt.Errorf("article %q: %w", id, ErrNotFound)
		}
		// An update before it whose other writes are not made yet (cut
		// short, or under way): they are made first, with its op, since
		// this compare-and-set replaces its xp, and that update's retry,
		// finding its op in xo and xp not its own, takes them for made.
		// Each is idempotent (stamped with its u, or an Increment with its
		// op's nonce), so one still under way making them too counts once.
		if err := s.finishPendingUpdate(ctx, k, row, t, s.recent(t.updated)); err != nil {
			return false, err
		}
		old = t.articleCells
		next = old
		if title != nil {
			next.title = *title
		}
		if body != nil {
			next.body = *body
		}
		if category != nil {
			next.category = *category
		}
		if _, err := countArticleWords(next.title, next.body); err != nil {
			return false, err
		}
		next.updated = s.nextUpdate(old.updated)
		put := next.cellsChangedFrom(old)
		put[keys.QualArticleOps] = t.withOp(op)
		// xp lets a retry, or the next update, finish this one's other
		// writes if it is cut short after its compare-and-set. In a
		// transaction nothing is: xp is written there only to replace one
		// the row holds (see finishPendingUpdate).
		if prev = !s.inTx(ctx) || t.prev != nil; prev {
			put[keys.QualArticlePrev] = encodePrev(op, old)
		}
		sent = true
		return s.checkAndPut(ctx, keys.TableArticles, keys.FamilyArticles, row, keys.QualArticleU,
			encodeMs(old.updated), put, next.updated)
	})
	if err != nil {
		return next, err
	}
	if !done {
		// Only this op's compare-and-set gets here (or its retry), and
		// what follows is idempotent: the counter and word count deltas
		// add up exactly.
		if err := s.finishArticleUpdate(ctx, k, row, old, next, true, prev); err != nil {
			return next, err
		}
	}
	return next, nil
}

// checkAuthorWritable fails with ErrNotFound unless the author of an
// article is a node that ctx's writer may write: the resolver authorised
// the write for the node it read, and a node deleted and created again
// by someone else since is not that node. (Its articles went with the
// deletion, before the new node was created, so an article read after
// this check and written with a compare-and-set on its u is the checked
// node's.) An admin, or a ctx without a writer, is not checked.
func (s *Store) checkAuthorWritable(ctx context.Context, author string) error {
	w := writerOf(ctx)
	if w.Admin {
		return nil
	}
	n, err := s.getNode(ctx, author)
	if err != nil {
		return err
	}
	if !w.mayWrite(n.Owner) {
		return errAuthorReplaced(author)
	}
	return nil
}

// DeleteArticle deletes an article: a compare-and-set on its u marks its
// timeline row with the deletion's op (x), then its category row goes,
// its counts and word counts are decremented, and last its timeline row
// goes, all stamped with the mark's u (see finishArticleDeletion). A
// re-sent or retried deletion finds its own mark, or, with a derived op,
// its op row, and succeeds. It fails with ErrInvalidInput for a malformed
// id, ErrNotFound if there is no such article (or another deletion of it
// is under way) and ErrConflict if compare-and-set attempts run out.
func (s *Store) DeleteArticle(ctx context.Context, id string) error {
	k, row, err := parseArticleID(id)
	if err != nil {
		return err
	}
	if err := s.CheckArticleLayout(ctx); err != nil {
		return err
	}
	if err := s.migrateAuthorFirst(ctx, k.Author); err != nil {
		return err
	}
	if err := s.checkAuthorWritable(ctx, k.Author); err != nil {
		return fmt.Errorf("article %q: %w", id, err)
	}
	// One transaction on the embedded engine (see atomically).
	err = s.atomically(ctx, func(ctx context.Context) error {
		return s.deleteArticle(ctx, k, row, true, false)
	})
	if err != nil {
		return fmt.Errorf("article %q: %w", id, err)
	}
	return nil
}

// deleteArticle is DeleteArticle of the article k, whose timeline row is
// row. record says to record a derived op in an op row (DeleteArticle's
// own deletions; not a node deletion's or a post's undo, whose op is
// another write's). A row marked by another op is a deletion cut short
// or under way: the answer is ErrNotFound, after finishing it with that
// op if it is stale, or if takeOver (a node deletion, which goes on only
// once its author's timeline is empty).
func (s *Store) deleteArticle(ctx context.Context, k keys.Article, row []byte, record, takeOver bool) error {
	op, derived := OpFrom(ctx)
	if !derived {
		op = NewOpID()
		ctx = WithOp(ctx, op)
	}
	record = record && derived
	var t timelineState
	recorded := false
	err := s.casLoop(ctx, "delete article", func(int) (bool, error) {
		c, err := s.get(ctx, keys.TableArticles, keys.FamilyArticles, row)
		if err != nil {
			return false, err
		}
		var ok bool
		if t, ok, err = decodeTimelineState(row, c); err != nil {
			return false, err
		}
		if !ok {
			if record {
				// Gone: by this op's deletion, finished (a retry)?
				rec, err := s.readArticleOp(ctx, k.Author, op)
				if err != nil {
					return false, err
				}
				if kind, was, ok := decodeOpRecord(k.Author, rec); ok && kind == articleOpDelete && was == k {
					t = timelineState{}
					return true, nil
				}
			}
			return false, ErrNotFound
		}
		if t.isMarked() {
			if t.markOp() == op {
				return true, nil // this op's mark: finish it
			}
			// Another deletion's, cut short or under way: finished here,
			// with its op (its writes are stamped with the mark's u or
			// carry the op's nonces, so making them twice is harmless),
			// before the answer: a NOT_FOUND answered while the row still
			// reads as there would let a later read find the article this
			// call said was gone (and a node deletion must see the row
			// gone before it goes on).
			withCounts := s.recent(t.updated)
			if !withCounts {
				s.uncountedAuthors.Store(k.Author, struct{}{})
			}
			if err := s.finishArticleDeletion(ctx, k, row, t, withCounts); err != nil {
				return false, err
			}
			return false, ErrNotFound
		}
		if record && !recorded {
			// Before the mark: a retry that finds the row gone, and this
			// record, knows the deletion was (or was finished as) its own.
			if err := s.faultPoint(pointArticleOpRow); err != nil {
				return false, err
			}
			if err := s.put(ctx, keys.TableArticles, keys.FamilyArticles, keys.ArticleOp(k.Author, op),
				cells{keys.QualArticleOpRecord: encodeOpRecord(articleOpDelete, k)}, s.nowMs()); err != nil {
				return false, err
			}
			recorded = true
		}
		if err := s.faultPoint(pointArticleMark); err != nil {
			return false, err
		}
		old := t.updated
		t.updated = s.nextUpdate(old)
		t.deleting = op[:]
		if s.inTx(ctx) {
			// One transaction holds the row from the read above to its
			// commit, and the deletion below takes the row, mark and all:
			// the mark would be written only to go. (Nor is a deletion cut
			// short committed: see below.)
			return true, nil
		}
		// A re-sent mark answers false, and the next attempt finds its op.
		return s.checkAndPut(ctx, keys.TableArticles, keys.FamilyArticles, row, keys.QualArticleU, encodeMs(old),
			cells{keys.QualArticleDeleting: op[:], keys.QualArticleU: encodeMs(t.updated)}, t.updated)
	})
	if err != nil || !t.isMarked() {
		return err
	}
	err = s.finishArticleDeletion(ctx, k, row, t, true)
	if err != nil && definite(err) && s.inTx(ctx) {
		// atomically commits what a transaction wrote before a definite
		// error: unmarked, a deletion cut short would stay so.
		return fmt.Errorf("delete article: %w: %w", ErrUnavailable, err)
	}
	return err
}

// hasArticles reports whether author has a timeline row posted before
// before (ms). It does not check the layout (no row of another layout
// reads as a timeline row), so that node writes never claim an empty
// articles table.
func (s *Store) hasArticles(ctx context.Context, author string, before int64) (bool, error) {
	lo, hi, err := keys.Window(keys.TimelinePrefix(author), 0, before)
	if errors.Is(err, keys.ErrEmptyWindow) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	rows, err := s.scan(ctx, scanRange{table: keys.TableArticles, family: keys.FamilyArticles,
		start: lo, stop: hi, limit: 1, keyOnly: true})
	return len(rows) > 0, err
}

// deleteArticlesOf deletes author's articles posted before before (ms),
// each with the full protocol of DeleteArticle, sweeping the timeline again
// until a sweep finds none, so that articles posted meanwhile go too.
func (s *Store) deleteArticlesOf(ctx context.Context, author string, before int64) error {
	return s.deleteArticlesOfMarked(ctx, author, before, 0)
}

// deleteArticlesOfMarked is deleteArticlesOf by the deletion of node
// author's creation at created (0: no deletion, or Repair's): after it
// has found each article, before deleting it, it checks that the node is
// still marked (stillMarked), and stops with errNoLongerMarked if not, as
// detachMarked does: a slow deletion that another finished never deletes
// the articles of a node created after it. (An article found posted
// under a node created since was posted after that creation, so the
// check, made after the article was found, sees the new node.)
func (s *Store) deleteArticlesOfMarked(ctx context.Context, author string, before, created int64) error {
	if has, err := s.hasArticles(ctx, author, before); err != nil || !has {
		return err
	}
	if err := s.CheckArticleLayout(ctx); err != nil {
		return err
	}
	if err := s.migrateAuthorFirst(ctx, author); err != nil {
		return err
	}
	prefix := keys.TimelinePrefix(author)
	lo, hi, err := keys.Window(prefix, 0, before)
	if errors.Is(err, keys.ErrEmptyWindow) {
		return nil
	}
	if err != nil {
		return err
	}
	r := scanRange{table: keys.TableArticles, family: keys.FamilyArticles, start: lo, stop: hi, limit: 256, keyOnly: true}
	removed := false
	for {
		rows, err := s.scan(ctx, r)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			if !removed {
				return nil
			}
			r.start, removed = lo, false
			continue
		}
		for _, rw := range rows {
			r.start = keys.After(rw.key)
			k, err := keys.DecodeTimeline(rw.key)
			if err != nil {
				return err
			}
			if created != 0 {
				if still, err := s.stillMarked(ctx, author, created); err != nil {
					return err
				} else if !still {
					return errNoLongerMarked
				}
			}
			if err := s.deleteArticle(ctx, k, rw.key, false, true); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			removed = true
		}
		if len(rows) < r.limit {
			// The sweep reached the end (a short page): the next one
			// starts over without a scan past it.
			r.start, removed = lo, false
		}
	}
}

// deleteStrayCategoryRows deletes author's category rows whose article is
// gone (or filed elsewhere): what a crash between the writes of an
// article's deletion leaves, which a sweep of the timeline cannot find.
func (s *Store) deleteStrayCategoryRows(ctx context.Context, author string) error {
	strays, _, err := s.authorRows(ctx, author)
	if err != nil {
		return err
	}
	return s.deleteStrays(ctx, strays)
}

// authorRows scans author's rows of the articles table (keys only, once
// the layout and the author's rows are current): its category rows, and
// whether it has a timeline row.
func (s *Store) authorRows(ctx context.Context, author string) (categories []row, timeline bool, err error) {
	if err := s.CheckArticleLayout(ctx); err != nil {
		return nil, false, err
	}
	if err := s.migrateAuthorFirst(ctx, author); err != nil {
		return nil, false, err
	}
	all := authorRowsRange(author)
	// Most nodes deleted have no articles.
	if empty, err := s.probedEmpty(ctx, all); err != nil || empty {
		return nil, false, err
	}
	err = s.scanAll(ctx, all, func(rw row) (bool, error) {
		if _, err := keys.DecodeCategory(rw.key); err == nil {
			categories = append(categories, row{key: rw.key, ts: rw.ts})
		} else if _, err := keys.DecodeTimeline(rw.key); err == nil {
			timeline = true
		}
		return true, nil
	})
	return categories, timeline, err
}

// authorRowsRange is the range of author's timeline and category rows,
// timeline rows first: they sort before the counters row (and the op rows
// after it, which a write with an Idempotency-Key leaves).
func authorRowsRange(author string) scanRange {
	return scanRange{table: keys.TableArticles, family: keys.FamilyArticles, start: keys.AuthorPrefix(author),
		stop: keys.Counters(author), keyOnly: true, chunkRows: articleChunkRows}
}

// probeAuthorRows reads the first of author's timeline and category rows,
// the key alone: author has articles when it is not a category row
// (timeline rows sort first), and otherwise strays when there is one,
// category rows a crash left without their article. It is the scan
// authorRows begins with, so that one deletion reads it once.
func (s *Store) probeAuthorRows(ctx context.Context, author string) (articles, strays bool, err error) {
	r := authorRowsRange(author)
	r.limit = 1
	found, err := s.scan(ctx, r)
	if err != nil || len(found) == 0 {
		return false, false, err
	}
	if _, err := keys.DecodeCategory(found[0].key); err != nil {
		return true, false, nil
	}
	return false, true, nil
}

// deleteStrays deletes the category rows strays (as authorRows found
// them) whose article is gone or filed elsewhere.
func (s *Store) deleteStrays(ctx context.Context, strays []row) error {
	for _, st := range strays {
		c, err := keys.DecodeCategory(st.key)
		if err != nil {
			return err
		}
		fresh, ok, err := s.readTimeline(ctx, c.Article)
		if err != nil {
			return err
		}
		if ok && fresh.category == c.Name {
			continue // its article exists: posted meanwhile by a writer that will undo it
		}
		ts := st.ts
		if ok {
			ts = max(ts, fresh.updated)
		}
		if err := s.deleteRow(ctx, keys.TableArticles, st.key, ts); err != nil {
			return err
		}
	}
	return nil
}

// recountAuthor sets author's article counters and word counts to a
// recount of the author's articles if an article deletion of the author
// was finished without its counts (its mark older than nonceRecent, so
// its op's Increments could no longer be told from new ones). A deletion
// cut short more recently is finished with its op's nonces and counts
// exactly, and needs none. A write in flight meanwhile can leave a
// recount one article off (as with Repair): a post that wrote its
// timeline row before the recount and counts it after, then finds its
// author gone and undoes it, leaves one too many. So it runs only where
// counts were lost (a node deletion that resumes one cut short calls it).
func (s *Store) recountAuthor(ctx context.Context, author string) error {
	if _, lost := s.uncountedAuthors.LoadAndDelete(author); !lost {
		return nil
	}
	if err := s.migrateAuthorFirst(ctx, author); err != nil {
		return err
	}
	if err := s.fixArticleCounters(ctx, author, func(string, int) {}); err != nil {
		return err
	}
	_, err := s.rebuildWordCounts(ctx, author)
	return err
}

// ArticleQuery selects the articles of one author.
type ArticleQuery struct {
	// Category selects one category; "" selects all.
	Category string
	// PostedAfter and PostedBefore bound the posting time to the window
	// [PostedAfter, PostedBefore): PostedAfter is inclusive, PostedBefore
	// exclusive, nil leaves that side open. Times are rounded up to the
	// next millisecond, the precision of Posted.
	PostedAfter, PostedBefore *time.Time
	// NoBody reads the page without the articles' bodies (Body is ""),
	// for a selection that needs none: the body is most of a page's bytes.
	NoBody bool
}

// ArticlePage is one page of an author's articles, newest first, with the
// cursor of each.
type ArticlePage struct {
	Articles []Article
	Cursors  Cursors
	PageInfo
	rows []articleRow // for Primed; nil when read without bodies
}

// articleColumnsNoBody are the columns of a page read without bodies
// (sorted, as pagescan.Scan's Qualifiers).
var articleColumnsNoBody = []string{keys.QualCategory, keys.QualTitle, keys.QualArticleU}

// articleRow is what Primed rebuilds an article's timeline row from.
type articleRow struct {
	key   keys.Article
	cells rowCells
}

// Primed are the articles' timeline rows (an index row holds the same
// cells): built when asked for, since most pages are a request's last read.
func (p ArticlePage) Primed() []Primed {
	out := make([]Primed, 0, len(p.rows))
	for _, r := range p.rows {
		if trow, err := r.key.Key(); err == nil {
			key := string(trow)
			out = append(out, Primed{Get{keys.TableArticles, key}, Row{key: key, cells: r.cells}})
		}
	}
	return out
}

// Articles returns one page of author authorID's articles selected by q,
// newest first: by posting time, and those posted in the same millisecond
// by sequence number, the last created (the highest) first, forward and
// backward alike. It reads only the rows of the layout whose fixed prefix
// covers most of the query (seed 003): the category index for a category,
// else the timeline, narrowed to q's window; it never filters.
//
// Cursors are opaque and bound to (author, category or all): a cursor from
// another author, category or an all-categories query, or a forged one, is
// ErrInvalidInput, as are a bad author id, category or page size. An
// author with no articles, or no node, has an empty page.
func (s *Store) Articles(ctx context.Context, authorID string, q ArticleQuery, req PageRequest) (ArticlePage, error) {
	p, done, err := s.planArticles(ctx, authorID, q, req)
	if err != nil || done {
		return p.page, err
	}
	rows, err := s.scan(ctx, p.r)
	if err != nil {
		return ArticlePage{}, err
	}
	return p.finish(rows)
}

// ArticlesRequest is one page of Articles.
type ArticlesRequest struct {
	Author string
	Query  ArticleQuery
	Page   PageRequest
}

// ArticlesBatch answers each request as Articles does (pages[i] and
// errs[i] answer reqs[i]), scanning their pages in one engine call where
// the engine can (pagescan): a wave's article pages.
func (s *Store) ArticlesBatch(ctx context.Context, reqs []ArticlesRequest) ([]ArticlePage, []error) {
	pages := make([]ArticlePage, len(reqs))
	errs := make([]error, len(reqs))
	plans := make([]articlesPlan, 0, len(reqs))
	idx := make([]int, 0, len(reqs))
	for i, rq := range reqs {
		p, done, err := s.planArticles(ctx, rq.Author, rq.Query, rq.Page)
		if err != nil || done {
			pages[i], errs[i] = p.page, err
			continue
		}
		plans = append(plans, p)
		idx = append(idx, i)
	}
	if len(plans) == 0 {
		return pages, errs
	}
	ranges := make([]scanRange, len(plans))
	for j := range plans {
		ranges[j] = plans[j].r
	}
	rows, scanErrs := s.scanPages(ctx, ranges)
	for j, i := range idx {
		if scanErrs[j] != nil {
			errs[i] = scanErrs[j]
			continue
		}
		pages[i], errs[i] = plans[j].finish(rows[j])
	}
	return pages, errs
}

// articlesPlan is an Articles page planned: its scan, or (done) the page
// without one.
type articlesPlan struct {
	pagePlan
	q    ArticleQuery
	page ArticlePage
}

// planArticles checks an Articles request and plans its scan; done: the
// page (p.page) needs none, or err.
func (s *Store) planArticles(ctx context.Context, authorID string, q ArticleQuery, req PageRequest) (p articlesPlan, done bool, err error) {
	if err := validateID("author id", authorID); err != nil {
		return p, true, err
	}
	pr := pageRange{table: keys.TableArticles, family: keys.FamilyArticles}
	if q.Category != "" {
		if err := validateType("category", q.Category); err != nil {
			return p, true, err
		}
		pr.layout, pr.prefix = keys.CategoryLayout, keys.CategoryPrefix(authorID, q.Category)
	} else {
		pr.layout, pr.prefix = keys.TimelineLayout, keys.TimelinePrefix(authorID)
	}
	if q.NoBody {
		pr.qualifiers = articleColumnsNoBody
	}
	if err := req.validate(); err != nil {
		return p, true, err
	}
	if err := s.CheckArticleLayout(ctx); err != nil {
		return p, true, err
	}
	if err := s.migrateAuthorFirst(ctx, authorID); err != nil {
		return p, true, err
	}
	if req.Cursor != "" {
		// Checked before the window: an empty window still rejects a bad cursor.
		if _, err := pr.cursorRow(req.Cursor); err != nil {
			return p, true, err
		}
	}
	if q.PostedAfter != nil || q.PostedBefore != nil {
		after, before := int64(0), int64(math.MaxInt64)
		if q.PostedAfter != nil {
			after = max(ceilMs(*q.PostedAfter), 0)
		}
		if q.PostedBefore != nil {
			before = max(ceilMs(*q.PostedBefore), 0)
		}
		lo, hi, err := keys.Window(pr.prefix, after, before)
		if errors.Is(err, keys.ErrEmptyWindow) {
			p.page = ArticlePage{Articles: []Article{}}
			return p, true, nil
		}
		if err != nil {
			return p, true, invalid("postedAfter and postedBefore must be times after 1970")
		}
		pr.lo, pr.hi = lo, hi
	}
	pp, err := planPage(pr, req)
	if err != nil {
		return p, true, err
	}
	p.pagePlan, p.q = pp, q
	if pp.none {
		p.page, err = articlePageOf(q, nil, Cursors{}, pp.info)
		return p, true, err
	}
	return p, false, nil
}

// finish is the page of the rows its scan read.
func (p *articlesPlan) finish(rows []row) (ArticlePage, error) {
	rows, cursors, info := p.pagePlan.finish(rows)
	return articlePageOf(p.q, rows, cursors, info)
}

// articlePageOf is the page of articles of rows, a page of q.
func articlePageOf(q ArticleQuery, rows []row, cursors Cursors, info PageInfo) (ArticlePage, error) {
	var err error
	// A category page's articles all share its category; a timeline's
	// share a few.
	categories := make([]string, 0, 8)
	if q.Category != "" {
		categories = append(categories, q.Category)
	}
	out := ArticlePage{Articles: make([]Article, len(rows)), Cursors: cursors, PageInfo: info}
	if !q.NoBody {
		// A row read without its body must not stand for the whole row.
		out.rows = make([]articleRow, len(rows))
	}
	for i, rw := range rows {
		var k keys.Article
		if q.Category != "" {
			c, err := keys.DecodeCategory(rw.key)
			if err != nil {
				return ArticlePage{}, err
			}
			k = c.Article
		} else if k, err = keys.DecodeTimeline(rw.key); err != nil {
			return ArticlePage{}, err
		}
		a, ok, err := decodeArticleCellsSharing(rw.key, rw.raw, &categories, !q.NoBody)
		if err == nil && !ok {
			err = corrupt(rw.key, "an index row without its article cells")
		}
		if err != nil {
			return ArticlePage{}, err
		}
		if out.Articles[i], err = articleFrom(k, a); err != nil {
			return ArticlePage{}, err
		}
		if out.rows != nil {
			out.rows[i] = articleRow{k, rw.raw}
		}
	}
	return out, nil
}

// ceilMs is t in Unix milliseconds, rounded up.
func ceilMs(t time.Time) int64 {
	ms := t.UnixMilli()
	if time.UnixMilli(ms).Before(t) {
		ms++
	}
	return ms
}

// ArticleCountKey selects one article counter: an author's articles in
// Category, or all of them when Category is "".
type ArticleCountKey struct{ Author, Category string }

// timelineRange is the scan of every timeline row of author.
func timelineRange(author string) scanRange {
	prefix := keys.TimelinePrefix(author)
	return scanRange{table: keys.TableArticles, family: keys.FamilyArticles, start: prefix, stop: keys.PrefixEnd(prefix),
		chunkRows: articleChunkRows}
}
