package compactjson

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Member reads the member of the object s that starts at i (just past '{' or a ','): its quoted
// key, its value and the index past it. A nil key means the object ended.
func Member(s []byte, i int) (key, val []byte, next int, ok bool) {
	if i < len(s) && s[i] == ',' {
		i++
	}
	if i >= len(s) {
		return nil, nil, i, false
	}
	if s[i] == '}' {
		return nil, nil, i + 1, true
	}
	end, ok := skipValue(s, i)
	if !ok || end >= len(s) || s[end] != ':' || s[i] != '"' {
		return nil, nil, i, false
	}
	key = s[i:end]
	vend, ok := skipValue(s, end+1)
	if !ok {
		return nil, nil, i, false
	}
	return key, s[end+1 : vend], vend, true
}

// skipValue returns the index past the value of compact JSON that starts at i.
func skipValue(s []byte, i int) (int, bool) {
	if i >= len(s) {
		return i, false
	}
	switch s[i] {
	case '"':
		for k := i + 1; k < len(s); k++ {
			switch s[k] {
			case '\\':
				k++
			case '"':
				return k + 1, true
			}
		}
		return len(s), false
	case '{', '[':
		depth := 0
		for k := i; k < len(s); k++ {
			switch s[k] {
			case '"':
				end, ok := skipValue(s, k)
				if !ok {
					return end, false
				}
				k = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return k + 1, true
				}
			}
		}
		return len(s), false
	}
	k := i
	for k < len(s) && !strings.ContainsRune(",}]:", rune(s[k])) {
		k++
	}
	return k, k > i
}

// Elements splits a JSON list into its elements.
func Elements(s []byte) ([][]byte, bool) {
	if len(s) < 2 || s[0] != '[' {
		return nil, false
	}
	var out [][]byte
	i := 1
	if s[i] == ']' {
		return out, i == len(s)-1
	}
	for {
		end, ok := skipValue(s, i)
		if !ok || end >= len(s) {
			return nil, false
		}
		out = append(out, s[i:end])
		switch s[end] {
		case ',':
			i = end + 1
		case ']':
			return out, end == len(s)-1
		default:
			return nil, false
		}
	}
}

// MemberValue is the value of the member name of the JSON object s, if it has one.
func MemberValue(s []byte, name string) ([]byte, bool) {
	for i := 1; ; {
		k, v, next, ok := Member(s, i)
		if !ok || k == nil {
			return nil, false
		}
		if len(k) == len(name)+2 && string(k[1:len(k)-1]) == name {
			return v, true
		}
		i = next
	}
}

// Kind is the kind of the value that starts with c: '{', '[', '"', 't' (a boolean), 'n'
// (null) or '0' (a number).
func Kind(c byte) byte {
	switch c {
	case '{', '[', '"', 'n':
		return c
	case 't', 'f':
		return 't'
	}
	return '0'
}

// IsInteger tells whether a JSON number has no fraction or exponent.
func IsInteger(n []byte) bool {
	return !bytes.ContainsAny(n, ".eE")
}

// Unquote is the string of a quoted JSON key.
func Unquote(q []byte) (string, bool) {
	if bytes.IndexByte(q, '\\') < 0 {
		return string(q[1 : len(q)-1]), true
	}
	var s string
	if err := json.Unmarshal(q, &s); err != nil {
		return "", false
	}
	return s, true
}
