package embedded

import (
	"bytes"
	"testing"
)

func TestEscapeRoundTripAndOrder(t *testing.T) {
	cases := [][]byte{
		nil, {0}, {0, 0}, {0xFF}, {0, 0xFF}, []byte("a"), []byte("a\x00b"), []byte("ab"),
		[]byte("a\x00"), bytes.Repeat([]byte{0}, 300),
	}
	for _, c := range cases {
		enc := appendEscaped(nil, c)
		if n := escapedLen(enc); n != len(enc) {
			t.Fatalf("escapedLen(%q) = %d, want %d", enc, n, len(enc))
		}
		if got := unescape(nil, enc); !bytes.Equal(got, c) {
			t.Fatalf("unescape(esc(%q)) = %q", c, got)
		}
		for i := 0; i < len(enc); i++ { // every truncation is rejected
			if escapedLen(enc[:i]) >= 0 {
				t.Fatalf("escapedLen accepted truncated %q", enc[:i])
			}
		}
	}
	for _, a := range cases {
		for _, b := range cases {
			ea, eb := appendEscaped(nil, a), appendEscaped(nil, b)
			if want, got := bytes.Compare(a, b), bytes.Compare(ea, eb); want != got {
				t.Errorf("order of %q, %q: raw %d, escaped %d", a, b, want, got)
			}
			if !bytes.Equal(a, b) && bytes.HasPrefix(eb, ea) {
				t.Errorf("esc(%q) is a prefix of esc(%q)", a, b)
			}
		}
	}
}

func TestParseDataKeyTruncations(t *testing.T) {
	tb := newTable("graph", []string{"g"})
	key := append(append(tb.rowPrefix([]byte("r\x00w")), appendEscaped(nil, []byte("g"))...), kindColumn, 'q')
	dk, ok := parseDataKey(key)
	if !ok || string(unescape(nil, dk.rowEsc)) != "r\x00w" || string(dk.qualifier) != "q" {
		t.Fatalf("parseDataKey(%q) = %+v, %v", key, dk, ok)
	}
	for i := 0; i < len(key)-1; i++ {
		if _, ok := parseDataKey(key[:i]); ok {
			t.Errorf("parseDataKey accepted truncated key %q", key[:i])
		}
	}
}

func TestColumnRecordRoundTrip(t *testing.T) {
	in := column{hasPut: true, hasDel: true, putTs: 7, delTs: 5, value: []byte("v")}
	out, err := decodeColumn(in.encode())
	if err != nil || out.putTs != 7 || out.delTs != 5 || !out.hasPut || !out.hasDel || string(out.value) != "v" {
		t.Fatalf("round trip: %+v, %v", out, err)
	}
	for i := 0; i < columnHeader; i++ {
		if _, err := decodeColumn(in.encode()[:i]); err == nil {
			t.Errorf("decodeColumn accepted %d bytes", i)
		}
	}
}
