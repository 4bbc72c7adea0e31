package limits

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/vektah/gqlparser/v2/gqlerror"
)

// checkVariables refuses variables holding a number that does not fit a
// float64 (json.Number "1e400": a JSON scalar would store it as it is, an
// Int or Float variable fails later with a less clear message) or a string
// that is not valid UTF-8 (a GET request's variables are not rewritten by
// a JSON decoder). Transports decode JSON numbers as json.Number; float64
// values are checked too.
func checkVariables(vars map[string]any) *gqlerror.Error {
	for name, v := range vars {
		if !utf8.ValidString(name) {
			return refusef(nil, "a variable's name is not valid UTF-8")
		}
		if err := checkValue(v); err != "" {
			return refusef(nil, "variable $%s: %s", abbreviate(name), err)
		}
	}
	return nil
}

// checkValue returns what is wrong with v, or "".
func checkValue(v any) string {
	switch v := v.(type) {
	case json.Number:
		if _, err := strconv.ParseFloat(string(v), 64); err != nil {
			return "the number " + abbreviate(string(v)) + " is out of range"
		}
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return "a number is out of range"
		}
	case string:
		if !utf8.ValidString(v) {
			return "a string is not valid UTF-8"
		}
	case []any:
		for _, e := range v {
			if err := checkValue(e); err != "" {
				return err
			}
		}
	case map[string]any:
		for k, e := range v {
			if !utf8.ValidString(k) {
				return "a key is not valid UTF-8"
			}
			if err := checkValue(e); err != "" {
				return err
			}
		}
	}
	return ""
}
