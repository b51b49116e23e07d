package check

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/cabundle"
)

// finding names one outcome of an item's decision; with the item's ID it
// keys the outcome's words in the catalogue (words.go).
type finding string

// found is what a decision returns: the status it judged, the finding
// whose words report it, and the facts those words print. A found with a
// blocker is a SKIP because the item blocker found what it needs unusable.
type found struct {
	status  Status
	key     finding
	facts   any
	blocker string
	details []any // facts of the item's detail lines, worded by its keyDetail
}

// phrase is one finding's words: text/template templates over the facts of
// the item, a message and a remediation (none for a PASS).
type phrase struct{ message, remedy string }

// itemWords are an item's phrases by finding, the partial templates they
// share, and a zero value of the facts they read, so that a test can
// execute every phrase against it.
type itemWords struct {
	facts       any
	detail      any // a zero value of the facts of its detail lines
	partials    string
	phrases     map[finding]phrase
	sortDetails bool // as text, so that the order does not follow the cluster's
}

// keyDetail keys the phrase that words one of an item's details.
const keyDetail finding = "detail"

// builtCatalogue and builtCommonPhrases build the catalogue once per
// process rather than once per result.
var (
	builtCatalogue     = sync.OnceValue(catalogue)
	builtCommonPhrases = sync.OnceValue(commonPhrases)
)

// result turns what a decision found into the item's Result: the one place
// where facts become words.
func (f found) result(id string) Result {
	words := builtCatalogue()[id]
	p, ok := words.phrases[f.key]
	if !ok {
		p = builtCommonPhrases()[f.key]
	}
	msg, remedy := say(words, p.message, f.facts), say(words, p.remedy, f.facts)
	if f.blocker != "" {
		msg, remedy = msg+" (see "+f.blocker+")", blockedRemedy
	}
	res := result(id, f.status, msg, remedy)
	for _, d := range f.details {
		res.Details = append(res.Details, say(words, words.phrases[keyDetail].message, d))
	}
	if words.sortDetails {
		slices.Sort(res.Details)
	}
	return res
}

// say executes the template text with the item's and the common partials
// over facts. A phrase that does not execute is a bug that the catalogue's
// test finds; the report then says so rather than hide the item.
func say(words itemWords, text string, facts any) string {
	if text == "" {
		return ""
	}
	t, err := template.New("").Funcs(funcs()).Parse(commonPartials + words.partials + text)
	if err != nil {
		return "the words of this item do not parse: " + err.Error()
	}
	var b strings.Builder
	if err := t.Execute(&b, facts); err != nil {
		return "the words of this item do not fit its facts: " + err.Error()
	}
	return b.String()
}

// funcs are what the phrases call to print facts.
func funcs() template.FuncMap {
	return template.FuncMap{
		"names":    names,
		"join":     func(list []string, sep string) string { return strings.Join(list, sep) },
		"time":     cabundle.FormatTime,
		"duration": formatDuration,
		"restart":  restartHint,
		"causes":   causeSummary,
		"kyma":     func() string { return ManagedByLabel + "=" + ManagedByValue },
		"optOut":   func() string { return affinity.OptOutLabel + "=" + affinity.OptOutValue },
		"oneLine":  func(v any) string { return oneLine(fmt.Sprint(v)) },
	}
}

// names joins up to five of list's elements, printed as fmt prints them,
// so that a large Deployment fits one line.
func names(list any) string {
	v := reflect.ValueOf(list)
	out := make([]string, 0, v.Len())
	for i := range v.Len() {
		out = append(out, fmt.Sprint(v.Index(i).Interface()))
	}
	return listNames(out)
}

// oneLine keeps a text that spans lines on one line of the table.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// formatDuration prints days and hours above a day, minutes below.
func formatDuration(d time.Duration) string {
	if d < 24*time.Hour {
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%dd%dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
}

// listNames joins up to five names, so that a large Deployment fits one line.
func listNames(names []string) string {
	const maxNames = 5
	if len(names) <= maxNames {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNames], ", "), len(names)-maxNames)
}
