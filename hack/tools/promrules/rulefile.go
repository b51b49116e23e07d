package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// loadRules reads one file of rules in either shape the repository has:
// a Prometheus rule file (top-level `groups`), or a stream of Kubernetes
// objects in which each PrometheusRule contributes its spec.groups, which
// prometheus-operator hands to Prometheus as a rule file of its own. Other
// objects in the stream are skipped, so a rendered kustomization works too.
// Each rule file is validated by rulefmt, as Prometheus does when it loads
// it; the PrometheusRule's other fields are not looked at.
func loadRules(file string, logger *slog.Logger) (*rulefmt.RuleGroups, []error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, []error{err}
	}
	return parseRules(file, data, logger)
}

// parseRules is loadRules of data read from file.
func parseRules(file string, data []byte, logger *slog.Logger) (*rulefmt.RuleGroups, []error) {
	docs, err := ruleDocuments(data)
	if err != nil {
		return nil, []error{fmt.Errorf("%s: %w", file, err)}
	}
	if len(docs) == 0 {
		return nil, []error{fmt.Errorf("%s: neither a rule file nor a PrometheusRule", file)}
	}
	all := &rulefmt.RuleGroups{}
	var errs []error
	for _, doc := range docs {
		rgs, es := rulefmt.Parse(doc.content, false, model.LegacyValidation, promqlParser, logger)
		for _, e := range es {
			errs = append(errs, fmt.Errorf("%s%s: %w", file, doc.name, e))
		}
		if rgs != nil {
			all.Groups = append(all.Groups, rgs.Groups...)
		}
	}
	return all, errs
}

// ruleDocument is one rule file's content and, for a PrometheusRule, the
// object it came from (" (PrometheusRule NAME)") to name in errors.
type ruleDocument struct {
	name    string
	content []byte
}

func ruleDocuments(data []byte) ([]ruleDocument, error) {
	nodes, err := decodeDocuments(data)
	if err != nil {
		return nil, err
	}
	var docs []ruleDocument
	for _, n := range nodes {
		if n.Kind != yaml.DocumentNode || len(n.Content) == 0 || n.Content[0].Kind != yaml.MappingNode {
			continue
		}
		rules, name, err := ruleFileNode(n.Content[0])
		if err != nil {
			return nil, err
		}
		if rules == nil {
			continue
		}
		content, err := yaml.Marshal(rules)
		if err != nil {
			return nil, err
		}
		docs = append(docs, ruleDocument{name: name, content: content})
	}
	return docs, nil
}

// ruleFileNode returns the node of a document's root mapping that is a
// rule file, and the name to give it in errors: a PrometheusRule's spec,
// which holds `groups` and nothing else that Prometheus reads, or a rule
// file's root. It returns nil for any other document.
func ruleFileNode(root *yaml.Node) (*yaml.Node, string, error) {
	kind := mapValue(root, "kind")
	if kind == nil {
		if mapValue(root, "groups") != nil {
			return root, "", nil
		}
		return nil, "", nil
	}
	if kind.Value != "PrometheusRule" {
		return nil, "", nil
	}
	spec := mapValue(root, "spec")
	if spec == nil {
		return nil, "", errors.New("PrometheusRule without spec")
	}
	name := ""
	if md := mapValue(root, "metadata"); md != nil {
		if v := mapValue(md, "name"); v != nil {
			name = fmt.Sprintf(" (PrometheusRule %s)", v.Value)
		}
	}
	return spec, name, nil
}

// mapValue returns the value of key in a YAML mapping node, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	_, v := mapEntry(m, key)
	return v
}

// groupLoader lets Prometheus' rule manager load PrometheusRule objects as
// well as rule files, through loadRules.
type groupLoader struct{ logger *slog.Logger }

func (l groupLoader) Load(file string, _ bool, _ model.ValidationScheme) (*rulefmt.RuleGroups, []error) {
	rgs, errs := loadRules(file, l.logger)
	if len(errs) == 0 {
		errs = duplicates(rgs)
	}
	return rgs, errs
}

func (groupLoader) Parse(query string) (parser.Expr, error) { return promqlParser.ParseExpr(query) }
