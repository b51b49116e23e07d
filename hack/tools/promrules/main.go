// Command promrules checks Prometheus rule files the way `promtool check
// rules` does, with the same library, and evaluates them with Prometheus'
// own rule engine:
//
//	promrules check FILE...                                parse and validate; exit 1 on any problem
//	promrules selectors FILE...                            each rule's series selectors as JSON
//	promrules conditions [flags] FILE... [< metrics.txt]   which alerts hold on scraped metrics (`for` ignored)
//	promrules eval [flags] [RULEFILE...] < queries.json    which expressions return no data; exit 1 if any
//	promrules test TESTFILE...                             rule unit tests as `promtool test rules`
//	promrules cluster-label NAME [FILE...]                 the rules with the label cluster renamed to NAME
//
// A FILE is a Prometheus rule file or a YAML stream of Kubernetes objects
// whose PrometheusRules give their spec.groups (see loadRules). Why this is
// not promtool, and why cluster-label edits the files' text:
// docs/development.md, "Tools in hack/tools".
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usage(stderr)
	}
	switch args[0] {
	case "check":
		return check(args[1:], stdout, stderr)
	case "selectors":
		return selectors(args[1:], stdout, stderr)
	case "conditions":
		return conditions(args[1:], stdin, stdout, stderr)
	case "eval":
		return evalQueries(args[1:], stdin, stdout, stderr)
	case "test":
		return unitTest(args[1:], stdout, stderr)
	case "cluster-label":
		return clusterLabel(args[1:], stdin, stdout, stderr)
	default:
		return usage(stderr)
	}
}

func usage(stderr io.Writer) int {
	fmt.Fprintln(stderr, `usage: promrules check FILE...
       promrules selectors FILE...
       promrules conditions [flags] FILE... [< metrics.txt]   (-h for flags)
       promrules eval [flags] [RULEFILE...] < queries.json     (-h for flags)
       promrules test TESTFILE...
       promrules cluster-label NAME [FILE...]                 (-h for what it renames)`)
	return 2
}

var promqlParser = parser.NewParser(parser.Options{})

// parse reads and validates one rule file. Legacy name validation is the
// stricter scheme: names that pass it work on every Prometheus version.
func parse(file string, stderr io.Writer) (*rulefmt.RuleGroups, []error) {
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	rgs, errs := loadRules(file, logger)
	if len(errs) == 0 {
		errs = duplicates(rgs)
	}
	return rgs, errs
}

func check(files []string, stdout, stderr io.Writer) int {
	failed := false
	for _, file := range files {
		fmt.Fprintln(stdout, "Checking", file)
		rgs, errs := parse(file, stderr)
		if len(errs) > 0 {
			failed = true
			fmt.Fprintln(stderr, "  FAILED:")
			for _, err := range errs {
				fmt.Fprintln(stderr, err)
			}
			continue
		}
		n := 0
		for _, g := range rgs.Groups {
			n += len(g.Rules)
		}
		fmt.Fprintf(stdout, "  SUCCESS: %d rules found\n", n)
	}
	if failed {
		return 1
	}
	return 0
}

// Rule is one rule and the series selectors its expression uses.
type Rule struct {
	Group     string     `json:"group"`
	Alert     string     `json:"alert,omitempty"`
	Record    string     `json:"record,omitempty"`
	For       string     `json:"for,omitempty"`
	Expr      string     `json:"expr"`
	Selectors []Selector `json:"selectors"`
}

// Selector is one vector selector: the metric name and its label matchers.
type Selector struct {
	Metric   string    `json:"metric"`
	Matchers []Matcher `json:"matchers,omitempty"`
}

// Matcher is a label matcher other than the metric name.
type Matcher struct {
	Name  string `json:"name"`
	Op    string `json:"op"`
	Value string `json:"value"`
}

func selectors(files []string, stdout, stderr io.Writer) int {
	out := []Rule{}
	for _, file := range files {
		rgs, errs := parse(file, stderr)
		if len(errs) > 0 {
			for _, err := range errs {
				fmt.Fprintln(stderr, err)
			}
			return 1
		}
		for _, g := range rgs.Groups {
			for _, r := range g.Rules {
				expr, err := promqlParser.ParseExpr(r.Expr)
				if err != nil {
					fmt.Fprintf(stderr, "%s: group %q: %v\n", file, g.Name, err)
					return 1
				}
				rule := Rule{Group: g.Name, Alert: r.Alert, Record: r.Record, Expr: r.Expr, Selectors: []Selector{}}
				if r.For != 0 {
					rule.For = r.For.String()
				}
				for _, ms := range parser.ExtractSelectors(expr) {
					var s Selector
					for _, m := range ms {
						if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
							s.Metric = m.Value
							continue
						}
						s.Matchers = append(s.Matchers, Matcher{Name: m.Name, Op: m.Type.String(), Value: m.Value})
					}
					rule.Selectors = append(rule.Selectors, s)
				}
				out = append(out, rule)
			}
		}
	}
	return writeJSON(out, stdout, stderr)
}

// writeJSON prints v as indented JSON and returns the exit code.
func writeJSON(v any, stdout, stderr io.Writer) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// duplicates reports rules with the same name and the same labels across all
// groups, as promtool's lint does: they would overwrite each other's series
// or alerts.
func duplicates(rgs *rulefmt.RuleGroups) []error {
	seen := map[string]bool{}
	var errs []error
	for _, g := range rgs.Groups {
		for _, r := range g.Rules {
			name := r.Alert
			if name == "" {
				name = r.Record
			}
			merged := map[string]string{}
			for k, v := range g.Labels {
				merged[k] = v
			}
			for k, v := range r.Labels {
				merged[k] = v
			}
			keys := make([]string, 0, len(merged))
			for k := range merged {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			var b strings.Builder
			b.WriteString(name)
			for _, k := range keys {
				fmt.Fprintf(&b, "\xff%s=%s", k, merged[k])
			}
			if seen[b.String()] {
				errs = append(errs, fmt.Errorf("group %q: duplicate rule %q with labels %v", g.Name, name, merged))
			}
			seen[b.String()] = true
		}
	}
	return errs
}
