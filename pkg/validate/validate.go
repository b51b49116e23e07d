// Package validate is the one way options are checked and reported: every
// problem at once, each naming the option (a flag, or a field) and its
// value, by the API server's own rules where the value names an object.
package validate

import (
	"errors"
	"fmt"
	"strings"
)

// Errors collects the problems of one set of options.
type Errors []error

// Rule is one of k8s.io/apimachinery's validation functions.
type Rule func(string) []string

// Field adds what rule finds wrong with value, as `name "value": problems`.
func (e *Errors) Field(name, value string, rule Rule) { e.FieldIs(name, value, "", rule) }

// FieldIs adds what rule finds wrong with value, as `name "value" is not
// what: problems`; an empty what makes it Field.
func (e *Errors) FieldIs(name, value, what string, rule Rule) {
	if problems := rule(value); len(problems) > 0 {
		name = fmt.Sprintf("%s %q", name, value)
		if what != "" {
			name += " is not " + what
		}
		e.Addf("%s: %s", name, strings.Join(problems, "; "))
	}
}

// Add adds err, when it is not nil, such as the result of another Validate.
func (e *Errors) Add(err error) {
	if err != nil {
		*e = append(*e, err)
	}
}

// Addf adds a problem that no Rule describes.
func (e *Errors) Addf(format string, args ...any) { *e = append(*e, fmt.Errorf(format, args...)) }

// Err reports the problems as one error, one line each, or nil.
func (e Errors) Err() error { return errors.Join(e...) }
