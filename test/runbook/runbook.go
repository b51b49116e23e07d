package runbook

import (
	"errors"
	"fmt"
	"strings"
)

// The labels that open an alert section's two command blocks.
const (
	ConfirmLabel = "Confirm:"
	FixLabel     = "Fix:"
)

// Block is one ```sh block of a runbook.
type Block struct {
	// Script is the block's lines as written, for a shell to run.
	Script string
	// Commands are its command lines, continued lines joined; blank lines
	// and comments are not commands.
	Commands []string
}

// Runbook is what an alert's section gives the person paged: the block
// that confirms the alert and the block that fixes its cause.
type Runbook struct {
	Confirm, Fix Block
}

// Parse reads the Confirm and Fix blocks of an alert's section. Each label
// stands alone on its line, once, and is followed by a ```sh block with at
// least one command.
func Parse(section string) (Runbook, error) {
	confirm, errConfirm := labelledBlock(section, ConfirmLabel)
	fix, errFix := labelledBlock(section, FixLabel)
	return Runbook{Confirm: confirm, Fix: fix}, errors.Join(errConfirm, errFix)
}

// labelledBlock returns the sh block that follows the line label.
func labelledBlock(section, label string) (Block, error) {
	lines := strings.Split(section, "\n")
	at := -1
	for i, l := range lines {
		if strings.TrimSpace(l) != label {
			continue
		}
		if at >= 0 {
			return Block{}, fmt.Errorf("%q twice", label)
		}
		at = i
	}
	if at < 0 {
		return Block{}, fmt.Errorf("no line %q", label)
	}
	i := at + 1
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i >= len(lines) || strings.TrimSpace(lines[i]) != "```sh" {
		return Block{}, fmt.Errorf("%q is not followed by a ```sh block", label)
	}
	var block []string
	for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		block = append(block, lines[i])
	}
	if i >= len(lines) {
		return Block{}, fmt.Errorf("the block after %q is not closed", label)
	}
	b := Block{Script: strings.Join(block, "\n") + "\n"}
	for _, l := range JoinContinued(block) {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			b.Commands = append(b.Commands, l)
		}
	}
	if len(b.Commands) == 0 {
		return Block{}, fmt.Errorf("the block after %q holds no command", label)
	}
	return b, nil
}

// JoinContinued joins lines that end in a backslash with the next.
func JoinContinued(lines []string) []string {
	var out []string
	var cur strings.Builder
	for _, l := range lines {
		if s, ok := strings.CutSuffix(strings.TrimRight(l, " "), `\`); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(l)
		out = append(out, cur.String())
		cur.Reset()
	}
	return out
}

// Section returns the section of the Markdown document doc under the
// heading whose text is heading: its lines up to the next heading of the
// same or a higher level, code blocks skipped, since a shell comment in
// one starts with "#" too.
func Section(doc, heading string) (string, error) {
	lines := strings.Split(doc, "\n")
	level, start := 0, -1
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, "#"))
		if fenced || n == 0 || !strings.HasPrefix(l[n:], " ") {
			continue
		}
		switch {
		case start < 0 && strings.TrimSpace(l[n:]) == heading:
			level, start = n, i+1
		case start >= 0 && n <= level:
			return strings.Join(lines[start:i], "\n"), nil
		}
	}
	if start < 0 {
		return "", fmt.Errorf("no heading %q", heading)
	}
	return strings.Join(lines[start:], "\n"), nil
}
