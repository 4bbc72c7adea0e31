package fields

import (
	"encoding/json"
	"strconv"
	"time"
)

// Scalar is how values of one GraphQL scalar are written: Append writes
// byte for byte what gqlgen's registered marshaller for the scalar writes
// (graphql.MarshalString, MarshalID, MarshalInt64, MarshalBoolean, and
// graph/model's MarshalTime and MarshalJSON, which call these): the test
// of this package compares them.
type Scalar[V any] struct {
	Name   string
	Append func(b []byte, v V) []byte
	// Len is a value's length unescaped (strings), nil for the others.
	Len func(v V) int
}

var (
	String  = Scalar[string]{"String", AppendQuoted, strLen}
	ID      = Scalar[string]{"ID", AppendQuoted, strLen}
	Int     = Scalar[int64]{"Int", func(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }, nil}
	Boolean = Scalar[bool]{"Boolean", strconv.AppendBool, nil}
	Time    = Scalar[time.Time]{"Time", AppendTime, nil}
	// JSON writes any JSON value; RawJSON stored JSON as it is.
	JSON    = Scalar[any]{"JSON", AppendJSON, nil}
	RawJSON = Scalar[[]byte]{"JSON", func(b []byte, v []byte) []byte { return append(b, v...) }, func(v []byte) int { return len(v) }}
)

func strLen(s string) int { return len(s) }

// timeLayout: RFC 3339 in UTC with milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// AppendTime appends t as a Time: quoted, in UTC, with milliseconds.
// Years 0 to 9999 are written digit by digit (a page of articles writes
// one for each, and AppendFormat's layout walk was 2% of Q3's CPU);
// TestAppendTimeAnswersAsAppendFormat checks they are AppendFormat's.
func AppendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		b = append(b, '"')
		b = t.AppendFormat(b, timeLayout)
		return append(b, '"')
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / int(time.Millisecond)
	b = append(b, '"')
	b = appendDigits(b, year, 4)
	b = append(b, '-')
	b = appendDigits(b, int(month), 2)
	b = append(b, '-')
	b = appendDigits(b, day, 2)
	b = append(b, 'T')
	b = appendDigits(b, hour, 2)
	b = append(b, ':')
	b = appendDigits(b, minute, 2)
	b = append(b, ':')
	b = appendDigits(b, sec, 2)
	b = append(b, '.')
	b = appendDigits(b, ms, 3)
	return append(b, 'Z', '"')
}

// appendDigits appends v (>= 0, below 10^width) in width decimal digits.
func appendDigits(b []byte, v, width int) []byte {
	start := len(b)
	b = append(b, "0000"[:width]...)
	for i := len(b) - 1; i >= start; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return b
}

// AppendJSON appends v as a JSON value: json.RawMessage as it is (stored
// properties, checked when read), anything else encoded, null if it does
// not encode (only values the store accepted reach here: they encode).
func AppendJSON(b []byte, v any) []byte {
	if raw, ok := v.(json.RawMessage); ok {
		return append(b, raw...)
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, enc...)
}

// AppendQuoted appends s as a JSON string the way gqlgen v0.17.95 writes
// one (graphql/string.go, writeQuotedString): only '"', '\\' and control
// characters are escaped; invalid UTF-8 goes through unchanged.
func AppendQuoted(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	start := 0
	for i, c := range s {
		if c < 0x20 || c == '\\' || c == '"' {
			b = append(b, s[start:i]...)
			switch c {
			case '\t':
				b = append(b, '\\', 't')
			case '\r':
				b = append(b, '\\', 'r')
			case '\n':
				b = append(b, '\\', 'n')
			case '\\', '"':
				b = append(b, '\\', byte(c))
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			start = i + 1
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
