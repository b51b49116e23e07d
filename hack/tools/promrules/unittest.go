package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
	"go.yaml.in/yaml/v3"
)

// The unit-test file format of `promtool test rules`
// (https://prometheus.io/docs/prometheus/latest/configuration/unit_testing_rules/),
// without the options this repository does not use: fuzzy_compare,
// group_eval_order, start_timestamp, external_url and native histograms.
// Unknown fields are rejected, so a file that needs one of them fails
// instead of being half-read.
type testFile struct {
	RuleFiles          []string       `yaml:"rule_files"`
	EvaluationInterval model.Duration `yaml:"evaluation_interval"`
	Tests              []testGroup    `yaml:"tests"`
}

type testGroup struct {
	Name            string            `yaml:"name"`
	Interval        model.Duration    `yaml:"interval"`
	InputSeries     []inputSeries     `yaml:"input_series"`
	AlertRuleTests  []alertTestCase   `yaml:"alert_rule_test"`
	PromqlExprTests []promqlTestCase  `yaml:"promql_expr_test"`
	ExternalLabels  map[string]string `yaml:"external_labels"`
}

type inputSeries struct {
	Series string `yaml:"series"`
	Values string `yaml:"values"`
}

type alertTestCase struct {
	EvalTime  model.Duration  `yaml:"eval_time"`
	Alertname string          `yaml:"alertname"`
	ExpAlerts []expectedAlert `yaml:"exp_alerts"`
}

type expectedAlert struct {
	ExpLabels      map[string]string `yaml:"exp_labels"`
	ExpAnnotations map[string]string `yaml:"exp_annotations"`
}

type promqlTestCase struct {
	Expr       string           `yaml:"expr"`
	EvalTime   model.Duration   `yaml:"eval_time"`
	ExpSamples []expectedSample `yaml:"exp_samples"`
}

type expectedSample struct {
	Labels string  `yaml:"labels"`
	Value  float64 `yaml:"value"`
}

// unitTest runs each test file as `promtool test rules` does and exits 1
// when any expectation is not met or a file cannot be run.
func unitTest(files []string, stdout, stderr io.Writer) int {
	failed := false
	for _, file := range files {
		fmt.Fprintln(stdout, "Processing test file:", file)
		if errs := runTestFile(file, stderr); len(errs) > 0 {
			failed = true
			fmt.Fprintln(stderr, "  FAILED:", file)
			for _, err := range errs {
				fmt.Fprintln(stderr, err)
			}
			continue
		}
		fmt.Fprintln(stdout, "  SUCCESS")
	}
	if failed {
		return 1
	}
	return 0
}

func runTestFile(file string, stderr io.Writer) []error {
	data, err := os.ReadFile(file)
	if err != nil {
		return []error{err}
	}
	var tf testFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&tf); err != nil {
		return []error{fmt.Errorf("%s: %w", file, err)}
	}
	if len(tf.RuleFiles) == 0 || len(tf.Tests) == 0 {
		return []error{fmt.Errorf("%s: no rule_files or no tests", file)}
	}
	for i, rf := range tf.RuleFiles {
		if !filepath.IsAbs(rf) {
			tf.RuleFiles[i] = filepath.Join(filepath.Dir(file), rf)
		}
	}
	if tf.EvaluationInterval == 0 {
		tf.EvaluationInterval = model.Duration(time.Minute)
	}
	var errs []error
	for i, tg := range tf.Tests {
		name := tg.Name
		if name == "" {
			name = fmt.Sprintf("unnamed#%d", i)
		}
		if tg.Interval == 0 {
			tg.Interval = tf.EvaluationInterval
		}
		for _, err := range tg.run(time.Duration(tf.EvaluationInterval), tf.RuleFiles, stderr) {
			errs = append(errs, fmt.Errorf("    name: %s,\n%w", name, err))
		}
	}
	return errs
}

// run follows promtool's loop (cmd/promtool/unittest.go in the Prometheus
// repository): the input series are loaded lazily, every group is evaluated
// at each evaluation interval from time 0, and an alert test at eval_time is
// checked against the evaluation at the last step not after it. Only firing
// alerts count, so an alert whose `for` has not passed is expected as none.
func (tg *testGroup) run(evalInterval time.Duration, ruleFiles []string, stderr io.Writer) (errs []error) {
	suite, err := loadSeries(tg.Interval, tg.InputSeries, evalInterval)
	if err != nil {
		return []error{err}
	}
	defer func() {
		if err := suite.Close(); err != nil {
			errs = append(errs, err)
		}
	}()
	groups, err := loadGroups(suite.Context(), suite.Storage(), suite.QueryEngine(), time.Duration(tg.Interval), labels.FromMap(tg.ExternalLabels), ruleFiles, stderr)
	if err != nil {
		return []error{err}
	}
	restoreAlerts(groups)
	sched, err := tg.alertSchedule(groups)
	if err != nil {
		return []error{err}
	}
	err = stepRules(suite, groups, evalInterval, tg.lastEvalTime(), func(ts time.Time) {
		for _, at := range sched.due(ts.Sub(seriesStart), evalInterval) {
			errs = append(errs, checkAlerts(at, firing(groups, at.Alertname))...)
		}
	})
	if err != nil {
		return append(errs, err)
	}
	for _, pt := range tg.PromqlExprTests {
		errs = append(errs, checkExpr(suite, pt)...)
	}
	return errs
}

// restoreAlerts marks the groups' alerts restored, as promtool does, so
// that the rule engine treats them like alerts of a running server.
func restoreAlerts(groups []*rules.Group) {
	for _, g := range groups {
		for _, r := range g.Rules() {
			if ar, ok := r.(*rules.AlertingRule); ok {
				ar.SetRestored(true)
			}
		}
	}
}

// lastEvalTime is the latest eval_time of the group's tests.
func (tg *testGroup) lastEvalTime() time.Duration {
	maxt := time.Duration(0)
	for _, at := range tg.AlertRuleTests {
		maxt = max(maxt, time.Duration(at.EvalTime))
	}
	for _, pt := range tg.PromqlExprTests {
		maxt = max(maxt, time.Duration(pt.EvalTime))
	}
	return maxt
}

// alertSchedule is the alert tests by eval_time, in time order.
type alertSchedule struct {
	byTime map[time.Duration][]alertTestCase
	times  []time.Duration
	next   int
}

// alertSchedule orders the group's alert tests by eval_time. Each must
// name an alert the rule files define: promtool expects nothing of an
// unknown alert and passes, while here a misspelt name must not pass as
// "stays silent".
func (tg *testGroup) alertSchedule(groups []*rules.Group) (*alertSchedule, error) {
	known := map[string]bool{}
	for _, g := range groups {
		for _, r := range g.Rules() {
			if _, ok := r.(*rules.AlertingRule); ok {
				known[r.Name()] = true
			}
		}
	}
	s := &alertSchedule{byTime: map[time.Duration][]alertTestCase{}}
	for _, at := range tg.AlertRuleTests {
		if at.Alertname == "" {
			return nil, fmt.Errorf("an alert_rule_test at eval_time %s has no alertname", at.EvalTime)
		}
		if !known[at.Alertname] {
			return nil, fmt.Errorf("alert_rule_test names alert %q, which the rule files do not define", at.Alertname)
		}
		d := time.Duration(at.EvalTime)
		if _, ok := s.byTime[d]; !ok {
			s.times = append(s.times, d)
		}
		s.byTime[d] = append(s.byTime[d], at)
	}
	slices.Sort(s.times)
	return s, nil
}

// due returns the alert tests whose eval_time falls in the step that
// starts at t, the last evaluation not after them.
func (s *alertSchedule) due(t, step time.Duration) []alertTestCase {
	var out []alertTestCase
	for s.next < len(s.times) && t <= s.times[s.next] && s.times[s.next] < t+step {
		out = append(out, s.byTime[s.times[s.next]]...)
		s.next++
	}
	return out
}

// alertInstance is an alert's labels and annotations in one comparable,
// printable form.
type alertInstance struct {
	Labels      labels.Labels
	Annotations labels.Labels
}

func (a alertInstance) String() string {
	return "labels: " + a.Labels.String() + "\n            annotations: " + a.Annotations.String()
}

func compareInstances(a, b alertInstance) int {
	if c := labels.Compare(a.Labels, b.Labels); c != 0 {
		return c
	}
	return labels.Compare(a.Annotations, b.Annotations)
}

// firing returns the firing alerts of every rule named name, across groups.
func firing(groups []*rules.Group, name string) []alertInstance {
	var out []alertInstance
	for _, g := range groups {
		for _, r := range g.Rules() {
			ar, ok := r.(*rules.AlertingRule)
			if !ok || ar.Name() != name {
				continue
			}
			for _, a := range ar.ActiveAlerts() {
				if a.State == rules.StateFiring {
					out = append(out, alertInstance{Labels: a.Labels.Copy(), Annotations: a.Annotations.Copy()})
				}
			}
		}
	}
	return out
}

// checkAlerts compares the firing alerts with the expected ones, labels and
// annotations exactly; alertname is implied, as in promtool.
func checkAlerts(at alertTestCase, got []alertInstance) []error {
	var exp []alertInstance
	for _, e := range at.ExpAlerts {
		l := map[string]string{}
		for k, v := range e.ExpLabels {
			l[k] = v
		}
		l[labels.AlertName] = at.Alertname
		exp = append(exp, alertInstance{Labels: labels.FromMap(l), Annotations: labels.FromMap(e.ExpAnnotations)})
	}
	slices.SortFunc(exp, compareInstances)
	slices.SortFunc(got, compareInstances)
	if slices.EqualFunc(exp, got, func(a, b alertInstance) bool { return compareInstances(a, b) == 0 }) {
		return nil
	}
	return []error{fmt.Errorf("    alertname: %s, time: %s,\n        exp: %s,\n        got: %s", at.Alertname, at.EvalTime, instances(exp), instances(got))}
}

func instances(as []alertInstance) string {
	if len(as) == 0 {
		return "[]"
	}
	var b strings.Builder
	for i, a := range as {
		fmt.Fprintf(&b, "\n          %d: %s", i, a)
	}
	return b.String()
}

// checkExpr evaluates a promql_expr_test: the instant vector at eval_time
// must be exactly the expected samples.
func checkExpr(suite *promqltest.LazyLoader, pt promqlTestCase) []error {
	ts := seriesStart.Add(time.Duration(pt.EvalTime))
	q, err := suite.QueryEngine().NewInstantQuery(suite.Context(), suite.Queryable(), nil, pt.Expr, ts)
	if err != nil {
		return []error{fmt.Errorf("    expr: %q, time: %s, err: %w", pt.Expr, pt.EvalTime, err)}
	}
	defer q.Close()
	res := q.Exec(suite.Context())
	if res.Err != nil {
		return []error{fmt.Errorf("    expr: %q, time: %s, err: %w", pt.Expr, pt.EvalTime, res.Err)}
	}
	var got []string
	switch v := res.Value.(type) {
	case promql.Vector:
		for _, s := range v {
			got = append(got, fmt.Sprintf("%s %g", s.Metric, s.F))
		}
	case promql.Scalar:
		got = append(got, fmt.Sprintf("{} %g", v.V))
	default:
		return []error{fmt.Errorf("    expr: %q: result is a %s, not a vector or scalar", pt.Expr, res.Value.Type())}
	}
	var exp []string
	for _, s := range pt.ExpSamples {
		l, err := promqlParser.ParseMetric(s.Labels)
		if err != nil {
			return []error{fmt.Errorf("    expr: %q, labels %q: %w", pt.Expr, s.Labels, err)}
		}
		exp = append(exp, fmt.Sprintf("%s %g", l, s.Value))
	}
	slices.Sort(got)
	slices.Sort(exp)
	if !slices.Equal(got, exp) {
		return []error{fmt.Errorf("    expr: %q, time: %s,\n        exp: %v\n        got: %v", pt.Expr, pt.EvalTime, exp, got)}
	}
	return nil
}
