package admission

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// syntaxError is malformed JSON at a byte offset. Only syntax errors make a
// request malformed; a well-formed value of an unexpected type is a
// decision error (allowed, reason "error"), never a 4xx.
type syntaxError struct {
	msg    string
	offset int64
}

func (e *syntaxError) Error() string {
	if e.offset < 0 { // the tokenizer's message names the place itself
		return "invalid JSON: " + e.msg
	}
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.offset, e.msg)
}

// fieldTypeError is a well-formed value of the wrong type.
type fieldTypeError struct{ field, want string }

func (e *fieldTypeError) Error() string { return e.field + " must be " + e.want }

// scanner walks one JSON document with jsontext's tokenizer. The walk picks
// the few members the decision needs and skips the rest with SkipValue,
// which validates without building anything: a Pod's managedFields,
// containers and status are walked over, never materialised. jsontext also
// rejects duplicate member names and invalid UTF-8, and bounds nesting.
//
// The decoder reads from a bytes.Buffer over the body, which it parses in
// place, so the values it returns are slices of the body and stay valid
// after the walk; the review keeps such slices for the decision log.
type scanner struct {
	data []byte
	dec  *jsontext.Decoder

	// typeErr is the first well-formed value of an unexpected type. The
	// value is skipped and the walk goes on, so that a syntax error later
	// in the document is still found.
	typeErr error
}

// walker holds a jsontext decoder, with its buffers and the name set of the
// duplicate check, from one review to the next (in the handler's pooled
// buffers).
type walker struct {
	buf bytes.Buffer
	dec jsontext.Decoder
}

// walk runs fn over body with w's decoder.
func walk[T any](w *walker, body []byte, fn func(*scanner) (T, error)) (T, error) {
	w.buf = *bytes.NewBuffer(body)
	w.dec.Reset(&w.buf)
	s := scanner{data: body, dec: &w.dec}
	return fn(&s)
}

func (s *scanner) mismatch(field, want string) {
	if s.typeErr == nil {
		s.typeErr = &fieldTypeError{field: field, want: want}
	}
}

func (s *scanner) fail(msg string) error {
	return &syntaxError{msg: msg, offset: s.dec.InputOffset()}
}

// wrap turns the tokenizer's error into a syntax error.
func (s *scanner) wrap(err error) error {
	if err == nil {
		return nil
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return &syntaxError{msg: strings.TrimPrefix(se.Error(), "jsontext: "), offset: -1}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return s.fail("unexpected end of input")
	}
	return s.fail(err.Error())
}

// peek returns the kind of the next value: '{', '[', '"', 'n', 't', 'f',
// '0' for a number, or 0 at the end or at an error, which the next read
// reports.
func (s *scanner) peek() byte { return byte(s.dec.PeekKind()) }

// end checks that nothing but white space follows the document.
func (s *scanner) end() error {
	if s.peek() != 0 {
		return s.fail("data after the top-level value")
	}
	if _, err := s.dec.ReadToken(); !errors.Is(err, io.EOF) {
		return s.fail("data after the top-level value")
	}
	return nil
}

// value reads the next value in place: a slice of the body.
func (s *scanner) value() ([]byte, error) {
	v, err := s.dec.ReadValue()
	if err != nil {
		return nil, s.wrap(err)
	}
	end := int(s.dec.InputOffset())
	return s.data[end-len(v) : end], nil
}

// str reads a string and returns its raw contents without the quotes, and
// whether they hold escapes (see unquote).
func (s *scanner) str() (raw []byte, escaped bool, err error) {
	if s.peek() != '"' {
		_, err := s.dec.ReadToken()
		if err != nil {
			return nil, false, s.wrap(err)
		}
		return nil, false, s.fail("expected a string")
	}
	v, err := s.value()
	if err != nil {
		return nil, false, err
	}
	raw = v[1 : len(v)-1]
	return raw, bytes.IndexByte(raw, '\\') >= 0, nil
}

// stringOrNull reads a string or null (which reads as "", as in
// encoding/json). A value of another type is skipped and recorded as a
// type mismatch.
func (s *scanner) stringOrNull(field string) (raw []byte, escaped bool, err error) {
	switch s.peek() {
	case '"':
		return s.str()
	case 'n':
		return nil, false, s.skip()
	case 0:
		return nil, false, s.skip()
	}
	s.mismatch(field, "a string")
	return nil, false, s.skip()
}

// boolOrNull reads true, false or null (false).
func (s *scanner) boolOrNull(field string) (bool, error) {
	switch k := s.peek(); k {
	case 't', 'f', 'n', 0:
		return k == 't', s.skip()
	}
	s.mismatch(field, "a boolean")
	return false, s.skip()
}

// open enters an object or array; it returns false for null. A value of
// another type is skipped and recorded as a type mismatch.
func (s *scanner) open(kind byte, field string) (bool, error) {
	switch k := s.peek(); k {
	case kind:
		_, err := s.dec.ReadToken()
		return err == nil, s.wrap(err)
	case 'n', 0:
		return false, s.skip()
	}
	if kind == '{' {
		s.mismatch(field, "an object")
	} else {
		s.mismatch(field, "an array")
	}
	return false, s.skip()
}

// closes reads the end of the object or array entered with open, if it is
// next, and reports whether it was.
func (s *scanner) closes(kind byte) (bool, error) {
	if s.peek() != kind {
		return false, nil
	}
	_, err := s.dec.ReadToken()
	return true, s.wrap(err)
}

// member walks the members of an object entered with open; it returns
// more == false at the closing brace. The caller reads or skips each
// member's value before asking for the next key.
func (s *scanner) member() (key []byte, escaped, more bool, err error) {
	if done, err := s.closes('}'); done || err != nil {
		return nil, false, false, err
	}
	key, escaped, err = s.str()
	return key, escaped, err == nil, err
}

// element is member's counterpart for arrays.
func (s *scanner) element() (more bool, err error) {
	done, err := s.closes(']')
	return !done && err == nil, err
}

// skip validates and steps over one value of any type.
func (s *scanner) skip() error { return s.wrap(s.dec.SkipValue()) }

// is compares a string read by str with an expected value. Raw contents
// without escapes are compared in place; the API server never escapes the
// strings this package compares, so the allocation for escapes is rare.
func is(raw []byte, escaped bool, want string) bool {
	if !escaped {
		return string(raw) == want
	}
	return unquote(raw) == want
}

// unquote decodes the escapes in a string's raw contents. The contents were
// validated by the tokenizer, so decoding cannot fail.
func unquote(raw []byte) string {
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	out, _ := jsontext.AppendUnquote(nil, quoted) // validated: cannot fail
	return string(out)
}
