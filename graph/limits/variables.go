package limits

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/vektah/gqlparser/v2/ast"
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

// checkEnums refuses an enum variable whose value is not one of the
// enum's values, exactly. gqlparser's variable validation compares enum
// values ignoring case, and gqlgen's generated unmarshalling then fails
// with an error that is no input error of ours: "INcOMING" for a
// Direction was INTERNAL. Values inside lists and input objects are
// checked too.
func checkEnums(schema *ast.Schema, defs ast.VariableDefinitionList, vars map[string]any) *gqlerror.Error {
	for _, d := range defs {
		v, ok := vars[d.Variable]
		if !ok {
			continue
		}
		if msg := checkEnum(schema, d.Type, v, 0); msg != "" {
			return refusef(d.Position, "variable $%s: %s", d.Variable, msg)
		}
	}
	return nil
}

func checkEnum(schema *ast.Schema, t *ast.Type, v any, depth int) string {
	if v == nil || t == nil || depth > 64 {
		return ""
	}
	if t.Elem != nil {
		if list, ok := v.([]any); ok {
			for _, e := range list {
				if msg := checkEnum(schema, t.Elem, e, depth+1); msg != "" {
					return msg
				}
			}
			return ""
		}
		return checkEnum(schema, t.Elem, v, depth+1) // a single value coerced to a list
	}
	def := schema.Types[t.NamedType]
	switch {
	case def == nil:
	case def.Kind == ast.Enum:
		s, ok := v.(string)
		if !ok {
			return ""
		}
		for _, e := range def.EnumValues {
			if e.Name == s {
				return ""
			}
		}
		return abbreviate(s) + " is not a valid " + def.Name
	case def.Kind == ast.InputObject:
		obj, _ := v.(map[string]any)
		for _, f := range def.Fields {
			if msg := checkEnum(schema, f.Type, obj[f.Name], depth+1); msg != "" {
				return msg
			}
		}
	}
	return ""
}
