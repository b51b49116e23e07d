package admission

import (
	"encoding/json"
	"fmt"
)

// maxDepth bounds nesting the way encoding/json does, so that a hostile
// body cannot exhaust the stack.
const maxDepth = 10000

// syntaxError is a JSON syntax error at a byte offset. Only syntax errors
// make a request malformed; a well-formed value of an unexpected type is a
// decision error (allowed, reason "error"), never a 4xx.
type syntaxError struct {
	msg    string
	offset int
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.offset, e.msg)
}

// scanner reads one JSON document in place. It decodes nothing by itself:
// callers pick the few members they need and skip the rest, and skipping
// validates as strictly as encoding/json.Valid without building any value.
// This is what makes the hot path cheap: a Pod's managedFields, containers
// and status are only walked over, never materialised.
type scanner struct {
	data  []byte
	pos   int
	depth int

	// typeErr is the first well-formed value of an unexpected type. The
	// value is skipped and the scan goes on, so that a syntax error later
	// in the document is still found.
	typeErr error
}

func (s *scanner) mismatch(field, want string) {
	if s.typeErr == nil {
		s.typeErr = &fieldTypeError{field: field, want: want}
	}
}

func (s *scanner) fail(msg string) error { return &syntaxError{msg: msg, offset: s.pos} }

// peek skips white space and returns the next byte, or 0 at the end.
func (s *scanner) peek() byte {
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; c {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return c
		}
	}
	return 0
}

// end checks that nothing but white space follows the document.
func (s *scanner) end() error {
	if s.peek(); s.pos < len(s.data) {
		return s.fail("data after the top-level value")
	}
	return nil
}

func (s *scanner) literal(lit string) error {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		return s.fail("invalid literal")
	}
	s.pos += len(lit)
	return nil
}

// str reads a string and returns its raw contents without the quotes, and
// whether they hold escapes (see unquote).
func (s *scanner) str() (raw []byte, escaped bool, err error) {
	if s.peek() != '"' {
		return nil, false, s.fail("expected a string")
	}
	s.pos++
	start := s.pos
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			raw = s.data[start:s.pos]
			s.pos++
			return raw, escaped, nil
		case c == '\\':
			escaped = true
			if err := s.escape(); err != nil {
				return nil, false, err
			}
		case c < 0x20:
			return nil, false, s.fail("control character in string")
		default:
			s.pos++
		}
	}
	return nil, false, s.fail("unterminated string")
}

func (s *scanner) escape() error {
	s.pos++ // the backslash
	if s.pos >= len(s.data) {
		return s.fail("unterminated escape")
	}
	switch s.data[s.pos] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.pos++
		return nil
	case 'u':
		s.pos++
		if len(s.data)-s.pos < 4 {
			return s.fail("short unicode escape")
		}
		for _, h := range s.data[s.pos : s.pos+4] {
			if !isHex(h) {
				return s.fail("invalid unicode escape")
			}
		}
		s.pos += 4
		return nil
	}
	return s.fail("invalid escape")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// stringOrNull reads a string or null (which reads as "", as in
// encoding/json). A value of another type is skipped and recorded as a
// type mismatch.
func (s *scanner) stringOrNull(field string) (raw []byte, escaped bool, err error) {
	switch s.peek() {
	case '"':
		return s.str()
	case 'n':
		return nil, false, s.literal("null")
	}
	s.mismatch(field, "a string")
	return nil, false, s.skip()
}

// member walks the members of an object entered with open; it returns
// more == false at the closing brace. first must be true for the first
// call. The caller reads or skips each member's value before asking for
// the next key.
func (s *scanner) member(first *bool) (key []byte, escaped, more bool, err error) {
	if *first {
		*first = false
		if s.peek() == '}' {
			s.pos++
			s.depth--
			return nil, false, false, nil
		}
	} else {
		switch s.peek() {
		case '}':
			s.pos++
			s.depth--
			return nil, false, false, nil
		case ',':
			s.pos++
		default:
			return nil, false, false, s.fail("expected , or } after an object member")
		}
	}
	key, escaped, err = s.str()
	if err != nil {
		return nil, false, false, err
	}
	if s.peek() != ':' {
		return nil, false, false, s.fail("expected : after an object key")
	}
	s.pos++
	return key, escaped, true, nil
}

// element is member's counterpart for arrays.
func (s *scanner) element(first *bool) (more bool, err error) {
	if *first {
		*first = false
		if s.peek() == ']' {
			s.pos++
			s.depth--
			return false, nil
		}
		return true, nil
	}
	switch s.peek() {
	case ']':
		s.pos++
		s.depth--
		return false, nil
	case ',':
		s.pos++
		return true, nil
	}
	return false, s.fail("expected , or ] after an array element")
}

// open enters an object or array; it returns false for null. A value of
// another type is skipped and recorded as a type mismatch.
func (s *scanner) open(kind byte, field string) (bool, error) {
	switch c := s.peek(); c {
	case kind:
		s.pos++
		s.depth++
		if s.depth > maxDepth {
			return false, s.fail("nesting too deep")
		}
		return true, nil
	case 'n':
		return false, s.literal("null")
	}
	if kind == '{' {
		s.mismatch(field, "an object")
	} else {
		s.mismatch(field, "an array")
	}
	return false, s.skip()
}

// skip validates and steps over one value of any type.
func (s *scanner) skip() error {
	switch c := s.peek(); {
	case c == '"':
		_, _, err := s.str()
		return err
	case c == '{':
		s.pos++
		s.depth++
		if s.depth > maxDepth {
			return s.fail("nesting too deep")
		}
		first := true
		for {
			_, _, more, err := s.member(&first)
			if err != nil || !more {
				return err
			}
			if err := s.skip(); err != nil {
				return err
			}
		}
	case c == '[':
		s.pos++
		s.depth++
		if s.depth > maxDepth {
			return s.fail("nesting too deep")
		}
		first := true
		for {
			more, err := s.element(&first)
			if err != nil || !more {
				return err
			}
			if err := s.skip(); err != nil {
				return err
			}
		}
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	case s.pos >= len(s.data):
		return s.fail("unexpected end of input")
	}
	return s.fail("unexpected character")
}

// number steps over a number following RFC 8259's grammar.
func (s *scanner) number() error {
	d := s.data
	i := s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	default:
		s.pos = i
		return s.fail("invalid number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			s.pos = i
			return s.fail("invalid number")
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			s.pos = i
			return s.fail("invalid number")
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	s.pos = i
	return nil
}

// boolOrNull reads true, false or null (false).
func (s *scanner) boolOrNull(field string) (bool, error) {
	switch s.peek() {
	case 't':
		return true, s.literal("true")
	case 'f':
		return false, s.literal("false")
	case 'n':
		return false, s.literal("null")
	}
	s.mismatch(field, "a boolean")
	return false, s.skip()
}

// is compares a string read by str with an expected value. Raw contents
// without escapes are compared in place; the API server never escapes the
// strings this package compares, so the allocation for escapes is rare.
func is(raw []byte, escaped bool, want string) bool {
	if !escaped {
		return string(raw) == want
	}
	return unquote(raw) == want
}

// unquote decodes the escapes in a string's raw contents as encoding/json
// does. The contents were validated by str, so decoding cannot fail.
func unquote(raw []byte) string {
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	var out string
	_ = json.Unmarshal(quoted, &out) // validated by str: cannot fail
	return out
}

// fieldTypeError is a well-formed value of the wrong type.
type fieldTypeError struct{ field, want string }

func (e *fieldTypeError) Error() string { return e.field + " must be " + e.want }
