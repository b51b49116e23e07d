package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"
	"regexp"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// clusterLabelFrom is the label that every aggregation and every match of
// the shipped rules keeps (docs/operations.md, "Monitoring profiles").
const clusterLabelFrom = "cluster"

// input is one file that cluster-label reads, by the name to give in
// errors.
type input struct {
	name string
	data []byte
}

// clusterLabelUsage is what `promrules cluster-label -h` prints.
const clusterLabelUsage = `usage: promrules cluster-label NAME [FILE...] > renamed.yaml

Reads PrometheusRule objects or rule files (stdin without FILE; other
objects pass through) and prints them with the label cluster renamed to
NAME in every rule: in by and without, on and ignoring, group_left and
group_right, label matchers, the label names that count_values,
label_replace, label_join, sort_by_label and histogram_quantiles take, and
the keys of rule and group labels. The expressions are walked as
Prometheus parses them; the tokens that name cluster are renamed where
they stand, and every other byte of the files, comments included, stays
as written. Where renaming tokens would change more than the label (a
metric spelled cluster, say), the expression is printed anew from its
syntax tree: a block scalar (expr: |) as Prometheus' formatter lays it
out, a one-line string in double quotes. Rules that already name NAME
where others name cluster are refused, since the two labels would merge;
rules that name NAME alone stay as they are, so that running it again on
its output changes nothing. Nothing is printed and the exit code is 1
when a rule does not parse, an expression holds what the rename does not
know, an expression printed anew would lose its comments, or a template
reads cluster, which the rename does not edit.
`

// clusterLabel renames the label cluster to NAME in the rules of the
// files, or of stdin without files, and prints the files, or nothing when
// any of them fails.
func clusterLabel(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cluster-label", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, clusterLabelUsage) }
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	to := fs.Arg(0)
	if !model.LegacyValidation.IsValidLabelName(to) || strings.HasPrefix(to, "__") {
		fmt.Fprintf(stderr, "cluster-label: %q is not a label name that a rule may give\n", to)
		return 2
	}
	inputs, err := readInputs(fs.Args()[1:], stdin)
	if err == nil {
		var out []byte
		out, err = newRenaming(to, stderr).inputs(inputs)
		if err == nil {
			_, err = stdout.Write(out)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "cluster-label:", err)
		return 1
	}
	return 0
}

func readInputs(files []string, stdin io.Reader) ([]input, error) {
	if len(files) == 0 {
		data, err := io.ReadAll(stdin)
		return []input{{name: "stdin", data: data}}, err
	}
	var inputs []input
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, input{name: f, data: data})
	}
	return inputs, nil
}

// renaming is one run of cluster-label: the rename, and the first rules
// that name the old label and the new one.
type renaming struct {
	labelRename
	// inTemplate matches a template action that names the old label.
	inTemplate   *regexp.Regexp
	stderr       io.Writer
	fromAt, toAt string
}

func newRenaming(to string, stderr io.Writer) *renaming {
	return &renaming{
		labelRename: labelRename{from: clusterLabelFrom, to: to},
		inTemplate:  regexp.MustCompile(`(?s)\{\{[^}]*\b` + regexp.QuoteMeta(clusterLabelFrom) + `\b.*?\}\}`),
		stderr:      stderr,
	}
}

// inputs renames the label in each input and returns them as one YAML
// stream.
func (rn *renaming) inputs(inputs []input) ([]byte, error) {
	var out bytes.Buffer
	for _, in := range inputs {
		data, err := rn.file(in)
		if err != nil {
			return nil, err
		}
		if out.Len() > 0 && !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
			out.WriteByte('\n')
		}
		if out.Len() > 0 && !bytes.HasPrefix(data, []byte("---")) {
			out.WriteString("---\n")
		}
		out.Write(data)
	}
	return out.Bytes(), nil
}

// file renames the label in the rules of one input. It edits the text
// where the rules name the label and leaves every other byte as it is,
// and then checks that the edited text holds what the rename gave.
func (rn *renaming) file(in input) ([]byte, error) {
	logger := slog.New(slog.NewTextHandler(rn.stderr, nil))
	if _, errs := parseRules(in.name, in.data, logger); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	docs, err := decodeDocuments(in.data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.name, err)
	}
	src := newSource(in.data)
	var splices []splice
	for _, doc := range docs {
		sp, err := rn.document(doc, src, in.name)
		if err != nil {
			return nil, err
		}
		splices = append(splices, sp...)
	}
	out := src.apply(splices)
	if err := sameDocuments(docs, out); err != nil {
		return nil, fmt.Errorf("%s: the edited text does not hold the renamed rules: %w", in.name, err)
	}
	return out, nil
}

func decodeDocuments(data []byte) ([]*yaml.Node, error) {
	var docs []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); errors.Is(err, io.EOF) {
			return docs, nil
		} else if err != nil {
			return nil, err
		}
		docs = append(docs, &n)
	}
}

// sameDocuments checks that out decodes to the values of docs.
func sameDocuments(docs []*yaml.Node, out []byte) error {
	got, err := decodeDocuments(out)
	if err != nil {
		return err
	}
	if len(got) != len(docs) {
		return fmt.Errorf("%d documents, want %d", len(got), len(docs))
	}
	for i := range docs {
		var want, have any
		if err := docs[i].Decode(&want); err != nil {
			return err
		}
		if err := got[i].Decode(&have); err != nil {
			return err
		}
		if !reflect.DeepEqual(want, have) {
			return fmt.Errorf("document %d differs", i+1)
		}
	}
	return nil
}

// document renames the label in the groups of a document that is a rule
// file or a PrometheusRule; other documents stay as they are.
func (rn *renaming) document(doc *yaml.Node, src *source, file string) ([]splice, error) {
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil
	}
	rules, name, err := ruleFileNode(doc.Content[0])
	if rules == nil || err != nil {
		return nil, err
	}
	groups := mapValue(rules, "groups")
	if groups == nil {
		return nil, nil
	}
	var splices []splice
	for _, g := range groups.Content {
		where := fmt.Sprintf("%s%s: group %q", file, name, mapValue(g, "name").Value)
		sp, err := rn.group(g, src, where)
		if err != nil {
			return nil, err
		}
		splices = append(splices, sp...)
	}
	return splices, nil
}

// group renames the label in a group's labels and in its rules.
func (rn *renaming) group(g *yaml.Node, src *source, where string) ([]splice, error) {
	splices, err := rn.labels(mapValue(g, "labels"), src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if err := rn.note(where); err != nil {
		return nil, err
	}
	rules := mapValue(g, "rules")
	if rules == nil {
		return splices, nil
	}
	for _, r := range rules.Content {
		name := mapValue(r, "alert")
		if name == nil {
			name = mapValue(r, "record")
		}
		at := fmt.Sprintf("%s, rule %s", where, name.Value)
		sp, err := rn.rule(r, src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		if err := rn.note(at); err != nil {
			return nil, err
		}
		splices = append(splices, sp...)
	}
	return splices, nil
}

// note remembers where the label and its new name were first named, and
// fails once the rules name both: the rename would merge two labels.
func (rn *renaming) note(where string) error {
	if rn.namedFrom && rn.fromAt == "" {
		rn.fromAt = where
	}
	if rn.namedTo && rn.toAt == "" {
		rn.toAt = where
	}
	rn.namedFrom, rn.namedTo = false, false
	if rn.fromAt == "" || rn.toAt == "" || rn.from == rn.to {
		return nil
	}
	return fmt.Errorf("%s names the label %s, and %s names %s already: renaming %s would merge the two",
		rn.fromAt, rn.from, rn.toAt, rn.to, rn.from)
}

// rule renames the label in a rule's expression and labels. A template
// that reads the label is left to the author: the rename does not edit
// templates.
func (rn *renaming) rule(r *yaml.Node, src *source) ([]splice, error) {
	exprKey, expr := mapEntry(r, "expr")
	splices, err := rn.expr(exprKey, expr, src)
	if err != nil {
		return nil, err
	}
	sp, err := rn.labels(mapValue(r, "labels"), src)
	if err != nil {
		return nil, err
	}
	if err := rn.templates(mapValue(r, "annotations")); err != nil {
		return nil, err
	}
	return append(splices, sp...), nil
}

// expr renames the label in an expression. The renamed syntax tree is
// what the expression must become; the text that gives it is the
// expression as written with the tokens that name the label renamed
// (renamedTokens), so that its layout and comments stay. Where that text
// parses as another expression (a metric or a matcher's value spelled as
// the label, say), the expression is printed anew from the tree: a block
// scalar (expr: |) as parser.Prettify renders it where it can, a one-line
// string as String() does, in double quotes. An expression that does not
// name the label stays as written.
func (rn *renaming) expr(key, val *yaml.Node, src *source) ([]splice, error) {
	if val.Kind != yaml.ScalarNode {
		return nil, errors.New("expr is not a string")
	}
	e, err := promqlParser.ParseExpr(val.Value)
	if err != nil {
		return nil, fmt.Errorf("expr: %w", err)
	}
	if err := rn.labelRename.expr(e); err != nil {
		return nil, fmt.Errorf("expr: %w", err)
	}
	if !rn.namedFrom || rn.from == rn.to {
		return nil, nil
	}
	block := val.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0
	text := renamedTokens(val.Value, rn.from, rn.to)
	asWritten := parsesAs(e, text)
	if !asWritten {
		if hasComment(val.Value) {
			return nil, errors.New("expr: the expression must be printed anew, and would lose its comments")
		}
		text = e.String()
		// Prettify indents the operands of a binary operator and not the
		// operator. A first line indented deeper than a later one needs an
		// indentation indicator (expr: |2), which go.yaml.in/yaml/v3
		// writes back wrongly when loadRules encodes the spec again: such
		// an expression stays on one line.
		if p := parser.Prettify(e); block && !strings.HasPrefix(p, " ") {
			text = p
		}
		if !parsesAs(e, text) {
			return nil, fmt.Errorf("expr: the renamed expression does not parse back as itself:\n%s", text)
		}
	}
	if block {
		return src.block(key, val, strings.TrimRight(text, "\n"))
	}
	sp, err := src.inline(val, text, asWritten)
	return []splice{sp}, err
}

// renamedTokens returns expr with each token that may name the label from
// renamed to to: an identifier, and a string literal that follows "(",
// "{" or "," (a function's argument, a quoted label name). Which of them
// do name it, the caller tells from the syntax tree (parsesAs).
func renamedTokens(expr, from, to string) string {
	var b strings.Builder
	last, prev := 0, parser.ItemType(0)
	for l := parser.Lex(expr); ; {
		var it parser.Item
		l.NextItem(&it)
		if it.Typ == parser.EOF || it.Typ == parser.ERROR {
			break
		}
		name := it.Val
		if it.Typ == parser.STRING && len(name) == len(from)+2 &&
			(prev == parser.LEFT_PAREN || prev == parser.LEFT_BRACE || prev == parser.COMMA) {
			name = name[1 : len(name)-1]
		}
		if (it.Typ == parser.IDENTIFIER || it.Typ == parser.STRING) && name == from {
			start := int(it.Pos)
			b.WriteString(expr[last:start])
			b.WriteString(strings.Replace(it.Val, from, to, 1))
			last = start + len(it.Val)
		}
		if it.Typ != parser.COMMENT {
			prev = it.Typ
		}
	}
	b.WriteString(expr[last:])
	return b.String()
}

// parsesAs reports whether text parses as the expression e.
func parsesAs(e parser.Expr, text string) bool {
	back, err := promqlParser.ParseExpr(text)
	return err == nil && back.String() == e.String()
}

// hasComment reports whether the expression holds a comment, which its
// syntax tree does not keep.
func hasComment(expr string) bool {
	l := parser.Lex(expr)
	for {
		var it parser.Item
		l.NextItem(&it)
		switch it.Typ {
		case parser.COMMENT:
			return true
		case parser.EOF, parser.ERROR:
			return false
		}
	}
}

// labels renames the label among the keys of a rule's or a group's
// labels.
func (rn *renaming) labels(m *yaml.Node, src *source) ([]splice, error) {
	if m == nil {
		return nil, nil
	}
	if m.Kind != yaml.MappingNode {
		return nil, errors.New("labels is not a mapping")
	}
	if err := rn.templates(m); err != nil {
		return nil, err
	}
	var splices []splice
	for i := 0; i < len(m.Content); i += 2 {
		k := m.Content[i]
		if n := rn.name(k.Value); n != k.Value {
			sp, err := src.key(k, n)
			if err != nil {
				return nil, err
			}
			splices = append(splices, sp)
		}
	}
	return splices, nil
}

// templates fails where a value of m is a template that names the label.
func (rn *renaming) templates(m *yaml.Node) error {
	if m == nil || rn.from == rn.to {
		return nil
	}
	for i := 1; i < len(m.Content); i += 2 {
		if a := rn.inTemplate.FindString(m.Content[i].Value); a != "" {
			return fmt.Errorf("%s: the template %s reads the label %s; the rename does not edit templates",
				m.Content[i-1].Value, a, rn.from)
		}
	}
	return nil
}

// mapEntry returns the key and the value of key in a YAML mapping node.
func mapEntry(m *yaml.Node, key string) (k, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}
