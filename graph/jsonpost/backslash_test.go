package jsonpost

import "testing"

// A backslash as the last byte is no escape: the scans for surrogate
// escapes ran past the end of the text on it, and the request panicked.
func TestTrailingBackslash(t *testing.T) {
	for _, s := range []string{`\`, `0000000000\`, `{"query":"\`, `\\\`, `\u0041\`, `\ud800\`} {
		b := []byte(s)
		if got := loneSurrogate(b); got != -1 && s != `\ud800\` {
			t.Errorf("loneSurrogate(%q) = %d, want -1", s, got)
		}
		if got := surrogateEscape(b); got != -1 && s != `\ud800\` {
			t.Errorf("surrogateEscape(%q) = %d, want -1", s, got)
		}
		checkText(b)
		if _, err := decodeBody(b); err == nil && s[0] == '{' {
			t.Errorf("decodeBody(%q): no error", s)
		}
	}
	if got := loneSurrogate([]byte(`\ud800\`)); got != 0 {
		t.Errorf(`loneSurrogate(\ud800\) = %d, want 0`, got)
	}
}
