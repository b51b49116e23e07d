package main

import (
	"fmt"
	"slices"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// labelRename renames the label from to to wherever a PromQL expression
// names a label, and notes whether the expression named either.
type labelRename struct {
	from, to string
	// namedFrom and namedTo say whether an expression or a rule's labels
	// named from, or to, before the rename.
	namedFrom, namedTo bool
}

// name returns the new name of the label n.
func (r *labelRename) name(n string) string {
	switch n {
	case r.from:
		r.namedFrom = true
		return r.to
	case r.to:
		r.namedTo = true
	}
	return n
}

// names renames the labels of a list in place.
func (r *labelRename) names(ns []string) {
	for i, n := range ns {
		ns[i] = r.name(n)
	}
}

// expr renames the label in e in place: in `by` and `without`, in `on`,
// `ignoring`, `group_left` and `group_right`, in label matchers and in the
// label names that count_values and functions such as label_replace take
// as strings. A node or a function with string arguments that it does not
// know is an error, so that no label is left behind unseen.
func (r *labelRename) expr(e parser.Expr) error {
	return parser.Walk(r, e, nil)
}

// Visit implements parser.Visitor for expr.
func (r *labelRename) Visit(node parser.Node, _ []parser.Node) (parser.Visitor, error) {
	switch n := node.(type) {
	case nil, *parser.MatrixSelector, *parser.SubqueryExpr, *parser.ParenExpr, *parser.UnaryExpr,
		*parser.NumberLiteral, *parser.StringLiteral, *parser.StepInvariantExpr:
	case *parser.AggregateExpr:
		r.names(n.Grouping)
		if n.Op == parser.COUNT_VALUES {
			return r, r.stringArg(n.Param, "count_values")
		}
	case *parser.BinaryExpr:
		if m := n.VectorMatching; m != nil {
			r.names(m.MatchingLabels)
			r.names(m.Include)
		}
	case *parser.VectorSelector:
		return r, r.matchers(n.LabelMatchers)
	case *parser.Call:
		return r, r.call(n)
	default:
		return nil, fmt.Errorf("PromQL node %T is not known to the rename", node)
	}
	return r, nil
}

// matchers renames the label of the matchers in place.
func (r *labelRename) matchers(ms []*labels.Matcher) error {
	for i, m := range ms {
		if n := r.name(m.Name); n != m.Name {
			renamed, err := labels.NewMatcher(m.Type, n, m.Value)
			if err != nil {
				return err
			}
			ms[i] = renamed
		}
	}
	return nil
}

// labelArgs are the functions that take string arguments, and which of
// those are label names: the arguments at the indexes of at, and every
// argument from rest on where rest is not 0. Replacements, separators and
// regular expressions are not names.
var labelArgs = map[string]struct {
	at   []int
	rest int
}{
	"label_replace":       {at: []int{1, 3}},
	"label_join":          {at: []int{1}, rest: 3},
	"sort_by_label":       {rest: 1},
	"sort_by_label_desc":  {rest: 1},
	"histogram_quantiles": {at: []int{1}},
}

// call renames the label names among a function's string arguments.
func (r *labelRename) call(c *parser.Call) error {
	args, known := labelArgs[c.Func.Name]
	for i, a := range c.Args {
		isName := slices.Contains(args.at, i) || args.rest > 0 && i >= args.rest
		switch {
		case isName:
			if err := r.stringArg(a, c.Func.Name); err != nil {
				return err
			}
		case !known && a.Type() == parser.ValueTypeString:
			return fmt.Errorf("function %s takes a string argument that the rename does not know", c.Func.Name)
		}
	}
	return nil
}

// stringArg renames the label that a string argument of fn names.
func (r *labelRename) stringArg(e parser.Expr, fn string) error {
	s, ok := e.(*parser.StringLiteral)
	if !ok {
		return fmt.Errorf("%s: a label name given as %s, not as a string literal", fn, e)
	}
	s.Val = r.name(s.Val)
	return nil
}
