package keys

import (
	"encoding/base64"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"
)

var urlSafe = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func TestArticleIDRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    Article
	}{
		{"zero", Article{}},
		{"plain", Article{Author: "alice", Posted: 1_700_000_000_000, Seq: 42}},
		{"max", Article{Author: "\xff", Posted: math.MaxInt64, Seq: math.MaxUint64}},
		{"zero bytes", Article{Author: "\x00a\x00", Posted: 1, Seq: 1}},
		{"unicode", Article{Author: "日本語", Posted: 2, Seq: 3}},
		{"long author", Article{Author: strings.Repeat("ab\x00", 100), Posted: 5, Seq: 128}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := tc.a.ID()
			if err != nil {
				t.Fatal(err)
			}
			if !urlSafe.MatchString(id) {
				t.Errorf("ID() = %q, not URL-safe", id)
			}
			got, err := ParseArticleID(id)
			if err != nil || got != tc.a {
				t.Fatalf("ParseArticleID(%q) = %+v, %v; want %+v", id, got, err, tc.a)
			}
		})
	}
	if _, err := (Article{Posted: -1}).ID(); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("ID() with negative time: %v, want ErrInvalidValue", err)
	}
}

func TestArticleIDFormat(t *testing.T) {
	// Client-visible format: this id must parse forever.
	const id = "AQVhbGljZYDQlf-8MSo" // Article{"alice", 1_700_000_000_000, 42}
	want := Article{Author: "alice", Posted: 1_700_000_000_000, Seq: 42}
	if got, err := ParseArticleID(id); err != nil || got != want {
		t.Fatalf("ParseArticleID(%q) = %+v, %v; want %+v", id, got, err, want)
	}
	if got, _ := want.ID(); got != id {
		t.Fatalf("ID() = %q, want %q", got, id)
	}
}

func TestParseArticleIDRejects(t *testing.T) {
	valid, _ := Article{Author: "alice", Posted: 1_700_000_000_000, Seq: 42}.ID()
	raw, _ := base64.RawURLEncoding.DecodeString(valid)
	enc := base64.RawURLEncoding.EncodeToString
	for _, tc := range []struct {
		name string
		id   string
	}{
		{"empty", ""},
		{"not base64", "!!!!"},
		{"std alphabet", "AQH+AAA"}, // URL-safe would be AQH-AAA
		{"padding", valid + "="},
		{"newline", valid[:4] + "\n" + valid[4:]},
		{"carriage return", valid + "\r"},
		{"trailing bits", enc([]byte{0x01, 0x00, 0x00})[:3] + "B"},
		{"version 0", enc(append([]byte{0x00}, raw[1:]...))},
		{"version 2", enc(append([]byte{0x02}, raw[1:]...))},
		{"trailing byte", enc(append(append([]byte(nil), raw...), 0x00))},
		{"author too long", enc([]byte{0x01, 0x7f, 'a'})},
		{"author length overflows", enc([]byte{0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})},
		{"non-minimal varint", enc([]byte{0x01, 0x80, 0x00, 0x00, 0x00})},
		{"posted out of range", enc([]byte{0x01, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if a, err := ParseArticleID(tc.id); !errors.Is(err, ErrInvalidArticleID) {
				t.Fatalf("ParseArticleID(%q) = %+v, %v; want ErrInvalidArticleID", tc.id, a, err)
			}
		})
	}
	t.Run("truncated bytes", func(t *testing.T) {
		for i := range len(raw) {
			id := enc(raw[:i])
			if a, err := ParseArticleID(id); !errors.Is(err, ErrInvalidArticleID) {
				t.Fatalf("ParseArticleID(%q) (first %d bytes) = %+v, %v; want ErrInvalidArticleID", id, i, a, err)
			}
		}
	})
	t.Run("truncated string", func(t *testing.T) {
		for i := range len(valid) {
			if a, err := ParseArticleID(valid[:i]); !errors.Is(err, ErrInvalidArticleID) {
				t.Fatalf("ParseArticleID(%q) = %+v, %v; want ErrInvalidArticleID", valid[:i], a, err)
			}
		}
	})
}
