package admission

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// errInvalidJSON marks malformed JSON; a well-formed value of an unexpected
// type is a typeErr instead.
var errInvalidJSON = errors.New("invalid JSON")

// scanner walks one JSON document with jsontext's tokenizer
// (docs/architecture.md, "Decision: a token walk"). It is pooled with the
// handler's buffers, and with it the decoder's.
type scanner struct {
	buf bytes.Buffer
	dec jsontext.Decoder
	// typeErr is the first well-formed value of an unexpected type, skipped
	// so that a syntax error later in the document is still found.
	typeErr error
}

// reset starts a walk over data. A bytes.Buffer is parsed in place: values read
// are slices of data itself.
func (s *scanner) reset(data []byte) {
	s.buf = *bytes.NewBuffer(data)
	s.dec.Reset(&s.buf)
	s.typeErr = nil
}

func (s *scanner) mismatch(field, want string) {
	if s.typeErr == nil {
		s.typeErr = errors.New(field + " must be " + want) // not Errorf, which would move object's members to the heap
	}
}

// wrap marks an error of the tokenizer with errInvalidJSON.
func (s *scanner) wrap(err error) error {
	if err == nil { // before se, which errors.As moves to the heap
		return nil
	}
	var se *jsontext.SyntacticError
	switch {
	case errors.As(err, &se): // its message names the place
		return fmt.Errorf("%w: %s", errInvalidJSON, strings.TrimPrefix(se.Error(), "jsontext: "))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		err = errors.New("unexpected end of input")
	}
	return fmt.Errorf("%w at offset %d: %v", errInvalidJSON, s.dec.InputOffset(), err)
}

// peek returns the kind of the next value ('{', '[', '"', 'n', 't', 'f',
// '0'), or 0 at the end or at an error, which the next read reports.
func (s *scanner) peek() byte { return byte(s.dec.PeekKind()) }

// done ends a walk that returned err: err, else an error for anything but
// white space after the document, else the first type mismatch.
func (s *scanner) done(err error) error {
	if err != nil {
		return err
	}
	if s.peek() == 0 { // the end or not a value: ReadToken tells which
		_, err = s.dec.ReadToken()
	}
	if !errors.Is(err, io.EOF) {
		return s.wrap(errors.New("data after the top-level value"))
	}
	return s.typeErr
}

func (s *scanner) skip() error { return s.wrap(s.dec.SkipValue()) }

// token reads a delimiter that peek announced.
func (s *scanner) token() error {
	_, err := s.dec.ReadToken()
	return s.wrap(err)
}

// rawString is a JSON string read in place: the raw contents between its
// quotes, and whether they hold escapes, whose decoding allocates; the API
// server escapes none of the strings compared here.
type rawString struct {
	raw     []byte
	escaped bool
}

func (v rawString) is(want string) bool {
	if !v.escaped {
		return string(v.raw) == want
	}
	return v.String() == want
}

func (v rawString) String() string {
	quoted := append(append([]byte{'"'}, v.raw...), '"')
	out, _ := jsontext.AppendUnquote(nil, quoted) // validated: cannot fail
	return string(out)
}

// readString reads the string that is next, in place.
func (s *scanner) readString() (rawString, error) {
	v, err := s.dec.ReadValue()
	if err != nil {
		return rawString{}, s.wrap(err)
	}
	raw := v[1 : len(v)-1]
	return rawString{raw: raw, escaped: bytes.IndexByte(raw, '\\') >= 0}, nil
}

// expect reports whether the next value's kind is one of kinds. Otherwise it
// skips the value and, unless it is null, records a type mismatch.
func (s *scanner) expect(field, want string, kinds ...byte) (bool, error) {
	k := s.peek()
	if slices.Contains(kinds, k) {
		return true, nil
	}
	if k != 'n' && k != 0 {
		s.mismatch(field, want)
	}
	return false, s.skip()
}

// stringOrNull reads a string, or null as "", as encoding/json does.
func (s *scanner) stringOrNull(field string) (rawString, error) {
	if ok, err := s.expect(field, "a string", '"'); !ok {
		return rawString{}, err
	}
	return s.readString()
}

// member is an object member a walk reads: a string (or null) into str, or else
// any value through read, which reads or skips it. path names it in messages;
// its last "."-separated part is the key.
type member struct {
	path string
	str  *rawString
	read func() error
}

// enter steps into the object or array that is next if its kind is kind; ok is
// false as in expect.
func (s *scanner) enter(field, want string, kind byte) (ok bool, err error) {
	if ok, err = s.expect(field, want, kind); ok {
		err = s.token()
	}
	return ok && err == nil, err
}

// object walks the next object, named name in messages: it reads the members
// given and skips the others without a callback's indirect call. Callers that
// need to know whether it is present peek for '{' first.
func (s *scanner) object(name string, members ...member) error {
	if ok, err := s.enter(name, "an object", '{'); !ok {
		return err
	}
	for s.peek() != '}' {
		key, err := s.readString()
		if err != nil {
			return err
		}
		i := slices.IndexFunc(members, func(w member) bool { return key.is(w.path[strings.LastIndexByte(w.path, '.')+1:]) })
		switch {
		case i < 0:
			err = s.skip()
		case members[i].str != nil:
			*members[i].str, err = s.stringOrNull(members[i].path)
		default:
			err = members[i].read()
		}
		if err != nil {
			return err
		}
	}
	return s.token()
}

// eachElement calls fn, which must read or skip it, at each element of the
// array that is next.
func (s *scanner) eachElement(field string, fn func() error) error {
	if ok, err := s.enter(field, "an array", '['); !ok {
		return err
	}
	for s.peek() != ']' {
		if err := fn(); err != nil {
			return err
		}
	}
	return s.token()
}

// withMember walks the object that is next, calling fn at the member key.
func (s *scanner) withMember(name, key string, fn func() error) error {
	return s.object(name, member{path: key, read: fn})
}
