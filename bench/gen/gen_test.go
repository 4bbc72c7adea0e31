package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// testNodes is small enough for -race, large enough for the heavy authors
// and a skewed follower distribution.
const testNodes = 2000

// TestDeterministic runs the command twice with the same flags and expects
// byte-identical files, and a different seed to change them.
func TestDeterministic(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	seeds := []string{"7", "7", "8"}
	for i, dir := range dirs {
		args := []string{"-out", dir, "-nodes", strconv.Itoa(testNodes), "-seed", seeds[i]}
		if err := run(args, io.Discard); err != nil {
			t.Fatalf("run %v: %v", args, err)
		}
	}
	for _, name := range []string{nodesFile, relationshipsFile, articlesFile, summaryFile} {
		a := readFile(t, filepath.Join(dirs[0], name))
		b := readFile(t, filepath.Join(dirs[1], name))
		c := readFile(t, filepath.Join(dirs[2], name))
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two runs with seed 7 differ", name)
		}
		if bytes.Equal(a, c) {
			t.Errorf("%s: seeds 7 and 8 give the same file", name)
		}
	}
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // substring of the error
	}{
		{"no out", []string{"-nodes", "200"}, "-out is required"},
		{"too few nodes", []string{"-out", "x", "-nodes", "99"}, "-nodes must be"},
		{"too many nodes", []string{"-out", "x", "-nodes", "100000001"}, "-nodes must be"},
		{"extra argument", []string{"-out", "x", "y"}, "unexpected arguments"},
		{"bad seed", []string{"-out", "x", "-seed", "-1"}, "invalid value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.args, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run(%q) = %v, want an error containing %q", tc.args, err, tc.want)
			}
		})
	}
	if err := run([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("run(-h) = %v, want flag.ErrHelp", err)
	}
}

// Decoded lines. Numbers stay json.Number so that the test can tell an
// integer from a float.
type (
	nodeLine struct {
		ID         string         `json:"id"`
		Properties map[string]any `json:"properties"`
		CreatedAt  json.Number    `json:"created_at"`
		UpdatedAt  json.Number    `json:"updated_at"`
	}
	relLine struct {
		Start      string         `json:"start_node_id"`
		Type       string         `json:"type"`
		End        string         `json:"end_node_id"`
		Properties map[string]any `json:"properties"`
		CreatedAt  json.Number    `json:"created_at"`
		UpdatedAt  json.Number    `json:"updated_at"`
	}
	articleLine struct {
		ID       json.Number `json:"id"`
		AuthorID string      `json:"author_id"`
		Title    string      `json:"title"`
		Body     string      `json:"body"`
		Category string      `json:"category"`
		PostedAt json.Number `json:"posted_at"`
	}
)

// dataset is a generated dataset, decoded.
type dataset struct {
	sum      summary
	nodes    []nodeLine
	rels     []relLine
	articles []articleLine
}

// small is the dataset of testNodes nodes, seed 1, that the shape tests
// share read-only: decoding it takes seconds under -race.
var small = sync.OnceValues(func() (dataset, error) {
	var nodes, rels, arts bytes.Buffer
	sum, err := generate(config{nodes: testNodes, seed: 1}, outputs{&nodes, &rels, &arts})
	if err != nil {
		return dataset{}, err
	}
	d := dataset{sum: sum}
	if d.nodes, err = decodeLines[nodeLine](nodesFile, &nodes); err != nil {
		return dataset{}, err
	}
	if d.rels, err = decodeLines[relLine](relationshipsFile, &rels); err != nil {
		return dataset{}, err
	}
	if d.articles, err = decodeLines[articleLine](articlesFile, &arts); err != nil {
		return dataset{}, err
	}
	return d, nil
})

func smallDataset(t *testing.T) dataset {
	t.Helper()
	d, err := small()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// decodeLines decodes each line of r as one JSON object, with no unknown
// fields and every field present (not null, not empty).
func decodeLines[T any](name string, r io.Reader) ([]T, error) {
	var out []T
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		d.DisallowUnknownFields()
		var v T
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s:%d: %v: %s", name, n, err, line)
		}
		if d.More() {
			return nil, fmt.Errorf("%s:%d: more than one value: %s", name, n, line)
		}
		rv := reflect.ValueOf(v)
		for i := range rv.NumField() {
			if rv.Field(i).IsZero() {
				return nil, fmt.Errorf("%s:%d: no %s: %s", name, n, rv.Type().Field(i).Tag.Get("json"), line)
			}
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// inYear parses an integer timestamp and checks that it is in the year.
func inYear(t *testing.T, what string, n json.Number) int64 {
	t.Helper()
	ms, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		t.Fatalf("%s: %q is not an integer", what, n)
	}
	if ms < yearStart || ms >= yearEnd {
		t.Fatalf("%s: %d is not in [%d, %d)", what, ms, yearStart, yearEnd)
	}
	return ms
}

func isInt(v any) bool {
	n, ok := v.(json.Number)
	_, err := strconv.ParseInt(string(n), 10, 64)
	return ok && err == nil
}

func isFloat(v any) bool {
	n, ok := v.(json.Number)
	_, err := n.Float64()
	return ok && err == nil && strings.Contains(string(n), ".")
}

func TestNodesShape(t *testing.T) {
	d := smallDataset(t)
	if len(d.nodes) != testNodes {
		t.Fatalf("%d nodes, want %d", len(d.nodes), testNodes)
	}
	for i, n := range d.nodes {
		if want := "n" + strconv.Itoa(i+1); n.ID != want {
			t.Fatalf("node %d has id %q, want %q", i, n.ID, want)
		}
		created := inYear(t, n.ID+" created_at", n.CreatedAt)
		if updated := inYear(t, n.ID+" updated_at", n.UpdatedAt); updated < created {
			t.Errorf("%s: updated_at %d < created_at %d", n.ID, updated, created)
		}
		p := n.Properties
		if len(p) != 5 {
			t.Errorf("%s: properties %v, want name, age, city, score, tags", n.ID, p)
		}
		if s, ok := p["name"].(string); !ok || s == "" {
			t.Errorf("%s: name %#v", n.ID, p["name"])
		}
		if age, _ := p["age"].(json.Number).Int64(); !isInt(p["age"]) || age < 18 || age > 80 {
			t.Errorf("%s: age %#v", n.ID, p["age"])
		}
		if s, _ := p["city"].(string); !slices.Contains(cities, s) {
			t.Errorf("%s: city %#v", n.ID, p["city"])
		}
		if !isFloat(p["score"]) {
			t.Errorf("%s: score %#v is not a float", n.ID, p["score"])
		}
		tl, ok := p["tags"].([]any)
		if !ok || len(tl) < 1 || len(tl) > 4 {
			t.Fatalf("%s: tags %#v", n.ID, p["tags"])
		}
		var seen []string
		for _, v := range tl {
			s, ok := v.(string)
			if !ok || !slices.Contains(tags, s) || slices.Contains(seen, s) {
				t.Errorf("%s: tags %v", n.ID, tl)
			}
			seen = append(seen, s)
		}
	}
}

func TestRelationshipsShape(t *testing.T) {
	d := smallDataset(t)
	type edge struct{ start, typ, end string }
	seen := map[edge]bool{}
	out := map[string]map[string]int{typeFollow: {}, typeLike: {}} // type -> start -> degree
	exists := nodeSet(d)
	for _, r := range d.rels {
		e := edge{r.Start, r.Type, r.End}
		switch {
		case !exists[r.Start] || !exists[r.End]:
			t.Fatalf("%v: unknown node", e)
		case r.Start == r.End:
			t.Fatalf("%v: self-loop", e)
		case seen[e]:
			t.Fatalf("%v: duplicate", e)
		case r.Type != typeFollow && r.Type != typeLike:
			t.Fatalf("%v: unknown type", e)
		}
		seen[e] = true
		out[r.Type][r.Start]++
		created := inYear(t, "created_at", r.CreatedAt)
		if updated := inYear(t, "updated_at", r.UpdatedAt); updated < created {
			t.Errorf("%v: updated_at %d < created_at %d", e, updated, created)
		}
		if len(r.Properties) != 2 || !isInt(r.Properties["since"]) || !isFloat(r.Properties["weight"]) {
			t.Errorf("%v: properties %v, want since (int) and weight (float)", e, r.Properties)
		}
	}
	for _, n := range d.nodes {
		if f := out[typeFollow][n.ID]; f < minFollows || f > maxFollows {
			t.Errorf("%s follows %d nodes, want %d-%d", n.ID, f, minFollows, maxFollows)
		}
		if l := out[typeLike][n.ID]; l > maxLikes {
			t.Errorf("%s likes %d nodes, want at most %d", n.ID, l, maxLikes)
		}
	}
	// The follow targets are skewed: the top node is followed by most
	// nodes, and many nodes by only a few.
	in := map[string]int{}
	for _, r := range d.rels {
		if r.Type == typeFollow {
			in[r.End]++
		}
	}
	top, few := 0, 0
	for _, n := range d.nodes {
		top = max(top, in[n.ID])
		if in[n.ID] <= 10 {
			few++
		}
	}
	if top < testNodes/2 || few < testNodes/4 {
		t.Errorf("follow in-degrees: max %d, %d nodes with <= 10; want max >= %d and >= %d such nodes",
			top, few, testNodes/2, testNodes/4)
	}
}

func TestArticlesShape(t *testing.T) {
	d := smallDataset(t)
	exists := nodeSet(d)
	byAuthor := map[string][]articleLine{}
	for _, a := range d.articles {
		if !exists[a.AuthorID] {
			t.Fatalf("article %s of unknown author %q", a.ID, a.AuthorID)
		}
		byAuthor[a.AuthorID] = append(byAuthor[a.AuthorID], a)
	}
	heavy := map[string]string{} // id -> main category
	for _, h := range d.sum.HeavyAuthors {
		heavy[h.ID] = h.MainCategory
	}
	if len(heavy) != heavyAuthors {
		t.Fatalf("%d distinct heavy authors, want %d", len(heavy), heavyAuthors)
	}
	deep := d.sum.DeepAuthor
	if _, isHeavy := heavy[deep.ID]; isHeavy || deep.Articles != deepArticles || !slices.Contains(categories, deep.MainCategory) {
		t.Fatalf("deep author %+v: want a non-heavy author with %d articles", deep, deepArticles)
	}
	for _, n := range d.nodes {
		arts := byAuthor[n.ID]
		main, isHeavy := heavy[n.ID]
		isDeep := n.ID == deep.ID
		if isDeep {
			main = deep.MainCategory
		}
		switch {
		case isHeavy && len(arts) != heavyArticles:
			t.Errorf("heavy author %s has %d articles, want %d", n.ID, len(arts), heavyArticles)
		case isDeep && len(arts) != deepArticles:
			t.Errorf("deep author %s has %d articles, want %d", n.ID, len(arts), deepArticles)
		case isDeep:
		case !isHeavy && (len(arts) < minArticles || len(arts) > maxArticles):
			t.Errorf("author %s has %d articles, want %d-%d", n.ID, len(arts), minArticles, maxArticles)
		}
		inMain := 0
		var last int64
		for i, a := range arts {
			if id, err := a.ID.Int64(); err != nil || id != int64(i)+1 {
				t.Errorf("author %s: article %d has id %s, want %d", n.ID, i, a.ID, i+1)
			}
			posted := inYear(t, "posted_at", a.PostedAt)
			if posted < last {
				t.Errorf("author %s: article %s posted before the one before it", n.ID, a.ID)
			}
			last = posted
			if !slices.Contains(categories, a.Category) {
				t.Errorf("author %s: article %s has category %q", n.ID, a.ID, a.Category)
			}
			if a.Category == main {
				inMain++
			}
			if w := len(strings.Fields(a.Title)); w < minTitleWords || w > maxTitleWords {
				t.Errorf("author %s: article %s title has %d words", n.ID, a.ID, w)
			}
			if w := len(strings.Fields(a.Body)); w < minBodyWords || w > maxBodyWords {
				t.Errorf("author %s: article %s body has %d words", n.ID, a.ID, w)
			}
		}
		if isHeavy && inMain*4 < len(arts)*3 {
			t.Errorf("heavy author %s: %d of %d articles in %s, want >= 75%%", n.ID, inMain, len(arts), main)
		}
		if isDeep && inMain < deepArticles-maxArticles {
			t.Errorf("deep author %s: %d of %d articles in %s, want >= %d", n.ID, inMain, len(arts), main, deepArticles-maxArticles)
		}
	}
}

// TestSummary recomputes the summary from the files.
func TestSummary(t *testing.T) {
	d := smallDataset(t)
	s := d.sum
	if s.Seed != 1 || s.Nodes != testNodes || s.Articles != len(d.articles) {
		t.Errorf("summary seed %d, nodes %d, articles %d; want 1, %d, %d",
			s.Seed, s.Nodes, s.Articles, testNodes, len(d.articles))
	}
	rels := map[string]int{}
	followers := map[string]int{}
	out := map[string]map[string]int{typeFollow: {}, typeLike: {}}
	for _, r := range d.rels {
		rels[r.Type]++
		out[r.Type][r.Start]++
		if r.Type == typeFollow {
			followers[r.End]++
		}
	}
	for _, typ := range relationshipTypes {
		if s.Relationships[typ] != rels[typ] {
			t.Errorf("summary: %d %s relationships, the file has %d", s.Relationships[typ], typ, rels[typ])
		}
		maxOut := 0
		for _, n := range out[typ] {
			maxOut = max(maxOut, n)
		}
		if s.MaxOutDegree[typ] != maxOut {
			t.Errorf("summary: max %s out-degree %d, the file has %d", typ, s.MaxOutDegree[typ], maxOut)
		}
	}

	var most nodeFollowers
	var ten nodeFollowers
	for _, n := range d.nodes {
		f := followers[n.ID]
		if f > most.Followers || most.ID == "" {
			most = nodeFollowers{n.ID, f}
		}
		if f == 10 && ten.ID == "" {
			ten = nodeFollowers{n.ID, f}
		}
	}
	if s.MostFollowed != most {
		t.Errorf("summary: most followed %+v, the file has %+v", s.MostFollowed, most)
	}
	if ten.ID == "" {
		t.Fatal("no node has exactly ten followers; pick another seed for the test")
	}
	if s.TenFollowers != ten {
		t.Errorf("summary: ten followers %+v, the file has %+v", s.TenFollowers, ten)
	}

	// Heavy authors: exactly the authors with 200 articles, in id order,
	// with the category most of their articles are in.
	count := map[string]int{}
	perCategory := map[string]map[string]int{}
	for _, a := range d.articles {
		count[a.AuthorID]++
		if perCategory[a.AuthorID] == nil {
			perCategory[a.AuthorID] = map[string]int{}
		}
		perCategory[a.AuthorID][a.Category]++
	}
	var want []heavyAuthor
	for _, n := range d.nodes {
		if count[n.ID] != heavyArticles {
			continue
		}
		h := heavyAuthor{ID: n.ID, Articles: heavyArticles}
		for _, c := range categories {
			if perCategory[n.ID][c] > perCategory[n.ID][h.MainCategory] {
				h.MainCategory = c
			}
		}
		want = append(want, h)
	}
	if !slices.Equal(s.HeavyAuthors, want) {
		t.Errorf("summary: heavy authors\n%v\nthe file has\n%v", s.HeavyAuthors, want)
	}
}

// TestSummaryFile checks that summary.json decodes to what run printed
// from, with the field names the benchmark driver reads.
func TestSummaryFile(t *testing.T) {
	dir := t.TempDir()
	var stdout bytes.Buffer
	if err := run([]string{"-out", dir, "-nodes", "500", "-seed", "3"}, &stdout); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Nodes         int            `json:"nodes"`
		Relationships map[string]int `json:"relationships"`
		Articles      int            `json:"articles"`
		MostFollowed  struct {
			ID        string `json:"id"`
			Followers int    `json:"followers"`
		} `json:"most_followed"`
		TenFollowers struct {
			ID        string `json:"id"`
			Followers int    `json:"followers"`
		} `json:"ten_followers"`
		HeavyAuthors []struct {
			ID           string `json:"id"`
			MainCategory string `json:"main_category"`
			Articles     int    `json:"articles"`
		} `json:"heavy_authors"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, summaryFile)), &got); err != nil {
		t.Fatal(err)
	}
	lines := func(name string) int { return bytes.Count(readFile(t, filepath.Join(dir, name)), []byte("\n")) }
	if got.Nodes != 500 || got.Nodes != lines(nodesFile) {
		t.Errorf("summary.json: %d nodes, nodes.jsonl has %d lines, want 500", got.Nodes, lines(nodesFile))
	}
	if r := got.Relationships[typeFollow] + got.Relationships[typeLike]; r != lines(relationshipsFile) {
		t.Errorf("summary.json: %d relationships, relationships.jsonl has %d lines", r, lines(relationshipsFile))
	}
	if got.Articles != lines(articlesFile) {
		t.Errorf("summary.json: %d articles, articles.jsonl has %d lines", got.Articles, lines(articlesFile))
	}
	if got.MostFollowed.ID == "" || got.MostFollowed.Followers == 0 || got.TenFollowers.ID == "" ||
		len(got.HeavyAuthors) != heavyAuthors || got.HeavyAuthors[0].MainCategory == "" {
		t.Errorf("summary.json: incomplete: %+v", got)
	}
	for _, want := range []string{"most followed: " + got.MostFollowed.ID, "elapsed"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout has no %q:\n%s", want, stdout.String())
		}
	}
}

// TestWriteError checks that a failing writer fails the generation.
func TestWriteError(t *testing.T) {
	errDisk := errors.New("disk full")
	for _, tc := range []struct {
		name string
		out  outputs
	}{
		{"nodes", outputs{failWriter{errDisk}, io.Discard, io.Discard}},
		{"relationships", outputs{io.Discard, failWriter{errDisk}, io.Discard}},
		{"articles", outputs{io.Discard, io.Discard, failWriter{errDisk}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := generate(config{nodes: 200, seed: 1}, tc.out); !errors.Is(err, errDisk) {
				t.Fatalf("generate = %v, want %v", err, errDisk)
			}
		})
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "tab\tnew\nline\x01", "ünïcødé"} {
		var got string
		if err := json.Unmarshal(appendString(nil, s), &got); err != nil || got != s {
			t.Errorf("appendString(%q) = %s, decodes to %q, %v", s, appendString(nil, s), got, err)
		}
	}
}

func nodeSet(d dataset) map[string]bool {
	m := make(map[string]bool, len(d.nodes))
	for _, n := range d.nodes {
		m[n.ID] = true
	}
	return m
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkGenerate measures generation of the default 10,000 nodes into
// io.Discard; the rate is in nodes/s and bytes/s of output.
func BenchmarkGenerate(b *testing.B) {
	var n countingWriter
	n.w = io.Discard
	for b.Loop() {
		if _, err := generate(config{nodes: 10_000, seed: 1}, outputs{&n, &n, &n}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(n.n / int64(b.N))
	b.ReportMetric(float64(10_000*b.N)/b.Elapsed().Seconds(), "nodes/s")
}
