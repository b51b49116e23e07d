package syncer

import (
	"encoding/json"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/patch"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
)

// The patch is applied here with an RFC 6902 implementation, the one the API
// server uses, and the result is compared with the object as it should be:
// the bundle in every entry, the annotation set, every other field as read.
func TestCABundlePatchWritesOnlyWhatDiffersBehindAPrecondition(t *testing.T) {
	ca := certtest.MustCA(t, certtest.Options{CommonName: "ca"})
	old := certtest.MustCA(t, certtest.Options{CommonName: "old"})
	const state = `{"v":1,"cas":{}}`
	read := func(annotations map[string]string, bundles ...[]byte) *admissionregistrationv1.MutatingWebhookConfiguration {
		names := []string{"a.kim-snatch.kyma-project.io", "b.kim-snatch.kyma-project.io", "c.kim-snatch.kyma-project.io"}
		mwc := syncertest.WebhookConfiguration("kim-snatch-mutating-webhook-configuration", names[:len(bundles)]...)
		mwc.ResourceVersion = "4711"
		mwc.UID = "6b1f0a5e-0000-4000-8000-000000000001"
		mwc.Labels = map[string]string{"app.kubernetes.io/name": "snatch-webhook"}
		mwc.Annotations = annotations
		for i, b := range bundles {
			mwc.Webhooks[i].ClientConfig.CABundle = b
		}
		mwc.Webhooks[0].TimeoutSeconds = ptr.To[int32](7)
		return mwc
	}
	tests := []struct {
		name string
		read *admissionregistrationv1.MutatingWebhookConfiguration
		// ops is the number of operations besides the precondition: only
		// what differs is written.
		ops int
	}{
		{name: "no_annotations_no_bundles_writes_all_three", read: read(nil, nil, nil), ops: 3},
		{name: "other_annotations_kept", read: read(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}, nil), ops: 2},
		{name: "only_the_differing_entry_is_written", read: read(map[string]string{StateAnnotation: state}, ca.CertPEM, old.CertPEM, ca.CertPEM), ops: 1},
		{name: "only_the_state_is_written", read: read(map[string]string{StateAnnotation: "{}"}, ca.CertPEM, ca.CertPEM), ops: 1},
		{name: "damaged_bundle_replaced", read: read(map[string]string{StateAnnotation: state}, []byte("garbage")), ops: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := caBundlePatch(tt.read, ca.CertPEM, state)
			var ops []patch.Operation
			if err := json.Unmarshal(data, &ops); err != nil {
				t.Fatal(err)
			}
			if len(ops) != tt.ops+1 {
				t.Errorf("patch has %d operations, want the precondition and %d: %s", len(ops), tt.ops, data)
			}
			if ops[0].Path != "/metadata/resourceVersion" || ops[0].Value != tt.read.ResourceVersion {
				t.Errorf("first operation %+v, want the resourceVersion %s that was read", ops[0], tt.read.ResourceVersion)
			}

			want := tt.read.DeepCopy()
			for i := range want.Webhooks {
				want.Webhooks[i].ClientConfig.CABundle = ca.CertPEM
			}
			if want.Annotations == nil {
				want.Annotations = map[string]string{}
			}
			want.Annotations[StateAnnotation] = state

			got, out := applyJSONPatch(t, tt.read, data)
			if !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("patched object\n  %s\nwant the read object with the bundle and the state", out)
			}
		})
	}
}

// applyJSONPatch applies data to read with an RFC 6902 implementation, the
// one the API server uses, and returns the result and its JSON.
func applyJSONPatch(t *testing.T, read *admissionregistrationv1.MutatingWebhookConfiguration, data []byte) (*admissionregistrationv1.MutatingWebhookConfiguration, []byte) {
	t.Helper()
	doc, err := json.Marshal(read)
	if err != nil {
		t.Fatal(err)
	}
	p, err := jsonpatch.DecodePatch(data)
	if err != nil {
		t.Fatalf("not a JSON patch: %v: %s", err, data)
	}
	out, err := p.Apply(doc)
	if err != nil {
		t.Fatalf("apply %s: %v", data, err)
	}
	var got admissionregistrationv1.MutatingWebhookConfiguration
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	return &got, out
}

func TestEscapePointerEscapesTheSlashOfTheAnnotation(t *testing.T) {
	if got, want := escapePointer(StateAnnotation), "cabundle-syncer.kyma-project.io~1ca-state"; got != want {
		t.Errorf("escapePointer(%q) = %q, want %q", StateAnnotation, got, want)
	}
	if got := escapePointer("a~/b"); got != "a~0~1b" || strings.Count(got, "/") != 0 {
		t.Errorf(`escapePointer("a~/b") = %q, want "a~0~1b"`, got)
	}
}
