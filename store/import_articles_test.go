package store

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/store/keys"
)

// articleImportAuthors are the authors articleImportSetup creates.
var articleImportAuthors = []string{"a", "b", "c"}

// articleImportSetup writes what the article batch imports below meet:
// authors a, b and c, an article a/1 that exists already, and an article
// a/2 that was imported and deleted, so that its delete marker (at the
// frozen clock's time) hides an import of it.
func articleImportSetup(t *testing.T, s *Store) {
	t.Helper()
	for _, id := range articleImportAuthors {
		if ok, err := s.ImportNode(bg, id, "", nil, time.UnixMilli(100), time.UnixMilli(100)); err != nil || !ok {
			t.Fatalf("import node %s: %v %v", id, ok, err)
		}
	}
	if _, ok, err := s.ImportArticle(bg, "a", 1, "Old", "old words", "tech", time.UnixMilli(1000)); err != nil || !ok {
		t.Fatalf("import a/1: %v %v", ok, err)
	}
	id, ok, err := s.ImportArticle(bg, "a", 2, "Gone", "gone words", "tech", time.UnixMilli(2000))
	if err != nil || !ok {
		t.Fatalf("import a/2: %v %v", ok, err)
	}
	if err := s.DeleteArticle(bg, id); err != nil {
		t.Fatal(err)
	}
	if err := s.AdvanceArticleSeq(bg, "a", 2); err != nil {
		t.Fatal(err)
	}
}

// articleImportCases is a batch with every case a line can be: new,
// existing, repeated within the batch, missing author, invalid input, and
// hidden by a delete marker.
func articleImportCases() []ArticleImport {
	at := time.UnixMilli
	art := func(author string, seq uint64, title, body, category string, posted time.Time) ArticleImport {
		return ArticleImport{Author: author, Seq: seq, Title: title, Body: body, Category: category, Posted: posted}
	}
	return []ArticleImport{
		art("a", 1, "New", "new words", "tech", at(1000)),               // exists: skipped
		art("a", 3, "Three", "words, more words", "tech", at(3000)),     // created
		art("a", 3, "Again", "other", "life", at(3000)),                 // repeated: skipped
		art("a", 3, "Same seq", "later words", "life", at(3001)),        // another row: created
		art("ghost", 1, "T", "b", "tech", at(1000)),                     // missing author
		art("", 1, "T", "b", "tech", at(1000)),                          // bad author id
		art("b", 5, "", "b", "tech", at(5000)),                          // empty title
		art("b", 5, "T", "\xff", "tech", at(5000)),                      // body not UTF-8
		art("b", 5, "T", "b", "", at(5000)),                             // empty category
		art("b", 0, "T", "b", "tech", at(5000)),                         // article id 0
		art("b", 5, "T", "b", "tech", at(-1)),                           // posted before 1970
		art("b", 5, "Five", "words of b", "tech", at(5000)),             // created after bad tries
		art("a", 2, "Gone", "gone words", "tech", at(2000)),             // under the marker: conflict
		art("a", 2, "Gone", "gone words", "tech", at(2000)),             // the same again
		art("ghost", 1, "T", "b", "tech", at(1000)),                     // missing again
		art("b", 6, "!!!", "", "misc", at(6000)),                        // no words
		art("b", 7, "Words", "words words WORDS", "tech", at(5000)),     // b's tech counts two
		art("c", 1, "Words", "words of c", "tech", at(5000)),            // c's first
		art("c", 1, "Words", "words of c", "tech", at(5000)),            // identical repeat
		art("c", 9, strings.Repeat("x", MaxTitleBytes), "", "t", at(9)), // the longest title
	}
}

// articleImportInput is articleImportCases followed by a generated batch:
// random text in a few categories, about one article in ten repeating an
// earlier one's key (with its own text), one in twenty with a missing
// author, one in twenty invalid.
func articleImportInput() []ArticleImport {
	input := articleImportCases()
	rng := rand.New(rand.NewPCG(1, 2))
	categories := []string{"tech", "life", "misc", "日本"}
	for range 200 {
		a := ArticleImport{
			Author:   articleImportAuthors[rng.IntN(len(articleImportAuthors))],
			Seq:      uint64(10 + rng.IntN(150)),
			Title:    randomText(rng, 1+rng.IntN(4)),
			Body:     randomText(rng, rng.IntN(40)),
			Category: categories[rng.IntN(len(categories))],
			Posted:   time.UnixMilli(int64(10_000 + rng.IntN(50))),
		}
		switch r := rng.IntN(20); {
		case r < 2 && len(input) > 0:
			prev := input[rng.IntN(len(input))]
			a.Author, a.Seq, a.Posted = prev.Author, prev.Seq, prev.Posted
		case r == 2:
			a.Author = "ghost"
		case r == 3:
			a.Title = ""
		}
		input = append(input, a)
	}
	return input
}

// finishArticleImport does what the importer does after the last batch
// (AdvanceArticleSeq of each author past the ids imported) and checks the
// invariants: category rows and counters (as Repair restores them) and
// word counts (as RebuildWordCounts does).
func finishArticleImport(t *testing.T, s *Store, input []ArticleImport) {
	t.Helper()
	maxSeq := map[string]uint64{}
	for _, a := range input {
		if slices.Contains(articleImportAuthors, a.Author) {
			maxSeq[a.Author] = max(maxSeq[a.Author], a.Seq)
		}
	}
	for author, seq := range maxSeq {
		if err := s.AdvanceArticleSeq(bg, author, seq); err != nil {
			t.Fatal(err)
		}
	}
	checkArticleInvariants(t, s)
	for _, author := range articleImportAuthors {
		checkArticleWordCounts(t, s, author)
	}
}

// importedRows dumps every table: every row's cells and timestamp, except
// that counter and word count rows keep only their values (Increment
// stamps each addition, so n additions of 1 and one of n differ in
// timestamp only), and word counts of 0 are left out (a delete leaves
// them, RebuildWordCounts removes them; they count nothing).
func importedRows(t *testing.T, s *Store) map[string]string {
	t.Helper()
	out := graphRows(t, s)
	for _, table := range []string{keys.TableArticles, keys.TableWordCounts} {
		family := keys.Tables()[table][0]
		err := s.scanAll(bg, scanRange{table: table, family: family}, func(rw row) (bool, error) {
			var b strings.Builder
			if author, err := keys.DecodeTopWords(rw.key); err == nil {
				// The list a reader sees, not its version (that counts
				// the writes) nor the pending cells (posts leave them).
				_, r := readerTopRow(t, s, author, storedWordCounts(t, s, author))
				fmt.Fprintf(&b, "%v %v %v", r.usable(), r.list.complete, r.list.words)
				out[fmt.Sprintf("%s/%x", table, rw.key)] = b.String()
				return true, nil
			}
			for _, q := range slices.Sorted(maps.Keys(rw.cells)) {
				if n, _ := decodeMs(rw.cells[q]); table == keys.TableWordCounts && n == 0 {
					continue
				}
				if q == keys.QualArticleCreatedBy && table == keys.TableArticles {
					continue // the op of the import that wrote it: each run's own
				}
				if q == keys.QualWordSerial && table == keys.TableWordCounts {
					continue // counts the posts' Increments, not words
				}
				fmt.Fprintf(&b, "%q=%x ", q, rw.cells[q])
			}
			if _, err := keys.DecodeCounters(rw.key); table == keys.TableArticles && err != nil {
				fmt.Fprintf(&b, "@%d", rw.ts) // a timeline or category row
			}
			out[fmt.Sprintf("%s/%x", table, rw.key)] = b.String()
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestImportArticlesMatchesOneAtATime(t *testing.T) {
	b := articleBatch(articleImportInput())
	testMatchesOneAtATime(t, b, len(b.input), 64, 5, 2, 1)
}

func TestImportArticlesErrorsKeepTheirKind(t *testing.T) {
	s := newTestStoreWithClock(t, newFakeClock())
	articleImportSetup(t, s)
	outs, err := s.ImportArticles(bg, articleImportCases())
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int]error{4: ErrNotFound, 5: ErrInvalidInput, 6: ErrInvalidInput, 7: ErrInvalidInput,
		8: ErrInvalidInput, 9: ErrInvalidInput, 10: ErrInvalidInput, 12: ErrConflict, 13: ErrConflict, 14: ErrNotFound} {
		if !errors.Is(outs[i].Err, want) {
			t.Errorf("line %d: %v, want %v", i, outs[i].Err, want)
		}
	}
}

// articleBatch is ImportArticles of input. After a crash, Repair restores
// the category rows, counters and word counts.
func articleBatch(input []ArticleImport) batchImport[ArticleImport] {
	return batchImport[ArticleImport]{
		input: input,
		setup: articleImportSetup,
		one: func(s *Store, a ArticleImport) (bool, error) {
			_, created, err := s.ImportArticle(bg, a.Author, a.Seq, a.Title, a.Body, a.Category, a.Posted)
			return created, err
		},
		batch: (*Store).ImportArticles,
		done:  func(t *testing.T, s *Store) { finishArticleImport(t, s, input) },
		repair: func(t *testing.T, s *Store) {
			repairTwice(t, s)
			checkArticleInvariants(t, s)
			for _, author := range articleImportAuthors {
				checkArticleWordCounts(t, s, author)
			}
		},
		rows: importedRows,
		checkCreated: func(t *testing.T, s *Store, outs []ImportOutcome) {
			checkArticlesCreated(t, s, input, outs)
		},
		// Repair's word count rebuild waits for the clock to pass the
		// word counts' newest cell.
		clock: func() *fakeClock {
			c := newFakeClock()
			c.step = 1
			return c
		},
	}
}

// checkArticlesCreated checks that the articles of input that outs reports
// created have every write of their import: their timeline and category
// rows, and their share of their authors' counters and word counts (at
// least: other articles count there too).
func checkArticlesCreated(t *testing.T, s *Store, input []ArticleImport, outs []ImportOutcome) {
	t.Helper()
	counts := map[string]map[string]int64{} // author -> counter -> articles
	words := map[string]map[string]int64{}  // author -> word -> count
	for i, o := range outs {
		if !o.Created {
			continue
		}
		k, row, a, _, err := input[i].validate()
		if err != nil {
			t.Fatalf("line %d: created, but %v", i, err)
		}
		crow, _ := categoryRow(k, a.category)
		for _, r := range [][]byte{row, crow} {
			if c, err := s.get(bg, keys.TableArticles, keys.FamilyArticles, r); err != nil || c[keys.QualArticleU] == nil {
				t.Errorf("line %d: created, but row %x is %v, %v", i, r, c, err)
			}
		}
		if counts[k.Author] == nil {
			counts[k.Author], words[k.Author] = map[string]int64{}, map[string]int64{}
		}
		counts[k.Author][keys.QualArticleCount]++
		counts[k.Author][keys.QualCategoryCount+a.category]++
		for w, n := range articleWords(a) {
			words[k.Author][w] += n
		}
	}
	for author, want := range counts {
		c, err := s.get(bg, keys.TableArticles, keys.FamilyArticles, keys.Counters(author))
		if err != nil {
			t.Fatal(err)
		}
		for q, n := range want {
			if have, _ := decodeMs(c[q]); have < n {
				t.Errorf("author %q: counter %q is %d, but %d articles counted there were created", author, q, have, n)
			}
		}
		have := storedWordCounts(t, s, author)
		for w, n := range words[author] {
			if have[w] < n {
				t.Errorf("author %q: word %q counts %d, but the articles created have %d", author, w, have[w], n)
			}
		}
	}
}

// The batch import writes timeline rows, then category rows, counters and
// word counts; a crash at any point between them leaves what Repair fixes,
// and a rerun of the import then completes it.
func TestImportArticlesRepairAfterCrashAtEveryPoint(t *testing.T) {
	testCrashAtEveryPoint(t, articleBatch(articleImportCases()),
		pointImportTimeline, pointImportCategory, pointImportCounters, pointImportWordCounts, pointImportTopWords)
}

// Whatever prefix of the batch import's writes reaches the store, inside a
// SendBatch or between them, Repair restores the invariants.
func TestImportArticlesRepairAfterCrashAfterEveryWrite(t *testing.T) {
	testCrashAfterEveryWrite(t, articleBatch(articleImportCases()))
}

// The batch import writes in the order of PostArticle, batch-wide:
// timeline rows, category rows, counters, word counts, top-words lists.
func TestImportArticlesWritesInPostArticleOrder(t *testing.T) {
	s := newTestStoreWithClock(t, newFakeClock())
	articleImportSetup(t, s)
	rec := &callLog{}
	if _, err := s.ImportArticles(WithTracer(bg, rec), articleImportCases()); err != nil {
		t.Fatal(err)
	}
	var steps []string
	counted := false // the word counts' Batch was seen: what follows in wordcounts keeps the top lists
	for _, c := range rec.take() {
		step := c.Op + " " + c.Table
		switch _, err := keys.DecodeCategory(c.Rows[0]); {
		case c.Table == keys.TableWordCounts && counted:
			step = "top lists"
		case c.Table == keys.TableWordCounts:
			counted = true
		case c.Table != keys.TableArticles || c.Op != "Batch":
		case err == nil:
			step += " category rows"
		case isCounters(c.Rows[0]):
			step += " counters"
		default:
			step += " timeline rows"
		}
		if len(steps) == 0 || steps[len(steps)-1] != step {
			steps = append(steps, step)
		}
	}
	want := []string{
		"Batch graph", // the authors
		"CheckAndMutate articles",
		"Batch articles timeline rows", // read back
		"Batch articles category rows",
		"Batch articles counters",
		"Batch wordcounts",
		"top lists", // a compare-and-set per author
		// The repeats of the lines that failed, which fail again.
		"Batch graph", "CheckAndMutate articles", "Batch articles timeline rows",
	}
	if !slices.Equal(steps, want) {
		t.Errorf("calls:\n%s\nwant\n%s", strings.Join(steps, "\n"), strings.Join(want, "\n"))
	}
}

func isCounters(row []byte) bool {
	_, err := keys.DecodeCounters(row)
	return err == nil
}

// A batch larger than writeChunk sends its writes in several SendBatches,
// each at most writeChunk calls, sums each author's counters and word
// counts into one Increment per row, and still imports every article.
func TestImportArticlesChunksLargeBatches(t *testing.T) {
	s := newTestStore(t)
	const authors, articles = 1100, 1500
	var input []ArticleImport
	for i := range articles {
		author := fmt.Sprint("n", i%authors)
		if i < authors {
			mustNode(t, s, author, nil)
		}
		input = append(input, ArticleImport{Author: author, Seq: uint64(i + 1), Title: fmt.Sprint("title ", i%3),
			Body: "some words", Category: fmt.Sprint("c", i%2), Posted: time.UnixMilli(int64(i))})
	}
	rec := &callLog{}
	outs, err := s.ImportArticles(WithTracer(bg, rec), input)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		if !o.Created || o.Err != nil {
			t.Fatalf("article %d: %+v", i, o)
		}
	}
	sizes := map[string][]int{}
	for _, c := range rec.take() {
		if c.Op == "Batch" {
			sizes[c.Table] = append(sizes[c.Table], len(c.Rows))
		}
	}
	// The authors read in one SendBatch; the timeline rows read back in
	// one; the 1500 category Puts as 1024 + 476; an Increment per author
	// of its counters, then of its word counts, as 1024 + 76 each.
	want := map[string][]int{
		keys.TableGraph:      {authors},
		keys.TableArticles:   {articles, writeChunk, articles - writeChunk, writeChunk, authors - writeChunk},
		keys.TableWordCounts: {writeChunk, authors - writeChunk},
	}
	for table, w := range want {
		if !slices.Equal(sizes[table], w) {
			t.Errorf("SendBatches of %s: %v rows, want %v", table, sizes[table], w)
		}
	}
	for _, author := range []string{"n0", "n399", "n400"} {
		checkArticleWordCounts(t, s, author)
	}
	n, err := s.ArticleCounts(bg, []string{"n0", "n399", "n400"}, "")
	if err != nil || !slices.Equal(n, []int64{2, 2, 1}) {
		t.Fatalf("article counts: %v, %v", n, err)
	}
	for i := range authors {
		if err := s.AdvanceArticleSeq(bg, fmt.Sprint("n", i), articles); err != nil {
			t.Fatal(err)
		}
	}
	checkArticleInvariants(t, s)
}
