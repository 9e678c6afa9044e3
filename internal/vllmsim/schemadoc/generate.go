package schemadoc

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vllmsim/tokenizer"
)

// instance builds a value that validates against schema s: objects with
// every property, arrays of max(minItems, 1) items, the first enum or
// const, numbers within their bounds, strings of words.
func instance(s map[string]any, seed uint64, depth int) (any, error) {
	if depth > 16 {
		return nil, errors.New("schema nests deeper than 16 levels")
	}
	if _, ok := s["$ref"]; ok {
		return nil, errors.New("$ref is not supported")
	}
	if c, ok := s["const"]; ok {
		return c, nil
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[seed%uint64(len(e))], nil
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[key].([]any); ok && len(alts) > 0 {
			if first, ok := alts[0].(map[string]any); ok {
				return instance(first, seed, depth+1)
			}
		}
	}
	typ, _ := s["type"].(string)
	if ts, ok := s["type"].([]any); ok && len(ts) > 0 {
		typ, _ = ts[0].(string)
	}
	return typed(typ, s, seed, depth)
}

// typed builds a value of one JSON type.
func typed(typ string, s map[string]any, seed uint64, depth int) (any, error) {
	num := func(def float64) float64 {
		lo, hasLo := s["minimum"].(float64)
		hi, hasHi := s["maximum"].(float64)
		switch {
		case hasLo && hasHi:
			return lo + float64(seed%uint64(hi-lo+1))
		case hasLo:
			return lo + float64(seed%10)
		case hasHi:
			return hi - float64(seed%10)
		}
		return def + float64(seed%100)
	}
	switch typ {
	case "object", "":
		props, _ := s["properties"].(map[string]any)
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make(map[string]any, len(keys))
		for i, k := range keys {
			sub, _ := props[k].(map[string]any)
			v, err := instance(sub, seed+uint64(i)*7919, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = v
		}
		return out, nil
	case "array":
		n := 1
		if m, ok := s["minItems"].(float64); ok && int(m) > n {
			n = int(m)
		}
		items, _ := s["items"].(map[string]any)
		out := make([]any, n)
		for i := range out {
			v, err := instance(items, seed+uint64(i)*104729, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case "string":
		return words(seed, s), nil
	case "integer":
		return int64(num(1)), nil
	case "number":
		return num(0.5), nil
	case "boolean":
		return seed%2 == 0, nil
	case "null":
		return nil, nil
	}
	return nil, fmt.Errorf("type %q is not supported", typ)
}

// words is a string of output words within the schema's length bounds.
func words(seed uint64, s map[string]any) string {
	lo, hi := 1.0, 24.0
	if v, ok := s["minLength"].(float64); ok {
		lo = v
	}
	if v, ok := s["maxLength"].(float64); ok {
		hi = v
	}
	var b strings.Builder
	for k := uint64(0); float64(b.Len()) < lo || k < 2; k++ {
		w := tokenizer.WordAt(seed + k*31)
		if float64(b.Len()+len(w)+1) > hi {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	for float64(b.Len()) < lo {
		b.WriteByte('x')
	}
	return b.String()
}

// split cuts a JSON document into the pieces streamed one a token: each
// string's characters pieceLen at a time, everything else a character
// run between them.
func split(doc string) []string {
	var out []string
	inString, cur := false, ""
	flush := func() {
		if cur != "" {
			out = append(out, cur)
			cur = ""
		}
	}
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		cur += string(c)
		switch {
		case c == '\\' && inString && i+1 < len(doc):
			i++
			cur += string(doc[i])
		case c == '"':
			inString = !inString
			if !inString {
				flush()
			}
		case inString && len(cur) >= pieceLen:
			flush()
		case !inString && strings.ContainsRune("{}[],:", rune(c)):
			flush()
		}
	}
	flush()
	return out
}
