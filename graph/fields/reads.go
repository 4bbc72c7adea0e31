package fields

import (
	"github.com/99designs/gqlgen/graphql"

	"github.com/hbgraph/hbgraph/store"
)

// Read is a store read's typed definition: the rows a parent P and the
// field's arguments name, read with the other reads of the parent's wave
// (batched: the plan's loaders.Wave, gqlgen's rows loader), and the value
// V decoded from them. The plan writes V as the field's definition says:
// a scalar by Scalar, an object or a list of objects by the object
// writer for V's Go type.
type Read[P, V any] struct {
	// Keys are the rows the value is decoded from: a relationship's row
	// and its ends', a counter's row. An error is the field's (a key that
	// does not build: BAD_USER_INPUT).
	Keys func(in In, p P) (Gets, error)
	// Decode is the value of the rows Keys named, in their order.
	Decode func(in In, p P, rows Rows) (V, error)
	// Scalar writes a scalar value (zero for objects).
	Scalar Scalar[V]
}

// MaxReadRows is the most rows a Read names: a relationship and its two
// ends.
const MaxReadRows = 3

// Gets are the rows a Read names, in order: an array, passed by value, so
// that a read of the plan allocates nothing.
type Gets struct {
	Get [MaxReadRows]store.Get
	N   int
}

// Rows are what was read for Gets, in their order.
type Rows struct {
	Row [MaxReadRows]store.Row
	N   int
}

// ReadOf is a Read with its value erased, for the plan: the runner asks
// Keys, gives the rows read in the wave to Decode, and the writer writes
// the value (Desc.Append for a scalar; an object or a list of objects by
// its Go type).
type ReadOf[P any] struct {
	Keys   func(in In, p P) (Gets, error)
	Decode func(in In, p P, rows Rows) (any, error)
}

// Start, for a resolver: builds the keys, starts their reads through
// load (the request's batched row loader, which waits when its func is
// called) and returns a func that waits for them and decodes the value.
func (r Read[P, V]) Start(in In, p P, load func(gets []store.Get) func() ([]store.Row, error)) func() (V, error) {
	gets, err := r.Keys(in, p)
	if err != nil {
		return func() (V, error) {
			var zero V
			return zero, err
		}
	}
	wait := load(gets.Get[:gets.N])
	return func() (V, error) {
		read, err := wait()
		if err != nil {
			var zero V
			return zero, err
		}
		var rows Rows
		rows.N = copy(rows.Row[:], read)
		return r.Decode(in, p, rows)
	}
}

// Load is Start, waited for.
func (r Read[P, V]) Load(in In, p P, load func(gets []store.Get) func() ([]store.Row, error)) (V, error) {
	return r.Start(in, p, load)()
}

// Erased is the Read as the plan calls it.
func (r Read[P, V]) Erased() *ReadOf[P] {
	decode := r.Decode
	return &ReadOf[P]{Keys: r.Keys, Decode: func(in In, p P, rows Rows) (any, error) {
		v, err := decode(in, p, rows)
		if err != nil {
			return nil, err
		}
		return v, nil
	}}
}

// appendScalar is a scalar read's value written, erased; nil for objects.
func (r Read[P, V]) appendScalar() func(b []byte, v any) []byte {
	app := r.Scalar.Append
	if app == nil {
		return nil
	}
	return func(b []byte, v any) []byte { return app(b, v.(V)) }
}

// Root is the parent of the root fields (Query): they read only their
// arguments.
type Root struct{}

// ReadParentTypes are the Go types the executors hold each type's values
// as, for its reads (as ParentTypes for projections): a Node by its id
// (its reads join the wave that reads the node), a connection by the
// counter it counts, Query by nothing.
var ReadParentTypes = map[string]any{
	"Query":                  (*ReadOf[Root])(nil),
	"Node":                   (*ReadOf[string])(nil),
	"RelationshipConnection": (*ReadOf[store.DegreeKey])(nil),
	"ArticleConnection":      (*ReadOf[store.ArticleCountKey])(nil),
}

// read registers a store read of typ.name.
func read[P, V any](typ, name string, args func(map[string]any) (any, error), r Read[P, V]) Read[P, V] {
	register(&Desc{Type: typ, Name: name, Kind: StoreRead, Scalar: r.Scalar.Name, Args: args, Read: r.Erased(), Append: r.appendScalar()})
	return r
}

// one is the Keys of a read of one row.
func one[P any](key func(in In, p P) (store.Get, error)) func(In, P) (Gets, error) {
	return func(in In, p P) (Gets, error) {
		g, err := key(in, p)
		return Gets{Get: [MaxReadRows]store.Get{g}, N: 1}, err
	}
}

// The store's reads by key, as both executors and _entities read them.
var (
	// RelationshipByKey: a relationship, nil when it or an end does not
	// exist (its ends' rows are read with it, and cached for the fields
	// that resolve them).
	RelationshipByKey = Read[store.RelationshipKey, *store.Relationship]{
		Keys: func(_ In, k store.RelationshipKey) (Gets, error) {
			g, start, end, err := k.Gets()
			return Gets{Get: [MaxReadRows]store.Get{g, start, end}, N: 3}, err
		},
		Decode: func(_ In, k store.RelationshipKey, rows Rows) (*store.Relationship, error) {
			return rows.Row[0].Relationship(k, rows.Row[1], rows.Row[2])
		},
	}
	// ArticleByID: an article, nil when there is none.
	ArticleByID = Read[string, *store.Article]{
		Keys:   one(func(_ In, id string) (store.Get, error) { return store.ArticleGet(id) }),
		Decode: func(_ In, id string, rows Rows) (*store.Article, error) { return rows.Row[0].Article(id) },
	}
)

// Root reads.
var (
	QueryRelationship = read("Query", "relationship", decodeRelationshipArgs, Read[Root, *store.Relationship]{
		Keys: func(in In, _ Root) (Gets, error) {
			return RelationshipByKey.Keys(in, in.Args.(RelationshipArgs).Key)
		},
		Decode: func(in In, _ Root, rows Rows) (*store.Relationship, error) {
			return RelationshipByKey.Decode(in, in.Args.(RelationshipArgs).Key, rows)
		},
	})
	QueryArticle = read("Query", "article", decodeIDArgs, Read[Root, *store.Article]{
		Keys: func(in In, _ Root) (Gets, error) {
			return ArticleByID.Keys(in, in.Args.(IDArgs).ID)
		},
		Decode: func(in In, _ Root, rows Rows) (*store.Article, error) {
			return ArticleByID.Decode(in, in.Args.(IDArgs).ID, rows)
		},
	})
)

// Reads keyed by a node's id, in the node's wave.
var (
	// NodeWordCounts: the author's most frequent words.
	NodeWordCounts = read("Node", "wordCounts", decodeWordCountsArgs, Read[string, []store.WordCount]{
		Keys: one(func(_ In, id string) (store.Get, error) { return store.WordCountsGet(id) }),
		Decode: func(in In, _ string, rows Rows) ([]store.WordCount, error) {
			return rows.Row[0].TopWords(in.Args.(WordCountsArgs).N)
		},
	})
)

// Counters behind the connections' totalCount, read in the page's wave.
var (
	RelationshipConnectionTotalCount = read("RelationshipConnection", "totalCount", nil, Read[store.DegreeKey, int64]{
		Keys:   one(func(_ In, k store.DegreeKey) (store.Get, error) { return k.Get() }),
		Decode: func(_ In, _ store.DegreeKey, rows Rows) (int64, error) { return rows.Row[0].Degree() },
		Scalar: Int,
	})
	ArticleConnectionTotalCount = read("ArticleConnection", "totalCount", nil, Read[store.ArticleCountKey, int64]{
		Keys: one(func(_ In, k store.ArticleCountKey) (store.Get, error) { return k.Get() }),
		Decode: func(_ In, k store.ArticleCountKey, rows Rows) (int64, error) {
			return rows.Row[0].ArticleCount(k.Category)
		},
		Scalar: Int,
	})
)

// DefaultWordCounts is wordCounts' first when the query leaves it out (the
// schema's default).
const DefaultWordCounts = 10

// IDArgs are the arguments of a field taking one id (node, article).
type IDArgs struct{ ID string }

// IDsArgs are nodes(ids:)'s, and node(id:)'s as a list of one.
type IDsArgs struct {
	IDs []string
	one [1]string // node(id:)'s: IDs without an allocation of its own
}

// RelationshipArgs are relationship(startNodeId, type, endNodeId)'s.
type RelationshipArgs struct{ Key store.RelationshipKey }

// WordCountsArgs are wordCounts(first:)'s: N is first, else
// DefaultWordCounts; First is the argument as given (nil when null).
type WordCountsArgs struct {
	First *int
	N     int
}

// NewWordCountsArgs are wordCounts' arguments for first.
func NewWordCountsArgs(first *int) WordCountsArgs {
	n := DefaultWordCounts
	if first != nil {
		n = *first
	}
	return WordCountsArgs{First: first, N: n}
}

func decodeIDArgs(m map[string]any) (any, error) {
	c := converter{m: m}
	a := IDArgs{ID: c.id("id")}
	return a, c.err
}

func decodeIDsArgs(m map[string]any) (any, error) {
	vs := graphql.CoerceList(m["ids"])
	a := &IDsArgs{IDs: make([]string, len(vs))}
	c := converter{}
	for i, v := range vs {
		s, err := graphql.UnmarshalID(v)
		c.keep(err)
		a.IDs[i] = s
	}
	return a, c.err
}

func decodeRelationshipArgs(m map[string]any) (any, error) {
	c := converter{m: m}
	a := RelationshipArgs{Key: store.RelationshipKey{Start: c.id("startNodeId"), Type: c.str("type"), End: c.id("endNodeId")}}
	return a, c.err
}

func decodeWordCountsArgs(m map[string]any) (any, error) {
	c := converter{m: m}
	a := NewWordCountsArgs(c.optInt("first"))
	return a, c.err
}
