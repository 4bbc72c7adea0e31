package main

import (
	"cmp"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
)

// The dataset's year, 2025 in UTC, in Unix milliseconds: every timestamp
// is in [yearStart, yearEnd).
const (
	yearStart int64 = 1735689600000 // 2025-01-01T00:00:00Z
	yearEnd   int64 = 1767225600000 // 2026-01-01T00:00:00Z
	yearMs          = yearEnd - yearStart
)

// Shape of the dataset.
const (
	minFollows, maxFollows = 10, 30
	maxLikes               = 10
	minArticles            = 1
	maxArticles            = 9
	heavyAuthors           = 100
	heavyArticles          = 200
	heavyMainArticles      = 160 // of heavyArticles, in the main category
	// One more author, not a heavy one, writes deepArticles, all in one
	// category: the benchmark's page 50 of 20 needs 1,000 of them.
	deepArticles  = 1100
	minTitleWords = 3
	maxTitleWords = 8
	minBodyWords  = 20
	maxBodyWords  = 80
	maxNodes      = 100_000_000 // follower counts are int32

	// followZipfS is the exponent of the follow targets' Zipf distribution
	// (P(rank k) ~ (1+k)^-s): at 1.1 the top node is one draw in ~7 at
	// N=10,000, so nearly every node follows it, and the tail gets ~1.
	followZipfS = 1.1
	// wordZipfS weights the vocabulary, the first words most.
	wordZipfS = 1.2
	// categoryWordPercent is the chance that a word comes from the
	// article's category's own list.
	categoryWordPercent = 30
)

// Relationship types.
const (
	typeFollow = "follow"
	typeLike   = "like"
)

var relationshipTypes = []string{typeFollow, typeLike}

// PCG stream ids, one per concern, so that changing how one file is drawn
// leaves the others as they were.
const (
	streamNodes uint64 = iota + 1
	streamPick
	streamFollow
	streamLike
	streamArticles
	streamDeep
)

// config is what to generate.
type config struct {
	nodes int
	seed  uint64
}

func (c config) validate() error {
	if c.nodes < heavyAuthors || c.nodes > maxNodes {
		return fmt.Errorf("-nodes must be %d-%d, not %d", heavyAuthors, maxNodes, c.nodes)
	}
	return nil
}

// outputs are where generate writes each JSON Lines file. They are written
// in many small writes, so they should be buffered.
type outputs struct {
	nodes, relationships, articles io.Writer
}

// summary is what the benchmark driver reads back (summary.json).
type summary struct {
	Seed          uint64         `json:"seed"`
	Nodes         int            `json:"nodes"`
	Relationships map[string]int `json:"relationships"` // by type
	Articles      int            `json:"articles"`
	MostFollowed  nodeFollowers  `json:"most_followed"`
	// TenFollowers is the first node (in id order) with exactly ten
	// followers, or, if none has, the one closest to ten.
	TenFollowers nodeFollowers `json:"ten_followers"`
	HeavyAuthors []heavyAuthor `json:"heavy_authors"` // in id order
	// DeepAuthor has deepArticles articles in its main category.
	DeepAuthor   heavyAuthor    `json:"deep_author"`
	MaxOutDegree map[string]int `json:"max_out_degree"`
	Categories   []string       `json:"categories"`
	StartMs      int64          `json:"start_ms"` // all timestamps are in [start_ms, end_ms)
	EndMs        int64          `json:"end_ms"`
}

type nodeFollowers struct {
	ID        string `json:"id"`
	Followers int    `json:"followers"`
}

type heavyAuthor struct {
	ID           string `json:"id"`
	MainCategory string `json:"main_category"`
	Articles     int    `json:"articles"`
}

// generator holds the state shared by the three passes.
type generator struct {
	cfg  config
	line []byte // scratch for one JSON line

	// popular maps a Zipf rank to a node index (0-based): popular[0] is
	// the node that follow targets are drawn to most.
	popular []int32
	// followers counts the incoming follow relationships of each node.
	followers []int32
	// heavy are the heavy authors' node indexes, ascending, and main
	// their main categories (indexes into categories).
	heavy []int
	main  []int
	// deep is the deep author's node index, deepMain its category.
	deep, deepMain int
}

// generate writes the dataset to out and returns its summary. It returns
// the first write error.
func generate(cfg config, out outputs) (summary, error) {
	if err := cfg.validate(); err != nil {
		return summary{}, err
	}
	g := &generator{cfg: cfg, line: make([]byte, 0, 4096)}
	g.pick()
	sum := summary{
		Seed:          cfg.seed,
		Nodes:         cfg.nodes,
		Relationships: map[string]int{},
		MaxOutDegree:  map[string]int{},
		Categories:    categories,
		StartMs:       yearStart,
		EndMs:         yearEnd,
	}
	if err := g.writeNodes(out.nodes); err != nil {
		return summary{}, fmt.Errorf("nodes: %w", err)
	}
	if err := g.writeRelationships(out.relationships, &sum); err != nil {
		return summary{}, fmt.Errorf("relationships: %w", err)
	}
	if err := g.writeArticles(out.articles, &sum); err != nil {
		return summary{}, fmt.Errorf("articles: %w", err)
	}
	sum.MostFollowed, sum.TenFollowers = g.followerPicks()
	sum.DeepAuthor = heavyAuthor{ID: nodeID(g.deep), MainCategory: categories[g.deepMain], Articles: deepArticles}
	for i, n := range g.heavy {
		sum.HeavyAuthors = append(sum.HeavyAuthors, heavyAuthor{
			ID: nodeID(n), MainCategory: categories[g.main[i]], Articles: heavyArticles,
		})
	}
	return sum, nil
}

func newRand(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }

func nodeID(i int) string { return "n" + strconv.Itoa(i+1) }

func appendNodeID(b []byte, i int) []byte { return strconv.AppendInt(append(b, 'n'), int64(i)+1, 10) }

// pick draws the popularity permutation and the heavy authors.
func (g *generator) pick() {
	r := newRand(g.cfg.seed, streamPick)
	n := g.cfg.nodes
	g.popular = make([]int32, n)
	for i := range g.popular {
		g.popular[i] = int32(i)
	}
	r.Shuffle(n, func(i, j int) { g.popular[i], g.popular[j] = g.popular[j], g.popular[i] })

	for len(g.heavy) < heavyAuthors {
		if i := r.IntN(n); !slices.Contains(g.heavy, i) {
			g.heavy = append(g.heavy, i)
		}
	}
	slices.Sort(g.heavy)
	for range g.heavy {
		g.main = append(g.main, r.IntN(len(categories)))
	}
	// Drawn last, so the draws above are what they were before it existed.
	for g.deep = r.IntN(n); slices.Contains(g.heavy, g.deep); g.deep = r.IntN(n) {
	}
	g.deepMain = r.IntN(len(categories))
}

// timespan draws created_at and updated_at >= created_at in the year.
func timespan(r *rand.Rand) (created, updated int64) {
	created = yearStart + r.Int64N(yearMs)
	return created, created + r.Int64N(yearEnd-created)
}

func (g *generator) writeNodes(w io.Writer) error {
	r := newRand(g.cfg.seed, streamNodes)
	for i := range g.cfg.nodes {
		created, updated := timespan(r)
		b := append(g.line[:0], `{"id":"`...)
		b = appendNodeID(b, i)
		b = append(b, `","properties":{"name":`...)
		b = appendString(b, firstNames[r.IntN(len(firstNames))]+" "+lastNames[r.IntN(len(lastNames))])
		b = append(b, `,"age":`...)
		b = strconv.AppendInt(b, 18+r.Int64N(63), 10)
		b = append(b, `,"city":`...)
		b = appendString(b, cities[r.IntN(len(cities))])
		b = append(b, `,"score":`...)
		b = strconv.AppendFloat(b, r.Float64()*100, 'f', 2, 64)
		b = append(b, `,"tags":[`...)
		var seen uint64 // bit i: tags[i] taken; len(tags) <= 64
		for k := range 1 + r.IntN(4) {
			t := r.IntN(len(tags))
			for seen&(1<<t) != 0 {
				t = r.IntN(len(tags))
			}
			seen |= 1 << t
			if k > 0 {
				b = append(b, ',')
			}
			b = appendString(b, tags[t])
		}
		b = append(b, `]},"created_at":`...)
		b = strconv.AppendInt(b, created, 10)
		b = append(b, `,"updated_at":`...)
		b = strconv.AppendInt(b, updated, 10)
		b = append(b, "}\n"...)
		g.line = b
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// writeRelationships writes each node's follows, then its likes, in node
// order, and counts followers.
func (g *generator) writeRelationships(w io.Writer, sum *summary) error {
	n := g.cfg.nodes
	g.followers = make([]int32, n)
	rf := newRand(g.cfg.seed, streamFollow)
	rl := newRand(g.cfg.seed, streamLike)
	zipf := rand.NewZipf(rf, followZipfS, 1 /* v */, uint64(n-1))
	targets := make([]int, 0, maxFollows)

	for i := range n {
		// Follows: Zipf over the popularity permutation. A node can follow
		// each target once, so the head saturates and draws are retried;
		// after many retries fall back to uniform draws, which always
		// finish (N-1 >= degree).
		deg := min(minFollows+rf.IntN(maxFollows-minFollows+1), n-1)
		targets = targets[:0]
		for attempt := 0; len(targets) < deg; attempt++ {
			var t int
			if attempt < 100*maxFollows {
				t = int(g.popular[zipf.Uint64()])
			} else {
				t = rf.IntN(n)
			}
			if t != i && !slices.Contains(targets, t) {
				targets = append(targets, t)
			}
		}
		for _, t := range targets {
			g.followers[t]++
			if err := g.writeRelationship(w, rf, i, typeFollow, t); err != nil {
				return err
			}
		}
		sum.Relationships[typeFollow] += len(targets)
		sum.MaxOutDegree[typeFollow] = max(sum.MaxOutDegree[typeFollow], len(targets))

		// Likes: uniform targets.
		deg = min(rl.IntN(maxLikes+1), n-1)
		targets = targets[:0]
		for len(targets) < deg {
			if t := rl.IntN(n); t != i && !slices.Contains(targets, t) {
				targets = append(targets, t)
			}
		}
		for _, t := range targets {
			if err := g.writeRelationship(w, rl, i, typeLike, t); err != nil {
				return err
			}
		}
		sum.Relationships[typeLike] += len(targets)
		sum.MaxOutDegree[typeLike] = max(sum.MaxOutDegree[typeLike], len(targets))
	}
	return nil
}

func (g *generator) writeRelationship(w io.Writer, r *rand.Rand, start int, typ string, end int) error {
	created, updated := timespan(r)
	b := append(g.line[:0], `{"start_node_id":"`...)
	b = appendNodeID(b, start)
	b = append(b, `","type":`...)
	b = appendString(b, typ)
	b = append(b, `,"end_node_id":"`...)
	b = appendNodeID(b, end)
	b = append(b, `","properties":{"since":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"weight":`...)
	b = strconv.AppendFloat(b, r.Float64(), 'f', 3, 64)
	b = append(b, `},"created_at":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"updated_at":`...)
	b = strconv.AppendInt(b, updated, 10)
	b = append(b, "}\n"...)
	g.line = b
	_, err := w.Write(b)
	return err
}

// article is one timeline entry before its text is drawn.
type article struct {
	posted   int64
	category int
}

// writeArticles writes each author's articles in node order, ids 1, 2, ...
// in posted_at order.
func (g *generator) writeArticles(w io.Writer, sum *summary) error {
	r := newRand(g.cfg.seed, streamArticles)
	words := rand.NewZipf(r, wordZipfS, 2 /* v */, uint64(len(vocabulary)-1))
	arts := make([]article, 0, heavyArticles)
	heavy := 0 // next index into g.heavy
	for i := range g.cfg.nodes {
		arts = arts[:0]
		if heavy < len(g.heavy) && g.heavy[heavy] == i {
			main := g.main[heavy]
			heavy++
			for k := range heavyArticles {
				c := main
				if k >= heavyMainArticles {
					// Another category: skip main in the draw.
					if c = r.IntN(len(categories) - 1); c >= main {
						c++
					}
				}
				arts = append(arts, article{posted: yearStart + r.Int64N(yearMs), category: c})
			}
		} else {
			for range minArticles + r.IntN(maxArticles-minArticles+1) {
				arts = append(arts, article{posted: yearStart + r.Int64N(yearMs), category: r.IntN(len(categories))})
			}
		}
		if i == g.deep {
			// Its own stream, so every other author's articles stay as
			// they were.
			dr := newRand(g.cfg.seed, streamDeep)
			for range deepArticles - len(arts) {
				arts = append(arts, article{posted: yearStart + dr.Int64N(yearMs), category: g.deepMain})
			}
		}
		slices.SortStableFunc(arts, func(a, b article) int { return cmp.Compare(a.posted, b.posted) })

		for seq, a := range arts {
			b := append(g.line[:0], `{"id":`...)
			b = strconv.AppendInt(b, int64(seq)+1, 10)
			b = append(b, `,"author_id":"`...)
			b = appendNodeID(b, i)
			b = append(b, `","title":"`...)
			b = appendWords(b, r, words, a.category, minTitleWords+r.IntN(maxTitleWords-minTitleWords+1))
			b = append(b, `","body":"`...)
			b = appendWords(b, r, words, a.category, minBodyWords+r.IntN(maxBodyWords-minBodyWords+1))
			b = append(b, `","category":`...)
			b = appendString(b, categories[a.category])
			b = append(b, `,"posted_at":`...)
			b = strconv.AppendInt(b, a.posted, 10)
			b = append(b, "}\n"...)
			g.line = b
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		sum.Articles += len(arts)
	}
	return nil
}

// appendWords appends n space-separated words. The vocabulary and category
// words are lower-case ASCII letters, which need no JSON escaping.
func appendWords(b []byte, r *rand.Rand, z *rand.Zipf, category, n int) []byte {
	for k := range n {
		if k > 0 {
			b = append(b, ' ')
		}
		if r.IntN(100) < categoryWordPercent {
			cw := categoryWords[category]
			b = append(b, cw[r.IntN(len(cw))]...)
		} else {
			b = append(b, vocabulary[z.Uint64()]...)
		}
	}
	return b
}

// followerPicks returns the most followed node (the first in id order on a
// tie) and the first node with exactly ten followers, or the closest.
func (g *generator) followerPicks() (most, ten nodeFollowers) {
	mostI, tenI := 0, 0
	dist := func(f int32) int32 { return max(f-10, 10-f) }
	for i, f := range g.followers {
		if f > g.followers[mostI] {
			mostI = i
		}
		if dist(f) < dist(g.followers[tenI]) {
			tenI = i
		}
	}
	return nodeFollowers{nodeID(mostI), int(g.followers[mostI])},
		nodeFollowers{nodeID(tenI), int(g.followers[tenI])}
}

// appendString appends s as a JSON string. It escapes '"', '\\' and
// control characters; s must be valid UTF-8, which every word list here is.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
