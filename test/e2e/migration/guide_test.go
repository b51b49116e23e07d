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
	want := map[string]bool{}
	for _, s := range sections {
		want[s] = true
	}
	var (
		steps   []step
		section string
		cur     *step
		inBlock bool
		isSh    bool
		block   bytes.Buffer
	)
	flush := func() {
		if cur != nil {
			steps = append(steps, *cur)
			cur = nil
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		body := strings.TrimPrefix(line, "   ")
		if inBlock {
			if strings.TrimSpace(line) == "```" {
				inBlock = false
				if isSh && cur != nil {
					cur.script += block.String()
				}
				block.Reset()
				continue
			}
			block.WriteString(body + "\n")
			continue
		}
		if fence, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			inBlock, isSh = true, fence == "sh"
			if isSh && cur == nil && want[section] {
				return nil, fmt.Errorf("%s: a command block in section %q outside a numbered step", path, section)
			}
			continue
		}
		if m := sectionLine.FindStringSubmatch(line); m != nil {
			flush()
			section = m[1]
			continue
		}
		if m := stepHeading.FindStringSubmatch(line); m != nil && want[section] {
			flush()
			var n int
			_, _ = fmt.Sscan(m[1], &n)
			cur = &step{section: section, n: n, title: strings.TrimSuffix(m[2], ".")}
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, s := range sections {
		found, commands := 0, 0
		for _, st := range steps {
			if st.section != s {
				continue
			}
			found++
			if st.n != found {
				return nil, fmt.Errorf("%s: section %q: step %d follows step %d", path, s, st.n, found-1)
			}
			if st.script != "" {
				commands++
			}
		}
		if commands == 0 {
			return nil, fmt.Errorf("%s: no numbered step with commands in section %q", path, s)
		}
	}
	return steps, nil
}
