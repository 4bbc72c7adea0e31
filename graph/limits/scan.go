package limits

import (
	"strconv"
	"unicode/utf8"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
)

// Stats are a document's figures as Scan counts them.
type Stats struct {
	Tokens    int // lexical tokens, comments included (what gqlparser's token limit counts)
	Nesting   int // deepest nesting of braces, brackets and parentheses
	Fields    int // selections, with fragment spreads expanded (Config.Fields)
	Aliases   int
	Repeats   int
	Fragments int // fragment definitions
	Variables int // variable definitions
}

// Scan reads query once with gqlparser's lexer, without parsing it, and
// refuses it (BAD_USER_INPUT) when it passes a bound of cfg or holds a
// number literal that gqlparser cannot convert (an Int outside int64, a
// Float outside float64: ast.Value.Value fails on those and
// ast.Field.ArgumentMap panics). It stops at the first bound passed, so
// it reads at most cfg.Tokens tokens. A document the lexer refuses, or
// whose brackets do not match, is not refused here: the counts up to that
// point are within the bounds, and gqlgen's parser stops there with a
// parse error. Cycles of fragments count as nothing (validation refuses
// them).
func Scan(query string, cfg Config) (Stats, *gqlerror.Error) {
	s := scanner{cfg: cfg}
	err := s.run(query)
	if err == nil {
		s.stats.Fields, err = s.expand()
	}
	return s.stats, err
}

// frameKind is what an open bracket began.
type frameKind uint8

const (
	selectionSet frameKind = iota // a field's or operation's selections, or an inline fragment's
	valueOrArgs                   // arguments, variable definitions, list and object values
)

// selState is where a selection set's tokens are in the grammar
// Selection: Alias? Name Arguments? Directives? SelectionSet? |
// ... FragmentName Directives? | ... (on Type)? Directives? SelectionSet.
type selState uint8

const (
	selNone       selState = iota
	selField               // after a field's first name: a colon makes it an alias
	selAliasColon          // after "alias:": the field's name comes next
	selSpread              // after ...: "on", a fragment name, @ or {
	selOn                  // after "... on": the type condition
	selAt                  // after @: the directive's name
)

type frame struct {
	kind frameKind
	set  int32 // selection set id for repeats; an inline fragment shares its parent's
	def  int32 // the definition (index in scanner.defs) the frame belongs to
	st   selState
	// inline: a { now opens an inline fragment (after ..., ... on T, and
	// their directives).
	inline bool
	// vars: the parentheses of an operation's variable definitions, where
	// each $ defines one (a default value's brackets are frames of their
	// own, and hold no variables).
	vars bool
}

// definition is an operation or a fragment, as far as expanding spreads
// needs: its own selections and the fragments it spreads.
type definition struct {
	fragment string // "" for an operation
	own      int
	spreads  []string
}

type repeatKey struct {
	set    int32
	spread bool
	name   string
}

type scanner struct {
	cfg   Config
	stats Stats
	size  int // the query's length

	stack []frame
	sets  int32
	defs  []definition
	seen  map[repeatKey]struct{}

	// At the top level, outside every bracket:
	cur      int32 // the definition being read, -1 between definitions
	fragName bool  // after the keyword "fragment": its name comes next
}

func (s *scanner) run(query string) *gqlerror.Error {
	if !utf8.ValidString(query) {
		return refusef(nil, "the document is not valid UTF-8")
	}
	s.cur, s.size = -1, len(query)
	s.stack = make([]frame, 0, 16)
	lx := lexer.New(&ast.Source{Input: query})
	for {
		tok, err := lx.ReadToken()
		if err != nil || tok.Kind == lexer.EOF {
			return nil // a lexical error is gqlgen's to report
		}
		s.stats.Tokens++
		if s.stats.Tokens > s.cfg.Tokens {
			return refusef(&tok.Pos, "the document has more than %d tokens", s.cfg.Tokens)
		}
		if err := s.token(&tok); err != nil {
			return err
		}
	}
}

func (s *scanner) token(tok *lexer.Token) *gqlerror.Error {
	switch tok.Kind {
	case lexer.Int:
		if _, err := strconv.ParseInt(tok.Value, 10, 64); err != nil {
			return refusef(&tok.Pos, "the integer %s is out of range", abbreviate(tok.Value))
		}
		return nil
	case lexer.Float:
		if _, err := strconv.ParseFloat(tok.Value, 64); err != nil {
			return refusef(&tok.Pos, "the number %s is out of range", abbreviate(tok.Value))
		}
		return nil
	case lexer.BraceR, lexer.BracketR, lexer.ParenR:
		if len(s.stack) > 0 {
			s.stack = s.stack[:len(s.stack)-1]
		}
		if len(s.stack) == 0 && tok.Kind == lexer.BraceR {
			s.cur = -1 // a definition's selection set closed
		}
		return nil
	case lexer.Comment:
		return nil
	}
	if len(s.stack) == 0 {
		return s.topLevel(tok)
	}
	top := &s.stack[len(s.stack)-1]
	if top.kind != selectionSet {
		if top.vars && tok.Kind == lexer.Dollar {
			s.stats.Variables++
			if s.stats.Variables > s.cfg.Variables {
				return refusef(&tok.Pos, "the document defines more than %d variables", s.cfg.Variables)
			}
		}
		switch tok.Kind {
		case lexer.BraceL, lexer.BracketL, lexer.ParenL:
			return s.push(tok, frame{kind: valueOrArgs, def: top.def})
		}
		return nil
	}
	return s.selection(top, tok)
}

// topLevel reads a token outside every bracket: the start of a definition,
// its name, variable definitions, directives, and its selection set.
func (s *scanner) topLevel(tok *lexer.Token) *gqlerror.Error {
	switch tok.Kind {
	case lexer.Name:
		switch {
		case s.fragName:
			s.fragName = false
			s.stats.Fragments++
			if s.stats.Fragments > s.cfg.Fragments {
				return refusef(&tok.Pos, "the document defines more than %d fragments", s.cfg.Fragments)
			}
			s.cur = int32(len(s.defs))
			s.defs = append(s.defs, definition{fragment: tok.Value})
		case s.cur < 0 && tok.Value == "fragment":
			s.fragName = true
		case s.cur < 0:
			s.cur = int32(len(s.defs)) // query, mutation or subscription
			s.defs = append(s.defs, definition{})
		}
		return nil
	case lexer.BraceL:
		if s.cur < 0 { // the query shorthand
			s.cur = int32(len(s.defs))
			s.defs = append(s.defs, definition{})
		}
		s.sets++
		return s.push(tok, frame{kind: selectionSet, set: s.sets, def: s.cur})
	case lexer.BracketL, lexer.ParenL:
		return s.push(tok, frame{kind: valueOrArgs, def: max(s.cur, 0), vars: tok.Kind == lexer.ParenL})
	}
	return nil
}

// selection reads a token directly inside a selection set.
func (s *scanner) selection(f *frame, tok *lexer.Token) *gqlerror.Error {
	switch tok.Kind {
	case lexer.Name:
		switch f.st {
		case selAt: // a directive's name
			f.st = selNone
		case selOn: // an inline fragment's type condition
			f.st = selNone
		case selAliasColon: // the aliased field's name
			f.st = selField
		case selSpread:
			if tok.Value == "on" {
				f.st = selOn
				return nil
			}
			f.st, f.inline = selNone, false
			d := &s.defs[f.def]
			d.spreads = append(d.spreads, tok.Value)
			return s.selected(f, tok, repeatKey{set: f.set, spread: true, name: tok.Value})
		default: // a field (or its alias: a colon follows)
			f.st, f.inline = selField, false
			return s.selected(f, tok, repeatKey{set: f.set, name: tok.Value})
		}
	case lexer.Colon:
		if f.st == selField {
			f.st = selAliasColon
			s.stats.Aliases++
			if s.stats.Aliases > s.cfg.Aliases {
				return refusef(&tok.Pos, "the document has more than %d aliases", s.cfg.Aliases)
			}
		}
	case lexer.Spread:
		f.st, f.inline = selSpread, true
	case lexer.At:
		f.st = selAt
	case lexer.ParenL, lexer.BracketL:
		return s.push(tok, frame{kind: valueOrArgs, def: f.def})
	case lexer.BraceL:
		inline := f.inline
		f.st, f.inline = selNone, false
		if inline {
			if err := s.selected(f, tok, repeatKey{}); err != nil {
				return err
			}
			return s.push(tok, frame{kind: selectionSet, set: f.set, def: f.def})
		}
		s.sets++
		return s.push(tok, frame{kind: selectionSet, set: s.sets, def: f.def})
	}
	return nil
}

// selected counts one selection of the frame's definition and, unless key
// is zero, whether its response name or fragment repeats in its set.
func (s *scanner) selected(f *frame, tok *lexer.Token, key repeatKey) *gqlerror.Error {
	s.defs[f.def].own++
	if key.name == "" {
		return nil
	}
	if s.seen == nil {
		// About one selection per 8 bytes of a query (q3: 13 in 480 bytes
		// with its comments; GraphiQL's introspection query: 150 in 2 KB):
		// sized once rather than grown.
		s.seen = make(map[repeatKey]struct{}, min(s.size/8, 256))
	}
	if _, ok := s.seen[key]; !ok {
		s.seen[key] = struct{}{}
		return nil
	}
	s.stats.Repeats++
	if s.stats.Repeats > s.cfg.Repeats {
		return refusef(&tok.Pos, "the document repeats a selection in the same set more than %d times", s.cfg.Repeats)
	}
	return nil
}

func (s *scanner) push(tok *lexer.Token, f frame) *gqlerror.Error {
	s.stack = append(s.stack, f)
	s.stats.Nesting = max(s.stats.Nesting, len(s.stack))
	if len(s.stack) > s.cfg.Nesting {
		return refusef(&tok.Pos, "the document nests brackets more than %d deep", s.cfg.Nesting)
	}
	return nil
}

// expand counts the document's selections with every fragment spread
// standing for its fragment's selections, recursively: the operations'
// expanded selections plus each fragment's own. Each fragment is expanded
// once (memoised); a fragment that reaches itself counts nothing more.
func (s *scanner) expand() (int, *gqlerror.Error) {
	byName := make(map[string]int, s.stats.Fragments)
	for i, d := range s.defs {
		if d.fragment != "" {
			if _, dup := byName[d.fragment]; !dup {
				byName[d.fragment] = i
			}
		}
	}
	const (
		unvisited = iota
		visiting
		done
	)
	state := make([]uint8, len(s.defs))
	size := make([]int, len(s.defs))
	var walk func(i int) int
	walk = func(i int) int {
		switch state[i] {
		case visiting:
			return 0
		case done:
			return size[i]
		}
		state[i] = visiting
		n := s.defs[i].own
		for _, name := range s.defs[i].spreads {
			if j, ok := byName[name]; ok {
				n = saturatingAdd(n, walk(j))
			}
		}
		state[i], size[i] = done, n
		return n
	}
	total := 0
	for i, d := range s.defs {
		if d.fragment == "" {
			total = saturatingAdd(total, walk(i))
		} else {
			total = saturatingAdd(total, d.own)
		}
	}
	if total > s.cfg.Fields {
		return total, refusef(nil, "the document selects %d fields, counting each fragment spread as its fields; the limit is %d", total, s.cfg.Fields)
	}
	return total, nil
}

// saturatingAdd adds non-negative a and b, stopping at the largest int.
func saturatingAdd(a, b int) int {
	if c := a + b; c >= a {
		return c
	}
	return int(^uint(0) >> 1)
}

// abbreviate shortens a literal for an error message.
func abbreviate(s string) string {
	if len(s) <= 40 {
		return s
	}
	return s[:37] + "..."
}
