package check

import (
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
)

// Every phrase of the catalogue executes against the facts of its item,
// once with every flag set and once with none, so that a field a phrase
// names and its facts lack fails here rather than in a report.
func TestEveryPhraseFitsItsFacts(t *testing.T) {
	for id, words := range catalogue() {
		for _, flags := range []bool{true, false} {
			facts := filled(reflect.TypeOf(words.facts), flags, 0).Interface()
			for key, p := range words.phrases {
				if key == keyDetail {
					detail := filled(reflect.TypeOf(words.detail), flags, 0).Interface()
					if got := say(words, p.message, detail); strings.Contains(got, "the words of this item") {
						t.Errorf("%s/%s (flags %v): %s", id, key, flags, got)
					}
					continue
				}
				for _, text := range []string{p.message, p.remedy} {
					if got := say(words, text, facts); strings.Contains(got, "the words of this item") {
						t.Errorf("%s/%s (flags %v): %s", id, key, flags, got)
					}
				}
			}
		}
	}
}

// A PASS needs no remediation, and every other finding has one, common or
// its own, or is a SKIP for another item's sake.
func TestEveryPhraseButAPassHasARemedy(t *testing.T) {
	blockers := map[string][]finding{
		IDCABundle:          {keyBundleNoCA, keyBundleNoMWC, keyBundleNoEntries},
		IDNamespace:         {keyNamespaceNoMWC},
		IDWebhookEndpoints:  {keyEndpointsNoMWC},
		IDServedCertificate: {keyServedNoMWC, keyServedNoBundle, keyServedNoEndpoint},
		IDAdmission:         {keyAdmissionMWCFailed},
	}
	passes := setOfFindings(keyPodsEnough, keyLeaseHealthy, keyCAValid, keyConfigRight, keyBundleTrusted,
		keyNamespaceSent, keyEndpointsReady, keyServedVerified, keyAdmissionTerm, keyPoolRoom, keyPlacementAllOn, keyDetail)
	for id, words := range catalogue() {
		skips := setOfFindings(blockers[id]...)
		for key, p := range words.phrases {
			if want := !passes[key] && !skips[key]; (p.remedy != "") != want {
				t.Errorf("%s/%s: remedy %q, want one: %v", id, key, p.remedy, want)
			}
		}
	}
}

func setOfFindings(keys ...finding) map[finding]bool {
	out := map[finding]bool{}
	for _, k := range keys {
		out[k] = true
	}
	return out
}

// filled returns a value of typ with every field set: strings, numbers and
// times to something, slices to one element, maps to none, errors to one,
// and every bool to flags.
func filled(typ reflect.Type, flags bool, depth int) reflect.Value {
	v := reflect.New(typ).Elem()
	if depth > 4 {
		return v
	}
	switch typ {
	case reflect.TypeFor[error]():
		v.Set(reflect.ValueOf(errors.New("an error")))
		return v
	case reflect.TypeFor[labels.Selector]():
		v.Set(reflect.ValueOf(labels.Everything()))
		return v
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Unix(0, 0)))
		return v
	case reflect.TypeFor[*big.Int](), reflect.TypeFor[*resource.Quantity]():
		return reflect.New(typ.Elem())
	}
	switch typ.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(flags)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Slice:
		v.Set(reflect.Append(v, filled(typ.Elem(), flags, depth+1)))
	case reflect.Pointer:
		v.Set(filled(typ.Elem(), flags, depth+1).Addr())
	case reflect.Struct:
		for i := range typ.NumField() {
			if v.Field(i).CanSet() {
				v.Field(i).Set(filled(typ.Field(i).Type, flags, depth+1))
			}
		}
	}
	return v
}
