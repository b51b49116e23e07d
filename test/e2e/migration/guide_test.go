package migration

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// step is one numbered step of docs/migration.md with the shell blocks it
// gives, in order. Blocks fenced as sh are the commands; every other block
// is an example and is not run.
type step struct {
	section string
	n       int
	title   string
	script  string
}

func (s step) String() string { return fmt.Sprintf("%s %d (%s)", s.section, s.n, s.title) }

var (
	stepHeading = regexp.MustCompile(`^(\d+)\. \*\*(.+?)\*\*`)
	sectionLine = regexp.MustCompile(`^## (.+)$`)
)

// readGuide returns the numbered steps of the sections named in the
// guide at path, in the order they appear. A section that is missing, or
// has no step with a command, is an error: the test would pass without
// running the guide.
func readGuide(path string, sections ...string) ([]step, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p := &guideParser{path: path, want: map[string]bool{}}
	for _, s := range sections {
		p.want[s] = true
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if err := p.line(sc.Text()); err != nil {
			return nil, err
		}
	}
	p.flush()
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := checkNumbering(path, p.steps, sections); err != nil {
		return nil, err
	}
	return p.steps, nil
}

// guideParser reads the guide line by line: the section it is in, the
// step it is in, and the fenced block it is in.
type guideParser struct {
	path    string
	want    map[string]bool
	steps   []step
	section string
	cur     *step
	inBlock bool
	isSh    bool
	block   bytes.Buffer
}

// flush ends the current step, if any.
func (p *guideParser) flush() {
	if p.cur != nil {
		p.steps = append(p.steps, *p.cur)
		p.cur = nil
	}
}

// line reads one line of the guide.
func (p *guideParser) line(line string) error {
	if p.inBlock {
		p.blockLine(line)
		return nil
	}
	if fence, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
		p.inBlock, p.isSh = true, fence == "sh"
		if p.isSh && p.cur == nil && p.want[p.section] {
			return fmt.Errorf("%s: a command block in section %q outside a numbered step", p.path, p.section)
		}
		return nil
	}
	if m := sectionLine.FindStringSubmatch(line); m != nil {
		p.flush()
		p.section = m[1]
		return nil
	}
	if m := stepHeading.FindStringSubmatch(line); m != nil && p.want[p.section] {
		p.flush()
		var n int
		_, _ = fmt.Sscan(m[1], &n)
		p.cur = &step{section: p.section, n: n, title: strings.TrimSuffix(m[2], ".")}
	}
	return nil
}

// blockLine reads a line inside a fenced block: at the closing fence, an
// sh block's lines are added to the current step's script.
func (p *guideParser) blockLine(line string) {
	if strings.TrimSpace(line) == "```" {
		p.inBlock = false
		if p.isSh && p.cur != nil {
			p.cur.script += p.block.String()
		}
		p.block.Reset()
		return
	}
	p.block.WriteString(strings.TrimPrefix(line, "   ") + "\n")
}

// checkNumbering checks that each of sections has its steps numbered from 1
// on, and at least one step with commands.
func checkNumbering(path string, steps []step, sections []string) error {
	for _, s := range sections {
		found, commands := 0, 0
		for _, st := range steps {
			if st.section != s {
				continue
			}
			found++
			if st.n != found {
				return fmt.Errorf("%s: section %q: step %d follows step %d", path, s, st.n, found-1)
			}
			if st.script != "" {
				commands++
			}
		}
		if commands == 0 {
			return fmt.Errorf("%s: no numbered step with commands in section %q", path, s)
		}
	}
	return nil
}
