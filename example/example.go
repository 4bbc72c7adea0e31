// Package example writes hbgraph's example data, so that a first run has
// something to explore: 40 people in five cities who follow each other,
// and the articles they write in three categories.
//
// The data is generated, the same on every run: the ids, the properties,
// the times of every node, relationship and article (all in 2025, before
// anything a person writes by hand) and the articles' sequence numbers.
// Load writes it through the store's import calls, so every index row,
// counter and word count is written as a live write would, and a later
// post by hand takes the author's next sequence number.
//
// The graph, for the queries the page opens on:
//
//   - nodes: the people, ids "alice", "bob", ..., with properties name,
//     city, joined (a year) and interests (two of the categories), each
//     owned by the subject of its id (node alice by a token whose sub is
//     "alice"), so that Node.owner and the ownership rules have something
//     to show;
//   - relationships "follows": alice follows eight people, everyone else
//     three to six, each with properties since (a year) and close (a bool);
//   - articles: one to five per person (alice four), in their interests'
//     categories "databases", "go" and "travel", so articles, their
//     categories and wordCounts have something to show.
package example

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hbgraph/hbgraph/store"
)

// firstNode is the node the GraphiQL page's example query opens on
// (graphiql's exampleVariables).
const firstNode = "alice"

// follows is the type of the example's relationships.
const follows = "follows"

// categories of the example's articles.
var categories = []string{"databases", "go", "travel"}

// Summary is what Load did.
type Summary struct {
	// Loaded is false when the store held data already: Load wrote nothing.
	Loaded bool
	// What Load wrote (0 when not Loaded).
	Nodes, Relationships, Articles int
}

func (s Summary) String() string {
	if !s.Loaded {
		return "example data not loaded: the store already holds data"
	}
	return fmt.Sprintf("example data loaded: %d nodes, %d %q relationships, %d articles",
		s.Nodes, s.Relationships, follows, s.Articles)
}

// Load writes the example data into st if st holds no data at all (see
// store.Store.Empty), and otherwise writes nothing and says so in the
// Summary. It is meant for a fresh data directory: a Load interrupted
// part way leaves a store that is not empty, which the next Load leaves
// alone (delete the data directory and start again).
func Load(ctx context.Context, st *store.Store) (Summary, error) {
	empty, err := st.Empty(ctx)
	if err != nil {
		return Summary{}, fmt.Errorf("example: %w", err)
	}
	if !empty {
		return Summary{}, nil
	}
	d := generate()
	for _, n := range d.Nodes {
		created, err := st.ImportNode(ctx, n.ID, n.Owner, n.Properties, n.Created, n.Created)
		if err != nil {
			return Summary{}, fmt.Errorf("example: node %s: %w", n.ID, err)
		}
		if !created {
			return Summary{}, fmt.Errorf("example: node %s was there already", n.ID)
		}
	}
	outs, err := st.ImportRelationships(ctx, d.Relationships)
	if err := settled(outs, err, func(i int) string { return fmt.Sprint(d.Relationships[i].Key) }); err != nil {
		return Summary{}, err
	}
	outs, err = st.ImportArticles(ctx, d.Articles)
	if err := settled(outs, err, func(i int) string {
		return fmt.Sprintf("article %d of %s", d.Articles[i].Seq, d.Articles[i].Author)
	}); err != nil {
		return Summary{}, err
	}
	last := map[string]uint64{}
	for _, a := range d.Articles {
		last[a.Author] = max(last[a.Author], a.Seq)
	}
	for _, n := range d.Nodes {
		if err := st.AdvanceArticleSeq(ctx, n.ID, last[n.ID]); err != nil {
			return Summary{}, fmt.Errorf("example: articles of %s: %w", n.ID, err)
		}
	}
	return Summary{Loaded: true, Nodes: len(d.Nodes), Relationships: len(d.Relationships), Articles: len(d.Articles)}, nil
}

// settled returns the first error of a batch import, naming its item, or
// an error if an item was not created (it was there already).
func settled(outs []store.ImportOutcome, err error, name func(int) string) error {
	if err != nil {
		return fmt.Errorf("example: %w", err)
	}
	for i, o := range outs {
		if o.Err != nil {
			return fmt.Errorf("example: %s: %w", name(i), o.Err)
		}
		if !o.Created {
			return fmt.Errorf("example: %s was there already", name(i))
		}
	}
	return nil
}

// node is a node of the example data.
type node struct {
	ID string
	// Owner is the token subject that may change the node: its id.
	Owner      string
	Properties store.Properties
	Created    time.Time
}

// data is the example data, in the order Load writes it.
type data struct {
	Nodes         []node
	Relationships []store.RelationshipImport
	Articles      []store.ArticleImport
}

// start is the time of the first node; everything else comes after it.
var start = time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC)

var people = []struct{ id, name string }{
	{"alice", "Alice Archer"}, {"bob", "Bob Brandt"}, {"carol", "Carol Chen"}, {"dave", "Dave Dubois"},
	{"erin", "Erin Ebert"}, {"frank", "Frank Fischer"}, {"grace", "Grace Gomez"}, {"heidi", "Heidi Holm"},
	{"ivan", "Ivan Ilić"}, {"judy", "Judy Jansen"}, {"kenji", "Kenji Kato"}, {"lena", "Lena Lindqvist"},
	{"mallory", "Mallory Moss"}, {"nia", "Nia Nwosu"}, {"olivia", "Olivia Ortiz"}, {"peggy", "Peggy Park"},
	{"quentin", "Quentin Quist"}, {"rupert", "Rupert Reyes"}, {"sybil", "Sybil Sato"}, {"trent", "Trent Turner"},
	{"uma", "Uma Usman"}, {"victor", "Victor Vidal"}, {"wendy", "Wendy Wu"}, {"xavier", "Xavier Xu"},
	{"yuki", "Yuki Yamada"}, {"zoe", "Zoe Zimmer"}, {"amir", "Amir Azizi"}, {"bea", "Bea Bianchi"},
	{"chidi", "Chidi Okafor"}, {"dora", "Dora Dimitrova"}, {"emil", "Emil Eriksen"}, {"farah", "Farah Fares"},
	{"gus", "Gus Grant"}, {"hana", "Hana Horvat"}, {"igor", "Igor Ivanov"}, {"jun", "Jun Jeong"},
	{"kira", "Kira Kowalski"}, {"luis", "Luis López"}, {"mia", "Mia Müller"}, {"noah", "Noah Nakamura"},
}

var cities = []string{"Lisbon", "Osaka", "Toronto", "Nairobi", "Berlin"}

// titles and sentences per category, from which articles are put together.
var titles = map[string][]string{
	"databases": {
		"Row keys that scale", "Partial scans", "Counters without locks", "Why hash the row key",
		"Secondary indexes by hand", "Compare and set, again",
	},
	"go": {
		"Batching with dataloaders", "Contexts everywhere", "Small interfaces", "Errors that say what to do",
		"Benchmarks on a noisy machine", "Goroutines with a bound",
	},
	"travel": {
		"Trains through the Alps", "Kyoto in autumn", "A week in Lisbon", "Night buses",
		"Coffee in Nairobi", "Ferries of the north",
	},
}

var sentences = map[string][]string{
	"databases": {
		"Row keys start with hashed ids, so writes spread over regions.",
		"Partial scans stop at prefix plus one.",
		"Reversed timestamps in row keys put newest rows first.",
		"Index rows carry each relationship's update time as cell timestamp.",
		"CheckAndMutate creates rows only when cells are absent.",
		"Counters are increments, atomic within one row.",
		"Crashes between rows leave indexes stale until repair runs.",
		"Scans page forward from just past each last row seen.",
	},
	"go": {
		"Dataloaders batch reads, one batch per query level.",
		"Pass contexts first; watch ctx.Done on every blocking send.",
		"Wrap errors where layers add facts.",
		"Benchmarks compare before with after, run back to back.",
		"Worker pools bound goroutines when fan out grows.",
		"Small interfaces make test fakes easy.",
		"Table tests name every case.",
		"Graceful shutdown waits for requests still running.",
	},
	"travel": {
		"Trains leave early, so pack bags overnight.",
		"Maple leaves turn red in temple gardens.",
		"Trams climb hills above old river towns.",
		"Night buses cost little; sleep stays optional.",
		"Coffee tastes best where coffee grows.",
		"Ferries cross grey water between quiet islands.",
		"Markets open at dawn with bread, fruit, coffee.",
		"Walking beats maps in old towns.",
	},
}

// rnd is splitmix64: a tiny generator whose numbers never change, so the
// example data is the same with every Go version.
type rnd uint64

func (r *rnd) next() uint64 {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n).
func (r *rnd) intn(n int) int { return int(r.next() % uint64(n)) }

// pick returns k distinct numbers of [0, n) other than skip, in the order
// drawn.
func (r *rnd) pick(k, n, skip int) []int {
	var out []int
	seen := map[int]bool{skip: true}
	for len(out) < k {
		i := r.intn(n)
		if !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	return out
}

// generate returns the example data Load writes: the same on every call.
func generate() data {
	var d data
	r := rnd(2025)
	interests := make([][]string, len(people))
	for i, p := range people {
		c := r.pick(2, len(categories), -1)
		interests[i] = []string{categories[c[0]], categories[c[1]]}
		d.Nodes = append(d.Nodes, node{
			ID:    p.id,
			Owner: p.id,
			Properties: store.Properties{
				"name":      p.name,
				"city":      cities[r.intn(len(cities))],
				"joined":    2015 + r.intn(10),
				"interests": []any{interests[i][0], interests[i][1]},
			},
			Created: start.Add(time.Duration(i) * time.Hour),
		})
	}
	// Relationships from the second month on, articles from the third: each
	// one some minutes into a span of 300 days, so their order is mixed.
	followed := start.AddDate(0, 1, 0)
	posts := start.AddDate(0, 2, 0)
	const span = 300 * 24 * 60
	for i := range people {
		k := 3 + r.intn(4)
		if people[i].id == firstNode {
			k = 8
		}
		for _, j := range r.pick(k, len(people), i) {
			at := followed.Add(time.Duration(r.intn(span)) * time.Minute)
			d.Relationships = append(d.Relationships, store.RelationshipImport{
				Key:        store.RelationshipKey{Start: people[i].id, Type: follows, End: people[j].id},
				Properties: store.Properties{"since": 2015 + r.intn(11), "close": r.intn(3) == 0},
				Created:    at,
				Updated:    at,
			})
		}
	}
	for i, p := range people {
		k := 1 + r.intn(5)
		if p.id == firstNode {
			k = 4
		}
		// Sequence numbers follow posting times, as they do for live posts.
		at := make([]time.Time, k)
		for n := range at {
			at[n] = posts.Add(time.Duration(r.intn(span)) * time.Minute)
		}
		slices.SortFunc(at, time.Time.Compare)
		used := map[string]bool{}
		for n := range k {
			cat := interests[i][r.intn(2)]
			title := titles[cat][r.intn(len(titles[cat]))]
			for used[title] {
				title = titles[cat][r.intn(len(titles[cat]))]
			}
			used[title] = true
			var body []string
			for _, s := range r.pick(3, len(sentences[cat]), -1) {
				body = append(body, sentences[cat][s])
			}
			d.Articles = append(d.Articles, store.ArticleImport{
				Author:   p.id,
				Seq:      uint64(n + 1),
				Title:    title,
				Body:     strings.Join(body, " "),
				Category: cat,
				Posted:   at[n],
			})
		}
	}
	return d
}
