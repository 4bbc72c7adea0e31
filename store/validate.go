package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"
)

// Input limits. An input outside them is ErrInvalidInput and writes nothing.
const (
	MaxIDBytes         = 256
	MaxTypeBytes       = 64 // relationship types and article categories
	MaxPropertiesBytes = 64 << 10
	MaxPageSize        = 100
)

// ValidateNodeID reports whether id is a valid node id (ErrInvalidInput
// otherwise), for callers that check before batching a read.
func ValidateNodeID(id string) error { return validateID("node id", id) }

func validateID(what, id string) error {
	if len(id) == 0 || len(id) > MaxIDBytes || !utf8.ValidString(id) {
		return invalid("%s must be 1-%d bytes of valid UTF-8", what, MaxIDBytes)
	}
	return nil
}

// MaxOwnerBytes bounds a node's owner (a token's sub claim).
const MaxOwnerBytes = 256

// validateOwner accepts an empty owner (nobody) or a subject of at most
// MaxOwnerBytes of valid UTF-8.
func validateOwner(owner string) error {
	if len(owner) > MaxOwnerBytes || !utf8.ValidString(owner) {
		return invalid("owner must be at most %d bytes of valid UTF-8", MaxOwnerBytes)
	}
	return nil
}

func validateType(what, t string) error {
	if len(t) == 0 || len(t) > MaxTypeBytes || !utf8.ValidString(t) {
		return invalid("%s must be 1-%d bytes of valid UTF-8", what, MaxTypeBytes)
	}
	return nil
}

// Properties is a node's or relationship's property map: values are
// strings, numbers (json.Number when read back), booleans, nil, or lists of
// those. Keys are non-empty.
type Properties map[string]any

// encodeProperties validates p and returns its stored form (JSON, keys
// sorted).
func encodeProperties(p Properties) ([]byte, error) {
	for k, v := range p {
		if k == "" || !utf8.ValidString(k) {
			return nil, invalid("property names must be non-empty valid UTF-8")
		}
		if err := validateValue(v, true); err != nil {
			return nil, err
		}
	}
	if p == nil {
		p = Properties{}
	}
	b, err := json.Marshal(map[string]any(p))
	if err != nil {
		return nil, invalid("properties do not encode as JSON")
	}
	if len(b) > MaxPropertiesBytes {
		return nil, invalid("properties are %d bytes encoded; at most %d", len(b), MaxPropertiesBytes)
	}
	return b, nil
}

func validateValue(v any, listAllowed bool) error {
	switch v := v.(type) {
	case nil, string, bool, json.Number,
		float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		if s, ok := v.(string); ok && !utf8.ValidString(s) {
			return invalid("a property's string is not valid UTF-8")
		}
		return nil
	case []any:
		if !listAllowed {
			return invalid("a property's list may not contain lists")
		}
		for _, e := range v {
			if err := validateValue(e, false); err != nil {
				return err
			}
		}
		return nil
	}
	return invalid("a property's value must be a string, number, boolean, null or a list of those (not an object)")
}

// PropertySet is a node's or relationship's properties as stored: a JSON
// object with sorted keys, checked to be valid JSON when read. It stays
// undecoded until asked for values, because most reads (GraphQL's
// properties field) only copy it into a response.
type PropertySet struct{ raw []byte }

// storedProperties wraps stored bytes, refusing what is not a JSON object.
func storedProperties(b []byte) (PropertySet, error) {
	if len(b) == 0 {
		return PropertySet{}, nil
	}
	if b[0] != '{' || !json.Valid(b) {
		return PropertySet{}, fmt.Errorf("%w: properties are not a JSON object", ErrCorrupt)
	}
	return PropertySet{raw: b}, nil
}

// JSON returns the properties as a JSON object. The caller must not
// modify it.
func (p PropertySet) JSON() []byte {
	if len(p.raw) == 0 {
		return []byte("{}")
	}
	return p.raw
}

// Map decodes the properties; numbers are json.Number.
func (p PropertySet) Map() (Properties, error) { return decodeProperties(p.raw) }

// Get returns one property, nil when absent.
func (p PropertySet) Get(name string) (any, error) {
	m, err := p.Map()
	return m[name], err
}

func decodeProperties(b []byte) (Properties, error) {
	p := Properties{}
	if len(b) == 0 {
		return p, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: properties: %v", ErrCorrupt, err)
	}
	return p, nil
}

// mergeProperties applies set, then remove, to a copy of old.
func mergeProperties(old, set Properties, remove []string) Properties {
	out := make(Properties, len(old)+len(set))
	for k, v := range old {
		out[k] = v
	}
	for k, v := range set {
		out[k] = v
	}
	for _, k := range remove {
		delete(out, k)
	}
	return out
}

func validateRemove(set Properties, remove []string) error {
	for _, k := range remove {
		if k == "" {
			return invalid("property names must be non-empty")
		}
		if _, ok := set[k]; ok {
			return invalid("a property is both set and removed")
		}
	}
	if slices.Contains(remove, "") {
		return invalid("property names must be non-empty")
	}
	return nil
}
