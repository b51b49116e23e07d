package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// The edits of cluster-label, made in a file's text at the places the
// YAML decoder reports, so that comments, folded annotations and the
// order of everything stay as written.

// splice replaces the bytes [start, end) of a file with text.
type splice struct {
	start, end int
	text       string
}

// source is a file's text and where each of its lines starts.
type source struct {
	data  []byte
	lines []int
}

func newSource(data []byte) *source {
	s := &source{data: data, lines: []int{0}}
	for i, b := range data {
		if b == '\n' {
			s.lines = append(s.lines, i+1)
		}
	}
	return s
}

// line returns line n, counted from 1, without its line break, and the
// offset at which it starts.
func (s *source) line(n int) (string, int) {
	start, end := s.lines[n-1], len(s.data)
	if n < len(s.lines) {
		end = s.lines[n] - 1
	}
	return strings.TrimSuffix(string(s.data[start:end]), "\r"), start
}

// at returns the offset at which node starts and the rest of its line. The
// decoder counts columns in characters, from 1.
func (s *source) at(node *yaml.Node) (int, string) {
	text, start := s.line(node.Line)
	i := 0
	for c := 1; c < node.Column && i < len(text); c++ {
		_, w := utf8.DecodeRuneInString(text[i:])
		i += w
	}
	return start + i, text[i:]
}

// apply returns the text with the splices made.
func (s *source) apply(splices []splice) []byte {
	slices.SortFunc(splices, func(a, b splice) int { return a.start - b.start })
	var out bytes.Buffer
	last := 0
	for _, sp := range splices {
		out.Write(s.data[last:sp.start])
		out.WriteString(sp.text)
		last = sp.end
	}
	out.Write(s.data[last:])
	return out.Bytes()
}

// key renames the mapping key k to name.
func (s *source) key(k *yaml.Node, name string) (splice, error) {
	at, rest := s.at(k)
	quote := ""
	switch k.Style {
	case 0:
	case yaml.DoubleQuotedStyle:
		quote = `"`
	case yaml.SingleQuotedStyle:
		quote = "'"
	default:
		return splice{}, fmt.Errorf("line %d: the key %s is written in a style the rename does not edit", k.Line, k.Value)
	}
	if !strings.HasPrefix(rest, quote+k.Value+quote) {
		return splice{}, fmt.Errorf("line %d: the key %s is not written as the rename expects", k.Line, k.Value)
	}
	start := at + len(quote)
	sp := splice{start: start, end: start + len(k.Value), text: name}
	k.Value = name
	return sp, nil
}

// block replaces the content of the block scalar val, the value of key,
// with text, indented as the content was. A folded scalar becomes a
// literal one, so that the lines of text stay lines. val's value becomes
// text with the line breaks that ended the old one.
func (s *source) block(key, val *yaml.Node, text string) ([]splice, error) {
	at, header := s.at(val)
	if strings.ContainsAny(strings.Fields(header)[0], "123456789") {
		return nil, fmt.Errorf("line %d: a block scalar with an indentation indicator, which the rename does not edit", val.Line)
	}
	indent, last := s.blockLines(val.Line, key.Column-1)
	if last == 0 {
		return nil, fmt.Errorf("line %d: an empty block scalar", val.Line)
	}
	var splices []splice
	if header[0] == '>' {
		splices = append(splices, splice{start: at, end: at + 1, text: "|"})
	}
	lines := strings.Split(text, "\n")
	_, start := s.line(val.Line + 1)
	lastText, lastStart := s.line(last)
	for i, l := range lines {
		if l != "" {
			lines[i] = strings.Repeat(" ", indent) + l
		}
	}
	splices = append(splices, splice{start: start, end: lastStart + len(lastText), text: strings.Join(lines, "\n")})
	val.Value = text + val.Value[len(strings.TrimRight(val.Value, "\n")):]
	val.Style = yaml.LiteralStyle
	return splices, nil
}

// blockLines returns the indentation of the content of the block scalar
// whose header is on line header, in a mapping indented by parent, and
// the content's last line that is not blank; 0 when it has none.
func (s *source) blockLines(header, parent int) (indent, last int) {
	indent = -1
	for n := header + 1; n <= len(s.lines); n++ {
		text, _ := s.line(n)
		trimmed := strings.TrimLeft(text, " ")
		if trimmed == "" {
			continue
		}
		in := len(text) - len(trimmed)
		if indent < 0 {
			if in <= parent {
				break
			}
			indent = in
		}
		if in < indent {
			break
		}
		last = n
	}
	return indent, last
}

// inline replaces the one-line scalar val with text: as the scalar was
// written where keep says that text is the expression as written, with
// tokens renamed; in double quotes, which YAML reads as JSON writes them,
// otherwise.
func (s *source) inline(val *yaml.Node, text string, keep bool) (splice, error) {
	at, rest := s.at(val)
	n := scalarLen(rest, val)
	if n < 0 {
		return splice{}, fmt.Errorf("line %d: an expression over several lines that is not a block scalar (expr: |), which the rename does not edit", val.Line)
	}
	sp := splice{start: at, end: at + n}
	switch {
	case keep && val.Style == 0:
		sp.text = text
	case keep && val.Style == yaml.SingleQuotedStyle:
		sp.text = "'" + strings.ReplaceAll(text, "'", "''") + "'"
	default:
		var q bytes.Buffer
		enc := json.NewEncoder(&q)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(text); err != nil {
			return splice{}, err
		}
		sp.text = strings.TrimSuffix(q.String(), "\n")
		val.Style = yaml.DoubleQuotedStyle
	}
	val.Value = text
	return sp, nil
}

// scalarLen returns the length of the scalar val that starts line, or -1
// where it does not end on the line.
func scalarLen(line string, val *yaml.Node) int {
	switch {
	case val.Style == 0 && !strings.Contains(val.Value, "\n") && strings.HasPrefix(line, val.Value):
		return len(val.Value)
	case val.Style == yaml.DoubleQuotedStyle && strings.HasPrefix(line, `"`):
		for i := 1; i < len(line); i++ {
			switch line[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
	case val.Style == yaml.SingleQuotedStyle && strings.HasPrefix(line, "'"):
		for i := 1; i < len(line); i++ {
			if line[i] == '\'' && i+1 < len(line) && line[i+1] == '\'' {
				i++
			} else if line[i] == '\'' {
				return i + 1
			}
		}
	}
	return -1
}
