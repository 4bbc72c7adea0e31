package store

import (
	"context"
	"sync"

	"github.com/hbgraph/hbgraph/store/keys"
)

// Get names one row for Read. Gets come from the constructors below, are
// comparable (so a caller can batch and deduplicate them) and expose no key
// bytes: only the store builds row keys.
type Get struct {
	table string
	row   string
}

// Row is what Read found for a Get; the zero Row is a row that does not
// exist. Its decoders turn it into the domain value the Get was made for.
// One rule for a missing row: a decoder returns nil (or a zero count), never
// ErrNotFound; ErrNotFound is for a write that names what does not exist.
type Row struct {
	key   string // the row's key, for what a corrupt row's error names
	cells rowCells
	top   *topView // a top-words row's, when it answers every page (viewTopRows)
}

// NodeGet reads a node.
func NodeGet(id string) (Get, error) {
	if err := ValidateNodeID(id); err != nil {
		return Get{}, err
	}
	return Get{keys.TableGraph, keys.NodeRow(id)}, nil
}

// Get reads the relationship.
func (k RelationshipKey) Get() (Get, error) {
	if err := k.Validate(); err != nil {
		return Get{}, err
	}
	return Get{keys.TableGraph, string(k.row())}, nil
}

// Get reads the degree counter.
func (k DegreeKey) Get() (Get, error) {
	if err := validateID("node id", k.Node); err != nil {
		return Get{}, err
	}
	if err := validateType("relationship type", k.Type); err != nil {
		return Get{}, err
	}
	row, err := keys.Degree{Node: k.Node, Dir: k.Dir, Type: k.Type}.Key()
	if err != nil {
		return Get{}, invalid("direction must be INCOMING or OUTGOING")
	}
	return Get{keys.TableGraph, string(row)}, nil
}

// ArticleGet reads an article by its public id.
func ArticleGet(id string) (Get, error) {
	_, row, err := parseArticleID(id)
	if err != nil {
		return Get{}, err
	}
	return Get{keys.TableArticles, string(row)}, nil
}

// Get reads the author's counters row (every category's count is in it).
func (k ArticleCountKey) Get() (Get, error) {
	if err := validateID("author id", k.Author); err != nil {
		return Get{}, err
	}
	if k.Category != "" {
		if err := validateType("category", k.Category); err != nil {
			return Get{}, err
		}
	}
	return Get{keys.TableArticles, string(keys.Counters(k.Author))}, nil
}

// WordCountsGet reads an author's top words: their top-words row, or, when
// that cannot answer every page, their word count row (Read reads it in a
// second batch; see wordcounts.go).
func WordCountsGet(author string) (Get, error) {
	if err := validateID("author id", author); err != nil {
		return Get{}, err
	}
	return Get{keys.TableWordCounts, string(keys.TopWords(author))}, nil
}

// Read reads rows with one batch of Gets per table, the tables at once, and
// returns them in the order of gets: their data family alone, which is all
// a decoder reads. The write bookkeeping (keys.FamilyOnce) stays unread: a
// node's row keeps a dead column there for every relationship create made
// on it until a major compaction, and neither a region server (a store per
// family) nor the embedded engine (it seeks past a family not asked for)
// then steps over them.
func (s *Store) Read(ctx context.Context, gets []Get) ([]Row, error) {
	return s.read(ctx, gets, true)
}

// readWhole is Read of whole rows, the write bookkeeping with them: for a
// writer (relationshipEnds).
func (s *Store) readWhole(ctx context.Context, gets []Get) ([]Row, error) {
	return s.read(ctx, gets, false)
}

func (s *Store) read(ctx context.Context, gets []Get, dataOnlyRead bool) ([]Row, error) {
	out := make([]Row, len(gets))
	// Rows of one table (the usual case) need no map: a wave of rows paid
	// for it and for growing the table's list of indexes.
	var byTable map[string][]int
	for i, g := range gets {
		if g.table == "" {
			return nil, invalid("zero Get")
		}
		if byTable == nil && g.table != gets[0].table {
			byTable = make(map[string][]int, 2)
			for j := range i {
				byTable[gets[0].table] = append(byTable[gets[0].table], j)
			}
		}
		if byTable != nil {
			byTable[g.table] = append(byTable[g.table], i)
		}
	}
	if byTable == nil {
		if len(gets) == 0 {
			return out, nil
		}
		idx := make([]int, len(gets))
		for i := range idx {
			idx[i] = i
		}
		if gets[0].table == keys.TableArticles {
			if err := s.checkArticleGets(ctx, gets, idx); err != nil {
				return nil, err
			}
		}
		return out, s.readTable(ctx, gets, out, gets[0].table, idx, dataOnlyRead)
	}
	if idx, ok := byTable[keys.TableArticles]; ok {
		if err := s.checkArticleGets(ctx, gets, idx); err != nil {
			return nil, err
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for table, idx := range byTable {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.readTable(ctx, gets, out, table, idx, dataOnlyRead); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out, firstErr
}

// checkArticleGets is what Read checks before it reads articles' rows (at
// idx in gets): the layout, and their authors' migration.
func (s *Store) checkArticleGets(ctx context.Context, gets []Get, idx []int) error {
	if err := s.CheckArticleLayout(ctx); err != nil {
		return err
	}
	return s.migrateAuthorsOfGets(ctx, gets, idx)
}

// readTable reads the rows of gets at idx, all of table, with one batch
// of Gets into out.
func (s *Store) readTable(ctx context.Context, gets []Get, out []Row, table string, idx []int, dataOnlyRead bool) error {
	// Every row's key in one buffer: a []byte of each cost an allocation.
	n := 0
	for _, i := range idx {
		n += len(gets[i].row)
	}
	buf := make([]byte, 0, n)
	rows := make([][]byte, len(idx))
	for j, i := range idx {
		start := len(buf)
		buf = append(buf, gets[i].row...)
		rows[j] = buf[start:len(buf):len(buf)]
	}
	res, err := s.getRowsOf(ctx, table, rows, dataOnlyRead)
	if err != nil {
		return err
	}
	for j, i := range idx {
		out[i] = Row{key: gets[i].row, cells: res[j]}
	}
	if table == keys.TableWordCounts {
		if err := s.viewTopRows(ctx, out, idx); err != nil {
			return err
		}
		return s.topWordsFallback(ctx, out, idx)
	}
	return nil
}

// readEach reads one row per key with Read (one batch of Gets per table)
// and decodes each, in the order of ks. A key that does not make a Get
// fails the whole call, before anything is read.
func readEach[K, T any](ctx context.Context, s *Store, ks []K, get func(K) (Get, error), decode func(K, Row) (T, error)) ([]T, error) {
	gets := make([]Get, len(ks))
	for i, k := range ks {
		var err error
		if gets[i], err = get(k); err != nil {
			return nil, err
		}
	}
	rows, err := s.Read(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(ks))
	for i, k := range ks {
		if out[i], err = decode(k, rows[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Node decodes a node row read for id: nil when there is none, or when
// the node is being deleted (see DeleteNode).
func (r Row) Node(id string) (*Node, error) {
	n, deleting, err := r.NodeOrDeletion(id)
	if deleting {
		return nil, err
	}
	return n, err
}

// NodeOrDeletion is Node, except that a node being deleted is returned
// too, with deleting set: for whoever may finish its deletion.
func (r Row) NodeOrDeletion(id string) (n *Node, deleting bool, err error) {
	e, ok, err := decodeEntity(r.key, r.cells)
	if err != nil || !ok {
		return nil, false, err
	}
	node, err := nodeFrom(id, e)
	return &node, e.deleting != 0, err
}

// Gets are the rows a read of relationship k needs (see
// Row.Relationship): its own row, then its start and end nodes'.
func (k RelationshipKey) Gets() (rel, start, end Get, err error) {
	if rel, err = k.Get(); err != nil {
		return
	}
	if start, err = NodeGet(k.Start); err != nil {
		return
	}
	end, err = NodeGet(k.End)
	return
}

// Relationship decodes a relationship row read for k with its start and
// end nodes' rows (k.Gets): nil when there is none, and when either end
// does not exist or is being deleted. A node's deletion takes its
// relationships with it when it marks the node (DeleteNode), before its
// detach reaches them: a relationship is returned only while both its
// ends exist.
func (r Row) Relationship(k RelationshipKey, start, end Row) (*Relationship, error) {
	e, ok, err := decodeEntity(r.key, r.cells)
	if err != nil || !ok {
		return nil, err
	}
	var created [2]int64
	for i, n := range []Row{start, end} {
		ne, ok, err := decodeEntity(n.key, n.cells)
		if err != nil || !ok || ne.deleting != 0 {
			return nil, err
		}
		created[i] = ne.created
	}
	if !e.endsAre(created) {
		return nil, nil // an earlier node's of the same id, on its way out
	}
	rel, err := relationshipFrom(k, e)
	return &rel, err
}

// nodeLive reports whether r is a node row that exists and is not being
// deleted, without decoding its properties.
func (r Row) nodeLive() (bool, error) {
	e, ok, err := decodeEntity(r.key, r.cells)
	return ok && e.deleting == 0, err
}

// nodeCreated is nodeLive, and the node's creation time when it is live.
func (r Row) nodeCreated() (created int64, live bool, err error) {
	e, ok, err := decodeEntity(r.key, r.cells)
	if err != nil || !ok || e.deleting != 0 {
		return 0, false, err
	}
	return e.created, true, nil
}

// Degree decodes a degree counter: 0 when none was ever counted.
func (r Row) Degree() (int64, error) {
	v := r.cells.get(keys.QualDegree)
	if v == nil {
		return 0, nil
	}
	n, ok := decodeMs(v)
	if !ok {
		return 0, corrupt(r.key, "degree counter %x", v)
	}
	return n, nil
}

// Article decodes an article row read for id: nil when there is none.
func (r Row) Article(id string) (*Article, error) {
	k, _, err := parseArticleID(id)
	if err != nil {
		return nil, err
	}
	a, ok, err := decodeArticleCells(r.key, r.cells)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, nil
	}
	art, err := articleFrom(k, a)
	return &art, err
}

// ArticleCount decodes the count of an author's articles in category ("":
// all of them) from their counters row.
func (r Row) ArticleCount(category string) (int64, error) {
	qual := keys.QualArticleCount
	if category != "" {
		qual = keys.QualCategoryCount + category
	}
	v := r.cells.get(qual)
	if v == nil {
		return 0, nil
	}
	n, ok := decodeMs(v)
	if !ok {
		return 0, corrupt(r.key, "article counter %q: %x", qual, v)
	}
	return n, nil
}

// TopWords decodes an author's n most frequent words from their top-words
// row, or from their word count row when Read had to read that instead.
func (r Row) TopWords(n int) ([]WordCount, error) {
	if n < 1 || n > MaxTopWords {
		return nil, invalid("n is %d; want 1..%d", n, MaxTopWords)
	}
	if r.top != nil {
		return r.top.page(n), nil
	}
	if _, err := keys.DecodeTopWords([]byte(r.key)); err == nil {
		// Read gives every top-words row its view (viewTopRows) or
		// replaces it with the word count row (topWordsFallback): its
		// list alone would leave the pending counts out.
		return nil, corrupt(r.key, "a top-words row that cannot answer")
	}
	return topWords(r.key, r.cells.asMap(), n)
}

// Primed is a row a page scan has already read (an index row holds what its
// entity row holds): a caller that caches Reads can store it, so that a
// later Get of that row needs no round trip.
type Primed struct {
	Get Get
	Row Row
}
