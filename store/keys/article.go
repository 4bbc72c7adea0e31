package keys

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"unsafe"
)

// articleIDVersion is the first byte of every article id. CLIENT-VISIBLE
// FORMAT: ids are handed out and stored by clients, so a new encoding takes a
// new version byte and the old one stays parseable.
const articleIDVersion byte = 0x01

// articleIDEncoding is URL-safe base64 without padding; Strict rejects
// non-zero trailing bits.
var articleIDEncoding = base64.RawURLEncoding.Strict()

// ID returns the article's public id, from which ParseArticleID recovers the
// article, so that looking an article up is one Get of its timeline row. The
// id is opaque to clients: URL-safe base64 without padding of
//
//	0x01                      version
//	uvarint(len(Author))      then the Author bytes
//	uvarint(Posted)           Unix ms, >= 0
//	uvarint(Seq)
//
// with minimal varints. Each article has exactly one id. It fails with
// ErrInvalidValue if Posted is negative.
func (a Article) ID() (string, error) {
	if a.Posted < 0 {
		return "", fmt.Errorf("%w: article id: negative posted time %d", ErrInvalidValue, a.Posted)
	}
	// The raw id is built on the stack (for authors of usual length) and
	// encoded into the one allocation the string needs: a page writes an id
	// per article.
	var stack [64]byte
	b := append(stack[:0], articleIDVersion)
	b = binary.AppendUvarint(b, uint64(len(a.Author)))
	b = append(b, a.Author...)
	b = binary.AppendUvarint(b, uint64(a.Posted))
	b = binary.AppendUvarint(b, a.Seq)
	out := make([]byte, articleIDEncoding.EncodedLen(len(b)))
	articleIDEncoding.Encode(out, b)
	return unsafe.String(unsafe.SliceData(out), len(out)), nil // out is never written again
}

// ParseArticleID parses a public article id made by Article.ID. It accepts
// only the exact string ID returns, so it fails, with an error wrapping
// ErrInvalidArticleID, on anything else: bad base64, padding, line breaks,
// an unknown version, truncation, non-minimal varints, a posted time out of
// range, or trailing bytes.
func ParseArticleID(id string) (Article, error) {
	a, err := parseArticleID(id)
	if err != nil {
		return Article{}, fmt.Errorf("%w: %s", ErrInvalidArticleID, err)
	}
	return a, nil
}

func parseArticleID(id string) (Article, error) {
	b, err := articleIDEncoding.DecodeString(id)
	if err != nil {
		return Article{}, fmt.Errorf("not base64url: %v", err)
	}
	if len(b) == 0 || b[0] != articleIDVersion {
		return Article{}, fmt.Errorf("unknown version")
	}
	b = b[1:]
	n, err := uvarint(&b, "author length")
	if err != nil {
		return Article{}, err
	}
	if n > uint64(len(b)) {
		return Article{}, fmt.Errorf("author truncated")
	}
	var a Article
	a.Author, b = string(b[:n]), b[n:]
	posted, err := uvarint(&b, "posted time")
	if err != nil {
		return Article{}, err
	}
	if posted > 1<<63-1 {
		return Article{}, fmt.Errorf("posted time out of range")
	}
	a.Posted = int64(posted)
	if a.Seq, err = uvarint(&b, "sequence number"); err != nil {
		return Article{}, err
	}
	if len(b) != 0 {
		return Article{}, fmt.Errorf("%d trailing bytes", len(b))
	}
	// The decoder ignores CR and LF, and varints may be padded with 0x80
	// bytes: only the canonical string names the article.
	if canonical, _ := a.ID(); canonical != id {
		return Article{}, fmt.Errorf("not in canonical form")
	}
	return a, nil
}

// uvarint reads one uvarint from the front of *b.
func uvarint(b *[]byte, what string) (uint64, error) {
	v, n := binary.Uvarint(*b)
	if n <= 0 {
		return 0, fmt.Errorf("%s truncated or overflowing", what)
	}
	*b = (*b)[n:]
	return v, nil
}
